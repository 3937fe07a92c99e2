// kernels::gelu_tanh against gelu_new computed in double, over a grid of x from -12 to 12
// (both tails, where tanh saturates, and the small |u| where 1 - e cancels), every length
// mod the vector width, and NaN / infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "mha/kernels.h"

namespace {

double gelu_new(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

TEST(GeluTanh, MatchesTheDoubleFormula) {
  std::vector<float> x;
  for (int i = -120000; i <= 120000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  std::vector<float> y = x;
  mha::kernels::gelu_tanh(y.data(), static_cast<int64_t>(y.size()));
  double worst = 0, worst_x = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = gelu_new(x[i]);
    // float rounding of the result (|want| ulp) and of tanh (about 1e-7, scaled by |x| / 2)
    const double err = std::abs(y[i] - want) / (std::abs(want) * 1.2e-7 + std::abs(x[i]) * 0.5e-7 + 1e-30);
    if (err > worst) worst = err, worst_x = x[i];
  }
  std::printf("max error %.3g units (at x = %.4g), tolerance 4\n", worst, worst_x);
  EXPECT_LE(worst, 4.0);
}

TEST(GeluTanh, EveryLengthAndSpecialValues) {
  for (int n = 0; n <= 19; ++n) {
    std::vector<float> y(static_cast<size_t>(n) + 1, 7.0f);  // one past the end stays 7
    for (int i = 0; i < n; ++i) y[i] = 0.37f * static_cast<float>(i - 9);
    mha::kernels::gelu_tanh(y.data(), n);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(y[i], gelu_new(0.37 * (i - 9)), 1e-6) << "n " << n << ", i " << i;
    EXPECT_EQ(y[n], 7.0f) << "n " << n;
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> s = {inf, -inf, std::nanf(""), 0.0f, -0.0f, 1e30f, -1e30f};
  mha::kernels::gelu_tanh(s.data(), static_cast<int64_t>(s.size()));
  EXPECT_EQ(s[0], inf);
  EXPECT_TRUE(std::isnan(s[1]));  // -inf * 0, as PyTorch gives
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(s[3], 0.0f);
  EXPECT_EQ(s[4], 0.0f);
  EXPECT_EQ(s[5], 1e30f);
  EXPECT_EQ(s[6], -0.0f);
}

}  // namespace
