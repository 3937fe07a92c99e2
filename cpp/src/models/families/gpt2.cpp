// GPT-2 (GPT2LMHeadModel, GPT2Model), and nanoGPT checkpoints exported in its layout:
//   x = wte[ids] + wpe[0 .. T)
//   per layer:  x += attn(ln_1(x))   causal; c_attn [E, 3E] = [W_q | W_k | W_v] as Conv1D stores it
//               x += c_proj(act(c_fc(ln_2(x))))                                   (I = n_inner or 4E)
//   h = ln_f(x);  logits = h · lm_headᵀ  (lm_head = wte when tied)
#include "models/family.h"

namespace mha::models {

const Family& Gpt2Family() {
  static const Family family{
      "gpt2",
      "GPT-2",
      {{"GPT2LMHeadModel", Task::kNextToken}, {"GPT2Model", Task::kNone}},
      // GPT2Config's defaults where a field is absent
      {{&ModelConfig::vocab_size, "vocab_size", 50257, 0},
       {&ModelConfig::max_positions, "n_positions", 1024, 0},
       {&ModelConfig::hidden, "n_embd", 768, 0},
       {&ModelConfig::num_layers, "n_layer", 12, 0},
       {&ModelConfig::num_heads, "n_head", 12, 0},
       {&ModelConfig::intermediate, "n_inner", 0, 4}},
      "layer_norm_epsilon",
      1e-5,
      "activation_function",
      "gelu_new",
      true,
      {{"scale_attn_weights", true, true, "attention scores are scaled by 1/sqrt(head_dim)"},
       {"scale_attn_by_inverse_layer_idx", false, false, "no layer-wise scaling of attention scores"},
       {"reorder_and_upcast_attn", false, false, "attention runs in float32 in the usual order"},
       {"add_cross_attention", false, false, "self-attention only"}},
      {},
      NormPlacement::kPre,
      LinearLayout::kConv1D,
      /*causal=*/true,
      [] {
        TensorNames n;
        n.base_prefix = "transformer.";
        n.word = "wte";
        n.position = "wpe";
        n.attention_norm = "h.{l}.ln_1";
        n.qkv = "h.{l}.attn.c_attn";
        n.attention_out = "h.{l}.attn.c_proj";
        n.ffn_norm = "h.{l}.ln_2";
        n.up = "h.{l}.mlp.c_fc";
        n.down = "h.{l}.mlp.c_proj";
        n.final_norm = "ln_f";
        n.head_weight = "lm_head.weight";
        // the causal mask older transformers saved as buffers
        n.skip_suffixes = {".attn.bias", ".attn.masked_bias"};
        return n;
      }(),
  };
  return family;
}

}  // namespace mha::models
