// Scaled dot-product attention for one (batch, head) pair: with the probabilities written out,
// and streaming (online softmax over key tiles) when they are not needed. Both run on the
// packed GEMM's micro-kernel (gemm.h) and share one layout of the scores, transposed, 8 queries
// per key:
//   block[p][j * 8 + t] = score(query p * 8 + t, key j)      (panel p of 8 query rows)
// (8 = gemm::kNR, 16 with AVX2). This is what the micro-kernel writes when keys are its A side
// and queries its B side, and it is at once what the softmax wants (the lanes of a vector are
// queries, so the max and the sum are lane-wise, without horizontal reductions) and what P . V
// wants as its A side (4 query rows per step of k, a_step kNR floats): nothing is repacked
// between the two products.
// K and V of the head are packed once; queries are taken in blocks of kRowBlock rows, which are
// independent: with threads (parallel.h) they are shared out between them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gemm.h"
#include "mha/kernels.h"
#include "parallel.h"
#include "simd.h"

namespace mha::kernels {

namespace {

using simd::vfloat;
constexpr int64_t MR = gemm::kMR;      // keys per A panel; queries per A step of P . V (4)
constexpr int64_t NR = gemm::kNR;      // queries per panel of the transposed block (8; 16)
constexpr int64_t VL = simd::kLanes;   // queries per softmax vector, a lane group (4; 8)
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int64_t kRowBlock = 64;   // query rows per block
constexpr int64_t kKeyTile = 256;   // keys per tile in the streaming kernel
static_assert(kRowBlock % NR == 0 && NR == 2 * VL && NR % MR == 0,
              "a query panel is two lane groups, and whole groups of MR queries");
static_assert(kKeyTile % MR == 0, "key tiles hold whole panels of keys");

inline bool has_mask(const MaskSpec& mask) {
  return mask.attn != nullptr || mask.key != nullptr || mask.causal;
}

inline float fully_masked_fill(bool zero_fully_masked) {
  return zero_fully_masked ? 0.0f : std::numeric_limits<float>::quiet_NaN();
}

inline void scale_row(float* row, int64_t n, float factor) {
  const vfloat f = simd::splat(factor);
  int64_t j = 0;
  for (; j + simd::kLanes <= n; j += simd::kLanes) simd::store(row + j, simd::load(row + j) * f);
  for (; j < n; ++j) row[j] *= factor;
}

// The head's K as the A side (panels of MR keys, k-major over hd) and V as the B side (panels
// of NR dims over all S keys), one after the other in `packed`.
inline int64_t packed_k_floats(int64_t S, int64_t hd) { return ((S + MR - 1) / MR) * MR * hd; }
inline int64_t packed_kv_floats(int64_t S, int64_t hd) {
  return packed_k_floats(S, hd) + gemm::packed_floats(S, hd);
}
struct PackedKv {
  const float* k;
  const float* v;
};
inline PackedKv pack_kv(float* packed, const float* k, int64_t ld_k, const float* v,
                        int64_t ld_v, int64_t S, int64_t hd) {
  float* v_packed = packed + packed_k_floats(S, hd);
  gemm::pack_a(packed, k, ld_k, S, hd);
  gemm::pack_nn(v_packed, v, ld_v, S, hd);
  return {packed, v_packed};
}

// Where query r of the block starts in a transposed block whose panels hold `keys` keys (its
// keys follow NR floats apart). A lane group starts at r = g * VL.
inline float* query_of(float* block, int64_t keys, int64_t r) {
  return block + (r / NR) * keys * NR + r % NR;
}

// scores^T of keys j0 + [0, cols) against the block's packed queries (query_panels panels of
// NR): `block` holds panels of `keys` keys (keys >= cols).
void scores_transposed(float* block, int64_t keys, const float* q_packed, int64_t query_panels,
                       const float* k_packed, int64_t j0, int64_t cols, int64_t hd) {
  for (int64_t p = 0; p < query_panels; ++p) {
    float* block_p = block + p * keys * NR;
    for (int64_t jj = 0; jj < cols; jj += MR) {
      gemm::micro_tile(block_p + jj * NR, NR, nullptr, 0, k_packed + (j0 + jj) * hd, MR,
                       q_packed + p * NR * hd, static_cast<int>(hd));
    }
  }
}

// Adds the mask to the transposed block: queries i0 + [0, rows), keys j0 + [0, cols).
void add_mask_transposed(float* block, int64_t keys, const MaskSpec& mask, int64_t i0,
                         int64_t rows, int64_t j0, int64_t cols) {
  const int64_t masked_end = std::min(j0 + cols, mask.mask_cols);
  for (int64_t r = 0; r < rows; ++r) {
    float* s_r = block + (r / NR) * keys * NR + r % NR;
    const int64_t i = i0 + r;
    for (int64_t j = j0; j < masked_end; ++j) {
      float& s = s_r[(j - j0) * NR];
      if (mask.attn != nullptr) s += mask.attn[i * mask.ld_attn + j];
      if (mask.key != nullptr) s += mask.key[j];
      if (mask.causal && j > i) s = kNegInf;
    }
  }
}

// Lane-wise over the VL queries of a lane group (its keys NR floats apart): the largest score
// of each query, starting from `start`.
inline vfloat group_max(const float* s_g, int64_t cols, vfloat start) {
  vfloat m = start;
  for (int64_t j = 0; j < cols; ++j) m = simd::max(m, simd::load(s_g + j * NR));
  return m;
}

// s = exp(s - max) in place for the group's keys; returns the lane-wise sums. Queries with
// every key masked have max -inf: they are shifted by 0 instead, so their exp(-inf) gives 0.
inline vfloat group_exp(float* s_g, int64_t cols, vfloat max) {
  const vfloat shift = simd::select(max == simd::splat(kNegInf), simd::splat(0.f), max);
  vfloat sum = simd::splat(0.f);
  for (int64_t j = 0; j < cols; ++j) {
    const vfloat e = simd::exp_nonpositive(simd::load(s_g + j * NR) - shift);
    simd::store(s_g + j * NR, e);
    sum += e;
  }
  return sum;
}

// out[rows, hd] (+)= P . V for the block's keys j0 + [0, cols): A = MR queries of the
// transposed block per step of k, B = V's panels from key j0. Whole tiles go straight into out
// (a later key tile's sum starting from what out holds); edge tiles through a small tile.
void probs_times_v(float* out, int64_t ld_out, float* block, int64_t keys, int64_t rows,
                   const float* v_packed, int64_t S, int64_t j0, int64_t cols, int64_t hd,
                   bool accumulate) {
  alignas(32) float tile[MR * NR];
  const int64_t row_groups = (rows + MR - 1) / MR;
  for (int64_t g = 0; g < row_groups; ++g) {
    const float* p_g = query_of(block, keys, g * MR);
    const int64_t g_rows = std::min(MR, rows - g * MR);
    for (int64_t d0 = 0; d0 < hd; d0 += NR) {
      const float* v_panel = v_packed + (d0 / NR) * NR * S + j0 * NR;
      float* out_tile = out + g * MR * ld_out + d0;
      const int64_t d_cols = std::min(NR, hd - d0);
      if (g_rows == MR && d_cols == NR) {  // a whole tile: straight into out (from out, if adding)
        gemm::micro_tile(out_tile, ld_out, accumulate ? out_tile : nullptr, accumulate ? ld_out : 0, p_g, NR,
                         v_panel, static_cast<int>(cols));
        continue;
      }
      gemm::micro_tile(tile, NR, nullptr, 0, p_g, NR, v_panel, static_cast<int>(cols));
      for (int64_t r = 0; r < g_rows; ++r)
        for (int64_t d = 0; d < d_cols; ++d)
          out_tile[r * ld_out + d] = (accumulate ? out_tile[r * ld_out + d] : 0.0f) + tile[r * NR + d];
    }
  }
}

// Writes the `rows` (<= VL) queries of a lane group of the transposed block (keys NR floats
// apart) as rows of `probs` (ld_probs apart); with 4 lanes, 4 x 4 at a time.
void write_rows(float* probs, int64_t ld_probs, const float* s_g, int64_t rows, int64_t S) {
  int64_t j = 0;
#if MHA_SIMD_BYTES == 16
  if (rows == 4) {
    for (; j + 4 <= S; j += 4) {
      // v_k = the 4 queries at key j + k; transposed, row t = query t at keys j .. j+3
      const vfloat v0 = simd::load(s_g + (j + 0) * NR), v1 = simd::load(s_g + (j + 1) * NR);
      const vfloat v2 = simd::load(s_g + (j + 2) * NR), v3 = simd::load(s_g + (j + 3) * NR);
      const vfloat t01lo = __builtin_shufflevector(v0, v1, 0, 4, 1, 5);
      const vfloat t23lo = __builtin_shufflevector(v2, v3, 0, 4, 1, 5);
      const vfloat t01hi = __builtin_shufflevector(v0, v1, 2, 6, 3, 7);
      const vfloat t23hi = __builtin_shufflevector(v2, v3, 2, 6, 3, 7);
      simd::store(probs + 0 * ld_probs + j, __builtin_shufflevector(t01lo, t23lo, 0, 1, 4, 5));
      simd::store(probs + 1 * ld_probs + j, __builtin_shufflevector(t01lo, t23lo, 2, 3, 6, 7));
      simd::store(probs + 2 * ld_probs + j, __builtin_shufflevector(t01hi, t23hi, 0, 1, 4, 5));
      simd::store(probs + 3 * ld_probs + j, __builtin_shufflevector(t01hi, t23hi, 2, 3, 6, 7));
    }
  }
#endif
  for (; j < S; ++j)
    for (int64_t t = 0; t < rows; ++t) probs[t * ld_probs + j] = s_g[j * NR + t];
}

// The buffers a thread works in: the block's packed queries (the B side, panels of NR) and its
// transposed scores (panels of `keys` keys), then the running max and sum of the streaming
// kernel.
struct BlockScratch {
  float* q_packed;  // (hd, kRowBlock)
  float* scores;    // (kRowBlock / NR) panels of (keys, NR)
  float* run_max;   // (kRowBlock)
  float* run_sum;   // (kRowBlock)
};
inline int64_t block_scratch_floats(int64_t keys, int64_t hd) {
  return kRowBlock * hd + kRowBlock * keys + 2 * kRowBlock;
}
inline BlockScratch block_scratch(float* at, int64_t keys, int64_t hd) {
  BlockScratch s;
  s.q_packed = at;
  s.scores = s.q_packed + kRowBlock * hd;
  s.run_max = s.scores + kRowBlock * keys;
  s.run_sum = s.run_max + kRowBlock;
  return s;
}

// Calls body(sc, i0, rows) for each block of kRowBlock query rows of [0, L_rows), the blocks
// shared out between threads; each thread works in its own BlockScratch (per_thread floats
// apart from `scratch`, its blocks holding `keys` keys).
template <typename Body>
void for_each_row_block(int64_t L_rows, float* scratch, int64_t per_thread, int64_t keys,
                        int64_t hd, const Body& body) {
  const int64_t blocks = (L_rows + kRowBlock - 1) / kRowBlock;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1, int thread) {
    const BlockScratch sc = block_scratch(scratch + thread * per_thread, keys, hd);
    for (int64_t i0 = b0 * kRowBlock; i0 < std::min(L_rows, b1 * kRowBlock); i0 += kRowBlock)
      body(sc, i0, std::min(kRowBlock, L_rows - i0));
  });
}

// What attention_with_probs works in, kept per thread between calls: the packed K and V, then
// one BlockScratch per thread (its blocks hold all S keys).
std::vector<float>& with_probs_buffer() {
  thread_local std::vector<float> buffer;
  return buffer;
}

}  // namespace

void attention_with_probs(float* out, int64_t ld_out, float* probs, int64_t ld_probs,
                          const float* q, int64_t ld_q, const float* k, int64_t ld_k,
                          const float* v, int64_t ld_v, const MaskSpec& mask, int64_t L_rows,
                          int64_t S, int64_t hd, bool zero_fully_masked) {
  const int64_t keys = ((S + MR - 1) / MR) * MR;  // whole key panels
  const int64_t per_thread = block_scratch_floats(keys, hd);
  std::vector<float>& buffer = with_probs_buffer();
  const size_t need = static_cast<size_t>(packed_kv_floats(S, hd) + num_threads() * per_thread);
  if (buffer.size() < need) buffer.resize(need);
  const PackedKv kv = pack_kv(buffer.data(), k, ld_k, v, ld_v, S, hd);
  float* scratch = buffer.data() + packed_kv_floats(S, hd);
  const bool masked = has_mask(mask);

  for_each_row_block(L_rows, scratch, per_thread, keys, hd,
                     [&](const BlockScratch& sc, int64_t i0, int64_t rows) {
    const int64_t lane_groups = (rows + VL - 1) / VL;
    float* out_b = out + i0 * ld_out;
    float* probs_b = probs + i0 * ld_probs;
    // 1. scores^T = (q . k^T)^T (q already scaled by 1/sqrt(hd)), plus the mask
    gemm::pack_nt(sc.q_packed, q + i0 * ld_q, ld_q, rows, hd);
    scores_transposed(sc.scores, keys, sc.q_packed, (rows + NR - 1) / NR, kv.k, 0, S, hd);
    if (masked) add_mask_transposed(sc.scores, keys, mask, i0, rows, 0, S);
    // 2. softmax over all S keys, lane-wise, normalised; written out as rows of probs
    for (int64_t g = 0; g < lane_groups; ++g) {
      float* s_g = query_of(sc.scores, keys, g * VL);
      const vfloat max = group_max(s_g, S, simd::splat(kNegInf));
      simd::store(sc.run_max + g * VL, max);  // -inf: every key of that query masked
      const vfloat inv_sum = simd::splat(1.0f) / group_exp(s_g, S, max);
      for (int64_t j = 0; j < S; ++j) simd::store(s_g + j * NR, simd::load(s_g + j * NR) * inv_sum);
      const int64_t g_rows = std::min(VL, rows - g * VL);
      write_rows(probs_b + g * VL * ld_probs, ld_probs, s_g, g_rows, S);
      for (int64_t t = 0; t < g_rows; ++t) {  // every key masked: the row is NaN (or 0)
        if (max[t] == kNegInf) {
          float* p_t = probs_b + (g * VL + t) * ld_probs;
          std::fill(p_t, p_t + S, fully_masked_fill(zero_fully_masked));
        }
      }
    }
    // 3. out = probs . v
    probs_times_v(out_b, ld_out, sc.scores, keys, rows, kv.v, S, 0, S, hd, false);
    for (int64_t r = 0; r < rows; ++r) {
      if (sc.run_max[r] == kNegInf) {
        std::fill(out_b + r * ld_out, out_b + r * ld_out + hd, fully_masked_fill(zero_fully_masked));
      }
    }
  });
}

int64_t attention_streaming_scratch_floats(int64_t L_rows, int64_t S, int64_t hd) {
  (void)L_rows;
  // one BlockScratch per thread (its blocks hold one key tile), then the head's packed K and V
  return num_threads() * block_scratch_floats(kKeyTile, hd) + packed_kv_floats(S, hd);
}

void attention_streaming(float* out, int64_t ld_out, const float* q, int64_t ld_q,
                         const float* k, int64_t ld_k, const float* v, int64_t ld_v,
                         const MaskSpec& mask, int64_t L_rows, int64_t S, int64_t hd,
                         bool zero_fully_masked, float* scratch) {
  const int64_t per_thread = block_scratch_floats(kKeyTile, hd);
  const PackedKv kv = pack_kv(scratch + num_threads() * per_thread, k, ld_k, v, ld_v, S, hd);
  const bool masked = has_mask(mask);

  for_each_row_block(L_rows, scratch, per_thread, kKeyTile, hd,
                     [&](const BlockScratch& sc, int64_t i0, int64_t rows) {
    const int64_t lane_groups = (rows + VL - 1) / VL;
    float* out_b = out + i0 * ld_out;  // (rows, hd): the running, unnormalised output
    gemm::pack_nt(sc.q_packed, q + i0 * ld_q, ld_q, rows, hd);
    std::fill(sc.run_max, sc.run_max + lane_groups * VL, kNegInf);
    std::fill(sc.run_sum, sc.run_sum + lane_groups * VL, 0.0f);
    for (int64_t j0 = 0; j0 < S; j0 += kKeyTile) {
      const int64_t cols = std::min(kKeyTile, S - j0);
      const bool first_tile = j0 == 0;
      // 1. scores^T of this key tile, plus the mask
      scores_transposed(sc.scores, kKeyTile, sc.q_packed, (rows + NR - 1) / NR, kv.k, j0, cols, hd);
      if (masked) add_mask_transposed(sc.scores, kKeyTile, mask, i0, rows, j0, cols);
      // 2. online softmax: rescale what was summed so far to the new running max
      for (int64_t g = 0; g < lane_groups; ++g) {
        float* s_g = query_of(sc.scores, kKeyTile, g * VL);
        const vfloat old_max = simd::load(sc.run_max + g * VL);
        const vfloat new_max = group_max(s_g, cols, old_max);
        const vfloat sum = group_exp(s_g, cols, new_max);
        const vfloat shift = simd::select(new_max == simd::splat(kNegInf), simd::splat(0.f), new_max);
        const vfloat rescale = simd::exp_nonpositive(old_max - shift);  // 0 while nothing was summed
        simd::store(sc.run_sum + g * VL, simd::load(sc.run_sum + g * VL) * rescale + sum);
        simd::store(sc.run_max + g * VL, new_max);
        if (!first_tile) {
          for (int64_t t = 0; t < VL && g * VL + t < rows; ++t)
            if (rescale[t] != 1.0f) scale_row(out_b + (g * VL + t) * ld_out, hd, rescale[t]);
        }
      }
      // 3. out += exp(scores) . v of this tile
      probs_times_v(out_b, ld_out, sc.scores, kKeyTile, rows, kv.v, S, j0, cols, hd, !first_tile);
    }
    if (S == 0) {
      for (int64_t r = 0; r < rows; ++r) std::fill(out_b + r * ld_out, out_b + r * ld_out + hd, 0.0f);
    }
    // 4. normalise by the running sum
    for (int64_t r = 0; r < rows; ++r) {
      float* out_r = out_b + r * ld_out;
      if (sc.run_max[r] == kNegInf) {
        std::fill(out_r, out_r + hd, fully_masked_fill(zero_fully_masked));
      } else {
        scale_row(out_r, hd, 1.0f / sc.run_sum[r]);
      }
    }
  });
}

}  // namespace mha::kernels
