#include "gemm.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "parallel.h"

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

// The micro-kernel: c[i, 0..kNR) = init[i] + sum over kc steps of a[k, i] * b_panel[k, :],
// for i < MR. a holds MR floats per k, a_step apart (MR for a packed A panel); b_panel kNR
// floats per k. init[i] is init + i * init_ld (init_ld 0 repeats one row: a bias), or zero
// when init is null; c's rows are ldc apart (c may equal init: accumulation). Kept out of line
// and small, so that the JIT of a WASM engine keeps all 2*MR accumulators in registers.
template <int MR>
__attribute__((noinline)) void micro_kernel(float* c, int64_t ldc, const float* init,
                                            int64_t init_ld, const float* a, int64_t a_step,
                                            const float* b_panel, int kc) {
  constexpr int L = simd::kLanes;
  vfloat acc0[MR], acc1[MR];
  for (int i = 0; i < MR; ++i) {
    acc0[i] = init ? simd::load(init + i * init_ld) : simd::splat(0.f);
    acc1[i] = init ? simd::load(init + i * init_ld + L) : simd::splat(0.f);
  }
  // kUnroll steps of k per iteration. Measured on the C and D projections, GFLOP/s with 1, 2,
  // 4 and 8 steps: Node.js 20 41, 47, 40, 48; Node.js 18 41, 46, 40, 48; Chromium 156 46, 30,
  // 38, 48. Only 8 is fast in all three.
  constexpr int kUnroll = 8;
  int k = 0;
  for (; k + kUnroll <= kc; k += kUnroll) {
    for (int u = 0; u < kUnroll; ++u) {
      const vfloat b0 = simd::load(b_panel + u * kNR);
      const vfloat b1 = simd::load(b_panel + u * kNR + L);
      for (int i = 0; i < MR; ++i) {
        const vfloat a_ik = simd::load_splat(a + u * a_step + i);
        acc0[i] = simd::madd(acc0[i], a_ik, b0);
        acc1[i] = simd::madd(acc1[i], a_ik, b1);
      }
    }
    a += kUnroll * a_step;
    b_panel += kUnroll * kNR;
  }
  for (; k < kc; ++k) {  // the rest, one step at a time
    const vfloat b0 = simd::load(b_panel);
    const vfloat b1 = simd::load(b_panel + L);
    for (int i = 0; i < MR; ++i) {
      const vfloat a_ik = simd::load_splat(a + i);
      acc0[i] = simd::madd(acc0[i], a_ik, b0);
      acc1[i] = simd::madd(acc1[i], a_ik, b1);
    }
    a += a_step;
    b_panel += kNR;
  }
  for (int i = 0; i < MR; ++i) {
    simd::store(c + i * ldc, acc0[i]);
    simd::store(c + i * ldc + L, acc1[i]);
  }
}

// c[rows x n_valid] = (accumulate ? c : bias) + tile.
inline void merge_tile(float* c, int64_t ldc, const float* tile, const float* bias,
                       bool accumulate, int rows, int n_valid) {
  constexpr int L = simd::kLanes;
  if (n_valid == kNR) {
    vfloat base0 = simd::splat(0.f), base1 = simd::splat(0.f);
    if (!accumulate && bias) {
      base0 = simd::load(bias);
      base1 = simd::load(bias + L);
    }
    for (int i = 0; i < rows; ++i) {
      float* c_i = c + i * ldc;
      const float* t_i = tile + i * kNR;
      if (accumulate) {
        simd::store(c_i, simd::load(c_i) + simd::load(t_i));
        simd::store(c_i + L, simd::load(c_i + L) + simd::load(t_i + L));
      } else {
        simd::store(c_i, base0 + simd::load(t_i));
        simd::store(c_i + L, base1 + simd::load(t_i + L));
      }
    }
  } else {
    for (int i = 0; i < rows; ++i) {
      float* c_i = c + i * ldc;
      for (int j = 0; j < n_valid; ++j)
        c_i[j] = (accumulate ? c_i[j] : (bias ? bias[j] : 0.f)) + tile[i * kNR + j];
    }
  }
}

}  // namespace

void pack_a(float* packed, const float* a, int64_t lda, int64_t rows, int64_t kc) {
  for (int64_t i0 = 0; i0 < rows; i0 += kMR) {
    float* panel = packed + i0 * kc;
    const int64_t r = std::min<int64_t>(kMR, rows - i0);
    for (int64_t i = 0; i < kMR; ++i) {
      if (i < r) {
        const float* a_i = a + (i0 + i) * lda;
        for (int64_t k = 0; k < kc; ++k) panel[k * kMR + i] = a_i[k];
      } else {
        for (int64_t k = 0; k < kc; ++k) panel[k * kMR + i] = 0.f;
      }
    }
  }
}

void micro_tile(float* c, int64_t ldc, const float* init, int64_t init_ld, const float* a,
                int64_t a_step, const float* b_panel, int kc) {
  micro_kernel<kMR>(c, ldc, init, init_ld, a, a_step, b_panel, kc);
}

void gemm_packed(float* c, int64_t ldc, const float* a, int64_t lda, const float* packed_b,
                 const float* bias, int64_t M, int64_t N, int64_t K, bool accumulate) {
  gemm_packed(c, ldc, a, lda, packed_b, kNR * K, bias, M, N, K, accumulate);
}

namespace {

template <typename B>
void gemm_serial(float* c, int64_t ldc, const float* a, int64_t lda, const B* packed_b,
                 int64_t panel_stride, const float* bias, int64_t M, int64_t N, int64_t K,
                 bool accumulate, bool bf16);

// Below this many multiply-adds a GEMM is not worth splitting over threads.
constexpr double kParallelMinMacs = 1 << 18;

}  // namespace

void gemm_packed(float* c, int64_t ldc, const float* a, int64_t lda, const float* packed_b,
                 int64_t panel_stride, const float* bias, int64_t M, int64_t N, int64_t K,
                 bool accumulate) {
  if (M <= 0 || N <= 0) return;
  const int64_t panels = (N + kNR - 1) / kNR;
  if (num_threads() > 1 && panels >= 2 && double(M) * double(N) * double(K) >= kParallelMinMacs) {
    // Threads take contiguous ranges of B's column panels (and so of C's columns).
    parallel_for(panels, 1, [&](int64_t p0, int64_t p1, int) {
      const int64_t n0 = p0 * kNR, n1 = std::min(N, p1 * kNR);
      gemm_serial(c + n0, ldc, a, lda, packed_b + p0 * panel_stride, panel_stride,
                  bias ? bias + n0 : nullptr, M, n1 - n0, K, accumulate, false);
    });
    return;
  }
  gemm_serial(c, ldc, a, lda, packed_b, panel_stride, bias, M, N, K, accumulate, false);
}

void gemm_packed16(float* c, int64_t ldc, const float* a, int64_t lda, const uint16_t* packed_b,
                   bool bf16, const float* bias, int64_t M, int64_t N, int64_t K) {
  if (M <= 0 || N <= 0) return;
  const int64_t panels = (N + kNR - 1) / kNR, panel_stride = kNR * K;
  if (num_threads() > 1 && panels >= 2 && double(M) * double(N) * double(K) >= kParallelMinMacs) {
    parallel_for(panels, 1, [&](int64_t p0, int64_t p1, int) {
      const int64_t n0 = p0 * kNR, n1 = std::min(N, p1 * kNR);
      gemm_serial(c + n0, ldc, a, lda, packed_b + p0 * panel_stride, panel_stride,
                  bias ? bias + n0 : nullptr, M, n1 - n0, K, false, bf16);
    });
    return;
  }
  gemm_serial(c, ldc, a, lda, packed_b, panel_stride, bias, M, N, K, false, bf16);
}

// binary16: its exponent and fraction shifted into float32's place read as a float32 are the
// value times 2^-112 (subnormals included), so one multiply by 2^112 rebiases it exactly.
void widen16(float* out, const uint16_t* in, int64_t n, bool bf16) {
  if (bf16) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t bits = uint32_t{in[i]} << 16;
      std::memcpy(out + i, &bits, 4);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t h = in[i], shifted = (h & 0x7fffu) << 13;
    float magnitude;
    std::memcpy(&magnitude, &shifted, 4);
    magnitude *= 0x1p112f;
    uint32_t bits;
    std::memcpy(&bits, &magnitude, 4);
    bits |= (h & 0x8000u) << 16;
    std::memcpy(out + i, &bits, 4);
  }
}

namespace {

template <typename B>
void gemm_serial(float* c, int64_t ldc, const float* a, int64_t lda, const B* packed_b,
                 int64_t panel_stride, const float* bias, int64_t M, int64_t N, int64_t K,
                 bool accumulate, bool bf16) {
  if (K <= 0) {  // an empty sum: C = bias (or unchanged)
    if (accumulate) return;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) c[i * ldc + j] = bias ? bias[j] : 0.f;
    return;
  }
  // Blocks: kNC columns of B (a kKC x kNC block of the packed B stays in L2), kKC steps of k,
  // kMC rows of A (packed into MR-row panels, in L2); the micro-kernel then sweeps each B panel
  // (kKC x kNR, in L1) over the A panels.
  alignas(16) float a_block[kMC * kKC];
  alignas(16) float tile[kMR * kNR];
  alignas(16) float b_wide[std::is_same_v<B, float> ? 1 : kKC * kNR];  // a 16-bit panel widened
  for (int64_t j0 = 0; j0 < N; j0 += kNC) {
    const int64_t nc = std::min(kNC, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += kKC) {
      const int64_t kc = std::min(kKC, K - k0);
      const bool acc = accumulate || k0 > 0;
      for (int64_t i0 = 0; i0 < M; i0 += kMC) {
        const int64_t mc = std::min(kMC, M - i0);
        pack_a(a_block, a + i0 * lda + k0, lda, mc, kc);
        for (int64_t n0 = j0; n0 < j0 + nc; n0 += kNR) {
          const B* b_stored = packed_b + (n0 / kNR) * panel_stride + k0 * kNR;
          const float* b_panel;
          if constexpr (std::is_same_v<B, float>) {
            b_panel = b_stored;
          } else {
            widen16(b_wide, b_stored, kc * kNR, bf16);
            b_panel = b_wide;
          }
          const int n_valid = static_cast<int>(std::min<int64_t>(kNR, N - n0));
          const float* bias_n = bias ? bias + n0 : nullptr;
          for (int64_t i = 0; i < mc; i += kMR) {
            const int rows = static_cast<int>(std::min<int64_t>(kMR, mc - i));
            float* c_tile = c + (i0 + i) * ldc + n0;
            if (!acc && rows == kMR && n_valid == kNR) {  // a whole first tile: into C
              micro_kernel<kMR>(c_tile, ldc, bias_n, 0, a_block + i * kc, kMR, b_panel,
                                static_cast<int>(kc));
            } else {
              // An edge tile, or a sum added to C: through `tile` (C + tile adds two partial
              // sums, which rounds less than running one sum through all of K).
              // (A tile of at most 2 rows, the tail of a short A, runs a 2-row kernel.)
              if (rows <= 2) {
                micro_kernel<2>(tile, kNR, nullptr, 0, a_block + i * kc, kMR, b_panel,
                                static_cast<int>(kc));
              } else {
                micro_kernel<kMR>(tile, kNR, nullptr, 0, a_block + i * kc, kMR, b_panel,
                                  static_cast<int>(kc));
              }
              merge_tile(c_tile, ldc, tile, bias_n, acc, rows, n_valid);
            }
          }
        }
      }
    }
  }
}

}  // namespace

}  // namespace mha::kernels::gemm
