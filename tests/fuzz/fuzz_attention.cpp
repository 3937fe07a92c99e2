// libFuzzer harness for the attention core: a configuration, weights, inputs, masks and
// options decoded from the fuzz bytes (sizes bounded so that one input runs in microseconds),
// then forward() with every option and the head statistics over what it returns.
//
// What counts as a finding (besides what ASan and UBSan report):
//   - a failed call whose message is empty, or a status code outside the enum;
//   - a successful call whose results have the wrong shape or a data size unlike the shape;
//   - weights outside [0, 1] (NaN allowed only where every key of a row is masked);
//   - with moderate inputs, the streaming path (need_weights = false) disagreeing with the
//     path that writes the probabilities out.
//
//   build/asan/mha_fuzz tests/fuzz/corpus -max_total_time=60      (npm run fuzz -- 60)
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "mha/attention.h"
#include "mha/statistics.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_attention: %s\n", what);
  std::abort();
}

void CheckStatus(const mha::Status& status) {
  if (status.ok()) return;
  const int code = static_cast<int>(status.code());
  if (code < 1 || code > 7) Fail("status code outside the enum");
  if (status.message().empty()) Fail("a failed call gave no message");
}

int64_t Numel(const mha::Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void CheckTensor(const mha::Tensor& t, const mha::Shape& expected, const char* what) {
  if (t.shape != expected) {
    std::fprintf(stderr, "%s: shape", what);
    for (int64_t d : t.shape) std::fprintf(stderr, " %lld", static_cast<long long>(d));
    std::fprintf(stderr, ", expected");
    for (int64_t d : expected) std::fprintf(stderr, " %lld", static_cast<long long>(d));
    std::fprintf(stderr, "\n");
    Fail("result shape");
  }
  if (static_cast<int64_t>(t.data.size()) != Numel(t.shape)) Fail("result data size differs from its shape");
}

// Values the decoder draws from: ordinary, tiny, huge, zero, and (when allowed) non-finite.
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kModerate[] = {0.0f, 1.0f, -1.0f, 0.5f, -0.25f, 2.0f, -3.0f, 0.125f, 1e-3f, -0.75f};
const float kExtreme[] = {1e4f, -1e4f, 1e15f, -1e15f, 3e38f, -3e38f, 1e-38f, 1e-45f, -0.0f, 65504.0f};
const float kNonFinite[] = {kInf, -kInf, std::numeric_limits<float>::quiet_NaN()};

struct Decoder {
  FuzzedDataProvider& fdp;
  bool extreme = false;      // may draw huge / tiny values
  bool non_finite = false;   // may draw NaN / +-Infinity
  bool raw = false;          // may take four fuzz bytes as a float (any bit pattern)

  float Value() {
    const uint8_t pick = fdp.ConsumeIntegral<uint8_t>();
    if (raw && pick >= 250) {
      const uint32_t bits = fdp.ConsumeIntegral<uint32_t>();
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    if (non_finite && pick >= 240) return kNonFinite[pick % 3];
    if (extreme && pick >= 200) return kExtreme[pick % 10];
    // A smooth spread of moderate values, so that softmax rows are not all ties.
    if (pick < 100) return kModerate[pick % 10];
    return (static_cast<float>(pick) - 150.0f) / 37.0f;
  }
  std::vector<float> Values(size_t count) {
    std::vector<float> v(count);
    for (auto& x : v) x = Value();
    return v;
  }
};

// A shape: usually the right one, sometimes a plausible wrong one.
mha::Shape MaybeBreakShape(FuzzedDataProvider& fdp, mha::Shape shape) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      if (!shape.empty()) {
        int64_t& d = shape[fdp.ConsumeIntegralInRange<size_t>(0, shape.size() - 1)];
        int64_t moved;
        if (!__builtin_add_overflow(d, fdp.ConsumeIntegralInRange<int64_t>(-2, 2), &moved)) d = moved;
      }
      break;
    case 1:
      shape.push_back(fdp.ConsumeIntegralInRange<int>(0, 3));
      break;
    case 2:
      if (!shape.empty()) shape.pop_back();
      break;
    case 3:
      if (!shape.empty()) shape[0] = fdp.ConsumeIntegral<int64_t>();
      break;
    default:
      break;
  }
  return shape;
}

bool AllModerate(const std::vector<float>& v) {
  for (float x : v)
    if (!(std::fabs(x) <= 8.0f)) return false;
  return true;
}

void RunStatistics(const mha::Tensor& weights) {
  mha::TensorView view{weights.data.data(), weights.data.size(), weights.shape};
  std::vector<mha::HeadStatistics> heads;
  std::vector<mha::RowStatistics> rows;
  mha::StatisticsOptions options;
  mha::Status status = mha::head_statistics(view, options, &heads, &rows);
  CheckStatus(status);
  if (status.ok()) {
    for (const auto& h : heads) {
      if (h.rows > 0 && !(h.entropy >= -1e-6 && h.sparsity >= 0 && h.sparsity <= 1)) Fail("head statistics out of range");
    }
  }
  std::vector<double> jsd;
  status = mha::head_similarity(view, &jsd);
  CheckStatus(status);
  if (status.ok()) {
    for (double d : jsd)
      if (!std::isnan(d) && !(d >= 0 && d <= std::log(2.0) + 1e-6)) Fail("JS divergence outside [0, ln 2]");
  }
  std::vector<double> per_row;
  double mean = 0;
  status = mha::js_divergence(view, view, &per_row, &mean);
  CheckStatus(status);
  if (status.ok() && !std::isnan(mean) && std::fabs(mean) > 1e-6) Fail("a map's JS divergence from itself is not 0");
}

// Statistics over a map taken straight from the fuzz bytes (any shape, any values).
void FuzzStatisticsAlone(FuzzedDataProvider& fdp) {
  Decoder decode{fdp, true, true, true};
  mha::Shape shape(fdp.ConsumeIntegralInRange<int>(0, 5));
  for (auto& d : shape) d = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(0, 5) : fdp.ConsumeIntegral<int64_t>();
  const size_t length = fdp.ConsumeIntegralInRange<size_t>(0, 300);
  const std::vector<float> data = decode.Values(length);
  mha::TensorView view{data.data(), data.size(), shape};
  std::vector<mha::HeadStatistics> heads;
  std::vector<mha::RowStatistics> rows;
  mha::StatisticsOptions options;
  options.sparsity_threshold = fdp.ConsumeBool() ? 0.01 : fdp.ConsumeFloatingPoint<double>();
  CheckStatus(mha::head_statistics(view, options, &heads, fdp.ConsumeBool() ? &rows : nullptr));
  std::vector<double> jsd;
  CheckStatus(mha::head_similarity(view, &jsd));
  const std::vector<float> other = decode.Values(length);
  mha::TensorView view_b{other.data(), other.size(), fdp.ConsumeBool() ? shape : MaybeBreakShape(fdp, shape)};
  double mean = 0;
  CheckStatus(mha::js_divergence(view, view_b, &jsd, &mean));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  FuzzedDataProvider fdp(bytes, size);
  const uint8_t mode = fdp.ConsumeIntegral<uint8_t>();
  if (mode % 16 == 15) {
    FuzzStatisticsAlone(fdp);
    return 0;
  }

  // 1. Configuration: small and valid most of the time, anything at all sometimes.
  mha::Config config;
  if (mode % 16 == 14) {
    // Small values or ones far past any limit; never mid-sized ones whose parameters would be
    // valid but take seconds to initialise.
    auto any_size = [&]() -> int64_t {
      static const int64_t kFar[] = {-1, -(int64_t{1} << 31), int64_t{0x7fffffff}, int64_t{1} << 32, int64_t{1} << 62,
                                     std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
      if (fdp.ConsumeIntegralInRange<int>(0, 3) == 0) return kFar[fdp.ConsumeIntegralInRange<size_t>(0, 6)];
      return fdp.ConsumeIntegralInRange<int64_t>(-2, 24);
    };
    config.embed_dim = any_size();
    config.num_heads = any_size();
    config.num_kv_heads = any_size();
    config.kdim = any_size();
    config.vdim = any_size();
  } else {
    const int64_t H = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
    const int64_t hd = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
    config.embed_dim = H * hd + (mode % 16 == 13 ? fdp.ConsumeIntegralInRange<int64_t>(-1, 1) : 0);
    config.num_heads = H;
    config.num_kv_heads = fdp.ConsumeIntegralInRange<int64_t>(0, H);  // 0 = H; may not divide H
    config.kdim = fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange<int64_t>(1, 6);
    config.vdim = fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange<int64_t>(1, 6);
  }
  config.bias = fdp.ConsumeBool();
  config.add_bias_kv = fdp.ConsumeBool();
  config.add_zero_attn = fdp.ConsumeBool();
  config.batch_first = fdp.ConsumeBool();
  std::unique_ptr<mha::MultiHeadAttention> attention;
  const mha::Status created = mha::MultiHeadAttention::Create(config, fdp.ConsumeIntegral<uint64_t>(), &attention);
  CheckStatus(created);
  if (!created.ok()) return 0;
  const mha::Config& c = attention->config();
  if (c.embed_dim * c.kdim * c.vdim > 4096 || c.num_heads > 64) return 0;  // a valid but large raw config
  if (fdp.ConsumeBool()) attention->set_memory_cap(fdp.ConsumeIntegralInRange<size_t>(0, 1 << 14));

  // 2. Weights: the seeded ones, or values from the fuzz bytes (perhaps non-finite or mis-shaped).
  const bool extreme = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  const bool non_finite = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  Decoder decode{fdp, extreme, non_finite, non_finite && fdp.ConsumeBool()};
  bool weights_moderate = true;
  if (fdp.ConsumeBool()) {
    for (const std::string& name : attention->parameter_names()) {
      mha::Shape shape;
      CheckStatus(attention->parameter_shape(name, &shape));
      shape = MaybeBreakShape(fdp, shape);
      int64_t count = 1;
      for (int64_t d : shape) count = (d >= 0 && d <= 4096 && count <= 4096) ? count * d : -1;
      if (count < 0 || count > 4096) count = fdp.ConsumeIntegralInRange<int64_t>(0, 64);
      const std::vector<float> values = decode.Values(static_cast<size_t>(count));
      const mha::Status status = attention->set_parameter(name, values.data(), values.size(), shape);
      CheckStatus(status);
      if (status.ok()) weights_moderate = weights_moderate && AllModerate(values);
    }
  }
  if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) {
    mha::Tensor got;
    CheckStatus(attention->get_parameter(fdp.ConsumeRandomLengthString(24), &got));
  }

  // 3. Inputs: (N, L, E) / (L, N, E) / (L, E), right most of the time.
  const bool batched = fdp.ConsumeIntegralInRange<int>(0, 3) != 0;
  const int64_t N = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  const int64_t L = fdp.ConsumeIntegralInRange<int64_t>(1, 7);
  const int64_t S = fdp.ConsumeIntegralInRange<int64_t>(1, 7);
  auto layout = [&](int64_t len, int64_t width) {
    if (!batched) return mha::Shape{len, width};
    return c.batch_first ? mha::Shape{N, len, width} : mha::Shape{len, N, width};
  };
  const bool self_attention = c.kdim == c.embed_dim && c.vdim == c.embed_dim && fdp.ConsumeBool();
  const mha::Shape query_shape = MaybeBreakShape(fdp, layout(L, c.embed_dim));
  const mha::Shape key_shape = self_attention ? query_shape : MaybeBreakShape(fdp, layout(S, c.kdim));
  const mha::Shape value_shape = self_attention ? query_shape : MaybeBreakShape(fdp, layout(S, c.vdim));
  auto buffer_for = [&](const mha::Shape& shape) {
    int64_t count = 1;
    for (int64_t d : shape) count = (d >= 0 && d <= 64 && count <= 4096) ? count * d : -1;
    // A length that matches the shape, or (rarely) one that does not; never a lie about the buffer.
    if (count < 0 || count > 4096 || fdp.ConsumeIntegralInRange<int>(0, 31) == 0) count = fdp.ConsumeIntegralInRange<int64_t>(0, 64);
    return decode.Values(static_cast<size_t>(count));
  };
  const std::vector<float> query = buffer_for(query_shape);
  const std::vector<float> key = self_attention ? query : buffer_for(key_shape);
  const std::vector<float> value = self_attention ? query : buffer_for(value_shape);
  const bool inputs_moderate = AllModerate(query) && AllModerate(key) && AllModerate(value);
  mha::TensorView query_view{query.data(), query.size(), query_shape};
  mha::TensorView key_view{self_attention ? query.data() : key.data(), key.size(), key_shape};
  mha::TensorView value_view{self_attention ? query.data() : value.data(), value.size(), value_shape};

  // 4. Masks: none, bool or float; right shape most of the time; float values may be -inf.
  std::vector<uint8_t> kpm_bytes, attn_bytes;
  std::vector<float> kpm_floats, attn_floats;
  bool masks_moderate = true;
  auto make_mask = [&](mha::Shape shape, std::vector<uint8_t>& bytes, std::vector<float>& floats) {
    mha::MaskView mask;
    const int dtype = fdp.ConsumeIntegralInRange<int>(0, 3);  // 3: an invalid dtype code
    if (dtype == 0) return mask;
    mask.dtype = static_cast<mha::MaskDtype>(dtype);
    mask.shape = MaybeBreakShape(fdp, shape);
    int64_t count = 1;
    for (int64_t d : mask.shape) count = (d >= 0 && d <= 256 && count <= 4096) ? count * d : -1;
    if (count < 0 || count > 4096) count = fdp.ConsumeIntegralInRange<int64_t>(0, 64);
    if (dtype == 1) {
      bytes.resize(static_cast<size_t>(count));
      for (auto& b : bytes) b = fdp.ConsumeIntegralInRange<uint8_t>(0, 3) == 0;
      mask.data = bytes.data();
      mask.length = bytes.size();
    } else {
      floats.resize(static_cast<size_t>(count));
      for (auto& f : floats) {
        const uint8_t pick = fdp.ConsumeIntegral<uint8_t>();
        f = pick < 64 ? -kInf : pick < 128 ? 0.0f : decode.Value();
        if (!(f == -kInf || std::fabs(f) <= 8.0f)) masks_moderate = false;
      }
      mask.data = floats.data();
      mask.length = floats.size();
    }
    return mask;
  };
  const mha::MaskView key_padding_mask = make_mask(batched ? mha::Shape{N, S} : mha::Shape{S}, kpm_bytes, kpm_floats);
  const mha::MaskView attn_mask =
      make_mask(fdp.ConsumeBool() ? mha::Shape{L, S} : mha::Shape{N * c.num_heads, L, S}, attn_bytes, attn_floats);

  // 5. Options, all of them.
  mha::ForwardOptions options;
  options.need_weights = fdp.ConsumeBool();
  options.average_attn_weights = fdp.ConsumeBool();
  options.is_causal = fdp.ConsumeBool();
  options.return_head_outputs = fdp.ConsumeBool();
  options.return_concat = fdp.ConsumeBool();
  options.skip_out_proj = fdp.ConsumeBool();
  options.fully_masked_rows_zero = fdp.ConsumeBool();
  const int ablated = fdp.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < ablated; ++i) options.ablate_heads.push_back(fdp.ConsumeIntegralInRange<int64_t>(-1, c.num_heads));

  mha::ForwardResult result;
  const mha::Status status = attention->forward(query_view, key_view, value_view, key_padding_mask, attn_mask, options, &result);
  CheckStatus(status);
  if (!status.ok()) return 0;

  // 6. Results: shapes (from the shapes accepted, which a "broken" one may still be), weights in [0, 1].
  const bool batched3 = query_shape.size() == 3;
  const size_t at_n = c.batch_first ? 0 : 1, at_len = c.batch_first ? 1 : 0;
  const int64_t n = batched3 ? query_shape[at_n] : 1;
  const int64_t l = batched3 ? query_shape[at_len] : query_shape[0];
  const int64_t s = batched3 ? key_shape[at_len] : key_shape[0];
  const int64_t E = c.embed_dim, H = c.num_heads, hd = attention->head_dim();
  const int64_t S_total = s + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
  const mha::Shape out_shape = !batched3 ? mha::Shape{l, E} : c.batch_first ? mha::Shape{n, l, E} : mha::Shape{l, n, E};
  CheckTensor(result.output, out_shape, "output");
  if (options.return_concat) CheckTensor(result.concat, out_shape, "concat");
  if (options.return_head_outputs) {
    CheckTensor(result.head_outputs, batched3 ? mha::Shape{n, H, l, hd} : mha::Shape{H, l, hd}, "head_outputs");
  }
  if (options.need_weights) {
    const mha::Shape weights_shape = options.average_attn_weights
        ? (batched3 ? mha::Shape{n, l, S_total} : mha::Shape{l, S_total})
        : (batched3 ? mha::Shape{n, H, l, S_total} : mha::Shape{H, l, S_total});
    CheckTensor(result.weights, weights_shape, "weights");
    const bool any_mask = key_padding_mask.dtype != mha::MaskDtype::kNone || attn_mask.dtype != mha::MaskDtype::kNone || options.is_causal;
    for (float w : result.weights.data) {
      if (std::isnan(w)) {
        if (!any_mask && inputs_moderate && weights_moderate) Fail("NaN weight without any mask");
        if (options.fully_masked_rows_zero && inputs_moderate && weights_moderate && masks_moderate) Fail("NaN weight with fully_masked_rows_zero");
        continue;
      }
      if (!(w >= 0.0f && w <= 1.0f + 1e-5f)) Fail("weight outside [0, 1]");
    }
    if (!options.average_attn_weights) RunStatistics(result.weights);
  }

  // 7. Moderate inputs: the streaming path must agree with the one that writes probabilities.
  if (inputs_moderate && weights_moderate && masks_moderate) {
    mha::ForwardOptions other = options;
    other.need_weights = !options.need_weights;
    mha::ForwardResult again;
    const mha::Status second = attention->forward(query_view, key_view, value_view, key_padding_mask, attn_mask, other, &again);
    if (!second.ok()) {
      // Only the memory cap may tell the two apart (the probabilities take more room).
      if (second.code() != mha::StatusCode::kTooLarge) Fail("the second path rejected what the first accepted");
      return 0;
    }
    double scale = 1;
    for (float x : result.output.data)
      if (std::isfinite(x)) scale = std::max(scale, double(std::fabs(x)));
    for (size_t i = 0; i < result.output.data.size(); ++i) {
      const float a = result.output.data[i], b = again.output.data[i];
      if (std::isnan(a) != std::isnan(b)) Fail("NaN in one path and not in the other");
      if (!std::isnan(a) && std::fabs(double(a) - double(b)) > 1e-4 * scale) {
        std::fprintf(stderr, "output[%zu]: %.9g vs %.9g (tolerance %.3g)\n", i, a, b, 1e-4 * scale);
        Fail("streaming and probability paths disagree");
      }
    }
  }
  return 0;
}
