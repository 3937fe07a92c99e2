// Mistral (MistralForCausalLM, MistralModel), as modeling_mistral.py computes it: Llama's layers
// (RMSNorm, rotary positions, grouped-query attention, gated feed-forward) without biases, and a
// sliding window in every layer: key j is seen from query i when i - W < j <= i
// (sliding_window W, 4096 when absent; null: none).
#include "models/family.h"

namespace mha::models {

const Family& MistralFamily() {
  static const Family family = [] {
    Family f{
        "mistral",
        "Mistral",
        {{"MistralForCausalLM", Task::kNextToken}, {"MistralModel", Task::kNone}},
        // MistralConfig's defaults where a field is absent
        {{&ModelConfig::vocab_size, "vocab_size", 32000, 0},
         {&ModelConfig::max_positions, "max_position_embeddings", 4096 * 32, 0},
         {&ModelConfig::hidden, "hidden_size", 4096, 0},
         {&ModelConfig::num_layers, "num_hidden_layers", 32, 0},
         {&ModelConfig::num_heads, "num_attention_heads", 32, 0},
         {&ModelConfig::intermediate, "intermediate_size", 14336, 0}},
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
          n.skip_suffixes = {".rotary_emb.inv_freq"};
          return n;
        }(),
    };
    f.norm = NormKind::kRmsNorm;
    f.positions = Positions::kRotary;
    f.feed_forward = FeedForward::kGated;
    f.num_kv_heads_key = "num_key_value_heads";
    f.num_kv_heads_fallback = 8;
    f.head_dim_key = "head_dim";
    f.qkv_bias = {nullptr, false};
    f.out_bias = {nullptr, false};
    f.mlp_bias = {nullptr, false};
    f.window = WindowRule::kAllLayers;
    f.window_fallback = 4096;
    return f;
  }();
  return family;
}

}  // namespace mha::models
