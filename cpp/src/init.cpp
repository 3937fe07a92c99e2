// PyTorch's default initialisation of nn.MultiheadAttention (its _reset_parameters), drawn
// from a portable generator so that the native and WebAssembly builds give identical weights
// for the same seed. The distributions are PyTorch's; the random stream is our own.
#include <cmath>
#include <cstdint>
#include <vector>

#include "mha/attention.h"
#include "mha/kernels.h"

namespace mha {

namespace {

// SplitMix64: small, fast, and identical on every platform (unlike std:: distributions).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits, exactly representable as float.
  double uniform() { return static_cast<double>(next() >> 40) * (1.0 / 16777216.0); }
  // Standard normal by Box-Muller.
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

void fill_uniform(float* data, size_t count, double bound, Random& random) {
  for (size_t i = 0; i < count; ++i) {
    data[i] = static_cast<float>((2.0 * random.uniform() - 1.0) * bound);
  }
}

// xavier_uniform_ on a (fan_out, fan_in) matrix: U(-b, b), b = sqrt(6 / (fan_in + fan_out)).
void xavier_uniform(float* data, int64_t fan_out, int64_t fan_in, Random& random) {
  const double bound = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  fill_uniform(data, static_cast<size_t>(fan_out * fan_in), bound, random);
}

}  // namespace

void MultiHeadAttention::reset_parameters(uint64_t seed) {
  if (packed_only_) {  // drawn unpacked, in the same order, then packed (as float32)
    widen_storage();
    const int64_t E = config_.embed_dim, qd = query_dim();
    in_proj_weight_.assign(static_cast<size_t>(fused_rows() * E), 0.0f);
    out_proj_weight_.assign(static_cast<size_t>(out_dim() * qd), 0.0f);
    packed_only_ = false;
    reset_parameters(seed);
    kernels::pack_weight(packed_in_proj_weight_.data(), in_proj_weight_.data(), fused_rows(), E);
    kernels::pack_weight(packed_out_proj_weight_.data(), out_proj_weight_.data(), out_dim(), qd);
    std::vector<float>().swap(in_proj_weight_);
    std::vector<float>().swap(out_proj_weight_);
    packed_in_proj_per_head_.clear();
    packed_weights_stale_ = false;
    packed_only_ = true;
    return;
  }
  packed_weights_stale_ = true;
  Random random(seed);
  const int64_t E = config_.embed_dim;
  const int64_t kv = kv_dim(), qd = query_dim();
  if (packed_in_proj_) {
    // in_proj_weight (3E, E) as one matrix: fan_in E, fan_out 3E.
    xavier_uniform(in_proj_weight_.data(), 3 * E, E, random);
  } else {
    float* q_w = in_proj_weight_.data();
    float* k_w = q_w + qd * E;
    float* v_w = k_w + kv * config_.kdim;
    xavier_uniform(q_w, qd, E, random);
    xavier_uniform(k_w, kv, config_.kdim, random);
    xavier_uniform(v_w, kv, config_.vdim, random);
  }
  std::fill(in_proj_bias_.begin(), in_proj_bias_.end(), 0.0f);
  // out_proj: nn.Linear's kaiming_uniform_(a = sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in));
  // MultiheadAttention then zeroes its bias.
  fill_uniform(out_proj_weight_.data(), out_proj_weight_.size(), 1.0 / std::sqrt(double(qd)), random);
  std::fill(out_proj_bias_.begin(), out_proj_bias_.end(), 0.0f);
  // bias_k, bias_v (1, 1, G*hd): xavier_normal_, fan_in = fan_out = G*hd.
  const double std_kv = std::sqrt(2.0 / (2.0 * static_cast<double>(kv)));
  for (float& x : bias_k_) x = static_cast<float>(random.normal() * std_kv);
  for (float& x : bias_v_) x = static_cast<float>(random.normal() * std_kv);
}

}  // namespace mha
