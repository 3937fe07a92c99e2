// Scaled dot-product attention for one (batch, head) pair: with the probabilities written out,
// and streaming (online softmax over key tiles) when they are not needed.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "mha/kernels.h"

namespace mha::kernels {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;
using ConstStridedMap = Eigen::Map<const RowMatrix, 0, Stride>;
using StridedMap = Eigen::Map<RowMatrix, 0, Stride>;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

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

}  // namespace

void attention_with_probs(float* out, int64_t ld_out, float* probs, int64_t ld_probs,
                          const float* q, int64_t ld_q, const float* k, int64_t ld_k,
                          const float* v, int64_t ld_v, const MaskSpec& mask, int64_t L,
                          int64_t S, int64_t hd, bool zero_fully_masked) {
  ConstStridedMap q_lh(q, L, hd, Stride(ld_q));
  ConstStridedMap k_sh(k, S, hd, Stride(ld_k));
  ConstStridedMap v_sh(v, S, hd, Stride(ld_v));
  StridedMap probs_ls(probs, L, S, Stride(ld_probs));
  StridedMap out_lh(out, L, hd, Stride(ld_out));

  // 1. scores = q . k^T (q is already scaled by 1/sqrt(hd)), plus the mask
  probs_ls.noalias() = q_lh * k_sh.transpose();
  if (has_mask(mask)) {
    for (int64_t i = 0; i < L; ++i) add_mask_row(probs + i * ld_probs, mask, i, 0, S);
  }
  // 2. row softmax: max, exp and sum, normalise
  for (int64_t i = 0; i < L; ++i) {
    float* p_i = probs + i * ld_probs;
    float row_max = kNegInf;
    for (int64_t j = 0; j < S; ++j) row_max = std::max(row_max, p_i[j]);
    if (row_max == kNegInf) {  // every key masked
      const float fill = zero_fully_masked ? 0.0f : std::numeric_limits<float>::quiet_NaN();
      std::fill(p_i, p_i + S, fill);
      continue;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < S; ++j) {
      p_i[j] = std::exp(p_i[j] - row_max);
      sum += p_i[j];
    }
    const float inv_sum = 1.0f / sum;
    for (int64_t j = 0; j < S; ++j) p_i[j] *= inv_sum;
  }
  // 3. out = probs . v
  out_lh.noalias() = probs_ls * v_sh;
}

namespace {
constexpr int64_t kKeyTile = 128;
}

int64_t attention_streaming_scratch_floats(int64_t L, int64_t hd) {
  (void)hd;
  // scores tile (L x kKeyTile) + running max (L) + running sum (L)
  return L * kKeyTile + 2 * L;
}

void attention_streaming(float* out, int64_t ld_out, const float* q, int64_t ld_q,
                         const float* k, int64_t ld_k, const float* v, int64_t ld_v,
                         const MaskSpec& mask, int64_t L, int64_t S, int64_t hd,
                         bool zero_fully_masked, float* scratch) {
  float* scores_lt = scratch;                     // (L, kKeyTile)
  float* row_max = scratch + L * kKeyTile;        // (L)
  float* row_sum = row_max + L;                   // (L)
  std::fill(row_max, row_max + L, kNegInf);
  std::fill(row_sum, row_sum + L, 0.0f);
  StridedMap out_lh(out, L, hd, Stride(ld_out));
  out_lh.setZero();
  ConstStridedMap q_lh(q, L, hd, Stride(ld_q));

  for (int64_t j0 = 0; j0 < S; j0 += kKeyTile) {
    const int64_t cols = std::min(kKeyTile, S - j0);
    ConstStridedMap k_th(k + j0 * ld_k, cols, hd, Stride(ld_k));
    ConstStridedMap v_th(v + j0 * ld_v, cols, hd, Stride(ld_v));
    StridedMap s_lt(scores_lt, L, cols, Stride(kKeyTile));
    // 1. scores of this key tile, plus the mask
    s_lt.noalias() = q_lh * k_th.transpose();
    for (int64_t i = 0; i < L; ++i) {
      float* s_i = scores_lt + i * kKeyTile;
      if (has_mask(mask)) add_mask_row(s_i, mask, i, j0, cols);
      // 2. online softmax: rescale what was summed so far to the new running max
      float tile_max = kNegInf;
      for (int64_t j = 0; j < cols; ++j) tile_max = std::max(tile_max, s_i[j]);
      const float new_max = std::max(row_max[i], tile_max);
      if (new_max == kNegInf) {  // nothing visible yet in this row
        std::fill(s_i, s_i + cols, 0.0f);
        continue;
      }
      const float rescale = std::exp(row_max[i] - new_max);  // exp(-inf) = 0 on the first tile
      float tile_sum = 0.0f;
      for (int64_t j = 0; j < cols; ++j) {
        s_i[j] = std::exp(s_i[j] - new_max);
        tile_sum += s_i[j];
      }
      row_sum[i] = row_sum[i] * rescale + tile_sum;
      row_max[i] = new_max;
      if (rescale != 1.0f) out_lh.row(i) *= rescale;
    }
    // 3. out += exp(scores) . v of this tile
    out_lh.noalias() += s_lt * v_th;
  }
  // 4. normalise by the running sum
  for (int64_t i = 0; i < L; ++i) {
    if (row_max[i] == kNegInf) {
      const float fill = zero_fully_masked ? 0.0f : std::numeric_limits<float>::quiet_NaN();
      out_lh.row(i).setConstant(fill);
    } else {
      out_lh.row(i) *= 1.0f / row_sum[i];
    }
  }
}

}  // namespace mha::kernels
