// Numerical edge cases of MultiHeadAttention::forward, each checked on both kernels (with the
// probabilities written out, need_weights = true, and the streaming one, need_weights = false):
//   fully masked rows (NaN, or zeros with fully_masked_rows_zero), -inf and huge scores,
//   large magnitudes, L or S = 1, head dimension 1. docs/exactness.md, "Numerical behaviour", describes them.
// Also regressions for what the fuzzer found (huge sizes in error messages).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "mha/attention.h"
#include "mha/statistics.h"

namespace {

using mha::Config;
using mha::ForwardOptions;
using mha::ForwardResult;
using mha::MaskDtype;
using mha::MaskView;
using mha::MultiHeadAttention;
using mha::Shape;
using mha::StatusCode;
using mha::TensorView;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::unique_ptr<MultiHeadAttention> Make(const Config& config, uint64_t seed = 3) {
  std::unique_ptr<MultiHeadAttention> m;
  const mha::Status status = MultiHeadAttention::Create(config, seed, &m);
  EXPECT_TRUE(status.ok()) << status.message();
  return m;
}

void Set(MultiHeadAttention& m, const std::string& name, std::vector<float> values) {
  Shape shape;
  ASSERT_TRUE(m.parameter_shape(name, &shape).ok());
  const mha::Status status = m.set_parameter(name, values.data(), values.size(), shape);
  ASSERT_TRUE(status.ok()) << status.message();
}

std::vector<float> Random(size_t n, uint32_t seed, float scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

MaskView Mask(const std::vector<uint8_t>& bytes, Shape shape) {
  MaskView m;
  m.dtype = MaskDtype::kBool;
  m.data = bytes.data();
  m.length = bytes.size();
  m.shape = std::move(shape);
  return m;
}

MaskView FloatMask(const std::vector<float>& values, Shape shape) {
  MaskView m;
  m.dtype = MaskDtype::kFloat;
  m.data = values.data();
  m.length = values.size();
  m.shape = std::move(shape);
  return m;
}

// Both kernels: the first result has the per-head weights, the second does not.
struct BothPaths {
  ForwardResult with_weights;
  ForwardResult streaming;
};

BothPaths RunBoth(MultiHeadAttention& m, const TensorView& q, const TensorView& k, const TensorView& v,
              const MaskView& kpm, const MaskView& attn, ForwardOptions options = {}) {
  BothPaths out;
  options.need_weights = true;
  options.average_attn_weights = false;
  options.return_head_outputs = true;
  mha::Status status = m.forward(q, k, v, kpm, attn, options, &out.with_weights);
  EXPECT_TRUE(status.ok()) << status.message();
  options.need_weights = false;
  status = m.forward(q, k, v, kpm, attn, options, &out.streaming);
  EXPECT_TRUE(status.ok()) << status.message();
  return out;
}

// Largest |a - b|; NaN must be at the same places (else +inf).
double MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return kInf;
  double max = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return kInf;
      continue;
    }
    max = std::max(max, std::fabs(double(a[i]) - double(b[i])));
  }
  return max;
}

void ExpectPathsAgree(const BothPaths& r, double tolerance, const char* what) {
  const double d = MaxDiff(r.with_weights.output.data, r.streaming.output.data);
  std::printf("  %s: the two kernels' outputs differ by %.3g at most (tolerance %.3g)\n", what, d, tolerance);
  EXPECT_LE(d, tolerance) << what;
}

// Double-precision softmax of one row, with the max subtracted.
std::vector<double> Softmax(const std::vector<double>& scores) {
  const double max = *std::max_element(scores.begin(), scores.end());
  std::vector<double> p(scores.size());
  double sum = 0;
  for (size_t j = 0; j < scores.size(); ++j) sum += p[j] = std::exp(scores[j] - max);
  for (double& x : p) x /= sum;
  return p;
}

// E = H = 1 (head dimension 1) with every weight 1 and no bias: score_ij = x_i * x_j exactly,
// and the output is sum_j p_ij x_j. Scores are whatever x makes them.
std::unique_ptr<MultiHeadAttention> Scalar() {
  Config c;
  c.embed_dim = 1;
  c.num_heads = 1;
  c.bias = false;
  auto m = Make(c);
  Set(*m, "in_proj_weight", {1, 1, 1});
  Set(*m, "out_proj.weight", {1});
  return m;
}

TEST(EdgeCases, FullyMaskedRowsGiveNaNOrZerosAndLeaveOtherRowsAlone) {
  Config c;
  c.embed_dim = 8;
  c.num_heads = 2;
  c.batch_first = true;
  auto m = Make(c);
  const int64_t N = 2, L = 3, S = 4, E = 8;
  const auto x = Random(N * L * E, 1, 1.0f);
  const auto kv = Random(N * S * E, 2, 1.0f);
  const TensorView q{x.data(), x.size(), {N, L, E}};
  const TensorView k{kv.data(), kv.size(), {N, S, E}};
  // Batch item 0: every key padded away. Batch item 1: query row 1 forbidden from every key.
  const std::vector<uint8_t> kpm = {1, 1, 1, 1, 0, 0, 0, 0};
  std::vector<uint8_t> attn(N * 2 * L * S, 0);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t j = 0; j < S; ++j) attn[((1 * 2 + h) * L + 1) * S + j] = 1;

  const BothPaths nan_rows = RunBoth(*m, q, k, k, Mask(kpm, {N, S}), Mask(attn, {N * 2, L, S}));
  ForwardOptions zero;
  zero.fully_masked_rows_zero = true;
  const BothPaths zero_rows = RunBoth(*m, q, k, k, Mask(kpm, {N, S}), Mask(attn, {N * 2, L, S}), zero);

  // Batch item 1, rows 0 and 2 alone (its own call, no masks): what the masked call must give.
  const std::vector<float> x1(x.begin() + L * E, x.end());
  const std::vector<float> kv1(kv.begin() + S * E, kv.end());
  ForwardResult alone;
  ForwardOptions per_head;
  per_head.average_attn_weights = false;
  ASSERT_TRUE(m->forward({x1.data(), x1.size(), {1, L, E}}, {kv1.data(), kv1.size(), {1, S, E}},
                         {kv1.data(), kv1.size(), {1, S, E}}, {}, {}, per_head, &alone).ok());

  Shape bias_shape;
  mha::Tensor out_bias;
  ASSERT_TRUE(m->get_parameter("out_proj.bias", &out_bias).ok());
  for (const BothPaths* r : {&nan_rows, &zero_rows}) {
    const bool zeros = r == &zero_rows;
    for (const ForwardResult* f : {&r->with_weights, &r->streaming}) {
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t l = 0; l < L; ++l) {
          const bool masked = n == 0 || l == 1;
          for (int64_t e = 0; e < E; ++e) {
            const float y = f->output.data[(n * L + l) * E + e];
            if (masked && !zeros) {
              EXPECT_TRUE(std::isnan(y)) << "n=" << n << " l=" << l;
            } else if (masked) {
              // The heads give 0, so the output is W_O . 0 + b_O.
              EXPECT_EQ(y, out_bias.data[e]) << "n=" << n << " l=" << l;
            } else {
              EXPECT_NEAR(y, alone.output.data[l * E + e], 1e-6) << "n=" << n << " l=" << l;
            }
          }
        }
      }
    }
    const auto& w = r->with_weights.weights.data;  // (N, H, L, S)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t l = 0; l < L; ++l)
          for (int64_t j = 0; j < S; ++j) {
            const float p = w[((n * 2 + h) * L + l) * S + j];
            if (n == 0 || l == 1) {
              if (zeros) EXPECT_EQ(p, 0.0f);
              else EXPECT_TRUE(std::isnan(p));
            } else {
              EXPECT_NEAR(p, alone.weights.data[(h * L + l) * S + j], 1e-6);
            }
          }
    ExpectPathsAgree(*r, 1e-5, zeros ? "fully masked rows, zeros" : "fully masked rows, NaN");
  }

  // Head statistics skip the NaN rows: batch 0's three rows and batch 1's row 1, per head.
  std::vector<mha::HeadStatistics> heads;
  const auto& w = nan_rows.with_weights.weights;
  ASSERT_TRUE(mha::head_statistics({w.data.data(), w.data.size(), w.shape}, {}, &heads, nullptr).ok());
  for (const auto& h : heads) EXPECT_EQ(h.rows, 2);
}

TEST(EdgeCases, MinusInfinityMasksGiveExactZerosAndHugeNegativeMasksDoNot) {
  auto m = Scalar();
  const std::vector<float> x = {0.5f, -1.0f, 2.0f};  // L = S = 3
  const TensorView t{x.data(), x.size(), {3, 1}};
  // Row 0: key 1 at -inf. Row 1: every key at -1e30 (finite): the shift cancels, weights are
  // softmax(x_1 x_j) as if unmasked. Row 2: keys 0 and 2 at -inf, so key 1 takes everything.
  const std::vector<float> mask = {0, -kInf, 0, -1e30f, -1e30f, -1e30f, -kInf, 0, -kInf};
  const BothPaths r = RunBoth(*m, t, t, t, {}, FloatMask(mask, {3, 3}));
  const auto& w = r.with_weights.weights.data;  // (1, 3, 3)
  EXPECT_EQ(w[1], 0.0f);
  EXPECT_NEAR(w[0] + w[2], 1.0f, 1e-6);
  EXPECT_EQ(w[6], 0.0f);
  EXPECT_EQ(w[7], 1.0f);
  EXPECT_EQ(w[8], 0.0f);
  // Row 1 with a -1e30 shift: in float32, x_1 x_j - 1e30 rounds to -1e30 for every j, so the
  // row is uniform, as it is in PyTorch (float32 there too). Not NaN: the row is not masked.
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(w[3 + j], 1.0f / 3, 1e-6);
  ExpectPathsAgree(r, 1e-6, "-inf and -1e30 masks");
}

TEST(EdgeCases, HugeScoresStayStable) {
  auto m = Scalar();
  // Scores x_i x_j up to 1e4 * 1e4 = 1e8 and beyond 1e30: exp() of them without the max
  // subtracted would overflow; with it, each row is (nearly) one-hot and exactly normalised.
  for (const float big : {100.0f, 1e4f, 1e15f}) {
    const std::vector<float> x = {big, 0.5f * big, -big, 0.25f * big};
    const TensorView t{x.data(), x.size(), {4, 1}};
    const BothPaths r = RunBoth(*m, t, t, t, {}, {});
    const auto& w = r.with_weights.weights.data;
    for (int i = 0; i < 4; ++i) {
      std::vector<double> scores(4);
      for (int j = 0; j < 4; ++j) scores[j] = double(x[i]) * double(x[j]);
      const std::vector<double> p = Softmax(scores);
      double sum = 0, max_err = 0;
      for (int j = 0; j < 4; ++j) {
        ASSERT_TRUE(std::isfinite(w[i * 4 + j])) << "big=" << big << " row " << i;
        sum += w[i * 4 + j];
        max_err = std::max(max_err, std::fabs(w[i * 4 + j] - p[j]));
      }
      EXPECT_NEAR(sum, 1.0, 1e-6);
      EXPECT_LE(max_err, 1e-6) << "big=" << big << " row " << i;
      // Output: sum_j p_j x_j, relative to the scale of x.
      double want = 0;
      for (int j = 0; j < 4; ++j) want += p[j] * x[j];
      EXPECT_NEAR(r.with_weights.output.data[i], want, 1e-6 * big) << "big=" << big;
    }
    char what[64];
    std::snprintf(what, sizeof what, "scores up to %.0e", double(big) * double(big));
    ExpectPathsAgree(r, 1e-6 * big, what);
  }
}

TEST(EdgeCases, ScoresBeyondFloatRangeGiveNaNNotACrash) {
  // x_i x_j = 1e40 overflows float32 to +inf; inf - inf is NaN, as in PyTorch (float32).
  auto m = Scalar();
  const std::vector<float> x = {1e20f, 1e20f};
  const TensorView t{x.data(), x.size(), {2, 1}};
  const BothPaths r = RunBoth(*m, t, t, t, {}, {});
  for (float y : r.with_weights.output.data) EXPECT_TRUE(std::isnan(y));
  for (float y : r.streaming.output.data) EXPECT_TRUE(std::isnan(y));
}

// A plain double-precision forward for batch-first (1, L, E) self or cross attention without
// masks, from the module's own parameters (packed in_proj_weight).
std::vector<double> Reference(const MultiHeadAttention& m, const std::vector<float>& q_in,
                              const std::vector<float>& kv_in, int64_t L, int64_t S) {
  const int64_t E = m.config().embed_dim, H = m.config().num_heads, hd = E / H;
  mha::Tensor w, b, wo, bo;
  EXPECT_TRUE(m.get_parameter("in_proj_weight", &w).ok());
  EXPECT_TRUE(m.get_parameter("in_proj_bias", &b).ok());
  EXPECT_TRUE(m.get_parameter("out_proj.weight", &wo).ok());
  EXPECT_TRUE(m.get_parameter("out_proj.bias", &bo).ok());
  auto project = [&](const std::vector<float>& in, int64_t rows, int64_t part) {
    std::vector<double> out(rows * E);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < E; ++o) {
        double sum = b.data[part * E + o];
        for (int64_t c = 0; c < E; ++c) sum += double(w.data[(part * E + o) * E + c]) * in[r * E + c];
        out[r * E + o] = sum;
      }
    return out;
  };
  const auto q = project(q_in, L, 0), k = project(kv_in, S, 1), v = project(kv_in, S, 2);
  std::vector<double> concat(L * E, 0.0);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> scores(S);
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < hd; ++d) dot += q[i * E + h * hd + d] * k[j * E + h * hd + d];
        scores[j] = dot / std::sqrt(double(hd));
      }
      const auto p = Softmax(scores);
      for (int64_t d = 0; d < hd; ++d)
        for (int64_t j = 0; j < S; ++j) concat[i * E + h * hd + d] += p[j] * v[j * E + h * hd + d];
    }
  std::vector<double> out(L * E);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t o = 0; o < E; ++o) {
      double sum = bo.data[o];
      for (int64_t c = 0; c < E; ++c) sum += double(wo.data[o * E + c]) * concat[i * E + c];
      out[i * E + o] = sum;
    }
  return out;
}

TEST(EdgeCases, LengthOneAndHeadDimensionOneMatchTheReference) {
  struct Case { int64_t E, H, L, S; float scale; const char* what; };
  const Case cases[] = {
      {8, 2, 1, 1, 1.0f, "L = S = 1"},
      {8, 2, 1, 6, 1.0f, "L = 1"},
      {8, 2, 6, 1, 1.0f, "S = 1"},
      {4, 4, 5, 7, 1.0f, "head dimension 1 (E = H = 4)"},
      {1, 1, 3, 3, 1.0f, "E = H = 1"},
      {8, 4, 4, 5, 1e3f, "inputs of magnitude 1e3"},
      {8, 4, 4, 5, 1e-20f, "inputs of magnitude 1e-20"},
  };
  for (const Case& c : cases) {
    Config config;
    config.embed_dim = c.E;
    config.num_heads = c.H;
    config.batch_first = true;
    auto m = Make(config, 11);
    // Non-zero biases, so that they count.
    std::vector<float> bias = Random(3 * c.E, 5, 0.3f);
    Set(*m, "in_proj_bias", bias);
    Set(*m, "out_proj.bias", Random(c.E, 6, 0.3f));
    const auto x = Random(c.L * c.E, 7, c.scale);
    const auto kv = Random(c.S * c.E, 8, c.scale);
    const TensorView q{x.data(), x.size(), {1, c.L, c.E}};
    const TensorView k{kv.data(), kv.size(), {1, c.S, c.E}};
    const BothPaths r = RunBoth(*m, q, k, k, {}, {});
    const auto want = Reference(*m, x, kv, c.L, c.S);
    double scale = 1, err = 0;
    for (double y : want) scale = std::max(scale, std::fabs(y));
    for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(r.with_weights.output.data[i] - want[i]));
    std::printf("  %s: output max error %.3g against double precision (tolerance %.3g)\n", c.what, err, 1e-5 * scale);
    EXPECT_LE(err, 1e-5 * scale) << c.what;
    if (c.S == 1) {
      for (float p : r.with_weights.weights.data) EXPECT_EQ(p, 1.0f) << c.what;  // one key takes it all
    }
    ExpectPathsAgree(r, 1e-5 * scale, c.what);
  }
}

// Regression: the memory cap counted the scratch but not the tensors handed back, so a call just
// under the cap could need twice the cap; in WebAssembly (2 GB at most) a per-head weights call
// at L = S = 16350, E = 8 aborted the runtime instead of failing with kTooLarge.
TEST(EdgeCases, MemoryCapCountsTheReturnedTensors) {
  Config config;
  config.embed_dim = 8;
  config.num_heads = 1;
  config.batch_first = true;
  auto m = Make(config);
  const int64_t L = 256;
  const auto x = Random(L * 8, 9, 1.0f);
  const TensorView q{x.data(), x.size(), {1, L, 8}};
  // The query, 2,048 floats (8,192 bytes); scratch: 73,728 floats (294,912 bytes), of which the
  // probabilities are L * L = 65,536; handed back: the output (2,048 floats) and the per-head
  // weights (another 65,536), 270,336 bytes. 400,000 bytes holds the query and the scratch but
  // not them and the results; without weights the call takes about a third of it.
  m->set_memory_cap(400000);
  ForwardOptions per_head;
  per_head.average_attn_weights = false;
  ForwardResult result;
  mha::Status status = m->forward(q, q, q, {}, {}, per_head, &result);
  EXPECT_EQ(status.code(), StatusCode::kTooLarge) << status.message();
  EXPECT_NE(status.message().find("this call needs 573440 bytes"), std::string::npos) << status.message();
  ForwardOptions no_weights;
  no_weights.need_weights = false;
  status = m->forward(q, q, q, {}, {}, no_weights, &result);
  EXPECT_TRUE(status.ok()) << status.message();
  m->set_memory_cap(600000);
  status = m->forward(q, q, q, {}, {}, per_head, &result);
  EXPECT_TRUE(status.ok()) << status.message();
}

// Regressions: the fuzzer found integer conversions of huge counts (undefined behaviour) in
// error messages. Under UBSan (build/asan) these abort if the bug comes back.
TEST(EdgeCases, HugeSizesGiveMessagesNotUndefinedBehaviour) {
  Config config;
  config.embed_dim = int64_t{1} << 40;
  config.num_heads = 1;
  config.kdim = std::numeric_limits<int64_t>::max();
  config.vdim = std::numeric_limits<int64_t>::max();
  std::unique_ptr<MultiHeadAttention> m;
  mha::Status status = MultiHeadAttention::Create(config, 0, &m);
  EXPECT_EQ(status.code(), StatusCode::kTooLarge);
  EXPECT_NE(status.message().find("bytes"), std::string::npos) << status.message();

  const std::vector<float> values(6, 0.1f);
  const TensorView huge{values.data(), values.size(), {int64_t{1} << 40, int64_t{1} << 40, 3, 2}};
  std::vector<mha::HeadStatistics> heads;
  status = mha::head_statistics(huge, {}, &heads, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kLengthMismatch);
  EXPECT_NE(status.message().find("needs"), std::string::npos) << status.message();
  std::vector<double> per_row;
  double mean = 0;
  status = mha::js_divergence(huge, huge, &per_row, &mean);
  EXPECT_EQ(status.code(), StatusCode::kLengthMismatch);
}

}  // namespace
