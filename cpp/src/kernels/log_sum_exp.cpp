// kernels::log_sum_exp — log sum_i e^(x_i) of one row, the normaliser of a log-softmax:
//   1. m = max_i x_i (vector max)
//   2. s = sum_i e^(x_i - m): each e^(.) in float (simd::exp_nonpositive, relative error at most
//      6.7e-8), the sum in double, so the result is within about 1e-7 of the exact value
//   3. m + log s
#include <algorithm>
#include <cmath>

#include "mha/kernels.h"
#include "simd.h"

namespace mha::kernels {

double log_sum_exp(const float* x, int64_t n) {
  constexpr int L = simd::kLanes;
  if (n <= 0) return -INFINITY;
  float max = x[0];
  int64_t i = 0;
  if (n >= L) {
    simd::vfloat m = simd::load(x);
    for (i = L; i + L <= n; i += L) m = simd::max(m, simd::load(x + i));
    max = simd::reduce_max(m);
  }
  for (; i < n; ++i) max = std::max(max, x[i]);
  if (!std::isfinite(max)) return max;  // +inf, or NaN (and every x -inf: -inf)
  const simd::vfloat shift = simd::splat(max);
  double sum = 0;
  for (i = 0; i + L <= n; i += L) {
    const simd::vfloat e = simd::exp_nonpositive(simd::load(x + i) - shift);
    for (int j = 0; j < L; ++j) sum += e[j];
  }
  for (; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - max);
  return max + std::log(sum);
}

}  // namespace mha::kernels
