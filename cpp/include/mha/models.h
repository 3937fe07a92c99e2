// Checkpoints in Hugging Face layout (config.json, model.safetensors), run by the core: every
// attention layer an mha::MultiHeadAttention. Which model_types it takes, and each one's
// tensors and blocks, are tables (cpp/src/models/family.h, one file per family in
// cpp/src/models/families/); the runtime builds every family's layers from the same blocks.
//
// T tokens, width E, heads H, inner width I:
//   x = embed(ids)                              token + position (+ token type), (T, E)
//   per layer, pre-norm:   x += attn(norm_1(x));  x += ffn(norm_2(x))
//              post-norm:  x = norm_1(x + attn(x));  x = norm_2(x + ffn(x))
//                          ffn(x) = act(x · W_upᵀ + b) · W_downᵀ + b
//                          gated:  (act(x · W_gateᵀ) * (x · W_upᵀ)) · W_downᵀ
//   norm: LayerNorm, or RMSNorm x / sqrt(mean(x²) + eps) · w (float32)
//   attention: H query heads of hd, G key/value heads (query head h reads h / (H / G)); rotary
//              positions on q and k in rotary families; a sliding window where the config sets one
//   hidden = final_norm(x) where the family has one
//   logits: next-token  hidden · W_headᵀ                 (W_head = the token embeddings when tied)
//           masked      norm(act(transform(hidden))) · W_headᵀ + b
// Attention is exact self-attention with per-head weights (H, T, T); no padding (one text).
// Weights come from F32, F16 or BF16 tensors. A file whose every matrix is F16 (or every one
// BF16) keeps its matrices 16-bit, widened exactly as the GEMM reads them; else they are
// widened to float32 as they are read. Either way the kernels compute on the same float32 values.
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

struct Family;  // cpp/src/models/family.h
// What the model's head computes.
enum class Task {
  kNone,       // the base model: hidden states only
  kNextToken,  // a causal LM head: logits of the next token at every position
  kMasked,     // a masked-LM head: logits of the token at every position
};
enum class Activation { kGeluTanh, kGeluErf, kRelu, kSilu };

struct ModelConfig {
  const Family* family = nullptr;
  std::string architecture;     // e.g. "GPT2LMHeadModel", "BertForMaskedLM", "BertModel"
  Task task = Task::kNone;
  int64_t vocab_size = 0;
  int64_t max_positions = 0;    // n_positions / max_position_embeddings
  int64_t hidden = 0;           // E: n_embd / hidden_size
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;     // G: num_key_value_heads where the family has it, else H
  int64_t head_dim = 0;         // hd: head_dim where the config gives it, else E / H
  int64_t intermediate = 0;     // I: n_inner (4E when null) / intermediate_size
  int64_t type_vocab_size = 0;  // token-type embeddings, where the family has them
  double layer_norm_eps = 1e-5;
  Activation activation = Activation::kGeluTanh;
  std::string activation_name;  // as config.json spells it
  bool tie_word_embeddings = true;
  // Rotary families: the frequencies the config's rope_theta and rope_scaling give (its
  // rope_type, as config.json spells it: "default", "linear", "dynamic", "llama3").
  Rotary rotary;
  std::string rope_type;
  // Which linear layers have biases: q, k, v; the attention's output; the feed-forward's.
  bool qkv_bias = true, out_bias = true, mlp_bias = true;
  // A sliding window of W keys (key j seen from query i when i - W < j <= i) in layers
  // l >= window_from_layer; 0: none.
  int64_t sliding_window = 0;
  int64_t window_from_layer = 0;
  bool lm_head = false;         // task != kNone: the model has a head that gives logits
  int64_t parameter_count() const;  // the weights the config implies (tied ones once)
  bool causal() const;              // each position attends to itself and the ones before it
  std::string display_name() const; // the family as people write it: "GPT-2", "BERT"
  bool pre_norm() const;            // each sublayer's norm before it (else after its residual add)
  bool conv1d() const;              // the file stores linear weights [in, out]
  std::string attention_output_name() const;  // W_O's name in the file, "{l}" for the layer, no prefix
};

// Parses config.json into the normalised config by its family's table. Any field the core does
// not compute (a model_type no family takes, an architecture its family does not list, a flag
// or text its family fixes, e.g. GPT-2's scale_attn_by_inverse_layer_idx or BERT's
// position_embedding_type, an activation other than gelu_new / gelu_pytorch_tanh / gelu_fast /
// gelu / relu / silu / swish) is refused with a message naming `file` and the field.
Status ParseConfig(std::string_view json_text, const std::string& file, ModelConfig* out);

// Maps (H, T, T) max-pooled to (H, S, S), 1 <= S <= T: cell (h, a, b) is the largest of rows
// [floor(a T / S), floor((a + 1) T / S)) and columns [floor(b T / S), floor((b + 1) T / S)) of map
// h, so a sharp weight stays visible however small the picture (a mean would fade it by the
// block's size). S = T copies the maps.
void PoolMaps(float* pooled, const float* maps, int64_t H, int64_t T, int64_t S);

// One tensor of a safetensors file, as float32.
struct LoadedTensor {
  std::string dtype;  // "F32", "F16" or "BF16"
  Shape shape;
  std::vector<float> values;
};

// What a model may take. Memory is planned from config.json before any weight is read: the
// weights in the layout the kernels read, and a run of plan_tokens tokens (its activations,
// attention weights and logits); a model whose plan passes max_memory_bytes is refused with the
// numbers. Run() checks its own length against the same budget.
struct LoadLimits {
  uint64_t max_file_bytes = uint64_t{4} << 30;
  uint64_t max_memory_bytes = uint64_t{2} << 30;  // what a browser tab can be expected to give
  int64_t plan_tokens = 128;
};

// The tensors of a safetensors file (header: u64 little-endian length, JSON, then the data).
// Names in `skip` are not read (buffers such as position_ids, any dtype). Errors name `file`
// and the tensor: bad header, unsupported dtype, a shape whose size disagrees with its
// data_offsets, offsets past the end, a value that is NaN or infinite.
Status ReadSafetensors(std::string_view bytes, const std::string& file, const LoadLimits& limits,
                       bool (*skip)(const std::string& name), std::map<std::string, LoadedTensor>* out);

// RunOptions::weights_layer: every layer keeps its attention weights, or none does.
constexpr int64_t kAllLayers = -1;
constexpr int64_t kNoLayer = -2;

struct RunOptions {
  std::vector<std::pair<int64_t, int64_t>> ablate;  // (layer, head) pairs switched off
  bool head_outputs = false;                        // keep each kept layer's head outputs, concatenation and attention output
  // Which layer keeps its weights (H, T, T), and its head outputs where asked for: kAllLayers,
  // one layer l, or kNoLayer. A long text's maps are L * H * T^2 floats (GPT-2 small at 1,024
  // tokens: 604 MB); a page shows one layer.
  int64_t weights_layer = kAllLayers;
  // > 0: every layer's weights also max-pooled to (H, S, S), S = min(T, pooled_size) (PoolMaps):
  // what a view of every layer at once draws.
  int64_t pooled_size = 0;
};

struct LayerResult {
  Tensor weights;       // (H, T, T)
  Tensor head_outputs;      // (H, T, hd), when RunOptions::head_outputs
  Tensor concat;            // (T, E): Concat(head_1 … head_H) after ablation, when RunOptions::head_outputs
  Tensor attention_output;  // (T, E): concat · W_Oᵀ + b_O, before the residual add, when RunOptions::head_outputs
  Tensor residual;          // (T, E): the residual stream after the layer
  Tensor pooled;            // (H, S, S): the weights max-pooled, when RunOptions::pooled_size > 0
};

struct RunResult {
  std::vector<LayerResult> layers;
  Tensor hidden;  // (T, E): the last layer's output, after the final norm where the family has one
  Tensor logits;  // (T, vocab) when the model has an LM head
  Tensor pooled;  // (E) when the file has a pooler
};

// What Model::Extend computed for R new tokens at positions first .. first + R - 1.
struct ExtendResult {
  int64_t first = 0;
  std::vector<Tensor> weights;  // per layer (H, R, S): the new rows of attention, S = first + R keys
  Tensor logits;                // (R, vocab) when the model has an LM head
};

class Model {
 public:
  // Validates the config and plans the memory against `limits`; no weights yet.
  static Status Create(const ModelConfig& config, const LoadLimits& limits, std::unique_ptr<Model>* out);
  // config.json and model.safetensors as bytes; the names are what messages call the files.
  static Status Load(std::string_view config_json, const std::string& config_file, std::string_view safetensors,
                     const std::string& safetensors_file, const LoadLimits& limits, std::unique_ptr<Model>* out);

  const ModelConfig& config() const { return config_; }
  int64_t head_dim() const { return config_.head_dim; }
  bool has_pooler() const { return has_pooler_; }

  // The weights, streamed: BeginWeights, then the file's bytes in order in chunks of any size
  // (FeedWeights), then FinishWeights. Each byte goes straight from the chunk into the layout
  // the kernels read (widened to float32); nothing of the file is kept. `file_bytes` is the
  // file's size when known (0: not known), so that a damaged header is refused before its data
  // arrives. The header is checked before any weight is written: each tensor the family expects
  // present with its shape (messages name the tensor, the expected and the actual shape),
  // nothing unknown. A failed load leaves the model without weights.
  Status BeginWeights(const std::string& file, uint64_t file_bytes);
  Status FeedWeights(const uint8_t* bytes, size_t count);
  Status FinishWeights();
  // LoadWeights(bytes) is the three in one.
  Status LoadWeights(std::string_view safetensors, const std::string& file);

  // Bytes the weights take in memory (the kernels' layout), and a run of T tokens beside them.
  uint64_t weight_bytes() const;
  uint64_t run_bytes(int64_t T) const;

  // ids[0 .. count), each < vocab_size, 1 <= count <= max_positions. *result's storage is
  // reused (run again at the same length, nothing is allocated or cleared); when the ids or
  // options are refused it is left as it was. A layer whose weights are not kept
  // (options.weights_layer) has an empty weights tensor, its storage freed.
  Status Run(const int32_t* ids, size_t count, const RunOptions& options, RunResult* result);

  // A causal model writing on: the text so far is held as each layer's keys and values (its
  // KvCache), and Extend appends ids to it, computing the new positions only:
  //   per layer, the new rows' attention over every position so far, and the logits of the
  //   new positions. Equal to Run on the whole text, those rows, to float rounding
  //   (tests/cpp/models/kv_cache_test.cpp). A model that attends both ways (BERT) is refused,
  //   as is a text past max_positions; the cache is then left as it was.
  Status Extend(const int32_t* ids, size_t count, ExtendResult* result) { return Extend(ids, count, -1, result); }
  // from >= 0: after the text's first `from` positions (0 .. cached_length()), the rest dropped.
  Status Extend(const int32_t* ids, size_t count, int64_t from, ExtendResult* result);
  void ResetCache();                     // an empty text: the next Extend starts at position 0
  int64_t cached_length() const { return cache_.empty() ? 0 : cache_.front().length; }

  // Head importance on the model's own task (a causal model's next token), (L, H):
  //   importance[l, h] = mean over t < T-1 of  log p(ids[t+1] | ids[..t])
  //                                          - log p(ids[t+1] | ids[..t], head (l, h) switched off)
  // (switched off: its output zeroed before W_O, as transformers' head_mask does). T >= 2.
  // The layers below l are run once: each head's run starts from the clean stream entering its
  // layer, and the LM head computes positions t < T-1 only. Equal to Run with ablate {(l, h)}
  // and a log-softmax in double to within 1e-6 (tests/cpp/models/head_importance_test.cpp).
  Status HeadImportance(const int32_t* ids, size_t count, Tensor* importance);

  // A parameter of layer l's attention, in nn.MultiheadAttention's names and layout
  // (in_proj_weight (3E, E), out_proj.weight (E, E), …), unpacked from the kernels' layout
  // (a Conv1D's weights transposed).
  Status AttentionParameter(int64_t layer, const std::string& name, Tensor* out) const;

  ~Model();

 private:
  Model() = default;
  struct Linear {  // nn.Linear layout (out, in), packed for kernels::linear_packed (or 16-bit: linear_packed16)
    std::vector<float> packed;
    std::vector<uint16_t> packed16;  // a float16 / bfloat16 file's words, when the model keeps them
    bool bf16 = false;
    std::vector<float> bias;
    int64_t out = 0, in = 0;
    // out[rows, this->out] = in[rows, this->in] · Wᵀ + bias (bias may be null)
    void apply(float* y, const float* x, const float* bias, int64_t rows) const;
    void row(float* y, int64_t r) const;  // row r of W, unpacked
  };
  struct Norm {
    std::vector<float> weight, bias;  // bias empty: RMSNorm
  };
  struct Layer {
    std::unique_ptr<MultiHeadAttention> attention;
    Norm attention_norm, ffn_norm;
    Linear up, down;  // gated: up holds W_gate's rows, then W_up's: (2I, E)
  };
  struct Loading;  // a streamed load's state: the header, the plan, where the bytes are
  Status allocate(PackedStorage storage);
  Status plan_weights(Loading* loading, const std::string& file);
  Status validate(const int32_t* ids, size_t count, const RunOptions& options) const;
  void embed(const int32_t* ids, int64_t T, std::vector<float>* x, int64_t first = 0) const;  // positions first ..
  Status extend_layer(int64_t l, int64_t R, std::vector<float>* x, Tensor* weights);
  Status run_layer(int64_t l, const std::vector<int64_t>& ablated, const RunOptions& options, int64_t T, std::vector<float>* x,
                   LayerResult* out);
  void heads(const std::vector<float>& x, int64_t T, RunResult* r);
  void next_token_logprobs(const std::vector<float>& x, const int32_t* ids, int64_t T, std::vector<float>* logits,
                           std::vector<double>* out);
  void layer_norm(float* out, const float* in, const Norm& norm, int64_t T) const;
  void rms_norm(float* out, const float* in, const Norm& norm, int64_t T) const;
  void normalize(float* out, const float* in, const Norm& norm, int64_t T) const;  // the family's norm
  void feed_forward(Layer& layer, int64_t T);  // down_ = ffn(normed_)
  const MaskView& window_mask(int64_t l, int64_t T);  // layer l's sliding-window mask, or none
  void activate(float* x, int64_t n) const;
  const Linear& head_weight() const { return config_.tie_word_embeddings ? word_ : head_; }

  ModelConfig config_;
  LoadLimits limits_;
  Linear word_;                                      // (V, E) packed: embed() reads its rows; a tied head is it
  std::vector<float> position_, token_type_;         // (P, E), (types, E)
  Norm embed_norm_, final_norm_, head_norm_;
  std::vector<Layer> layers_;
  Linear head_, head_transform_, pooler_;            // head_: an untied head's weight, and a head's bias
  bool has_pooler_ = false;
  bool loaded_ = false;
  // float32, or the 16-bit words of a file whose every matrix is float16 (or every one bfloat16)
  PackedStorage storage_ = PackedStorage::kFloat32;
  std::unique_ptr<Loading> loading_;
  std::vector<float> normed_, up_, gated_, down_;  // scratch reused across layers and calls
  std::vector<float> window_;                      // (T, T) 0 / -inf, a sliding window's mask
  MaskView window_view_;
  std::vector<KvCache> cache_;                     // per layer: the text Extend has computed
};

}  // namespace mha::models
