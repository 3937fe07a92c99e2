#include "mha/train/model.h"

#include <cmath>
#include <limits>

#include "mha/train/grammar.h"
#include "model_impl.h"
#include "train_kernels.h"

namespace mha::train {

Status validate(const ModelConfig& c) {
  auto bad = [](const std::string& what, int got) {
    return Status(StatusCode::kInvalidConfig, what + ", got " + std::to_string(got));
  };
  if (c.vocab_size < 2) return bad("vocab_size: expected >= 2", c.vocab_size);
  if (c.context < 1) return bad("context: expected >= 1", c.context);
  if (c.d_model < 1) return bad("d_model: expected >= 1", c.d_model);
  if (c.num_heads < 1) return bad("num_heads: expected >= 1", c.num_heads);
  if (c.num_layers < 1) return bad("num_layers: expected >= 1", c.num_layers);
  if (c.d_model % c.num_heads != 0)
    return Status(StatusCode::kInvalidConfig,
                  "d_model must be divisible by num_heads: expected a multiple of " +
                      std::to_string(c.num_heads) + ", got " + std::to_string(c.d_model));
  return Status::Ok();
}

std::vector<ParameterSpec> parameter_specs(const ModelConfig& c) {
  const int C = c.d_model, V = c.vocab_size, F = c.mlp_hidden();
  std::vector<ParameterSpec> specs;
  auto add = [&specs](std::string name, std::vector<int> shape) {
    ParameterSpec spec;
    spec.name = std::move(name);
    spec.shape = std::move(shape);
    spec.size = 1;
    for (int d : spec.shape) spec.size *= static_cast<size_t>(d);
    spec.offset = specs.empty() ? 0 : specs.back().offset + specs.back().size;
    spec.decay = spec.shape.size() == 2;
    specs.push_back(std::move(spec));
  };
  add("wte.weight", {V, C});
  add("wpe.weight", {c.context, C});
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string p = "blocks." + std::to_string(l) + ".";
    add(p + "ln1.weight", {C});
    add(p + "ln1.bias", {C});
    add(p + "attn.qkv.weight", {3 * C, C});
    add(p + "attn.qkv.bias", {3 * C});
    add(p + "attn.proj.weight", {C, C});
    add(p + "attn.proj.bias", {C});
    add(p + "ln2.weight", {C});
    add(p + "ln2.bias", {C});
    add(p + "mlp.fc.weight", {F, C});
    add(p + "mlp.fc.bias", {F});
    add(p + "mlp.proj.weight", {C, F});
    add(p + "mlp.proj.bias", {C});
  }
  add("lnf.weight", {C});
  add("lnf.bias", {C});
  add("lm_head.weight", {V, C});
  return specs;
}

size_t parameter_count(const ModelConfig& config) {
  std::vector<ParameterSpec> specs = parameter_specs(config);
  return specs.back().offset + specs.back().size;
}

template class Model<float>;

template <typename Real>
AdamW<Real>::AdamW(const std::vector<ParameterSpec>& specs, const AdamWConfig& config) : config_(config) {
  size_t total = specs.empty() ? 0 : specs.back().offset + specs.back().size;
  decay_.assign(total, 0);
  for (const ParameterSpec& spec : specs) {
    const double rate = !spec.decay ? 0 : spec.weight_decay >= 0 ? spec.weight_decay : config.weight_decay;
    std::fill(decay_.begin() + spec.offset, decay_.begin() + spec.offset + spec.size, rate);
  }
  m_.assign(total, Real(0));
  v_.assign(total, Real(0));
}

template <typename Real>
void AdamW<Real>::update(std::vector<Real>& params, const std::vector<Real>& grads, double lr) {
  ++step_;
  const Real beta1 = static_cast<Real>(config_.beta1), beta2 = static_cast<Real>(config_.beta2);
  const Real bias_correction1 = Real(1) - static_cast<Real>(std::pow(config_.beta1, step_));
  const Real bias_correction2 = Real(1) - static_cast<Real>(std::pow(config_.beta2, step_));
  const Real step_size = static_cast<Real>(lr) / bias_correction1;
  const Real sqrt_bc2 = std::sqrt(bias_correction2);
  const Real eps = static_cast<Real>(config_.eps);
  for (size_t i = 0; i < params.size(); ++i) {
    // torch.optim.AdamW (single-tensor path): decay first, then the Adam step
    if (decay_[i] != 0) params[i] *= Real(1) - static_cast<Real>(lr * decay_[i]);
    m_[i] = beta1 * m_[i] + (Real(1) - beta1) * grads[i];
    v_[i] = beta2 * v_[i] + (Real(1) - beta2) * grads[i] * grads[i];
    const Real denom = std::sqrt(v_[i]) / sqrt_bc2 + eps;
    params[i] -= step_size * m_[i] / denom;
  }
}

template class AdamW<float>;
template class AdamW<double>;

template <typename Real>
double clip_grad_norm(std::vector<Real>& grads, double max_norm) {
  double sum = 0;
  for (Real g : grads) sum += static_cast<double>(g) * g;
  const double norm = std::sqrt(sum);
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1) {
    for (Real& g : grads) g = static_cast<Real>(g * coef);
  }
  return norm;
}

template double clip_grad_norm<float>(std::vector<float>&, double);
template double clip_grad_norm<double>(std::vector<double>&, double);

double learning_rate(int step, int warmup, int total, double peak, double min_lr) {
  if (step < warmup) return peak * (step + 1) / warmup;
  if (step >= total) return min_lr;
  const double progress = static_cast<double>(step - warmup) / std::max(1, total - warmup);
  return min_lr + 0.5 * (peak - min_lr) * (1.0 + std::cos(3.141592653589793 * progress));
}

}  // namespace mha::train
