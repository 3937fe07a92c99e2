// Unit tests of MultiHeadAttention against a plain double-precision reference written out
// loop by loop, independent of the kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "mha/attention.h"
#include "mha/kernels.h"

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

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

std::unique_ptr<MultiHeadAttention> make(const Config& config, uint64_t seed = 1) {
  std::unique_ptr<MultiHeadAttention> m;
  auto status = MultiHeadAttention::Create(config, seed, &m);
  EXPECT_TRUE(status.ok()) << status.message();
  // Non-zero biases so that they are tested.
  for (const auto& name : m->parameter_names()) {
    Shape shape;
    EXPECT_TRUE(m->parameter_shape(name, &shape).ok());
    size_t n = 1;
    for (auto d : shape) n *= size_t(d);
    auto values = random_vector(n, uint32_t(std::hash<std::string>()(name) & 0xffff), 0.4f);
    EXPECT_TRUE(m->set_parameter(name, values.data(), n, shape).ok());
  }
  return m;
}

std::vector<float> param(const MultiHeadAttention& m, const std::string& name) {
  mha::Tensor t;
  EXPECT_TRUE(m.get_parameter(name, &t).ok());
  return t.data;
}

// Reference forward for batch-first 3-D input, masks as additive (N*H or 1, L, S) and (N, S).
struct Reference {
  std::vector<double> output;   // (N, L, O)
  std::vector<double> weights;  // (N, H, L, S_total)
};

Reference reference_forward(const MultiHeadAttention& m, const std::vector<float>& q_in,
                            const std::vector<float>& k_in, const std::vector<float>& v_in, int64_t N,
                            int64_t L, int64_t S, const std::vector<float>* attn_add, bool attn_per_head,
                            const std::vector<float>* key_add, bool causal) {
  const Config& c = m.config();
  const int64_t E = c.embed_dim, H = c.num_heads, G = c.num_kv_heads, hd = E / H, kv = G * hd;
  std::vector<float> wq, wk, wv, bq(E, 0), bk(kv, 0), bv(kv, 0);
  if (m.packed_in_proj()) {
    auto w = param(m, "in_proj_weight");
    wq.assign(w.begin(), w.begin() + E * E);
    wk.assign(w.begin() + E * E, w.begin() + 2 * E * E);
    wv.assign(w.begin() + 2 * E * E, w.end());
  } else {
    wq = param(m, "q_proj_weight");
    wk = param(m, "k_proj_weight");
    wv = param(m, "v_proj_weight");
  }
  if (c.bias) {
    auto b = param(m, "in_proj_bias");
    std::copy(b.begin(), b.begin() + E, bq.begin());
    std::copy(b.begin() + E, b.begin() + E + kv, bk.begin());
    std::copy(b.begin() + E + kv, b.end(), bv.begin());
  }
  const int64_t O = m.out_dim();
  auto wo = param(m, "out_proj.weight");  // (O, E)
  std::vector<float> bo = c.bias ? param(m, "out_proj.bias") : std::vector<float>(O, 0);
  std::vector<float> bias_k, bias_v;
  if (c.add_bias_kv) {
    bias_k = param(m, "bias_k");
    bias_v = param(m, "bias_v");
  }
  const int64_t St = S + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
  auto project = [](const std::vector<float>& x, int64_t rows, int64_t in, const std::vector<float>& w,
                    const std::vector<float>& b, int64_t out) {
    std::vector<double> y(rows * out);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < out; ++o) {
        double acc = b[o];
        for (int64_t i = 0; i < in; ++i) acc += double(x[r * in + i]) * w[o * in + i];
        y[r * out + o] = acc;
      }
    return y;
  };
  auto q = project(q_in, N * L, E, wq, bq, E);
  auto k0 = project(k_in, N * S, c.kdim, wk, bk, kv);
  auto v0 = project(v_in, N * S, c.vdim, wv, bv, kv);
  std::vector<double> k(N * St * kv, 0.0), v(N * St * kv, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < kv; ++d) {
        k[(n * St + s) * kv + d] = k0[(n * S + s) * kv + d];
        v[(n * St + s) * kv + d] = v0[(n * S + s) * kv + d];
      }
    if (c.add_bias_kv)
      for (int64_t d = 0; d < kv; ++d) {
        k[(n * St + S) * kv + d] = bias_k[d];
        v[(n * St + S) * kv + d] = bias_v[d];
      }
  }
  Reference ref;
  ref.weights.assign(N * H * L * St, 0.0);
  std::vector<double> concat(N * L * E, 0.0);
  const double scale = 1.0 / std::sqrt(double(hd));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / (H / G);
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(St);
        double mx = -INFINITY;
        for (int64_t j = 0; j < St; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < hd; ++d) dot += q[(n * L + i) * E + h * hd + d] * scale * k[(n * St + j) * kv + g * hd + d];
          if (j < S) {
            if (attn_add) dot += (*attn_add)[(attn_per_head ? (n * H + h) * L * S : 0) + i * S + j];
            if (key_add) dot += (*key_add)[n * S + j];
            if (causal && j > i) dot = -INFINITY;
          }
          s[j] = dot;
          mx = std::max(mx, dot);
        }
        double sum = 0;
        for (int64_t j = 0; j < St; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t j = 0; j < St; ++j) {
          const double p = s[j] / sum;
          ref.weights[((n * H + h) * L + i) * St + j] = p;
          for (int64_t d = 0; d < hd; ++d) concat[(n * L + i) * E + h * hd + d] += p * v[(n * St + j) * kv + g * hd + d];
        }
      }
    }
  ref.output.assign(N * L * O, 0.0);
  for (int64_t r = 0; r < N * L; ++r)
    for (int64_t o = 0; o < O; ++o) {
      double acc = bo[o];
      for (int64_t i = 0; i < E; ++i) acc += concat[r * E + i] * wo[o * E + i];
      ref.output[r * O + o] = acc;
    }
  return ref;
}

double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) worst = std::max(worst, std::abs(double(got[i]) - want[i]));
  return worst;
}

TensorView view(const std::vector<float>& v, Shape shape) { return TensorView{v.data(), v.size(), std::move(shape)}; }

struct Variant {
  const char* name;
  Config config;
  int64_t N, L, S;
  bool self, kpm, attn_mask, attn_per_head, causal;
};

class ForwardAgainstReference : public ::testing::TestWithParam<Variant> {};

TEST_P(ForwardAgainstReference, MatchesDoublePrecisionLoops) {
  const Variant& p = GetParam();
  auto m = make(p.config);
  const Config& c = m->config();
  const int64_t N = p.N, L = p.L, S = p.self ? p.L : p.S, H = c.num_heads;
  auto q = random_vector(N * L * c.embed_dim, 11);
  auto k = p.self ? q : random_vector(N * S * c.kdim, 12);
  auto v = p.self ? q : random_vector(N * S * c.vdim, 13);
  std::vector<float> attn_add, key_add;
  std::vector<uint8_t> key_bool;
  MaskView attn_view, kpm_view;
  if (p.attn_mask) {
    attn_add = random_vector((p.attn_per_head ? N * H : 1) * L * S, 14);
    attn_view = MaskView{MaskDtype::kFloat, attn_add.data(), attn_add.size(),
                         p.attn_per_head ? Shape{N * H, L, S} : Shape{L, S}};
  }
  if (p.kpm) {
    key_bool.assign(N * S, 0);
    key_add.assign(N * S, 0.0f);
    for (int64_t i = 0; i < N * S; ++i)
      if (i % S != 0 && i % 3 == 1) {
        key_bool[i] = 1;
        key_add[i] = -INFINITY;
      }
    kpm_view = MaskView{MaskDtype::kBool, key_bool.data(), key_bool.size(), {N, S}};
  }
  ForwardOptions options;
  options.average_attn_weights = false;
  options.is_causal = p.causal;
  ForwardResult result;
  const TensorView qv = view(q, {N, L, c.embed_dim});
  const TensorView kv = p.self ? qv : view(k, {N, S, c.kdim});
  const TensorView vv = p.self ? qv : view(v, {N, S, c.vdim});
  auto status = m->forward(qv, kv, vv, kpm_view, attn_view, options, &result);
  ASSERT_TRUE(status.ok()) << status.message();
  auto ref = reference_forward(*m, q, k, v, N, L, S, p.attn_mask ? &attn_add : nullptr, p.attn_per_head,
                               p.kpm ? &key_add : nullptr, p.causal && !p.attn_mask);
  const double out_err = max_error(result.output.data, ref.output);
  const double w_err = max_error(result.weights.data, ref.weights);
  std::printf("  %-14s output max err %.2e (tol 1e-5)  weights max err %.2e (tol 1e-6)\n", p.name, out_err, w_err);
  EXPECT_LT(out_err, 1e-5);
  EXPECT_LT(w_err, 1e-6);

  // The streaming path (no weights) gives the same output.
  options.need_weights = false;
  ForwardResult streamed;
  ASSERT_TRUE(m->forward(qv, kv, vv, kpm_view, attn_view, options, &streamed).ok());
  EXPECT_FALSE(streamed.weights.present());
  const double stream_err = max_error(streamed.output.data, ref.output);
  std::printf("  %-14s streaming output max err %.2e (tol 1e-5)\n", p.name, stream_err);
  EXPECT_LT(stream_err, 1e-5);
}

Config cfg(int64_t E, int64_t H, int64_t G = 0, int64_t kdim = 0, int64_t vdim = 0, bool bias = true,
           bool bias_kv = false, bool zero_attn = false) {
  Config c;
  c.embed_dim = E;
  c.num_heads = H;
  c.num_kv_heads = G;
  c.kdim = kdim;
  c.vdim = vdim;
  c.bias = bias;
  c.add_bias_kv = bias_kv;
  c.add_zero_attn = zero_attn;
  c.batch_first = true;
  return c;
}

Config with_out_dim(Config c, int64_t out_dim) {
  c.out_dim = out_dim;
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, ForwardAgainstReference,
    ::testing::Values(Variant{"self", cfg(16, 4), 2, 5, 5, true, false, false, false, false},
                      Variant{"cross_kdim", cfg(12, 3, 0, 5, 7), 2, 4, 6, false, false, false, false, false},
                      Variant{"no_bias", cfg(8, 2, 0, 0, 0, false), 1, 3, 3, true, false, false, false, false},
                      Variant{"bias_kv_zero", cfg(8, 2, 0, 0, 0, true, true, true), 2, 3, 4, false, true, true, false, false},
                      Variant{"masks_3d", cfg(8, 2), 2, 3, 5, false, true, true, true, false},
                      Variant{"causal", cfg(16, 4), 1, 6, 6, true, false, false, false, true},
                      Variant{"gqa_2", cfg(32, 8, 2), 2, 5, 7, false, true, false, false, false},
                      Variant{"mqa", cfg(16, 4, 1, 6, 6), 1, 4, 4, false, false, true, false, false},
                      Variant{"long_keys", cfg(16, 2), 1, 3, 300, false, true, true, false, false},
                      Variant{"wider_out", with_out_dim(cfg(16, 4), 24), 2, 5, 5, true, false, false, false, true},
                      Variant{"narrower_out", with_out_dim(cfg(12, 3, 0, 5, 7), 5), 2, 4, 6, false, true, true, true, false},
                      Variant{"out_no_bias", with_out_dim(cfg(8, 2, 2, 0, 0, false, true, true), 3), 1, 3, 4, false, false, false, false, false}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Config, RejectsBadConfigsWithPyTorchWording) {
  std::unique_ptr<MultiHeadAttention> m;
  auto s = MultiHeadAttention::Create(cfg(10, 3), 0, &m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidConfig);
  EXPECT_NE(s.message().find("embed_dim must be divisible by num_heads"), std::string::npos) << s.message();
  s = MultiHeadAttention::Create(cfg(16, 8, 3), 0, &m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidConfig);
  EXPECT_NE(s.message().find("num_kv_heads must divide num_heads"), std::string::npos) << s.message();
  EXPECT_EQ(MultiHeadAttention::Create(cfg(0, 1), 0, &m).code(), StatusCode::kInvalidConfig);
  EXPECT_EQ(MultiHeadAttention::Create(cfg(8, -2), 0, &m).code(), StatusCode::kInvalidConfig);
  EXPECT_EQ(MultiHeadAttention::Create(cfg(1 << 20, 1), 0, &m).code(), StatusCode::kTooLarge);
}

TEST(Parameters, NamesAndShapesFollowPyTorch) {
  auto packed = make(cfg(8, 2));
  EXPECT_EQ(packed->parameter_names(), (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  auto gqa = make(cfg(16, 4, 2, 0, 0, true, true));
  EXPECT_EQ(gqa->parameter_names(), (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                                              "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"}));
  Shape shape;
  ASSERT_TRUE(gqa->parameter_shape("k_proj_weight", &shape).ok());
  EXPECT_EQ(shape, (Shape{8, 16}));
  ASSERT_TRUE(gqa->parameter_shape("in_proj_bias", &shape).ok());
  EXPECT_EQ(shape, (Shape{32}));
  ASSERT_TRUE(gqa->parameter_shape("bias_k", &shape).ok());
  EXPECT_EQ(shape, (Shape{1, 1, 8}));

  std::vector<float> wrong(7, 0.0f);
  auto s = packed->set_parameter("in_proj_weight", wrong.data(), wrong.size(), {7});
  EXPECT_EQ(s.code(), StatusCode::kShapeMismatch);
  EXPECT_NE(s.message().find("expected shape (24, 8)"), std::string::npos) << s.message();
  s = packed->set_parameter("in_proj_weight", wrong.data(), wrong.size(), {24, 8});
  EXPECT_EQ(s.code(), StatusCode::kLengthMismatch);
  s = packed->set_parameter("q_proj_weight", wrong.data(), wrong.size(), {8, 8});
  EXPECT_EQ(s.code(), StatusCode::kUnknownParameter);
  EXPECT_NE(s.message().find("in_proj_weight"), std::string::npos);
}

TEST(Parameters, DefaultInitialisationHasPyTorchsDistributions) {
  auto m1 = std::unique_ptr<MultiHeadAttention>();
  ASSERT_TRUE(MultiHeadAttention::Create(cfg(64, 8, 0, 0, 0, true, true), 7, &m1).ok());
  auto w = param(*m1, "in_proj_weight");
  const double xavier = std::sqrt(6.0 / (64 + 192));
  double mx = 0, sum_sq = 0;
  for (float x : w) {
    mx = std::max(mx, double(std::abs(x)));
    sum_sq += double(x) * x;
  }
  EXPECT_LE(mx, xavier);
  EXPECT_GT(mx, 0.95 * xavier);
  // U(-b, b) has variance b^2 / 3.
  EXPECT_NEAR(sum_sq / w.size(), xavier * xavier / 3, 0.05 * xavier * xavier / 3);
  for (float b : param(*m1, "in_proj_bias")) EXPECT_EQ(b, 0.0f);
  for (float b : param(*m1, "out_proj.bias")) EXPECT_EQ(b, 0.0f);
  double out_max = 0;
  for (float x : param(*m1, "out_proj.weight")) out_max = std::max(out_max, double(std::abs(x)));
  EXPECT_LE(out_max, 1.0 / 8.0);
  EXPECT_GT(out_max, 0.95 / 8.0);
  // Same seed, same weights; another seed, other weights.
  std::unique_ptr<MultiHeadAttention> m2, m3;
  ASSERT_TRUE(MultiHeadAttention::Create(cfg(64, 8, 0, 0, 0, true, true), 7, &m2).ok());
  ASSERT_TRUE(MultiHeadAttention::Create(cfg(64, 8, 0, 0, 0, true, true), 8, &m3).ok());
  EXPECT_EQ(param(*m2, "in_proj_weight"), w);
  EXPECT_NE(param(*m3, "in_proj_weight"), w);
}

class ForwardErrors : public ::testing::Test {
 protected:
  void SetUp() override { m = make(cfg(8, 2)); }
  mha::Status call(const TensorView& q, const TensorView& k, const TensorView& v, const MaskView& kpm = {},
                   const MaskView& attn = {}, ForwardOptions options = {}) {
    return m->forward(q, k, v, kpm, attn, options, &result);
  }
  void expect_still_works() {
    auto x = random_vector(2 * 3 * 8, 5);
    auto xv = view(x, {2, 3, 8});
    auto s = call(xv, xv, xv);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(result.output.shape, (Shape{2, 3, 8}));
  }
  std::unique_ptr<MultiHeadAttention> m;
  ForwardResult result;
};

TEST_F(ForwardErrors, EachBadInputGivesAClearMessageAndTheModuleStaysUsable) {
  auto x = random_vector(2 * 3 * 8, 3);
  auto s = call(view(x, {2, 3, 7}), view(x, {2, 3, 8}), view(x, {2, 3, 8}));
  EXPECT_EQ(s.code(), StatusCode::kLengthMismatch) << s.message();
  expect_still_works();
  std::vector<float> x7(2 * 3 * 7, 0.1f);
  s = call(view(x7, {2, 3, 7}), view(x7, {2, 3, 7}), view(x7, {2, 3, 7}));
  EXPECT_EQ(s.code(), StatusCode::kShapeMismatch);
  EXPECT_NE(s.message().find("was expecting embedding dimension of 8, but got 7"), std::string::npos) << s.message();
  expect_still_works();
  s = call(view(x, {2, 3, 8}), view(x, {6, 8}), view(x, {6, 8}));
  EXPECT_EQ(s.code(), StatusCode::kShapeMismatch) << s.message();
  std::vector<uint8_t> bad_kpm(5, 0);
  s = call(view(x, {2, 3, 8}), view(x, {2, 3, 8}), view(x, {2, 3, 8}), MaskView{MaskDtype::kBool, bad_kpm.data(), 5, {1, 5}});
  EXPECT_EQ(s.code(), StatusCode::kShapeMismatch);
  EXPECT_NE(s.message().find("expecting key_padding_mask shape of (2, 3), but got (1, 5)"), std::string::npos) << s.message();
  std::vector<float> bad_mask(4, 0.0f);
  s = call(view(x, {2, 3, 8}), view(x, {2, 3, 8}), view(x, {2, 3, 8}), {}, MaskView{MaskDtype::kFloat, bad_mask.data(), 4, {2, 2}});
  EXPECT_NE(s.message().find("The shape of the 2D attn_mask is (2, 2), but should be (3, 3)."), std::string::npos) << s.message();
  s = call(view(x, {2, 3, 8}), view(x, {2, 3, 8}), view(x, {2, 3, 8}), {}, MaskView{static_cast<MaskDtype>(9), bad_mask.data(), 4, {2, 2}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidDtype);
  std::vector<float> nan_x = x;
  nan_x[5] = std::numeric_limits<float>::quiet_NaN();
  s = call(view(nan_x, {2, 3, 8}), view(nan_x, {2, 3, 8}), view(nan_x, {2, 3, 8}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("value 5 is NaN"), std::string::npos) << s.message();
  ForwardOptions ablate;
  ablate.ablate_heads = {2};
  s = call(view(x, {2, 3, 8}), view(x, {2, 3, 8}), view(x, {2, 3, 8}), {}, {}, ablate);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  m->set_memory_cap(1024);
  s = call(view(x, {2, 3, 8}), view(x, {2, 3, 8}), view(x, {2, 3, 8}));
  EXPECT_EQ(s.code(), StatusCode::kTooLarge) << s.message();
  m->set_memory_cap(mha::kDefaultMemoryCapBytes);
  expect_still_works();
}

TEST(ForwardOptionsTest, AblationSkipOutProjAndHeadOutputsAgree) {
  auto m = make(cfg(8, 2));
  auto x = random_vector(4 * 8, 21);
  auto xv = view(x, {4, 8});  // unbatched
  ForwardOptions options;
  options.return_head_outputs = true;
  options.return_concat = true;
  ForwardResult full;
  ASSERT_TRUE(m->forward(xv, xv, xv, {}, {}, options, &full).ok());
  EXPECT_EQ(full.output.shape, (Shape{4, 8}));
  EXPECT_EQ(full.weights.shape, (Shape{4, 4}));
  EXPECT_EQ(full.head_outputs.shape, (Shape{2, 4, 4}));
  // concat[l, h*hd + d] == head_outputs[h, l, d]
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 4; ++l)
      for (int d = 0; d < 4; ++d) EXPECT_EQ(full.concat.data[l * 8 + h * 4 + d], full.head_outputs.data[(h * 4 + l) * 4 + d]);
  ForwardOptions skip;
  skip.skip_out_proj = true;
  ForwardResult skipped;
  ASSERT_TRUE(m->forward(xv, xv, xv, {}, {}, skip, &skipped).ok());
  EXPECT_EQ(skipped.output.data, full.concat.data);
  ForwardOptions ablate;
  ablate.ablate_heads = {1};
  ablate.return_concat = true;
  ForwardResult ablated;
  ASSERT_TRUE(m->forward(xv, xv, xv, {}, {}, ablate, &ablated).ok());
  for (int l = 0; l < 4; ++l)
    for (int d = 0; d < 4; ++d) {
      EXPECT_EQ(ablated.concat.data[l * 8 + 4 + d], 0.0f);
      EXPECT_EQ(ablated.concat.data[l * 8 + d], full.concat.data[l * 8 + d]);
    }
  // With head 1 zeroed the output is W_O's first half applied to head 0 plus the bias.
  auto wo = param(*m, "out_proj.weight");
  auto bo = param(*m, "out_proj.bias");
  for (int l = 0; l < 4; ++l)
    for (int o = 0; o < 8; ++o) {
      double acc = bo[o];
      for (int i = 0; i < 4; ++i) acc += double(full.concat.data[l * 8 + i]) * wo[o * 8 + i];
      EXPECT_NEAR(ablated.output.data[l * 8 + o], acc, 1e-5);
    }
}

TEST(ForwardOptionsTest, SequenceFirstEqualsBatchFirstTransposed) {
  Config c = cfg(8, 2);
  auto bf = make(c);
  c.batch_first = false;
  auto sf = make(c);
  const int64_t N = 3, L = 4;
  auto x_nle = random_vector(N * L * 8, 31);
  std::vector<float> x_lne(x_nle.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t l = 0; l < L; ++l)
      for (int64_t e = 0; e < 8; ++e) x_lne[(l * N + n) * 8 + e] = x_nle[(n * L + l) * 8 + e];
  ForwardResult a, b;
  ForwardOptions options;
  ASSERT_TRUE(bf->forward(view(x_nle, {N, L, 8}), view(x_nle, {N, L, 8}), view(x_nle, {N, L, 8}), {}, {}, options, &a).ok());
  ASSERT_TRUE(sf->forward(view(x_lne, {L, N, 8}), view(x_lne, {L, N, 8}), view(x_lne, {L, N, 8}), {}, {}, options, &b).ok());
  EXPECT_EQ(b.output.shape, (Shape{L, N, 8}));
  EXPECT_EQ(a.weights.data, b.weights.data);  // weights are (N, L, S) in both layouts
  for (int64_t n = 0; n < N; ++n)
    for (int64_t l = 0; l < L; ++l)
      for (int64_t e = 0; e < 8; ++e) EXPECT_FLOAT_EQ(a.output.data[(n * L + l) * 8 + e], b.output.data[(l * N + n) * 8 + e]);
}

TEST(ForwardOptionsTest, FullyMaskedRowsAreNaNOrZero) {
  auto m = make(cfg(8, 2));
  auto x = random_vector(3 * 8, 41);
  auto xv = view(x, {3, 8});
  std::vector<uint8_t> mask = {0, 0, 0, 1, 1, 1, 0, 1, 0};  // row 1 sees nothing
  MaskView attn{MaskDtype::kBool, mask.data(), mask.size(), {3, 3}};
  for (bool need_weights : {true, false}) {
    ForwardOptions options;
    options.need_weights = need_weights;
    ForwardResult r;
    ASSERT_TRUE(m->forward(xv, xv, xv, {}, attn, options, &r).ok());
    for (int e = 0; e < 8; ++e) {
      EXPECT_TRUE(std::isnan(r.output.data[8 + e]));
      EXPECT_FALSE(std::isnan(r.output.data[e]));
    }
    if (need_weights) EXPECT_TRUE(std::isnan(r.weights.data[3]));
    options.fully_masked_rows_zero = true;
    ASSERT_TRUE(m->forward(xv, xv, xv, {}, attn, options, &r).ok());
    auto bo = param(*m, "out_proj.bias");
    for (int e = 0; e < 8; ++e) EXPECT_FLOAT_EQ(r.output.data[8 + e], bo[e]);
    if (need_weights) EXPECT_EQ(r.weights.data[3], 0.0f);
  }
}

TEST(ForwardOptionsTest, HugeScoresStayFinite) {
  auto m = make(cfg(8, 2));
  auto x = random_vector(5 * 8, 51, 1e4f);
  auto xv = view(x, {5, 8});
  ForwardResult r;
  ASSERT_TRUE(m->forward(xv, xv, xv, {}, {}, ForwardOptions{}, &r).ok());
  for (float w : r.weights.data) EXPECT_TRUE(std::isfinite(w));
  for (float o : r.output.data) EXPECT_TRUE(std::isfinite(o));
}

// ---------------------------------------------------------------------------------------------
// out_dim: W_O (out_dim, E), the output out_dim wide.

TEST(OutDim, ShapesOfParametersAndOutputsInEveryLayout) {
  Config c = cfg(8, 2);
  c.out_dim = 5;
  for (bool batch_first : {true, false}) {
    c.batch_first = batch_first;
    auto m = make(c);
    EXPECT_EQ(m->out_dim(), 5);
    EXPECT_EQ(*m->config().out_dim, 5);
    Shape shape;
    ASSERT_TRUE(m->parameter_shape("out_proj.weight", &shape).ok());
    EXPECT_EQ(shape, (Shape{5, 8}));
    ASSERT_TRUE(m->parameter_shape("out_proj.bias", &shape).ok());
    EXPECT_EQ(shape, (Shape{5}));
    auto x = random_vector(2 * 3 * 8, 61);
    ForwardOptions options;
    options.return_concat = true;
    ForwardResult r;
    const Shape batched = batch_first ? Shape{2, 3, 8} : Shape{3, 2, 8};
    ASSERT_TRUE(m->forward(view(x, batched), view(x, batched), view(x, batched), {}, {}, options, &r).ok());
    EXPECT_EQ(r.output.shape, batch_first ? (Shape{2, 3, 5}) : (Shape{3, 2, 5}));
    EXPECT_EQ(r.output.data.size(), 30u);
    EXPECT_EQ(r.concat.shape, batched);  // the concatenation stays E wide
    const auto x2 = random_vector(3 * 8, 62);
    ASSERT_TRUE(m->forward(view(x2, {3, 8}), view(x2, {3, 8}), view(x2, {3, 8}), {}, {}, options, &r).ok());
    EXPECT_EQ(r.output.shape, (Shape{3, 5}));
    options.skip_out_proj = true;  // W_O skipped: the output is the concatenation, E wide
    ASSERT_TRUE(m->forward(view(x2, {3, 8}), view(x2, {3, 8}), view(x2, {3, 8}), {}, {}, options, &r).ok());
    EXPECT_EQ(r.output.shape, (Shape{3, 8}));
    EXPECT_EQ(r.output.data, r.concat.data);
  }
}

TEST(OutDim, AHandComputedCase) {
  // E = 2, one head, out_dim 3, two tokens x0 = (1, 0), x1 = (0, 1). W_q = 0: every score is 0,
  // so both rows weigh both keys 1/2. W_v = I, b_v = 0: concat = (x0 + x1) / 2 = (0.5, 0.5) in
  // both rows. W_O = [[1, 0], [0, 1], [1, 1]], b_O = (0.1, 0.2, 0.3): output (0.6, 0.7, 1.3).
  Config c = cfg(2, 1);
  c.out_dim = 3;
  std::unique_ptr<MultiHeadAttention> m;
  ASSERT_TRUE(MultiHeadAttention::Create(c, 0, &m).ok());
  const std::vector<float> in_w = {0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1};  // W_q (2, 2), W_k = I, W_v = I
  const std::vector<float> in_b(6, 0.0f), out_w = {1, 0, 0, 1, 1, 1}, out_b = {0.1f, 0.2f, 0.3f};
  ASSERT_TRUE(m->set_parameter("in_proj_weight", in_w.data(), in_w.size(), {6, 2}).ok());
  ASSERT_TRUE(m->set_parameter("in_proj_bias", in_b.data(), in_b.size(), {6}).ok());
  ASSERT_TRUE(m->set_parameter("out_proj.weight", out_w.data(), out_w.size(), {3, 2}).ok());
  ASSERT_TRUE(m->set_parameter("out_proj.bias", out_b.data(), out_b.size(), {3}).ok());
  const std::vector<float> x = {1, 0, 0, 1};
  for (bool need_weights : {true, false}) {
    ForwardOptions options;
    options.need_weights = need_weights;
    ForwardResult r;
    ASSERT_TRUE(m->forward(view(x, {1, 2, 2}), view(x, {1, 2, 2}), view(x, {1, 2, 2}), {}, {}, options, &r).ok());
    ASSERT_EQ(r.output.shape, (Shape{1, 2, 3}));
    const float want[] = {0.6f, 0.7f, 1.3f, 0.6f, 0.7f, 1.3f};
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(r.output.data[i], want[i], 1e-6) << i;
  }
}

TEST(OutDim, NotSetOrEqualToEmbedDimIsPyTorchs) {
  Config plain = cfg(8, 2), explicit_e = cfg(8, 2);
  explicit_e.out_dim = 8;
  auto a = make(plain), b = make(explicit_e);
  EXPECT_EQ(a->out_dim(), 8);
  EXPECT_EQ(a->parameter_names(), b->parameter_names());
  auto x = random_vector(3 * 8, 63);
  ForwardResult ra, rb;
  ASSERT_TRUE(a->forward(view(x, {3, 8}), view(x, {3, 8}), view(x, {3, 8}), {}, {}, {}, &ra).ok());
  ASSERT_TRUE(b->forward(view(x, {3, 8}), view(x, {3, 8}), view(x, {3, 8}), {}, {}, {}, &rb).ok());
  EXPECT_EQ(ra.output.data, rb.output.data);
  EXPECT_EQ(ra.output.shape, (Shape{3, 8}));
}

TEST(OutDim, BelowOneIsRefusedAndAWrongW_OShapeToo) {
  for (int64_t bad : {0, -1, -100}) {
    Config c = cfg(8, 2);
    c.out_dim = bad;
    std::unique_ptr<MultiHeadAttention> m;
    const mha::Status status = MultiHeadAttention::Create(c, 0, &m);
    EXPECT_EQ(status.code(), StatusCode::kInvalidConfig) << bad;
    EXPECT_NE(status.message().find("out_dim must be positive, but got " + std::to_string(bad)), std::string::npos)
        << status.message();
  }
  Config c = cfg(8, 2);
  c.out_dim = 5;
  auto m = make(c);
  const std::vector<float> square(64, 0.1f);
  const mha::Status status = m->set_parameter("out_proj.weight", square.data(), square.size(), {8, 8});
  EXPECT_EQ(status.code(), StatusCode::kShapeMismatch);
  EXPECT_NE(status.message().find("expected shape (5, 8), got (8, 8)"), std::string::npos) << status.message();
}

TEST(OutDim, TheMemoryCapCountsTheWiderOutput) {
  Config c = cfg(8, 2);
  c.out_dim = 4096;
  auto m = make(c);
  auto x = random_vector(64 * 8, 64);
  ForwardOptions options;
  options.need_weights = false;
  ForwardResult r;
  // output 64 x 4096 floats = 1 MiB; inputs and workspace far less
  m->set_memory_cap(size_t{1} << 20);
  mha::Status status = m->forward(view(x, {64, 8}), view(x, {64, 8}), view(x, {64, 8}), {}, {}, options, &r);
  EXPECT_EQ(status.code(), StatusCode::kTooLarge);
  EXPECT_NE(status.message().find("outputs 1048576"), std::string::npos) << status.message();
  m->set_memory_cap(size_t{2} << 20);
  status = m->forward(view(x, {64, 8}), view(x, {64, 8}), view(x, {64, 8}), {}, {}, options, &r);
  EXPECT_TRUE(status.ok()) << status.message();
}

// ---------------------------------------------------------------------------------------------
// check_call_memory: the one rule of the memory cap, on shapes alone.

TEST(CallMemory, ShapesAloneGiveForwardsVerdictAndMessage) {
  auto m = make(cfg(8, 2));
  const int64_t L = 100;
  auto x = random_vector(L * 8, 65);
  mha::CallShapes shapes;
  shapes.query = shapes.key = shapes.value = {1, L, 8};
  shapes.key_is_query = shapes.value_is_key = true;
  ForwardOptions options;
  EXPECT_TRUE(m->check_call_memory(shapes, options).ok());
  m->set_memory_cap(16 * 1024);
  const mha::Status by_shapes = m->check_call_memory(shapes, options);
  ForwardResult r;
  const mha::Status by_forward = m->forward(view(x, {1, L, 8}), view(x, {1, L, 8}), view(x, {1, L, 8}), {}, {}, options, &r);
  EXPECT_EQ(by_shapes.code(), StatusCode::kTooLarge);
  EXPECT_EQ(by_shapes.message(), by_forward.message());
  // inputs (the query once: key and value are its buffer), workspace and outputs, each named
  for (const char* part : {"inputs 3200 (query 3200)", "workspace ", "outputs ", "memory cap of 16384 bytes"}) {
    EXPECT_NE(by_shapes.message().find(part), std::string::npos) << part << " in " << by_shapes.message();
  }
  shapes.key_is_query = shapes.value_is_key = false;
  EXPECT_NE(m->check_call_memory(shapes, options).message().find("key 3200, value 3200"), std::string::npos);
  // and shapes that do not fit the config are refused as forward() refuses them
  shapes.query = {1, L, 7};
  const mha::Status wrong = m->check_call_memory(shapes, options);
  EXPECT_EQ(wrong.code(), StatusCode::kShapeMismatch);
  EXPECT_NE(wrong.message().find("embedding dimension of 8, but got 7"), std::string::npos) << wrong.message();
  shapes.query = {1, -2, 8};
  EXPECT_EQ(m->check_call_memory(shapes, options).code(), StatusCode::kInvalidArgument);
}

}  // namespace

namespace {

// A packed module (weights held only in the GEMM's layout) computes what a plain one with the
// same parameters computes, on every projection path: fused with weights, per head without
// weights at a size that picks it, and cross-attention; its parameters read back unpacked;
// reset_parameters draws the same values as a plain module's.
TEST(PackedParameters, SameResultsAndParametersAsAPlainModule) {
  Config config;
  config.embed_dim = 1024;
  config.num_heads = 8;
  std::unique_ptr<MultiHeadAttention> plain = make(config, 7), packed;
  ASSERT_TRUE(MultiHeadAttention::CreatePacked(config, &packed).ok());
  for (const auto& name : plain->parameter_names()) {
    mha::Tensor t;
    ASSERT_TRUE(plain->get_parameter(name, &t).ok());
    ASSERT_TRUE(packed->set_parameter(name, t.data.data(), t.data.size(), t.shape).ok()) << name;
    mha::Tensor back;
    ASSERT_TRUE(packed->get_parameter(name, &back).ok());
    EXPECT_EQ(back.data, t.data) << name;
  }
  const auto same = [&](int64_t L, bool need_weights, bool cross) {
    const std::vector<float> q = random_vector(static_cast<size_t>(L * 1024), 11), kv = random_vector(static_cast<size_t>(L * 1024), 12);
    const TensorView query{q.data(), q.size(), {L, 1024}};
    const TensorView other{kv.data(), kv.size(), {L, 1024}};
    const TensorView& key = cross ? other : query;
    ForwardOptions options;
    options.need_weights = need_weights;
    ForwardResult a, b;
    ASSERT_TRUE(plain->forward(query, key, key, MaskView(), MaskView(), options, &a).ok());
    ASSERT_TRUE(packed->forward(query, key, key, MaskView(), MaskView(), options, &b).ok());
    EXPECT_EQ(a.output.data, b.output.data) << "L " << L << (need_weights ? " with weights" : "") << (cross ? " cross" : "");
    EXPECT_EQ(a.weights.data, b.weights.data);
  };
  same(8, true, false);
  same(700, false, false);  // N * L * 3E above 2^21 floats: projected per head
  same(8, true, true);
  std::unique_ptr<MultiHeadAttention> drawn;
  ASSERT_TRUE(MultiHeadAttention::CreatePacked(config, &drawn).ok());
  drawn->reset_parameters(7);
  std::unique_ptr<MultiHeadAttention> reference;
  ASSERT_TRUE(MultiHeadAttention::Create(config, 7, &reference).ok());
  for (const char* name : {"in_proj_weight", "out_proj.weight"}) {
    mha::Tensor a, b;
    ASSERT_TRUE(drawn->get_parameter(name, &a).ok());
    ASSERT_TRUE(reference->get_parameter(name, &b).ok());
    EXPECT_EQ(a.data, b.data) << name;
  }
  Config cross;
  cross.embed_dim = 1024;
  cross.num_heads = 8;
  cross.kdim = 32;
  EXPECT_EQ(MultiHeadAttention::CreatePacked(cross, &drawn).code(), StatusCode::kInvalidConfig);
}

}  // namespace

namespace {

// A packed module holding a float16 or bfloat16 file's words computes exactly what a plain
// module computes on those words widened to float32; setting a weight widens its storage.
TEST(PackedParameters, SixteenBitStorageComputesOnTheWidenedValues) {
  Config config;
  config.embed_dim = 32;
  config.num_heads = 4;
  const int64_t E = 32;
  for (const bool bf16 : {false, true}) {
    std::unique_ptr<MultiHeadAttention> packed, plain = make(config, 3);
    ASSERT_TRUE(MultiHeadAttention::CreatePacked(config, &packed, bf16 ? mha::PackedStorage::kBfloat16 : mha::PackedStorage::kFloat16).ok());
    EXPECT_EQ(packed->packed_storage("in_proj_weight"), nullptr);
    for (const char* name : {"in_proj_weight", "out_proj.weight"}) {
      const int64_t rows = std::string(name) == "in_proj_weight" ? 3 * E : E;
      std::vector<uint16_t> words(static_cast<size_t>(rows * E));
      std::mt19937 gen(5);
      // finite values of either format: a random sign, exponent 10..19 (binary16) / 118..127 (bfloat16), fraction
      for (uint16_t& w : words) {
        const uint32_t r = gen();
        w = bf16 ? static_cast<uint16_t>((r & 0x8000u) | (118u + r % 10) << 7 | (r >> 8 & 0x7fu))
                 : static_cast<uint16_t>((r & 0x8000u) | (10u + r % 10) << 10 | (r >> 8 & 0x3ffu));
      }
      std::vector<float> widened(words.size());
      mha::kernels::widen16(widened.data(), words.data(), static_cast<int64_t>(words.size()), bf16);
      mha::kernels::pack_weight_elements16(packed->packed_storage16(name), rows, E, 0, rows, words.data(), 0,
                                           static_cast<int64_t>(words.size()), false);
      ASSERT_TRUE(plain->set_parameter(name, widened.data(), widened.size(), {rows, E}).ok());
      mha::Tensor back;
      ASSERT_TRUE(packed->get_parameter(name, &back).ok());
      EXPECT_EQ(back.data, widened) << name;
    }
    for (const char* name : {"in_proj_bias", "out_proj.bias"}) {
      mha::Tensor t;
      ASSERT_TRUE(plain->get_parameter(name, &t).ok());
      ASSERT_TRUE(packed->set_parameter(name, t.data.data(), t.data.size(), t.shape).ok());
    }
    const std::vector<float> x = random_vector(static_cast<size_t>(6 * E), 9);
    const TensorView view{x.data(), x.size(), {6, E}};
    ForwardOptions options;
    options.is_causal = true;
    ForwardResult a, b;
    ASSERT_TRUE(plain->forward(view, view, view, MaskView(), MaskView(), options, &a).ok());
    ASSERT_TRUE(packed->forward(view, view, view, MaskView(), MaskView(), options, &b).ok());
    EXPECT_EQ(a.output.data, b.output.data) << (bf16 ? "bfloat16" : "float16");
    EXPECT_EQ(a.weights.data, b.weights.data);
    // set a weight: the storage becomes float32 and the module computes on with it
    mha::Tensor w;
    ASSERT_TRUE(plain->get_parameter("out_proj.weight", &w).ok());
    ASSERT_TRUE(packed->set_parameter("out_proj.weight", w.data.data(), w.data.size(), w.shape).ok());
    EXPECT_NE(packed->packed_storage("in_proj_weight"), nullptr);
    ASSERT_TRUE(packed->forward(view, view, view, MaskView(), MaskView(), options, &b).ok());
    EXPECT_EQ(a.output.data, b.output.data);
  }
}

}  // namespace
