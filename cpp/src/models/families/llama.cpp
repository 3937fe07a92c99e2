// Llama (LlamaForCausalLM, LlamaModel): Llama 2 and 3, TinyLlama, SmolLM and SmolLM2, as
// modeling_llama.py computes them:
//   x = embed_tokens[ids]
//   per layer:  x += o_proj(attn(rope(q_proj(h)), rope(k_proj(h)), v_proj(h)))   h = input_layernorm(x)
//               x += down_proj(silu(gate_proj(h)) * up_proj(h))                    h = post_attention_layernorm(x)
//   logits = norm(x) · lm_headᵀ   (lm_head = embed_tokens when tie_word_embeddings)
// RMSNorm; rotary positions (rope_theta, rope_scaling); num_key_value_heads; head_dim; biases on
// q, k, v and o when attention_bias, on the feed-forward when mlp_bias.
#include "models/family.h"

namespace mha::models {

const Family& LlamaFamily() {
  static const Family family = [] {
    Family f{
        "llama",
        "Llama",
        {{"LlamaForCausalLM", Task::kNextToken}, {"LlamaModel", Task::kNone}},
        // LlamaConfig's defaults where a field is absent
        {{&ModelConfig::vocab_size, "vocab_size", 32000, 0},
         {&ModelConfig::max_positions, "max_position_embeddings", 2048, 0},
         {&ModelConfig::hidden, "hidden_size", 4096, 0},
         {&ModelConfig::num_layers, "num_hidden_layers", 32, 0},
         {&ModelConfig::num_heads, "num_attention_heads", 32, 0},
         {&ModelConfig::intermediate, "intermediate_size", 11008, 0}},
        "rms_norm_eps",
        1e-6,
        "hidden_act",
        "silu",
        false,
        {},
        {},
        NormPlacement::kPre,
        LinearLayout::kLinear,
        /*causal=*/true,
        [] {
          TensorNames n;
          n.base_prefix = "model.";
          n.word = "embed_tokens";
          n.attention_norm = "layers.{l}.input_layernorm";
          n.q = "layers.{l}.self_attn.q_proj";
          n.k = "layers.{l}.self_attn.k_proj";
          n.v = "layers.{l}.self_attn.v_proj";
          n.attention_out = "layers.{l}.self_attn.o_proj";
          n.ffn_norm = "layers.{l}.post_attention_layernorm";
          n.gate = "layers.{l}.mlp.gate_proj";
          n.up = "layers.{l}.mlp.up_proj";
          n.down = "layers.{l}.mlp.down_proj";
          n.final_norm = "norm";
          n.head_weight = "lm_head.weight";
          n.skip_suffixes = {".rotary_emb.inv_freq"};  // a buffer older transformers saved
          return n;
        }(),
    };
    f.norm = NormKind::kRmsNorm;
    f.positions = Positions::kRotary;
    f.feed_forward = FeedForward::kGated;
    f.num_kv_heads_key = "num_key_value_heads";
    f.head_dim_key = "head_dim";
    f.qkv_bias = {"attention_bias", false};
    f.out_bias = {"attention_bias", false};
    f.mlp_bias = {"mlp_bias", false};
    return f;
  }();
  return family;
}

}  // namespace mha::models
