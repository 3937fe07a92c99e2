// The decoder's member functions, for both precisions: model.cpp instantiates Model<float>
// (training, the WebAssembly module), model_double.cpp Model<double> (the finite-difference
// gradient checks, native only), so that each is compiled once and in a unit of its own.
#pragma once

#include <cmath>
#include <limits>

#include "mha/train/grammar.h"
#include "mha/train/model.h"
#include "train_kernels.h"

namespace mha::train {

template <typename Real>
Model<Real>::Model(const ModelConfig& config) : config_(config), specs_(parameter_specs(config)) {
  params_.assign(parameter_count(config), Real(0));
  grads_.assign(params_.size(), Real(0));
  size_t i = 0;
  wte_ = specs_[i++].offset;
  wpe_ = specs_[i++].offset;
  for (int l = 0; l < config.num_layers; ++l) {
    LayerOffsets o;
    o.ln1_w = specs_[i++].offset;
    o.ln1_b = specs_[i++].offset;
    o.qkv_w = specs_[i++].offset;
    o.qkv_b = specs_[i++].offset;
    o.proj_w = specs_[i++].offset;
    o.proj_b = specs_[i++].offset;
    o.ln2_w = specs_[i++].offset;
    o.ln2_b = specs_[i++].offset;
    o.fc_w = specs_[i++].offset;
    o.fc_b = specs_[i++].offset;
    o.fc2_w = specs_[i++].offset;
    o.fc2_b = specs_[i++].offset;
    layer_offsets_.push_back(o);
  }
  lnf_w_ = specs_[i++].offset;
  lnf_b_ = specs_[i++].offset;
  lm_head_ = specs_[i++].offset;
  const int L = config.num_layers;
  for (auto* v : {&ln1_, &ln1_mean_, &ln1_rstd_, &qkv_, &att_, &att_y_, &residual_mid_, &ln2_,
                  &ln2_mean_, &ln2_rstd_, &fc_h_, &fc_cdf_, &fc_gelu_, &residual_out_})
    v->resize(L);
}

template <typename Real>
void Model<Real>::initialize(uint64_t seed, const Initialization& init) {
  Rng rng(seed);
  const int C = config_.d_model;
  const double residual_std = 0.02 / std::sqrt(2.0 * config_.num_layers);
  const double embedding_std = init.fan_in_scale ? 1.0 : 0.02;
  for (const ParameterSpec& spec : specs_) {
    Real* p = params_.data() + spec.offset;
    const bool is_gain = spec.name.find("ln") != std::string::npos && spec.name.find(".weight") != std::string::npos;
    const bool is_residual_proj = spec.name.find("proj.weight") != std::string::npos;
    const bool embedding = spec.name == "wte.weight" || spec.name == "wpe.weight";
    // (Only matrices are drawn at random; biases and layer-norm parameters have no fan-in.)
    const bool matrix = spec.shape.size() == 2;
    const double fan_in = matrix ? static_cast<double>(spec.shape[1]) : 1.0;
    double std = embedding ? embedding_std
                           : init.matrix_gain * (init.fan_in_scale ? 1.0 / std::sqrt(fan_in)
                                                                   : (is_residual_proj ? residual_std : 0.02));
    if (spec.name == "wte.weight" && init.token_std >= 0) std = init.token_std;
    if (spec.name == "wpe.weight" && init.position_std >= 0) std = init.position_std;
    for (size_t i = 0; i < spec.size; ++i) {
      if (spec.shape.size() == 2) {
        p[i] = static_cast<Real>(rng.normal() * std);
      } else {
        p[i] = is_gain ? Real(1) : Real(0);
      }
    }
  }
  if (init.split_channels) {  // tokens in channels C/2 .. C-1, scaled by sqrt 2 (the same norm)
    Real* wte = params_.data() + wte_;
    for (int v = 0; v < config_.vocab_size; ++v)
      for (int i = 0; i < C; ++i) wte[static_cast<size_t>(v) * C + i] *= i < C / 2 ? Real(0) : Real(std::sqrt(2.0));
  }
  if (init.positions != Initialization::Positions::kNormal) {
    // pe[t, 2i] = sin(t w_i), pe[t, 2i+1] = cos(t w_i) over the channels used: RMS 1/sqrt(2),
    // scaled to the embeddings' std (times sqrt 2 when only half the channels are used).
    const int used = init.split_channels ? C / 2 : C;
    const bool even = init.positions == Initialization::Positions::kEvenSinusoid;
    const double std = init.position_std >= 0 ? init.position_std : embedding_std;
    const double scale = std * std::sqrt(2.0) * std::sqrt(static_cast<double>(C) / used);
    Real* wpe = params_.data() + wpe_;
    for (int t = 0; t < config_.context; ++t) {
      Real* pe_t = wpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) pe_t[i] = Real(0);
      for (int i = 0; i + 1 < used; i += 2) {
        const double frequency = even ? 3.141592653589793 * (i / 2 + 1) / (used / 2)
                                      : 1.0 / std::pow(10000.0, static_cast<double>(i) / used);
        pe_t[i] = static_cast<Real>(scale * std::sin(t * frequency));
        pe_t[i + 1] = static_cast<Real>(scale * std::cos(t * frequency));
      }
    }
  } else if (init.split_channels) {  // normal positions in channels 0 .. C/2-1
    Real* wpe = params_.data() + wpe_;
    for (int t = 0; t < config_.context; ++t)
      for (int i = 0; i < C; ++i) wpe[static_cast<size_t>(t) * C + i] *= i < C / 2 ? Real(std::sqrt(2.0)) : Real(0);
  }
}

template <typename Real>
Real Model<Real>::forward(const int* tokens, const int* targets, int B, int T, const int* lengths) {
  using namespace kernels;
  const int C = config_.d_model, NH = config_.num_heads, V = config_.vocab_size;
  const int F = config_.mlp_hidden(), L = config_.num_layers;
  bool valid_lengths = true;
  for (int b = 0; lengths && b < B; ++b) valid_lengths = valid_lengths && lengths[b] >= 1 && lengths[b] <= T;
  if (B < 1 || T < 1 || T > config_.context || !valid_lengths) {  // positions past the context have no embedding
    valid_targets_ = 0;
    return std::numeric_limits<Real>::quiet_NaN();
  }
  B_ = B;
  T_ = T;
  // Pack the rows: sequence b keeps its first lengths[b] positions.
  lengths_.assign(B, T);
  if (lengths) lengths_.assign(lengths, lengths + B);
  tokens_.clear();
  targets_.clear();
  for (int b = 0; b < B; ++b) {
    tokens_.insert(tokens_.end(), tokens + static_cast<size_t>(b) * T, tokens + static_cast<size_t>(b) * T + lengths_[b]);
    targets_.insert(targets_.end(), targets + static_cast<size_t>(b) * T, targets + static_cast<size_t>(b) * T + lengths_[b]);
  }
  const size_t N = tokens_.size();
  const Real* p = params_.data();

  encoded_.resize(N * C);
  encoder_forward(encoded_.data(), tokens_.data(), p + wte_, p + wpe_, lengths_.data(), B, C);
  const Real* residual = encoded_.data();
  for (int l = 0; l < L; ++l) {
    const LayerOffsets& o = layer_offsets_[l];
    ln1_[l].resize(N * C);
    ln1_mean_[l].resize(N);
    ln1_rstd_[l].resize(N);
    qkv_[l].resize(N * 3 * C);
    att_[l].resize(static_cast<size_t>(B) * NH * T * T);
    att_y_[l].resize(N * C);
    residual_mid_[l].resize(N * C);
    ln2_[l].resize(N * C);
    ln2_mean_[l].resize(N);
    ln2_rstd_[l].resize(N);
    fc_h_[l].resize(N * F);
    fc_cdf_[l].resize(N * F);
    fc_gelu_[l].resize(N * F);
    residual_out_[l].resize(N * C);

    layernorm_forward(ln1_[l].data(), ln1_mean_[l].data(), ln1_rstd_[l].data(), residual,
                      p + o.ln1_w, p + o.ln1_b, static_cast<int>(N), C);
    linear_forward(qkv_[l].data(), ln1_[l].data(), p + o.qkv_w, p + o.qkv_b, static_cast<int>(N), 3 * C, C);
    attention_forward(att_y_[l].data(), att_[l].data(), qkv_[l].data(), lengths_.data(), B, T, C, NH);
    linear_forward(residual_mid_[l].data(), att_y_[l].data(), p + o.proj_w, p + o.proj_b, static_cast<int>(N), C, C);
    for (size_t i = 0; i < N * C; ++i) residual_mid_[l][i] += residual[i];
    layernorm_forward(ln2_[l].data(), ln2_mean_[l].data(), ln2_rstd_[l].data(), residual_mid_[l].data(),
                      p + o.ln2_w, p + o.ln2_b, static_cast<int>(N), C);
    linear_forward(fc_h_[l].data(), ln2_[l].data(), p + o.fc_w, p + o.fc_b, static_cast<int>(N), F, C);
    gelu_forward(fc_gelu_[l].data(), fc_cdf_[l].data(), fc_h_[l].data(), N * F);
    linear_forward(residual_out_[l].data(), fc_gelu_[l].data(), p + o.fc2_w, p + o.fc2_b, static_cast<int>(N), C, F);
    for (size_t i = 0; i < N * C; ++i) residual_out_[l][i] += residual_mid_[l][i];
    residual = residual_out_[l].data();
  }
  lnf_.resize(N * C);
  lnf_mean_.resize(N);
  lnf_rstd_.resize(N);
  logits_.resize(N * V);
  probs_.resize(N * V);
  layernorm_forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), residual, p + lnf_w_,
                    p + lnf_b_, static_cast<int>(N), C);
  linear_forward<Real>(logits_.data(), lnf_.data(), p + lm_head_, nullptr, static_cast<int>(N), V, C);
  Real loss = softmax_crossentropy_forward(probs_.data(), logits_.data(), targets_.data(), static_cast<int>(N), V);
  valid_targets_ = 0;
  for (size_t i = 0; i < N; ++i) valid_targets_ += targets_[i] >= 0;
  if (valid_targets_ == 0) return std::numeric_limits<Real>::quiet_NaN();
  return loss / static_cast<Real>(valid_targets_);
}

template <typename Real>
void Model<Real>::backward() {
  using namespace kernels;
  const int C = config_.d_model, NH = config_.num_heads, V = config_.vocab_size;
  const int F = config_.mlp_hidden(), L = config_.num_layers;
  const int B = B_, T = T_;
  const int N = static_cast<int>(tokens_.size());
  const Real* p = params_.data();
  Real* g = grads_.data();
  std::fill(grads_.begin(), grads_.end(), Real(0));
  if (valid_targets_ == 0) return;

  // Scratch kept across calls (same sizes every step: no allocation, no page faults).
  std::vector<Real>& dlogits = scratch_[0];
  std::vector<Real>& dresidual = scratch_[1];  // d loss / d residual stream
  std::vector<Real>& dln = scratch_[2];
  std::vector<Real>& dqkv = scratch_[3];
  std::vector<Real>& datt_y = scratch_[4];
  std::vector<Real>& dfc_gelu = scratch_[5];
  std::vector<Real>& dfc_h = scratch_[6];
  std::vector<Real>& datt = scratch_[7];
  dlogits.resize(static_cast<size_t>(N) * V);
  dresidual.assign(static_cast<size_t>(N) * C, Real(0));
  dln.resize(static_cast<size_t>(N) * C);
  dqkv.resize(static_cast<size_t>(N) * 3 * C);
  datt_y.resize(static_cast<size_t>(N) * C);
  dfc_gelu.resize(static_cast<size_t>(N) * F);
  dfc_h.resize(static_cast<size_t>(N) * F);
  datt.resize(static_cast<size_t>(T) * T);

  softmax_crossentropy_backward(dlogits.data(), probs_.data(), targets_.data(), valid_targets_, N, V);
  // logits = lnf . lm_head^T
  std::fill(dln.begin(), dln.end(), Real(0));
  linear_backward<Real>(dln.data(), g + lm_head_, nullptr, dlogits.data(), lnf_.data(), p + lm_head_, N, V, C);
  // lnf = layernorm(residual_out[L-1])
  const Real* last = L > 0 ? residual_out_[L - 1].data() : encoded_.data();
  layernorm_backward(dresidual.data(), g + lnf_w_, g + lnf_b_, dln.data(), last, p + lnf_w_,
                     lnf_mean_.data(), lnf_rstd_.data(), N, C);

  for (int l = L - 1; l >= 0; --l) {
    const LayerOffsets& o = layer_offsets_[l];
    const Real* residual_in = l == 0 ? encoded_.data() : residual_out_[l - 1].data();
    // residual_out = residual_mid + fc2(gelu(fc(ln2(residual_mid)))): dresidual flows through
    // unchanged to residual_mid, and into the MLP branch.
    std::fill(dfc_gelu.begin(), dfc_gelu.end(), Real(0));
    linear_backward(dfc_gelu.data(), g + o.fc2_w, g + o.fc2_b, dresidual.data(), fc_gelu_[l].data(),
                    p + o.fc2_w, N, C, F);
    std::fill(dfc_h.begin(), dfc_h.end(), Real(0));
    gelu_backward(dfc_h.data(), fc_h_[l].data(), fc_cdf_[l].data(), dfc_gelu.data(), static_cast<size_t>(N) * F);
    std::fill(dln.begin(), dln.end(), Real(0));
    linear_backward(dln.data(), g + o.fc_w, g + o.fc_b, dfc_h.data(), ln2_[l].data(), p + o.fc_w, N, F, C);
    layernorm_backward(dresidual.data(), g + o.ln2_w, g + o.ln2_b, dln.data(), residual_mid_[l].data(),
                       p + o.ln2_w, ln2_mean_[l].data(), ln2_rstd_[l].data(), N, C);
    // residual_mid = residual_in + proj(attention(qkv(ln1(residual_in))))
    std::fill(datt_y.begin(), datt_y.end(), Real(0));
    linear_backward(datt_y.data(), g + o.proj_w, g + o.proj_b, dresidual.data(), att_y_[l].data(),
                    p + o.proj_w, N, C, C);
    std::fill(dqkv.begin(), dqkv.end(), Real(0));
    attention_backward(dqkv.data(), datt.data(), datt_y.data(), qkv_[l].data(), att_[l].data(), lengths_.data(), B, T, C, NH);
    std::fill(dln.begin(), dln.end(), Real(0));
    linear_backward(dln.data(), g + o.qkv_w, g + o.qkv_b, dqkv.data(), ln1_[l].data(), p + o.qkv_w, N, 3 * C, C);
    layernorm_backward(dresidual.data(), g + o.ln1_w, g + o.ln1_b, dln.data(), residual_in, p + o.ln1_w,
                       ln1_mean_[l].data(), ln1_rstd_[l].data(), N, C);
  }
  // encoded = wte[tokens] + wpe[positions]
  encoder_backward(g + wte_, g + wpe_, dresidual.data(), tokens_.data(), lengths_.data(), B, C);
}

template <typename Real>
const Real* Model<Real>::attention(int layer) const {
  return att_[layer].data();
}

template <typename Real>
Status Model<Real>::attention_module(int layer, std::unique_ptr<MultiHeadAttention>* out) const {
  if (layer < 0 || layer >= config_.num_layers) {
    return Status(StatusCode::kInvalidArgument, "attention_module: layer " + std::to_string(layer) +
                                                    " is out of range; expected 0 to " + std::to_string(config_.num_layers - 1));
  }
  const int C = config_.d_model;
  const LayerOffsets& o = layer_offsets_[layer];
  Config config;
  config.embed_dim = C;
  config.num_heads = config_.num_heads;
  std::unique_ptr<MultiHeadAttention> module;
  MHA_RETURN_IF_ERROR(MultiHeadAttention::Create(config, 0, &module));
  auto set = [&](const char* name, size_t offset, Shape shape) {
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    const std::vector<float> values(params_.begin() + offset, params_.begin() + offset + count);
    return module->set_parameter(name, values.data(), values.size(), shape);
  };
  MHA_RETURN_IF_ERROR(set("in_proj_weight", o.qkv_w, {3 * C, C}));
  MHA_RETURN_IF_ERROR(set("in_proj_bias", o.qkv_b, {3 * C}));
  MHA_RETURN_IF_ERROR(set("out_proj.weight", o.proj_w, {C, C}));
  MHA_RETURN_IF_ERROR(set("out_proj.bias", o.proj_b, {C}));
  *out = std::move(module);
  return Status::Ok();
}

}  // namespace mha::train
