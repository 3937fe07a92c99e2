// The encoder's kernels beside attention and the linear layers (mha/kernels.h): embedding with
// its timing signal, LayerNorm, ReLU, residual adds, mean pooling, tanh and L2 normalisation.
// Plain pointers, row-major; outputs first, then inputs, then sizes. Sums run in double, as the
// model's TF.js reference sums.
#pragma once

#include <cstdint>

namespace mha::encoder {

// x[T, E] = table[ids[t]] + (table[ids[t]] + timing[t]),  timing[t] = [sin(t·f), cos(t·f)]
//   table[rows, E], inv_timescales f[E / 2], ids[T] (each < rows)
void embed_with_timing(float* x, const float* table, const float* inv_timescales, const int32_t* ids,
                       int64_t T, int64_t E);

// out[T, D] = (in - mean) · rsqrt(var + eps) · weight + bias, per row of in[T, D]
void layer_norm(float* out, const float* in, const float* weight, const float* bias, double eps,
                int64_t T, int64_t D);

// x[n] = max(x, 0)
void relu_inplace(float* x, int64_t n);

// x[n] += y[n]
void add_inplace(float* x, const float* y, int64_t n);

// The share of x[n] that is exactly 0.
double zero_share(const float* x, int64_t n);

// out[T, N] = bias[N] + h[T, K] · weight_t[K, N], visiting only the nonzero h[t, k]: after a
// ReLU most are 0 (over 90% in the model's FFN), and each skipped one saves N multiply-adds.
//   weight_t = weightᵀ (row k: hidden unit k's weight to every output)
void sparse_input_linear(float* out, const float* h, const float* weight_t, const float* bias, int64_t T, int64_t N,
                         int64_t K);

// out[D] = sum_t in[t, D] / max(T, 1)
void mean_rows(float* out, const float* in, int64_t T, int64_t D);

// x[n] = tanh(x)
void tanh_inplace(float* x, int64_t n);

// x[n] = x · rsqrt(max(sum x², 1e-12))
void l2_normalize_inplace(float* x, int64_t n);

}  // namespace mha::encoder
