// kernels::gelu_tanh — GPT-2's MLP activation, four (or eight) lanes at a time:
//   gelu(x) = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
//   tanh(u) = sign(u) (1 - e) / (1 + e),  e = exp(-2 |u|) in (0, 1]   (no overflow for any u)
// in float, as PyTorch computes it: e has a relative error of at most 6.7e-8
// (simd::exp_nonpositive), so tanh(u) is within about 1e-7 of the exact value, absolutely.
#include <algorithm>

#include "mha/kernels.h"
#include "simd.h"

namespace mha::kernels {

namespace {

inline simd::vfloat gelu_tanh_lanes(simd::vfloat x) {
  using simd::splat;
  const simd::vfloat u = splat(0.7978845608028654f) * (x + splat(0.044715f) * x * x * x);
  const simd::vint bits = reinterpret_cast<simd::vint>(u);
  const simd::vint sign = bits & ((simd::vint{} + 1) << 31);
  const simd::vfloat magnitude = reinterpret_cast<simd::vfloat>(bits ^ sign);
  const simd::vfloat e = simd::exp_nonpositive(splat(-2.0f) * magnitude);
  const simd::vfloat t = (splat(1.0f) - e) / (splat(1.0f) + e);
  const simd::vfloat tanh_u = reinterpret_cast<simd::vfloat>(reinterpret_cast<simd::vint>(t) | sign);
  return splat(0.5f) * x * (splat(1.0f) + tanh_u);
}

}  // namespace

void gelu_tanh(float* x, int64_t n) {
  constexpr int L = simd::kLanes;
  int64_t i = 0;
  for (; i + L <= n; i += L) simd::store(x + i, gelu_tanh_lanes(simd::load(x + i)));
  if (i < n) {  // the last n % L values, through one padded vector
    alignas(16) float rest[L] = {};
    std::copy(x + i, x + n, rest);
    simd::store(rest, gelu_tanh_lanes(simd::load(rest)));
    std::copy(rest, rest + (n - i), x + i);
  }
}

}  // namespace mha::kernels
