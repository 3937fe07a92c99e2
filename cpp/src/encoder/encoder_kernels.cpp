#include "encoder/encoder_kernels.h"

#include <algorithm>
#include <cmath>

namespace mha::encoder {

void embed_with_timing(float* x, const float* table, const float* inv_timescales, const int32_t* ids,
                       int64_t T, int64_t E) {
  const int64_t half = E / 2;
  for (int64_t t = 0; t < T; ++t) {
    const float* e_t = table + static_cast<int64_t>(ids[t]) * E;  // (E)
    float* x_t = x + t * E;                                       // (E)
    const float position = static_cast<float>(t);
    for (int64_t k = 0; k < half; ++k) {
      const float angle = position * inv_timescales[k];
      const float sine = static_cast<float>(std::sin(static_cast<double>(angle)));
      const float cosine = static_cast<float>(std::cos(static_cast<double>(angle)));
      x_t[k] = e_t[k] + (e_t[k] + sine);
      x_t[half + k] = e_t[half + k] + (e_t[half + k] + cosine);
    }
  }
}

void layer_norm(float* out, const float* in, const float* weight, const float* bias, double eps,
                int64_t T, int64_t D) {
  for (int64_t t = 0; t < T; ++t) {
    const float* in_t = in + t * D;
    float* out_t = out + t * D;
    // 1. mean
    double sum = 0;
    for (int64_t d = 0; d < D; ++d) sum += in_t[d];
    const float mean = static_cast<float>(sum / static_cast<double>(D));
    // 2. variance of the centred row
    double squares = 0;
    for (int64_t d = 0; d < D; ++d) {
      const float centred = in_t[d] - mean;
      squares += static_cast<double>(centred * centred);
    }
    const float variance = static_cast<float>(squares / static_cast<double>(D));
    const float rstd = static_cast<float>(1.0 / std::sqrt(static_cast<double>(variance + static_cast<float>(eps))));
    // 3. scale and shift: (weight · rstd) · (in - mean) + bias
    for (int64_t d = 0; d < D; ++d) out_t[d] = (weight[d] * rstd) * (in_t[d] - mean) + bias[d];
  }
}

void relu_inplace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.0f);
}

void add_inplace(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

double zero_share(const float* x, int64_t n) {
  int64_t zeros = 0;
  for (int64_t i = 0; i < n; ++i) zeros += x[i] == 0.0f;
  return n > 0 ? static_cast<double>(zeros) / static_cast<double>(n) : 0.0;
}

void sparse_input_linear(float* out, const float* h, const float* weight_t, const float* bias, int64_t T, int64_t N,
                         int64_t K) {
  // 1. every row starts as the bias
  for (int64_t t = 0; t < T; ++t) std::copy(bias, bias + N, out + t * N);
  // 2. hidden unit by hidden unit (its weight row stays in L1 while the tokens that use it add it)
  for (int64_t k = 0; k < K; ++k) {
    const float* w_k = weight_t + k * N;  // (N)
    for (int64_t t = 0; t < T; ++t) {
      const float h_tk = h[t * K + k];
      if (h_tk == 0.0f) continue;
      float* out_t = out + t * N;  // (N)
      for (int64_t n = 0; n < N; ++n) out_t[n] += h_tk * w_k[n];
    }
  }
}

void mean_rows(float* out, const float* in, int64_t T, int64_t D) {
  const double count = static_cast<double>(std::max<int64_t>(T, 1));
  for (int64_t d = 0; d < D; ++d) {
    double sum = 0;
    for (int64_t t = 0; t < T; ++t) sum += in[t * D + d];
    out[d] = static_cast<float>(static_cast<float>(sum) / count);
  }
}

void tanh_inplace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::tanh(static_cast<double>(x[i])));
}

void l2_normalize_inplace(float* x, int64_t n) {
  double squares = 0;
  for (int64_t i = 0; i < n; ++i) squares += static_cast<double>(x[i] * x[i]);
  const float norm2 = std::max(static_cast<float>(squares), 1e-12f);
  const float rnorm = static_cast<float>(1.0 / std::sqrt(static_cast<double>(norm2)));
  for (int64_t i = 0; i < n; ++i) x[i] *= rnorm;
}

}  // namespace mha::encoder
