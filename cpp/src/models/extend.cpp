// Model::Extend: a causal model writing on, one step at a time. Each layer keeps the keys and
// values of the text so far (a KvCache: keys after the rotary positions, G key/value heads
// unexpanded), so that a step computes the new tokens' rows only:
//   x = embed(ids) at positions first .. first + R - 1            (R, E)
//   per layer, as run_layer: the norms, attention of the new rows over the cache
//             (MultiHeadAttention::forward_cached, the layer's sliding window), feed-forward
//   logits = head(final_norm(x))                                  (R, vocab)
// Family traits come from the same config fields Run reads; no family is named here.
#include <string>
#include <vector>

#include "mha/models.h"
#include "models/family.h"

namespace mha::models {

void Model::ResetCache() {
  for (KvCache& cache : cache_) cache.clear();
}

Status Model::Extend(const int32_t* ids, size_t count, int64_t from, ExtendResult* result) {
  const ModelConfig& c = config_;
  if (!c.causal()) {
    return Status(StatusCode::kInvalidArgument, "writing on needs a causal model (each token attending to the ones before it); " +
                                                    c.display_name() + " attends both ways, so a new token changes every row");
  }
  MHA_RETURN_IF_ERROR(validate(ids, count, RunOptions()));
  if (from > cached_length()) {
    return Status(StatusCode::kInvalidArgument, "from " + std::to_string(from) + ": expected 0 to the " +
                                                    std::to_string(cached_length()) + " positions the text holds");
  }
  const int64_t first = from >= 0 ? from : cached_length(), R = static_cast<int64_t>(count), S = first + R;
  if (S > c.max_positions) {
    return Status(StatusCode::kTooLarge, std::to_string(R) + " more tokens after " + std::to_string(first) + " make " +
                                             std::to_string(S) + " positions; the model takes at most " +
                                             std::to_string(c.max_positions));
  }
  // the cache: keys and values, (S, G hd) each, in every layer
  const double cache_bytes = 2.0 * 4.0 * static_cast<double>(c.num_layers * S * c.num_kv_heads * c.head_dim);
  const double need = static_cast<double>(weight_bytes()) + static_cast<double>(run_bytes(R)) + cache_bytes;
  if (need > static_cast<double>(limits_.max_memory_bytes)) {
    return Status(StatusCode::kTooLarge, std::to_string(S) + " positions: the weights (" + std::to_string(weight_bytes()) +
                                             " bytes), the step and the key/value cache (" +
                                             std::to_string(static_cast<uint64_t>(cache_bytes)) + " bytes) would take more than the " +
                                             std::to_string(limits_.max_memory_bytes) + " bytes the model may take");
  }
  cache_.resize(static_cast<size_t>(c.num_layers));
  for (KvCache& cache : cache_) cache.length = first;  // rows past it are written over
  result->first = first;
  result->weights.resize(static_cast<size_t>(c.num_layers));
  std::vector<float> x;
  embed(ids, R, &x, first);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    MHA_RETURN_IF_ERROR(extend_layer(l, R, &x, &result->weights[static_cast<size_t>(l)]));
  }
  RunResult heads_of_new;  // hidden and logits of the new rows
  heads(x, R, &heads_of_new);
  result->logits = std::move(heads_of_new.logits);
  return Status::Ok();
}

// One layer on the new rows x (R, E), in place, as run_layer computes them with the whole text.
Status Model::extend_layer(int64_t l, int64_t R, std::vector<float>* x, Tensor* weights) {
  const ModelConfig& c = config_;
  const bool pre = c.family->norm_placement == NormPlacement::kPre;
  Layer& layer = layers_[static_cast<size_t>(l)];
  KvCache& cache = cache_[static_cast<size_t>(l)];
  normed_.resize(x->size());
  down_.resize(x->size());
  const float* attention_in = x->data();
  if (pre) {
    normalize(normed_.data(), x->data(), layer.attention_norm, R);
    attention_in = normed_.data();
  }
  const int64_t window = c.sliding_window > 0 && l >= c.window_from_layer ? c.sliding_window : 0;
  std::vector<float> attended;
  MHA_RETURN_IF_ERROR(layer.attention->forward_cached(attention_in, R, window, &cache, &attended, &weights->data));
  weights->shape = {c.num_heads, R, cache.length};
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] += attended[i];
  if (pre) {
    normalize(normed_.data(), x->data(), layer.ffn_norm, R);
  } else {
    normalize(x->data(), x->data(), layer.attention_norm, R);
    normed_ = *x;
  }
  feed_forward(layer, R);
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] += down_[i];
  if (!pre) normalize(x->data(), x->data(), layer.ffn_norm, R);
  return Status::Ok();
}

}  // namespace mha::models
