// Rotary positions, grouped-query attention and a head width other than E / H, against a plain
// double-precision reference written from the formulas (attention.h): q = x W_qᵀ + b_q (H * hd),
// k, v = x W_kᵀ + b_k, x W_vᵀ + b_v (G * hd), q and k rotated by position (rotate_half), query
// head h reads key/value head h / (H / G), scores q·k / sqrt(hd), causal softmax, W_O over the
// H * hd concatenation. The module made by Create (unpacked parameters) and the one made by
// CreatePacked (one fused packing) must both agree with it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "mha/attention.h"

namespace mha {
namespace {

struct Case {
  int64_t E, H, G, hd, L;
  double theta;  // 0: no rotary positions
  bool bias;
};

struct Weights {
  std::vector<float> x, wq, wk, wv, wo, bq, bk, bv, bo;
};

std::vector<float> random(size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

// (H, L, L) weights and (L, E) output
void reference(const Case& c, const Weights& w, std::vector<double>* weights, std::vector<double>* output) {
  const int64_t E = c.E, H = c.H, G = c.G, hd = c.hd, L = c.L, qd = H * hd, kv = G * hd;
  std::vector<double> q(L * qd), k(L * kv), v(L * kv);
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t o = 0; o < qd; ++o) {
      double s = c.bias ? w.bq[o] : 0;
      for (int64_t i = 0; i < E; ++i) s += double(w.x[l * E + i]) * w.wq[o * E + i];
      q[l * qd + o] = s;
    }
    for (int64_t o = 0; o < kv; ++o) {
      double sk = c.bias ? w.bk[o] : 0, sv = c.bias ? w.bv[o] : 0;
      for (int64_t i = 0; i < E; ++i) {
        sk += double(w.x[l * E + i]) * w.wk[o * E + i];
        sv += double(w.x[l * E + i]) * w.wv[o * E + i];
      }
      k[l * kv + o] = sk;
      v[l * kv + o] = sv;
    }
  }
  if (c.theta > 0) {
    const auto rotate = [&](double* row, int64_t p) {
      for (int64_t i = 0; i < hd / 2; ++i) {
        const double angle = p / std::pow(c.theta, double(2 * i) / double(hd));
        const double a = row[i], b = row[hd / 2 + i];
        row[i] = a * std::cos(angle) - b * std::sin(angle);
        row[hd / 2 + i] = b * std::cos(angle) + a * std::sin(angle);
      }
    };
    for (int64_t l = 0; l < L; ++l) {
      for (int64_t h = 0; h < H; ++h) rotate(&q[l * qd + h * hd], l);
      for (int64_t g = 0; g < G; ++g) rotate(&k[l * kv + g * hd], l);
    }
  }
  std::vector<double> concat(L * qd, 0.0);
  weights->assign(H * L * L, 0.0);
  for (int64_t h = 0; h < H; ++h) {
    const int64_t g = h / (H / G);
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(i + 1);
      double top = -1e300;
      for (int64_t j = 0; j <= i; ++j) {
        double d = 0;
        for (int64_t t = 0; t < hd; ++t) d += q[i * qd + h * hd + t] * k[j * kv + g * hd + t];
        s[j] = d / std::sqrt(double(hd));
        top = std::max(top, s[j]);
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - top));
      for (int64_t j = 0; j <= i; ++j) {
        const double p = s[j] / sum;
        (*weights)[(h * L + i) * L + j] = p;
        for (int64_t t = 0; t < hd; ++t) concat[i * qd + h * hd + t] += p * v[j * kv + g * hd + t];
      }
    }
  }
  output->assign(L * E, 0.0);
  for (int64_t l = 0; l < L; ++l)
    for (int64_t o = 0; o < E; ++o) {
      double s = c.bias ? w.bo[o] : 0;
      for (int64_t i = 0; i < qd; ++i) s += concat[l * qd + i] * w.wo[o * qd + i];
      (*output)[l * E + o] = s;
    }
}

double max_error(const std::vector<float>& got, const std::vector<double>& expected) {
  EXPECT_EQ(got.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i) worst = std::max(worst, std::fabs(got[i] - expected[i]));
  return worst;
}

void check(const Case& c, bool packed) {
  std::mt19937 rng(static_cast<unsigned>(c.E * 31 + c.H * 7 + c.G + c.hd * 3 + (packed ? 1 : 0)));
  const int64_t E = c.E, qd = c.H * c.hd, kv = c.G * c.hd;
  Weights w;
  w.x = random(c.L * E, rng, 1.0f);
  w.wq = random(qd * E, rng, 0.4f);
  w.wk = random(kv * E, rng, 0.4f);
  w.wv = random(kv * E, rng, 0.4f);
  w.wo = random(E * qd, rng, 0.3f);
  w.bq = random(qd, rng, 0.2f);
  w.bk = random(kv, rng, 0.2f);
  w.bv = random(kv, rng, 0.2f);
  w.bo = random(E, rng, 0.2f);
  Config config;
  config.embed_dim = E;
  config.num_heads = c.H;
  config.num_kv_heads = c.G;
  config.head_dim = c.hd;
  config.bias = c.bias;
  config.rotary.theta = c.theta;
  std::unique_ptr<MultiHeadAttention> m;
  const Status made = packed ? MultiHeadAttention::CreatePacked(config, &m) : MultiHeadAttention::Create(config, 1, &m);
  ASSERT_TRUE(made.ok()) << made.message();
  const bool fused = m->packed_in_proj();
  if (fused) {
    std::vector<float> in(w.wq);
    in.insert(in.end(), w.wk.begin(), w.wk.end());
    in.insert(in.end(), w.wv.begin(), w.wv.end());
    ASSERT_TRUE(m->set_parameter("in_proj_weight", in.data(), in.size(), {3 * E, E}).ok());
  } else {
    ASSERT_TRUE(m->set_parameter("q_proj_weight", w.wq.data(), w.wq.size(), {qd, E}).ok());
    ASSERT_TRUE(m->set_parameter("k_proj_weight", w.wk.data(), w.wk.size(), {kv, E}).ok());
    ASSERT_TRUE(m->set_parameter("v_proj_weight", w.wv.data(), w.wv.size(), {kv, E}).ok());
  }
  ASSERT_TRUE(m->set_parameter("out_proj.weight", w.wo.data(), w.wo.size(), {E, qd}).ok());
  if (c.bias) {
    std::vector<float> b(w.bq);
    b.insert(b.end(), w.bk.begin(), w.bk.end());
    b.insert(b.end(), w.bv.begin(), w.bv.end());
    ASSERT_TRUE(m->set_parameter("in_proj_bias", b.data(), b.size(), {qd + 2 * kv}).ok());
    ASSERT_TRUE(m->set_parameter("out_proj.bias", w.bo.data(), w.bo.size(), {E}).ok());
  }
  if (!fused) {  // the parameters read back as they were set (a packed module unpacks them)
    Tensor k;
    ASSERT_TRUE(m->get_parameter("k_proj_weight", &k).ok());
    EXPECT_EQ(k.shape, (Shape{kv, E}));
    EXPECT_EQ(k.data, w.wk);
  }
  std::vector<double> weights, output;
  reference(c, w, &weights, &output);
  ForwardOptions options;
  options.average_attn_weights = false;
  options.is_causal = true;
  options.return_concat = true;
  const TensorView x{w.x.data(), w.x.size(), {c.L, E}};
  ForwardResult r;
  const Status ran = m->forward(x, x, x, MaskView(), MaskView(), options, &r);
  ASSERT_TRUE(ran.ok()) << ran.message();
  EXPECT_EQ(r.weights.shape, (Shape{c.H, c.L, c.L}));
  EXPECT_EQ(r.concat.shape, (Shape{c.L, qd}));
  EXPECT_LE(max_error(r.weights.data, weights), 1e-5);
  EXPECT_LE(max_error(r.output.data, output), 1e-4);
  // without weights (the streaming kernels, and per-head projection where it applies)
  options.need_weights = false;
  ASSERT_TRUE(m->forward(x, x, x, MaskView(), MaskView(), options, &r).ok());
  EXPECT_LE(max_error(r.output.data, output), 1e-4);
}

TEST(RotaryAndGroups, MatchTheReference) {
  const Case cases[] = {
      {16, 4, 4, 4, 7, 0, true},        // plain: unchanged path
      {16, 4, 4, 4, 7, 10000, true},    // rotary, G = H
      {16, 4, 2, 4, 9, 10000, true},    // G = 2
      {16, 4, 1, 4, 9, 1e6, false},     // G = 1, theta 1e6, no biases
      {12, 3, 1, 6, 8, 500000, true},   // hd != E / H (6 * 3 = 18 > 12)
      {24, 6, 3, 2, 5, 10000, true},    // hd = 2
      {16, 4, 2, 8, 6, 0, true},        // hd != E / H, no rotary
  };
  for (const Case& c : cases) {
    for (bool packed : {false, true}) {
      SCOPED_TRACE("E " + std::to_string(c.E) + " H " + std::to_string(c.H) + " G " + std::to_string(c.G) + " hd " +
                   std::to_string(c.hd) + " theta " + std::to_string(c.theta) + (packed ? " packed" : " unpacked"));
      check(c, packed);
    }
  }
}

TEST(RotaryAndGroups, BadConfigsAreRefused) {
  std::unique_ptr<MultiHeadAttention> m;
  Config c;
  c.embed_dim = 12;
  c.num_heads = 4;  // hd 3
  c.rotary.theta = 10000;
  Status s = MultiHeadAttention::Create(c, 1, &m);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("even head_dim"), std::string::npos) << s.message();
  c.num_heads = 2;
  c.rotary.inv_freq = {1.0f, 0.5f};
  s = MultiHeadAttention::Create(c, 1, &m);
  EXPECT_NE(s.message().find("expected head_dim / 2 = 3"), std::string::npos) << s.message();
  c.rotary.inv_freq.clear();
  c.add_bias_kv = true;
  s = MultiHeadAttention::Create(c, 1, &m);
  EXPECT_NE(s.message().find("add_bias_kv"), std::string::npos) << s.message();
  c.add_bias_kv = false;
  c.head_dim = -1;
  s = MultiHeadAttention::Create(c, 1, &m);
  EXPECT_NE(s.message().find("head_dim must be positive"), std::string::npos) << s.message();
  c.head_dim = 0;
  EXPECT_TRUE(MultiHeadAttention::Create(c, 1, &m).ok());
}

}  // namespace
}  // namespace mha
