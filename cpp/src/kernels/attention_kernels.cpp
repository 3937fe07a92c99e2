// Scaled dot-product attention for one (batch, head) pair: with the probabilities written out,
// and streaming (online softmax over key tiles) when they are not needed. Both run on the
// packed GEMM (gemm.h): K and V of the head are packed once, then the queries are taken in
// blocks of kRowBlock rows so that a block's scores, its slice of q and of out stay in cache
// between the two products. The softmax's exp is vectorised (simd::exp). Row blocks are
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
constexpr int L = simd::kLanes;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int64_t kRowBlock = 64;   // query rows per block
constexpr int64_t kKeyTile = 256;   // keys per tile in the streaming kernel (a multiple of kNR)
static_assert(kKeyTile % gemm::kNR == 0, "key tiles must start on packed panel boundaries");

// Adds mask[i, j0 .. j0+cols) to scores_row (one query row i).
inline void add_mask_row(float* scores_row, const MaskSpec& mask, int64_t i, int64_t j0,
                         int64_t cols) {
  const int64_t masked_end = std::min(j0 + cols, mask.mask_cols);
  if (mask.attn != nullptr) {
    const float* attn_i = mask.attn + i * mask.ld_attn;
    for (int64_t j = j0; j < masked_end; ++j) scores_row[j - j0] += attn_i[j];
  }
  if (mask.key != nullptr) {
    for (int64_t j = j0; j < masked_end; ++j) scores_row[j - j0] += mask.key[j];
  }
  if (mask.causal) {
    for (int64_t j = std::max(j0, i + 1); j < masked_end; ++j) scores_row[j - j0] = kNegInf;
  }
}

inline bool has_mask(const MaskSpec& mask) {
  return mask.attn != nullptr || mask.key != nullptr || mask.causal;
}

// The largest of row[0 .. n).
inline float row_max(const float* row, int64_t n) {
  vfloat m = simd::splat(kNegInf);
  int64_t j = 0;
  for (; j + L <= n; j += L) m = simd::max(m, simd::load(row + j));
  float result = simd::reduce_max(m);
  for (; j < n; ++j) result = std::max(result, row[j]);
  return result;
}

// row[j] = exp(row[j] - shift) for j < n; returns their sum. The tail goes through the same
// vector exp (padded with -inf, which gives 0), so every entry is computed alike.
inline float exp_shifted_sum(float* row, int64_t n, float shift) {
  const vfloat shift_v = simd::splat(shift);
  vfloat sum = simd::splat(0.f);
  int64_t j = 0;
  for (; j + L <= n; j += L) {
    const vfloat e = simd::exp(simd::load(row + j) - shift_v);
    simd::store(row + j, e);
    sum += e;
  }
  if (j < n) {
    float tail[L];
    for (int t = 0; t < L; ++t) tail[t] = j + t < n ? row[j + t] : kNegInf;
    const vfloat e = simd::exp(simd::load(tail) - shift_v);
    simd::store(tail, e);
    sum += e;
    for (int64_t t = 0; j + t < n; ++t) row[j + t] = tail[t];
  }
  return simd::reduce_sum(sum);
}

inline void scale_row(float* row, int64_t n, float factor) {
  const vfloat f = simd::splat(factor);
  int64_t j = 0;
  for (; j + L <= n; j += L) simd::store(row + j, simd::load(row + j) * f);
  for (; j < n; ++j) row[j] *= factor;
}

inline float fully_masked_fill(bool zero_fully_masked) {
  return zero_fully_masked ? 0.0f : std::numeric_limits<float>::quiet_NaN();
}

// Packs K of one head for q . k^T (keys as the columns) and V for p . v, into `packed`:
// returns {packed_k, packed_v}.
struct PackedKv {
  float* k;
  float* v;
};
inline int64_t packed_kv_floats(int64_t S, int64_t hd) {
  return gemm::packed_floats(hd, S) + gemm::packed_floats(S, hd);
}
inline PackedKv pack_kv(float* packed, const float* k, int64_t ld_k, const float* v,
                        int64_t ld_v, int64_t S, int64_t hd) {
  PackedKv kv{packed, packed + gemm::packed_floats(hd, S)};
  gemm::pack_nt(kv.k, k, ld_k, S, hd);  // kv.k: hd x S, panels of kNR keys
  gemm::pack_nn(kv.v, v, ld_v, S, hd);  // kv.v: S x hd, panels of kNR dims
  return kv;
}

// The buffer attention_with_probs packs K and V into, kept per thread between calls.
std::vector<float>& pack_buffer() {
  thread_local std::vector<float> buffer;
  return buffer;
}

}  // namespace

void attention_with_probs(float* out, int64_t ld_out, float* probs, int64_t ld_probs,
                          const float* q, int64_t ld_q, const float* k, int64_t ld_k,
                          const float* v, int64_t ld_v, const MaskSpec& mask, int64_t L_rows,
                          int64_t S, int64_t hd, bool zero_fully_masked) {
  std::vector<float>& buffer = pack_buffer();
  const size_t need = static_cast<size_t>(packed_kv_floats(S, hd));
  if (buffer.size() < need) buffer.resize(need);
  const PackedKv kv = pack_kv(buffer.data(), k, ld_k, v, ld_v, S, hd);
  const bool masked = has_mask(mask);

  const int64_t blocks = (L_rows + kRowBlock - 1) / kRowBlock;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1, int) {
  for (int64_t i0 = b0 * kRowBlock; i0 < std::min(L_rows, b1 * kRowBlock); i0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, L_rows - i0);
    float* probs_b = probs + i0 * ld_probs;  // (rows, S)
    // 1. scores = q . k^T (q already scaled by 1/sqrt(hd)), plus the mask
    gemm::gemm_packed(probs_b, ld_probs, q + i0 * ld_q, ld_q, kv.k, nullptr, rows, S, hd, false);
    // 2. row softmax: max, exp and sum, normalise
    for (int64_t r = 0; r < rows; ++r) {
      float* p_i = probs_b + r * ld_probs;
      if (masked) add_mask_row(p_i, mask, i0 + r, 0, S);
      const float m = row_max(p_i, S);
      if (m == kNegInf) {  // every key masked
        std::fill(p_i, p_i + S, fully_masked_fill(zero_fully_masked));
        continue;
      }
      const float sum = exp_shifted_sum(p_i, S, m);
      scale_row(p_i, S, 1.0f / sum);
    }
    // 3. out = probs . v
    gemm::gemm_packed(out + i0 * ld_out, ld_out, probs_b, ld_probs, kv.v, nullptr, rows, hd, S,
                      false);
  }
  });
}

// The streaming kernel works on scores laid out transposed, 8 queries per key:
//   block[p][j * 8 + t] = score(query p * 8 + t, key j)      (panel p of 8 query rows)
// This is what the micro-kernel writes when keys are its A side and queries its B side, and it
// is at once what the softmax wants (the 4 lanes of a vector are 4 queries, so the running max
// and sum are lane-wise, without horizontal reductions) and what P . V wants as its A side
// (4 query rows per step of k, a_step 8 floats). Nothing is repacked between the two products.
namespace {

constexpr int64_t kQueryPanel = gemm::kNR;  // queries per panel of the transposed block (8)
static_assert(kRowBlock % kQueryPanel == 0 && kQueryPanel == 2 * gemm::kMR,
              "a query panel is two micro-tile row groups");
static_assert(kKeyTile % gemm::kMR == 0, "key tiles hold whole panels of keys");

struct StreamingScratch {
  float* q_packed;  // (hd, kRowBlock): the block's queries, panels of 8 (the B side)
  float* scores;    // (kRowBlock / 8) panels of (kKeyTile, 8)
  float* run_max;   // (kRowBlock)
  float* run_sum;   // (kRowBlock)
};
inline int64_t streaming_per_thread_floats(int64_t hd) {
  return kRowBlock * hd + kRowBlock * kKeyTile + 2 * kRowBlock;
}
inline StreamingScratch streaming_scratch(float* at, int64_t hd) {
  StreamingScratch s;
  s.q_packed = at;
  s.scores = s.q_packed + kRowBlock * hd;
  s.run_max = s.scores + kRowBlock * kKeyTile;
  s.run_sum = s.run_max + kRowBlock;
  return s;
}

// Adds the mask to one key tile of the transposed block: queries i0 + [0, rows), keys
// j0 + [0, cols).
void add_mask_transposed(float* scores, const MaskSpec& mask, int64_t i0, int64_t rows,
                         int64_t j0, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s_r = scores + (r / kQueryPanel) * kKeyTile * kQueryPanel + r % kQueryPanel;
    const int64_t i = i0 + r;
    const int64_t masked_end = std::min(j0 + cols, mask.mask_cols);
    for (int64_t j = j0; j < masked_end; ++j) {
      float& s = s_r[(j - j0) * kQueryPanel];
      if (mask.attn != nullptr) s += mask.attn[i * mask.ld_attn + j];
      if (mask.key != nullptr) s += mask.key[j];
      if (mask.causal && j > i) s = kNegInf;
    }
  }
}

}  // namespace

int64_t attention_streaming_scratch_floats(int64_t L_rows, int64_t S, int64_t hd) {
  (void)L_rows;
  // per thread: the block's packed queries, its transposed scores of one key tile, the running
  // max and sum; then the head's packed K (kMR-key panels) and V (panels of kNR dims)
  return num_threads() * streaming_per_thread_floats(hd) +
         ((S + gemm::kMR - 1) / gemm::kMR) * gemm::kMR * hd + gemm::packed_floats(S, hd);
}

void attention_streaming(float* out, int64_t ld_out, const float* q, int64_t ld_q,
                         const float* k, int64_t ld_k, const float* v, int64_t ld_v,
                         const MaskSpec& mask, int64_t L_rows, int64_t S, int64_t hd,
                         bool zero_fully_masked, float* scratch) {
  constexpr int64_t MR = gemm::kMR, NR = gemm::kNR;
  // K as the A side (panels of MR keys, k-major over hd), V as the B side (panels of NR dims).
  float* k_packed = scratch + num_threads() * streaming_per_thread_floats(hd);
  float* v_packed = k_packed + ((S + MR - 1) / MR) * MR * hd;
  gemm::pack_a(k_packed, k, ld_k, S, hd);
  gemm::pack_nn(v_packed, v, ld_v, S, hd);
  const int64_t v_panel_stride = NR * S;
  const bool masked = has_mask(mask);

  const int64_t blocks = (L_rows + kRowBlock - 1) / kRowBlock;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1, int thread) {
  const StreamingScratch sc = streaming_scratch(scratch + thread * streaming_per_thread_floats(hd), hd);
  alignas(16) float tile[MR * NR];
  for (int64_t i0 = b0 * kRowBlock; i0 < std::min(L_rows, b1 * kRowBlock); i0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, L_rows - i0);
    const int64_t row_groups = (rows + MR - 1) / MR;  // groups of MR queries (P . V's A panels)
    const int64_t query_panels = (rows + NR - 1) / NR;
    float* out_b = out + i0 * ld_out;  // (rows, hd): the running, unnormalised output
    gemm::pack_nt(sc.q_packed, q + i0 * ld_q, ld_q, rows, hd);
    std::fill(sc.run_max, sc.run_max + row_groups * MR, kNegInf);
    std::fill(sc.run_sum, sc.run_sum + row_groups * MR, 0.0f);
    for (int64_t j0 = 0; j0 < S; j0 += kKeyTile) {
      const int64_t cols = std::min(kKeyTile, S - j0);
      const bool first_tile = j0 == 0;
      // 1. scores^T of this key tile: keys (A, MR at a time) against queries (B, NR at a time)
      for (int64_t p = 0; p < query_panels; ++p) {
        float* scores_p = sc.scores + p * kKeyTile * NR;
        for (int64_t jj = 0; jj < cols; jj += MR) {
          gemm::micro_tile(scores_p + jj * NR, NR, nullptr, 0, k_packed + (j0 + jj) * hd, MR,
                           sc.q_packed + p * NR * hd, static_cast<int>(hd));
        }
      }
      if (masked) add_mask_transposed(sc.scores, mask, i0, rows, j0, cols);
      // 2. online softmax, lane-wise over MR queries at a time: rescale what was summed so far
      // to the new running max, then exp(score - max) in place
      for (int64_t g = 0; g < row_groups; ++g) {
        float* s_g = sc.scores + (g / 2) * kKeyTile * NR + (g % 2) * MR;
        const vfloat old_max = simd::load(sc.run_max + g * MR);
        vfloat new_max = old_max;
        for (int64_t j = 0; j < cols; ++j) new_max = simd::max(new_max, simd::load(s_g + j * NR));
        // Rows with nothing visible yet keep max -inf: shift by 0 there, so exp(-inf) = 0.
        const vfloat shift = simd::select(new_max == simd::splat(kNegInf), simd::splat(0.f), new_max);
        vfloat sum = simd::splat(0.f);
        for (int64_t j = 0; j < cols; ++j) {
          const vfloat e = simd::exp_nonpositive(simd::load(s_g + j * NR) - shift);
          simd::store(s_g + j * NR, e);
          sum += e;
        }
        const vfloat rescale = simd::exp_nonpositive(old_max - shift);  // 0 while nothing was summed
        simd::store(sc.run_sum + g * MR, simd::load(sc.run_sum + g * MR) * rescale + sum);
        simd::store(sc.run_max + g * MR, new_max);
        if (!first_tile) {
          for (int64_t t = 0; t < MR && g * MR + t < rows; ++t)
            if (rescale[t] != 1.0f) scale_row(out_b + (g * MR + t) * ld_out, hd, rescale[t]);
        }
      }
      // 3. out += exp(scores) . v of this tile: A = MR queries of the transposed block per step
      // of k (a_step NR), B = V's panels from key j0
      for (int64_t g = 0; g < row_groups; ++g) {
        const float* p_g = sc.scores + (g / 2) * kKeyTile * NR + (g % 2) * MR;
        const int64_t g_rows = std::min(MR, rows - g * MR);
        for (int64_t d0 = 0; d0 < hd; d0 += NR) {
          const float* v_panel = v_packed + (d0 / NR) * v_panel_stride + j0 * NR;
          float* out_tile = out_b + g * MR * ld_out + d0;
          const int64_t d_cols = std::min(NR, hd - d0);
          if (first_tile && g_rows == MR && d_cols == NR) {
            gemm::micro_tile(out_tile, ld_out, nullptr, 0, p_g, NR, v_panel, static_cast<int>(cols));
            continue;
          }
          gemm::micro_tile(tile, NR, nullptr, 0, p_g, NR, v_panel, static_cast<int>(cols));
          for (int64_t r = 0; r < g_rows; ++r)
            for (int64_t d = 0; d < d_cols; ++d)
              out_tile[r * ld_out + d] = (first_tile ? 0.0f : out_tile[r * ld_out + d]) + tile[r * NR + d];
        }
      }
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
  }
  });
}

}  // namespace mha::kernels
