#include "gemm.h"

#include <algorithm>

namespace mha::kernels::gemm {

using simd::vfloat;

void pack_nt(float* packed, const float* b, int64_t ldb, int64_t N, int64_t K) {
  for (int64_t n0 = 0; n0 < N; n0 += kNR) {
    float* panel = packed + (n0 / kNR) * kNR * K;  // panel[k * kNR + j] = b[(n0 + j), k]
    const int64_t cols = std::min<int64_t>(kNR, N - n0);
    for (int64_t j = 0; j < cols; ++j) {
      const float* b_row = b + (n0 + j) * ldb;
      for (int64_t k = 0; k < K; ++k) panel[k * kNR + j] = b_row[k];
    }
    for (int64_t j = cols; j < kNR; ++j)
      for (int64_t k = 0; k < K; ++k) panel[k * kNR + j] = 0.f;
  }
}

void pack_nn(float* packed, const float* b, int64_t ldb, int64_t K, int64_t N) {
  for (int64_t n0 = 0; n0 < N; n0 += kNR) {
    float* panel = packed + (n0 / kNR) * kNR * K;  // panel[k * kNR + j] = b[k, n0 + j]
    const int64_t cols = std::min<int64_t>(kNR, N - n0);
    if (cols == kNR) {
      for (int64_t k = 0; k < K; ++k) {
        const float* b_k = b + k * ldb + n0;
        for (int v = 0; v < kNR; v += simd::kLanes)
          simd::store(panel + k * kNR + v, simd::load(b_k + v));
      }
    } else {
      for (int64_t k = 0; k < K; ++k) {
        const float* b_k = b + k * ldb + n0;
        for (int64_t j = 0; j < kNR; ++j) panel[k * kNR + j] = j < cols ? b_k[j] : 0.f;
      }
    }
  }
}

namespace {

// One MR x kNR tile of C from kc steps of k: a points at A[row, k0] (rows lda apart), bp at the
// packed panel's row k0. Only the first n_valid columns of the tile are written.
template <int MR>
inline void micro_kernel(float* c, int64_t ldc, const float* a, int64_t lda, const float* bp,
                         int64_t kc, const float* bias, bool accumulate, int n_valid) {
  constexpr int L = simd::kLanes;
  vfloat acc0[MR], acc1[MR];
  const float* a_row[MR];
  for (int i = 0; i < MR; ++i) {
    acc0[i] = simd::splat(0.f);
    acc1[i] = simd::splat(0.f);
    a_row[i] = a + i * lda;
  }
  for (int64_t k = 0; k < kc; ++k) {
    const vfloat b0 = simd::load(bp);
    const vfloat b1 = simd::load(bp + L);
    bp += kNR;
    for (int i = 0; i < MR; ++i) {
      const vfloat a_ik = simd::load_splat(a_row[i] + k);
      acc0[i] = simd::madd(acc0[i], a_ik, b0);
      acc1[i] = simd::madd(acc1[i], a_ik, b1);
    }
  }
  if (n_valid == kNR) {
    vfloat base0 = simd::splat(0.f), base1 = simd::splat(0.f);
    if (!accumulate && bias) {
      base0 = simd::load(bias);
      base1 = simd::load(bias + L);
    }
    for (int i = 0; i < MR; ++i) {
      float* c_i = c + i * ldc;
      if (accumulate) {
        simd::store(c_i, simd::load(c_i) + acc0[i]);
        simd::store(c_i + L, simd::load(c_i + L) + acc1[i]);
      } else {
        simd::store(c_i, base0 + acc0[i]);
        simd::store(c_i + L, base1 + acc1[i]);
      }
    }
  } else {
    float tile[kNR];
    for (int i = 0; i < MR; ++i) {
      simd::store(tile, acc0[i]);
      simd::store(tile + L, acc1[i]);
      float* c_i = c + i * ldc;
      for (int j = 0; j < n_valid; ++j)
        c_i[j] = (accumulate ? c_i[j] : (bias ? bias[j] : 0.f)) + tile[j];
    }
  }
}

template <int MR>
void row_block(float* c, int64_t ldc, const float* a, int64_t lda, const float* panel,
               int64_t kc, const float* bias, bool accumulate, int n_valid, int64_t rows) {
  int64_t i = 0;
  for (; i + MR <= rows; i += MR)
    micro_kernel<MR>(c + i * ldc, ldc, a + i * lda, lda, panel, kc, bias, accumulate, n_valid);
  const int64_t rest = rows - i;
  c += i * ldc;
  a += i * lda;
  // The leftover rows (fewer than MR) take a narrower kernel.
  if (rest == 1) micro_kernel<1>(c, ldc, a, lda, panel, kc, bias, accumulate, n_valid);
  if (rest == 2) micro_kernel<2>(c, ldc, a, lda, panel, kc, bias, accumulate, n_valid);
  if (rest == 3) micro_kernel<3>(c, ldc, a, lda, panel, kc, bias, accumulate, n_valid);
  if (MR > 4 && rest >= 4) {
    micro_kernel<4>(c, ldc, a, lda, panel, kc, bias, accumulate, n_valid);
    c += 4 * ldc;
    a += 4 * lda;
    if (rest == 5) micro_kernel<1>(c, ldc, a, lda, panel, kc, bias, accumulate, n_valid);
    if (rest == 6) micro_kernel<2>(c, ldc, a, lda, panel, kc, bias, accumulate, n_valid);
    if (rest == 7) micro_kernel<3>(c, ldc, a, lda, panel, kc, bias, accumulate, n_valid);
  }
}

}  // namespace

void gemm_packed(float* c, int64_t ldc, const float* a, int64_t lda, const float* packed_b,
                 const float* bias, int64_t M, int64_t N, int64_t K, bool accumulate) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // an empty sum: C = bias (or unchanged)
    if (accumulate) return;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) c[i * ldc + j] = bias ? bias[j] : 0.f;
    return;
  }
  // Blocks: kNC columns of B (a kKC x kNC block of the packed B stays in L2), kKC steps of k,
  // kMC rows of A; the micro-kernel then sweeps each B panel (kKC x kNR, in L1) over the rows.
  for (int64_t j0 = 0; j0 < N; j0 += kNC) {
    const int64_t nc = std::min(kNC, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += kKC) {
      const int64_t kc = std::min(kKC, K - k0);
      const bool acc = accumulate || k0 > 0;
      for (int64_t i0 = 0; i0 < M; i0 += kMC) {
        const int64_t mc = std::min(kMC, M - i0);
        for (int64_t n0 = j0; n0 < j0 + nc; n0 += kNR) {
          const float* panel = packed_b + (n0 / kNR) * kNR * K + k0 * kNR;
          const int n_valid = static_cast<int>(std::min<int64_t>(kNR, N - n0));
          row_block<kMR>(c + i0 * ldc + n0, ldc, a + i0 * lda + k0, lda, panel, kc,
                         bias ? bias + n0 : nullptr, acc, n_valid, mc);
        }
      }
    }
  }
}

}  // namespace mha::kernels::gemm
