// A model family as data: which config.json it takes, how its fields map to the one normalised
// ModelConfig, where each weight is in its files, and which blocks its layers are made of. The
// runtime (model.cpp, hf_files.cpp) reads these tables and never a family's name; a family is
// one file in families/ and one line in families.cpp.
//
// The blocks the runtime computes today, and so the traits a family can choose:
//   norm          LayerNorm (weight, bias), before each sublayer (pre) or after its residual
//                 add (post); optionally after the embeddings and after the last layer
//   positions     learned absolute embeddings, added to the token embeddings (token-type
//                 embeddings too, where the family has them: row 0, one text)
//   feed-forward  up, activation, down; every linear layer with a bias
//   attention     self-attention, H heads of E / H, q k v with biases; causal or not
//   head          next-token (LM, tied to the token embeddings or not), masked-LM (transform,
//                 activation, LayerNorm, decoder with a bias), or none; a pooler where the file
//                 has one
//   and, for Llama-family models: RMSNorm; rotary positions (rope_theta, rope_scaling); a
//   gated feed-forward; G key/value heads and a head width from the config; biases per
//   projection; a sliding window
// A family that needs another block adds it to the runtime and a trait here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mha/models.h"

namespace mha::models {

enum class NormPlacement {
  kPre,   // x += f(norm(x))
  kPost,  // x = norm(x + f(x))
};

// How the file stores a linear layer's weight.
enum class LinearLayout {
  kLinear,  // nn.Linear: (out, in)
  kConv1D,  // GPT-2's Conv1D: [in, out]
};

// An integer of config.json and the normalised field it sets.
struct SizeField {
  int64_t ModelConfig::*field;
  const char* key;
  int64_t fallback;        // when the field is absent or null
  int64_t hidden_times;    // > 0: the fallback is hidden * this instead (read after hidden)
  int64_t minimum = 1;
};

// A config.json boolean the runtime computes at one value only.
struct FixedFlag {
  const char* key;
  bool fallback;
  bool supported;
  const char* why;
};

// A config.json string the runtime computes at one value only.
struct FixedText {
  const char* key;
  const char* fallback;
  const char* supported;
};

enum class NormKind { kLayerNorm, kRmsNorm };
enum class Positions { kLearned, kRotary };
enum class FeedForward { kPlain, kGated };  // act(up(x)), or act(gate(x)) * up(x)
// A sliding window of keys, as the family's config sets it:
enum class WindowRule {
  kNone,
  kAllLayers,    // sliding_window (null: none), every layer (Mistral)
  kUpperLayers,  // sliding_window in layers >= max_window_layers when use_sliding_window (Qwen2)
};

// Whether a group of linear layers has biases: fixed, or a config.json boolean (key non-null).
struct BiasTrait {
  const char* key;
  bool fallback;
};

struct ArchitectureEntry {
  const char* name;
  Task task;
};

// Where the weights are. A linear layer or a norm is named without its ".weight" / ".bias";
// "{l}" stands for the layer's index. Names of the base model are given without its prefix
// (base_prefix), which a file has or has not; head names are given whole. "" = not in the family.
struct TensorNames {
  std::string base_prefix;   // "transformer.", "bert.": present when the file's first tensor has it
  std::string word, position, token_type, embed_norm;
  std::string attention_norm;                      // the norm of the attention sublayer
  std::string qkv;                                 // q, k, v fused in one linear layer (out 3E) …
  std::string q, k, v;                             // … or three
  std::string attention_out;
  std::string ffn_norm;                            // the norm of the feed-forward sublayer
  std::string gate, up, down;                      // gate: a gated feed-forward's
  std::string final_norm;
  std::string pooler;                              // read where the file has it
  // Head (its task from the architecture): a next-token head is head_weight alone; a masked-LM
  // head is head_transform, head_norm, then head_weight with head_bias.
  std::string head_transform, head_norm, head_weight, head_bias;
  std::vector<std::string> head_bias_copies;       // another name of head_bias a file may carry, read and dropped
  // LayerNorm's weight and bias as checkpoints converted from older code name them ("gamma", "beta")
  std::string legacy_norm_weight, legacy_norm_bias;
  std::vector<std::string> skip_suffixes, skip_prefixes;  // buffers, never read
};

struct Family {
  const char* model_type;
  const char* display_name;  // as people write it: "GPT-2"
  std::vector<ArchitectureEntry> architectures;  // the first when config.json names none
  std::vector<SizeField> sizes;
  const char* layer_norm_eps_key;
  double layer_norm_eps_fallback;
  const char* activation_key;
  const char* activation_fallback;
  bool tie_word_embeddings_fallback;
  std::vector<FixedFlag> fixed_flags;
  std::vector<FixedText> fixed_texts;
  // block traits
  NormPlacement norm_placement;
  LinearLayout linear_layout;
  bool causal;
  TensorNames names;
  // blocks of the Llama-family models; the defaults are GPT-2's and BERT's
  NormKind norm = NormKind::kLayerNorm;
  Positions positions = Positions::kLearned;
  FeedForward feed_forward = FeedForward::kPlain;
  const char* num_kv_heads_key = nullptr;  // null: G = H
  int64_t num_kv_heads_fallback = 0;       // when the key is absent (0: H)
  const char* head_dim_key = nullptr;      // null: hd = E / H
  BiasTrait qkv_bias{nullptr, true}, out_bias{nullptr, true}, mlp_bias{nullptr, true};
  WindowRule window = WindowRule::kNone;
  int64_t window_fallback = 0;             // sliding_window when the key is absent (null: none)
};

// Every family the runtime takes, and the one for a model_type (nullptr: none).
const std::vector<const Family*>& Families();
const Family* FindFamily(const std::string& model_type);

}  // namespace mha::models
