// The packed-panel GEMM under every product in the forward pass:
//   C[M, N] (ldc) = A[M, K] (lda) . B[K, N] (+ bias[N]) (or C += ... when accumulating)
// B is packed first into panels of kNR columns: panel p holds B[0..K, p*kNR .. p*kNR+kNR) as
// K rows of kNR floats (zero-padded past N), so the micro-kernel streams it with unit stride.
// A is read in place, row-major, and broadcast one float at a time.
//
// The micro-kernel keeps a kMR x kNR tile of C in 2*kMR vector registers (8 independent
// accumulators at kMR = 4) and, per step of k, loads 2 vectors of B and broadcasts kMR floats
// of A: 2*kMR multiplies and 2*kMR adds. K is split into blocks of kKC so a B panel block stays
// in L1 while the rows of A stream past it.
#pragma once

#include <cstdint>

#include "simd.h"

namespace mha::kernels::gemm {

constexpr int kNR = 2 * simd::kLanes;  // columns of C per micro-tile (8 with 128-bit SIMD)
#ifdef MHA_GEMM_MR
constexpr int kMR = MHA_GEMM_MR;
#else
constexpr int kMR = 4;  // rows of C per micro-tile
#endif
constexpr int64_t kKC = 256;  // k per block
#ifdef MHA_GEMM_MC
constexpr int64_t kMC = MHA_GEMM_MC;
#else
constexpr int64_t kMC = 64;   // rows of A per block
#endif
#ifdef MHA_GEMM_NC
constexpr int64_t kNC = MHA_GEMM_NC;
#else
constexpr int64_t kNC = 384;  // columns of B per block (a multiple of kNR)
#endif

// Floats needed to pack a K x N operand.
inline int64_t packed_floats(int64_t K, int64_t N) { return ((N + kNR - 1) / kNR) * kNR * K; }

// Packs B given transposed, as rows b[n * ldb + k] (nn.Linear's weight[N, K], keys[S, hd]).
void pack_nt(float* packed, const float* b, int64_t ldb, int64_t N, int64_t K);
// Packs B given as rows b[k * ldb + n] (values[S, hd]).
void pack_nn(float* packed, const float* b, int64_t ldb, int64_t K, int64_t N);

// Packs rows [0, rows) x k [0, kc) of A (a[i * lda + k]) into panels of kMR rows, k-major:
// panel p at packed + p * kMR * kc holds a[p * kMR + i, k] at [k * kMR + i] (rows past `rows` 0).
void pack_a(float* packed, const float* a, int64_t lda, int64_t rows, int64_t kc);

// One kMR x kNR tile of C, the micro-kernel every product here runs on:
//   c[i * ldc + j] = init[i * init_ld + j] (0 when init is null) + sum_k a[k * a_step + i] * b[k * kNR + j]
// for i < kMR, j < kNR: a holds kMR floats per step of k (a packed A panel: a_step = kMR), b is
// one packed B panel. init_ld 0 repeats one row (a bias); c may equal init (accumulation).
void micro_tile(float* c, int64_t ldc, const float* init, int64_t init_ld, const float* a,
                int64_t a_step, const float* b, int kc);

// C = A . B (+ bias), or C += A . B when `accumulate` (bias then ignored). bias may be null.
void gemm_packed(float* c, int64_t ldc, const float* a, int64_t lda, const float* packed_b,
                 const float* bias, int64_t M, int64_t N, int64_t K, bool accumulate);
// The same over a slice of a larger packing: panels `panel_stride` floats apart (the whole
// packing's kNR * K_total), packed_b pointing at the first k of the slice (+ k_first * kNR).
void gemm_packed(float* c, int64_t ldc, const float* a, int64_t lda, const float* packed_b,
                 int64_t panel_stride, const float* bias, int64_t M, int64_t N, int64_t K,
                 bool accumulate);

// B packed as above but stored 16-bit (IEEE binary16, or bfloat16 when `bf16`): each kKC x kNR
// panel is widened to float32 (exactly) into a buffer on the stack just before the micro-kernel
// sweeps it, so the sums are the float32 B's, in the same order.
void gemm_packed16(float* c, int64_t ldc, const float* a, int64_t lda, const uint16_t* packed_b,
                   bool bf16, const float* bias, int64_t M, int64_t N, int64_t K);

// 16-bit floats widened to float32, exactly (finite values: the loader refuses others).
void widen16(float* out, const uint16_t* in, int64_t n, bool bf16);

}  // namespace mha::kernels::gemm
