// MultiHeadAttention::forward_cached: one step of causal self-attention over a key/value cache,
// so that a text computed token by token costs each new token's rows only (a model's Extend).
// The same blocks as forward(): the fused in-projection, the rotary positions, the scores and
// softmax of kernels::attention_with_probs, the out-projection.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "mha/attention.h"
#include "mha/kernels.h"

namespace mha {

Status MultiHeadAttention::forward_cached(const float* x, int64_t R, int64_t window, KvCache* cache,
                                          std::vector<float>* output, std::vector<float>* weights) {
  const Config& c = config_;
  if (!packed_only_ || !fusable_ || c.add_bias_kv || c.add_zero_attn) {
    return Status(StatusCode::kInvalidArgument,
                  "forward_cached needs a packed self-attention module (a model's layer) without bias_k or zero attention");
  }
  if (R < 1) return Status(StatusCode::kInvalidArgument, "forward_cached: expected at least one new row, got " + std::to_string(R));
  const int64_t H = c.num_heads, G = c.num_kv_heads, hd = head_dim_, qd = query_dim(), kv = kv_dim();
  const int64_t F = fused_rows(), start = cache->length, S = start + R;

  // 1. project the new rows: (R, F) = [q (H hd) | k (G hd) | v (G hd)] per row
  std::vector<float> qkv(static_cast<size_t>(R * F));
  in_projection(qkv.data(), x, c.bias ? in_proj_bias_.data() : nullptr, R);
  float* q = qkv.data();
  float* k = q + qd;
  const float* v = q + qd + kv;
  if (c.rotary.enabled()) {  // positions start .. S - 1
    rotary_tables(S);
    for (int64_t h = 0; h < H; ++h) rotate(q + h * hd, F, R, start);
    for (int64_t g = 0; g < G; ++g) rotate(k + g * hd, F, R, start);
  }

  // 2. append the new keys and values: cache rows start .. S - 1, (G hd) each
  if (static_cast<int64_t>(cache->keys.size()) < S * kv) {
    const size_t capacity = static_cast<size_t>(std::max<int64_t>(S, 2 * start) * kv);
    cache->keys.resize(capacity);
    cache->values.resize(capacity);
  }
  for (int64_t r = 0; r < R; ++r) {
    std::memcpy(cache->keys.data() + (start + r) * kv, k + r * F, static_cast<size_t>(kv) * sizeof(float));
    std::memcpy(cache->values.data() + (start + r) * kv, v + r * F, static_cast<size_t>(kv) * sizeof(float));
  }
  cache->length = S;

  // 3. the mask of the new rows, (R, S): new row i is at position start + i; it sees key j when
  //    j <= start + i and, with a window, start + i - window < j
  std::vector<float> mask_add(static_cast<size_t>(R * S));
  for (int64_t i = 0; i < R; ++i) {
    const int64_t position = start + i;
    for (int64_t j = 0; j < S; ++j) {
      const bool seen = j <= position && (window <= 0 || position - window < j);
      mask_add[static_cast<size_t>(i * S + j)] = seen ? 0.0f : -INFINITY;
    }
  }
  kernels::MaskSpec mask;
  mask.attn = mask_add.data();
  mask.ld_attn = S;
  mask.mask_cols = S;

  // 4. attend head by head: q scaled by 1/sqrt(hd), then softmax(q . kᵀ + mask) . v; query head
  //    h reads key/value head h / (H / G)
  std::vector<float> concat(static_cast<size_t>(R * qd));
  weights->resize(static_cast<size_t>(H * R * S));
  const float inv_sqrt_hd = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int64_t h = 0; h < H; ++h) {
    const int64_t g = h / (H / G);
    float* q_h = q + h * hd;
    for (int64_t i = 0; i < R; ++i)
      for (int64_t d = 0; d < hd; ++d) q_h[i * F + d] *= inv_sqrt_hd;
    kernels::attention_with_probs(concat.data() + h * hd, qd, weights->data() + h * R * S, S, q_h, F,
                                  cache->keys.data() + g * hd, kv, cache->values.data() + g * hd, kv, mask, R, S, hd,
                                  false);
  }

  // 5. the out-projection: (R, O)
  output->resize(static_cast<size_t>(R * out_dim()));
  out_projection(output->data(), concat.data(), c.bias ? out_proj_bias_.data() : nullptr, R);
  return Status::Ok();
}

}  // namespace mha
