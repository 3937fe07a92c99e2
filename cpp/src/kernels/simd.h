// A small portable SIMD layer for the kernels: one vector type `vfloat` of kLanes floats and
// the handful of operations the GEMM and softmax need. Built on the GCC/Clang vector
// extensions, so the same kernel source compiles to
//   - WebAssembly SIMD128 (emcc -msimd128): 4 lanes, f32x4 mul and add (no FMA here),
//   - SSE2 (-msse2): 4 lanes, the same width as WASM SIMD,
//   - AVX2/FMA (-march=native on a machine that has them): 8 lanes, fused multiply-add.
// Without any of these it falls back to 4-lane generic vectors (the compiler scalarises).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#define MHA_SIMD_BYTES 32
#else
#define MHA_SIMD_BYTES 16
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace mha::kernels::simd {

constexpr int kLanes = MHA_SIMD_BYTES / 4;

typedef float vfloat __attribute__((vector_size(MHA_SIMD_BYTES)));
typedef int32_t vint __attribute__((vector_size(MHA_SIMD_BYTES)));
// Unaligned views for loads and stores: plain pointers into row-major buffers.
typedef float vfloat_u __attribute__((vector_size(MHA_SIMD_BYTES), aligned(4)));

inline vfloat load(const float* p) { return *reinterpret_cast<const vfloat_u*>(p); }
inline void store(float* p, vfloat v) { *reinterpret_cast<vfloat_u*>(p) = v; }

inline vfloat splat(float x) {
#if defined(__wasm_simd128__)
  return reinterpret_cast<vfloat>(wasm_f32x4_splat(x));
#else
  return x - vfloat{};  // vector - scalar broadcasts the scalar
#endif
}

// Broadcast of a float read from memory (WASM: v128.load32_splat).
inline vfloat load_splat(const float* p) {
#if defined(__wasm_simd128__)
  return reinterpret_cast<vfloat>(wasm_v128_load32_splat(p));
#elif defined(__AVX2__)
  return _mm256_broadcast_ss(p);
#else
  return splat(*p);
#endif
}

// acc + a * b: fused where the target has FMA, a multiply then an add elsewhere.
inline vfloat madd(vfloat acc, vfloat a, vfloat b) {
#if defined(__FMA__) && defined(__AVX2__)
  return _mm256_fmadd_ps(a, b, acc);
#else
  return acc + a * b;
#endif
}

inline vfloat select(vint mask, vfloat if_true, vfloat if_false) {
  return reinterpret_cast<vfloat>((mask & reinterpret_cast<vint>(if_true)) |
                                  (~mask & reinterpret_cast<vint>(if_false)));
}

inline vfloat max(vfloat a, vfloat b) {
#if defined(__wasm_simd128__)
  return reinterpret_cast<vfloat>(wasm_f32x4_pmax(a, b));
#elif defined(__AVX2__)
  return _mm256_max_ps(a, b);
#elif defined(__SSE2__)
  return _mm_max_ps(a, b);
#else
  return select(a > b, a, b);
#endif
}

inline float reduce_max(vfloat v) {
  float m = v[0];
  for (int i = 1; i < kLanes; ++i) m = v[i] > m ? v[i] : m;
  return m;
}

inline float reduce_sum(vfloat v) {
  float s = 0.f;
  for (int i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

// e^x, lane-wise, for the softmax, whose arguments are x - max <= 0 (or -inf, or NaN), as in
// Cephes' expf: x = n ln2 + r with n integer and |r| <= ln2 / 2 (ln2 split in two, so n ln2 is
// exact), e^r = 1 + r + r^2 P(r) with P of degree 4 fitted for relative error (at most 6.7e-8
// evaluated in float, against 6.5e-8 for Cephes' degree 5), and 2^n built in the exponent
// bits. No upper clamp: x <= 0. x below -87.3 (including -inf) gives exactly 0; NaN stays NaN.
inline vfloat exp_nonpositive(vfloat x) {
  const vfloat input = x;
  x = max(x, splat(-87.33654f));
  const vfloat shifter = splat(12582912.0f);
  vfloat t = x * splat(1.44269504088896341f) + shifter;
  vint n = reinterpret_cast<vint>(t) - reinterpret_cast<vint>(shifter);
  vfloat nf = t - shifter;
  vfloat r = x - nf * splat(0.693359375f);
  r = r - nf * splat(-2.12194440e-4f);
  vfloat p = splat(1.381461275741458e-3f);
  p = p * r + splat(8.368710055947304e-3f);
  p = p * r + splat(4.166838899254799e-2f);
  p = p * r + splat(1.666652113199234e-1f);
  p = p * r + splat(4.999999403953552e-1f);
  p = p * (r * r) + r + splat(1.0f);
  vfloat result = p * reinterpret_cast<vfloat>((n + 127) << 23);
  result = select(input < splat(-87.33654f), splat(0.f), result);
  return select(input != input, input, result);
}

}  // namespace mha::kernels::simd
