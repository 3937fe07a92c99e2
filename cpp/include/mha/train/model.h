// A small pre-LN decoder-only transformer with its backward pass, written to be read (after
// karpathy/llm.c's train_gpt2.c): every backward kernel quotes the forward line it inverts.
//
//   x      = wte[token] + wpe[position]                       (B, T, C)
//   for each layer:
//     x    = x + proj(causal_mha(ln1(x)))                     heads H, head_dim C / H
//     x    = x + fc2(gelu(fc1(ln2(x))))                       hidden 4C, exact (erf) GELU
//   logits = lm_head(lnf(x))                                  (B, T, V), no bias
//   loss   = mean over targets >= 0 of -log softmax(logits)[target]
//
// B batch, T positions (<= context), C d_model, H heads, V vocabulary. All parameters live
// in one flat buffer, in the order parameter_specs() lists them (PyTorch state_dict names);
// gradients and AdamW's moments use the same layout. Templated on the scalar so that the
// finite-difference tests can run in double; the trainer uses float.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mha/attention.h"
#include "mha/status.h"

namespace mha::train {

struct ModelConfig {
  int vocab_size = 60;
  int context = 32;
  int d_model = 64;
  int num_heads = 8;
  int num_layers = 2;
  int mlp_hidden() const { return 4 * d_model; }
  int head_dim() const { return d_model / num_heads; }
};

Status validate(const ModelConfig& config);

struct ParameterSpec {
  std::string name;
  std::vector<int> shape;
  size_t offset = 0;
  size_t size = 0;
  bool decay = false;  // AdamW weight decay applies (matrices and embeddings, as nanoGPT)
  double weight_decay = -1;  // this tensor's weight decay when decay is on (< 0: the optimizer's)
};

std::vector<ParameterSpec> parameter_specs(const ModelConfig& config);
size_t parameter_count(const ModelConfig& config);

// How Model::initialize starts the weights. Biases start at zero, LayerNorm gains at one.
struct Initialization {
  // false: GPT-2's N(0, 0.02) for matrices and embeddings, N(0, 0.02 / sqrt(2 L)) for the two
  // projections into the residual stream. true: matrices N(0, 1/sqrt(fan_in)) (the scale of
  // PyTorch's nn.Linear default) and embeddings N(0, 1) (nn.Embedding's): at d_model 64,
  // GPT-2's 0.02 is six times smaller than 1/sqrt(64), every attention map starts uniform and
  // the query-key products grow slowly from there.
  bool fan_in_scale = false;
  // How wpe starts (trained like any weight afterwards): normal as above, or sinusoids scaled
  // to the embeddings' RMS, either those of "Attention Is All You Need" (frequencies
  // 1 / 10000^(2i/C)) or at n evenly spaced frequencies pi (i + 1) / n up to pi (n = C / 2
  // sine-cosine pairs, C / 4 with split channels), which tell neighbouring positions apart best. With sinusoids, "attend to the token before" is one
  // linear map (a rotation) for every position, not 32 separate ones to learn.
  enum class Positions { kNormal, kSinusoid, kEvenSinusoid };
  Positions positions = Positions::kNormal;
  // Positions start in channels 0 .. C/2 - 1 only (sinusoids at C/4 frequencies) and tokens in
  // channels C/2 .. C - 1 only, at the same norms. Sharing all C channels, 32 positions and 74
  // tokens cannot be orthogonal, and a head that reads positions also reads token noise; split,
  // a query-key map can read position alone, as a previous-token head needs.
  bool split_channels = false;
  double matrix_gain = 1;                     // a factor on every matrix's std
  double token_std = -1, position_std = -1;   // overrides of the embeddings' std (< 0: as above)
};

template <typename Real>
class Model {
 public:
  explicit Model(const ModelConfig& config);

  const ModelConfig& config() const { return config_; }
  const std::vector<ParameterSpec>& specs() const { return specs_; }
  std::vector<Real>& parameters() { return params_; }
  const std::vector<Real>& parameters() const { return params_; }
  std::vector<Real>& gradients() { return grads_; }
  const std::vector<Real>& gradients() const { return grads_; }

  // Starts the weights as `init` says (by default GPT-2's initialisation), from the seed.
  void initialize(uint64_t seed, const Initialization& init = Initialization());

  // tokens and targets are (B, T) row-major; targets < 0 are ignored. With lengths (B, each in
  // 1 .. T), row b is computed only up to lengths[b] (the rest is padding: left out, its
  // targets ignored; the result before it is the same, attention being causal). Returns the
  // mean loss (NaN when no target is valid, or when T > context, B < 1 or a length is out of
  // range: then backward() writes zeros). Keeps the activations for backward() and attention().
  Real forward(const int* tokens, const int* targets, int B, int T, const int* lengths = nullptr);
  // Gradients of the last forward's loss, written (not accumulated) into gradients().
  void backward();

  // After forward(): the attention probabilities of one layer, (B, H, T, T) row-major.
  const Real* attention(int layer) const;
  // After forward(), packed rows (sum of lengths, C): what one layer's attention reads,
  // ln1(x), and what its heads give before attn.proj, Concat(head_1..head_H).
  const Real* attention_input(int layer) const { return ln1_[layer].data(); }
  const Real* attention_heads(int layer) const { return att_y_[layer].data(); }
  // After forward(): the logits, (B, T, V), and their softmax; with lengths, packed:
  // (sum of lengths, V).
  const Real* logits() const { return logits_.data(); }
  const Real* probabilities() const { return probs_.data(); }

  // One layer's causal self-attention as the core's module, from the current weights (as
  // float): in_proj_weight / in_proj_bias = attn.qkv, out_proj = attn.proj, E = C, H heads.
  // Its forward on attention_input(layer) with is_causal gives the maps attention(layer) holds.
  Status attention_module(int layer, std::unique_ptr<MultiHeadAttention>* out) const;

 private:
  ModelConfig config_;
  std::vector<ParameterSpec> specs_;
  std::vector<Real> params_;
  std::vector<Real> grads_;

  struct LayerOffsets {
    size_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fc2_w, fc2_b;
  };
  size_t wte_ = 0, wpe_ = 0, lnf_w_ = 0, lnf_b_ = 0, lm_head_ = 0;
  std::vector<LayerOffsets> layer_offsets_;

  // Activations of the last forward, per layer where indexed.
  int B_ = 0, T_ = 0;
  std::vector<int> tokens_, targets_, lengths_;  // packed rows
  std::vector<Real> encoded_;                         // (B, T, C)
  std::vector<std::vector<Real>> ln1_, ln1_mean_, ln1_rstd_, qkv_, att_, att_y_, residual_mid_;
  std::vector<std::vector<Real>> ln2_, ln2_mean_, ln2_rstd_, fc_h_, fc_cdf_, fc_gelu_, residual_out_;
  std::vector<Real> lnf_, lnf_mean_, lnf_rstd_, logits_, probs_;
  int valid_targets_ = 0;
  std::vector<Real> scratch_[8];  // backward's gradient buffers
};

extern template class Model<float>;
extern template class Model<double>;

// AdamW as torch.optim.AdamW (decoupled weight decay applied first), on the flat layout.
struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
};

template <typename Real>
class AdamW {
 public:
  AdamW(const std::vector<ParameterSpec>& specs, const AdamWConfig& config);
  // One update with learning rate lr; step counts from 1.
  void update(std::vector<Real>& params, const std::vector<Real>& grads, double lr);
  int step() const { return step_; }

 private:
  AdamWConfig config_;
  std::vector<double> decay_;  // per parameter element: its weight decay (0: none)
  std::vector<Real> m_, v_;
  int step_ = 0;
};

extern template class AdamW<float>;
extern template class AdamW<double>;

// torch.nn.utils.clip_grad_norm_: scales grads by max_norm / (norm + 1e-6) when the global L2
// norm exceeds max_norm. Returns the norm before clipping.
template <typename Real>
double clip_grad_norm(std::vector<Real>& grads, double max_norm);

// Linear warm-up to peak over warmup steps, then cosine decay to min_lr at total steps.
// step counts from 0.
double learning_rate(int step, int warmup, int total, double peak, double min_lr);

}  // namespace mha::train
