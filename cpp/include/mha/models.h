// GPT-2- and BERT-family checkpoints in Hugging Face layout (config.json, model.safetensors),
// run by the core: every attention layer an mha::MultiHeadAttention.
//
// GPT-2 (GPT2LMHeadModel), T tokens, width E, heads H, inner width I:
//   x = wte[ids] + wpe[0 .. T)                                                   (T, E)
//   per layer:  x += attn(ln_1(x))        causal; c_attn (E, 3E) = [W_q | W_k | W_v] as Conv1D
//                                          stores it ([in, out]), c_proj (E, E) likewise
//               x += act(ln_2(x) · c_fc + b) · c_proj + b                        (I = n_inner or 4E)
//   h = ln_f(x);  logits = h · lm_headᵀ  (lm_head = wte when tied)               (T, vocab)
// BERT (BertModel, BertForMaskedLM), post-LayerNorm:
//   x = LayerNorm(word[ids] + token_type[0] + position[0 .. T))
//   per layer:  x = LayerNorm(attn(x) + x)           q, k, v, output.dense as nn.Linear (out, in)
//               x = LayerNorm(act(x · W_iᵀ + b) · W_oᵀ + b + x)
//   pooled = tanh(pooler(x[0]))                       (when the file has a pooler)
//   logits = LayerNorm(act(transform(x))) · decoderᵀ + cls.predictions.bias      (masked-LM head)
// Attention is exact self-attention with per-head weights (H, T, T); no padding (one text).
// Weights are read as float32 from F32, F16 or BF16 tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mha/attention.h"
#include "mha/status.h"

namespace mha::models {

enum class Family { kGpt2, kBert };
enum class Activation { kGeluTanh, kGeluErf, kRelu, kSilu };

struct ModelConfig {
  Family family = Family::kGpt2;
  std::string architecture;     // e.g. "GPT2LMHeadModel", "BertForMaskedLM", "BertModel"
  int64_t vocab_size = 0;
  int64_t max_positions = 0;    // n_positions / max_position_embeddings
  int64_t hidden = 0;           // E: n_embd / hidden_size
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t intermediate = 0;     // I: n_inner (4E when null) / intermediate_size
  int64_t type_vocab_size = 0;  // BERT only
  double layer_norm_eps = 1e-5;
  Activation activation = Activation::kGeluTanh;
  std::string activation_name;  // as config.json spells it
  bool tie_word_embeddings = true;
  bool lm_head = false;         // GPT-2's LM head or BERT's masked-LM head is part of the model
  int64_t parameter_count() const;  // the weights the config implies (tied ones once)
};

// Parses config.json. Any field the core does not compute (another model_type, an architecture
// other than the ones above, scale_attn_by_inverse_layer_idx, reorder_and_upcast_attn,
// add_cross_attention, is_decoder, a non-absolute position_embedding_type, an activation other
// than gelu_new / gelu_pytorch_tanh / gelu_fast / gelu / relu / silu / swish) is refused with a
// message naming `file` and the field.
Status ParseConfig(std::string_view json_text, const std::string& file, ModelConfig* out);

// One tensor of a safetensors file, as float32.
struct LoadedTensor {
  std::string dtype;  // "F32", "F16" or "BF16"
  Shape shape;
  std::vector<float> values;
};

struct LoadLimits {
  size_t max_file_bytes = size_t{1} << 30;     // GPT-2 small is 0.5 GB in float32
  int64_t max_parameters = 200'000'000;         // GPT-2 small: 124M
};

// The tensors of a safetensors file (header: u64 little-endian length, JSON, then the data).
// Names in `skip` are not read (buffers such as position_ids, any dtype). Errors name `file`
// and the tensor: bad header, unsupported dtype, a shape whose size disagrees with its
// data_offsets, offsets past the end, a value that is NaN or infinite.
Status ReadSafetensors(std::string_view bytes, const std::string& file, const LoadLimits& limits,
                       bool (*skip)(const std::string& name), std::map<std::string, LoadedTensor>* out);

struct RunOptions {
  std::vector<std::pair<int64_t, int64_t>> ablate;  // (layer, head) pairs switched off
  bool head_outputs = false;                        // keep each layer's head outputs, concatenation and attention output
};

struct LayerResult {
  Tensor weights;       // (H, T, T)
  Tensor head_outputs;      // (H, T, hd), when RunOptions::head_outputs
  Tensor concat;            // (T, E): Concat(head_1 … head_H) after ablation, when RunOptions::head_outputs
  Tensor attention_output;  // (T, E): concat · W_Oᵀ + b_O, before the residual add, when RunOptions::head_outputs
  Tensor residual;          // (T, E): the residual stream after the layer
};

struct RunResult {
  std::vector<LayerResult> layers;
  Tensor hidden;  // (T, E): GPT-2 after ln_f; BERT the last layer's output
  Tensor logits;  // (T, vocab) when the model has an LM head
  Tensor pooled;  // (E) when a BERT file has a pooler
};

class Model {
 public:
  // Validates the config against `limits`; no weights yet.
  static Status Create(const ModelConfig& config, const LoadLimits& limits, std::unique_ptr<Model>* out);
  // config.json and model.safetensors as bytes; the names are what messages call the files.
  static Status Load(std::string_view config_json, const std::string& config_file, std::string_view safetensors,
                     const std::string& safetensors_file, const LoadLimits& limits, std::unique_ptr<Model>* out);

  const ModelConfig& config() const { return config_; }
  int64_t head_dim() const { return config_.hidden / config_.num_heads; }
  bool has_pooler() const { return has_pooler_; }

  // Sets every weight from a safetensors file: each expected tensor present with its shape
  // (messages name the tensor, the expected and the actual shape), nothing unknown.
  Status LoadWeights(std::string_view safetensors, const std::string& file);

  // ids[0 .. count), each < vocab_size, 1 <= count <= max_positions. *result's storage is
  // reused (run again at the same length, nothing is allocated or cleared); when the ids or
  // options are refused it is left as it was.
  Status Run(const int32_t* ids, size_t count, const RunOptions& options, RunResult* result);

  // Head importance on the model's own task (GPT-2's next token), (L, H):
  //   importance[l, h] = mean over t < T-1 of  log p(ids[t+1] | ids[..t])
  //                                          - log p(ids[t+1] | ids[..t], head (l, h) switched off)
  // (switched off: its output zeroed before W_O, as transformers' head_mask does). T >= 2.
  // The layers below l are run once: each head's run starts from the clean stream entering its
  // layer, and the LM head computes positions t < T-1 only. Equal to Run with ablate {(l, h)}
  // and a log-softmax in double to within 1e-6 (tests/cpp/models/head_importance_test.cpp).
  Status HeadImportance(const int32_t* ids, size_t count, Tensor* importance);

  // A parameter of layer l's attention, in nn.MultiheadAttention's names and layout
  // (in_proj_weight (3E, E), out_proj.weight (E, E), …): GPT-2's Conv1D weights as the core
  // holds them, transposed at load.
  Status AttentionParameter(int64_t layer, const std::string& name, Tensor* out) const;

 private:
  Model() = default;
  struct Linear {  // nn.Linear layout (out, in), packed for kernels::linear_packed
    std::vector<float> packed;
    std::vector<float> bias;
    int64_t out = 0, in = 0;
  };
  struct Norm {
    std::vector<float> weight, bias;
  };
  struct Layer {
    std::unique_ptr<MultiHeadAttention> attention;
    Norm norm1, norm2;  // GPT-2: ln_1, ln_2; BERT: attention.output.LayerNorm, output.LayerNorm
    Linear up, down;    // c_fc / intermediate.dense, mlp.c_proj / output.dense
  };
  Status set_weights(std::map<std::string, LoadedTensor>* tensors, const std::string& file);
  Status validate(const int32_t* ids, size_t count, const RunOptions& options) const;
  void embed(const int32_t* ids, int64_t T, std::vector<float>* x) const;
  Status run_layer(int64_t l, const std::vector<int64_t>& ablated, bool head_outputs, int64_t T, std::vector<float>* x,
                   LayerResult* out);
  void heads(const std::vector<float>& x, int64_t T, RunResult* r);
  void next_token_logprobs(const std::vector<float>& x, const int32_t* ids, int64_t T, std::vector<float>* logits,
                           std::vector<double>* out);
  void layer_norm(float* out, const float* in, const Norm& norm, int64_t T) const;
  void activate(float* x, int64_t n) const;

  ModelConfig config_;
  LoadLimits limits_;
  std::vector<float> word_, position_, token_type_;  // (V, E), (P, E), (types, E)
  Norm embed_norm_, final_norm_, head_norm_;         // BERT embeddings.LayerNorm; GPT-2 ln_f; MLM transform.LayerNorm
  std::vector<Layer> layers_;
  Linear lm_head_, head_transform_, pooler_;
  bool has_pooler_ = false;
  bool loaded_ = false;
  std::vector<float> normed_, up_, down_;  // scratch reused across layers and calls
};

}  // namespace mha::models
