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

int64_t attention_streaming_scratch_floats(int64_t L_rows, int64_t S, int64_t hd) {
  (void)L_rows;
  // per thread: scores of one block (kRowBlock x kKeyTile), running max and sum (kRowBlock
  // each); then the head's packed K and V
  return num_threads() * (kRowBlock * kKeyTile + 2 * kRowBlock) + packed_kv_floats(S, hd);
}

void attention_streaming(float* out, int64_t ld_out, const float* q, int64_t ld_q,
                         const float* k, int64_t ld_k, const float* v, int64_t ld_v,
                         const MaskSpec& mask, int64_t L_rows, int64_t S, int64_t hd,
                         bool zero_fully_masked, float* scratch) {
  const int64_t per_thread = kRowBlock * kKeyTile + 2 * kRowBlock;
  const PackedKv kv = pack_kv(scratch + num_threads() * per_thread, k, ld_k, v, ld_v, S, hd);
  const int64_t v_panel_stride = gemm::kNR * S;  // kv.v's panels hold all S keys
  const bool masked = has_mask(mask);

  const int64_t blocks = (L_rows + kRowBlock - 1) / kRowBlock;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1, int thread) {
  float* scores_rt = scratch + thread * per_thread;      // (kRowBlock, kKeyTile)
  float* run_max = scores_rt + kRowBlock * kKeyTile;  // (kRowBlock)
  float* run_sum = run_max + kRowBlock;               // (kRowBlock)
  for (int64_t i0 = b0 * kRowBlock; i0 < std::min(L_rows, b1 * kRowBlock); i0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, L_rows - i0);
    const float* q_b = q + i0 * ld_q;
    float* out_b = out + i0 * ld_out;  // (rows, hd): the running, unnormalised output
    std::fill(run_max, run_max + rows, kNegInf);
    std::fill(run_sum, run_sum + rows, 0.0f);
    for (int64_t j0 = 0; j0 < S; j0 += kKeyTile) {
      const int64_t cols = std::min(kKeyTile, S - j0);
      const bool first_tile = j0 == 0;
      // 1. scores of this key tile, plus the mask
      gemm::gemm_packed(scores_rt, kKeyTile, q_b, ld_q, kv.k + j0 * hd, nullptr, rows, cols, hd,
                        false);
      for (int64_t r = 0; r < rows; ++r) {
        float* s_i = scores_rt + r * kKeyTile;
        float* out_i = out_b + r * ld_out;
        if (masked) add_mask_row(s_i, mask, i0 + r, j0, cols);
        // 2. online softmax: rescale what was summed so far to the new running max
        const float new_max = std::max(run_max[r], row_max(s_i, cols));
        if (new_max == kNegInf) {  // nothing visible yet in this row
          std::fill(s_i, s_i + cols, 0.0f);
          if (!first_tile) std::fill(out_i, out_i + hd, 0.0f);
          continue;
        }
        const float rescale = std::exp(run_max[r] - new_max);  // 0 while nothing was summed
        run_sum[r] = run_sum[r] * rescale + exp_shifted_sum(s_i, cols, new_max);
        run_max[r] = new_max;
        if (!first_tile && rescale != 1.0f) scale_row(out_i, hd, rescale);
      }
      // 3. out += exp(scores) . v of this tile
      gemm::gemm_packed(out_b, ld_out, scores_rt, kKeyTile, kv.v + j0 * gemm::kNR,
                        v_panel_stride, nullptr, rows, hd, cols, !first_tile);
    }
    if (S == 0) {
      for (int64_t r = 0; r < rows; ++r) std::fill(out_b + r * ld_out, out_b + r * ld_out + hd, 0.0f);
    }
    // 4. normalise by the running sum
    for (int64_t r = 0; r < rows; ++r) {
      float* out_i = out_b + r * ld_out;
      if (run_max[r] == kNegInf) {
        std::fill(out_i, out_i + hd, fully_masked_fill(zero_fully_masked));
      } else {
        scale_row(out_i, hd, 1.0f / run_sum[r]);
      }
    }
  }
  });
}

}  // namespace mha::kernels
