// Head statistics on maps whose answers are known by construction.
#include <gtest/gtest.h>

#include <cmath>

#include "mha/statistics.h"

namespace {

using mha::Shape;
using mha::TensorView;

// Two heads over L = S = 4: head 0 attends to i - 1 (row 0 to itself), head 1 is uniform.
std::vector<float> two_heads() {
  std::vector<float> w(2 * 4 * 4, 0.0f);
  for (int i = 0; i < 4; ++i) w[i * 4 + (i == 0 ? 0 : i - 1)] = 1.0f;
  for (int i = 0; i < 16; ++i) w[16 + i] = 0.25f;
  return w;
}

TEST(HeadStatistics, KnownMaps) {
  auto w = two_heads();
  std::vector<mha::HeadStatistics> heads;
  std::vector<mha::RowStatistics> rows;
  ASSERT_TRUE(mha::head_statistics(TensorView{w.data(), w.size(), {2, 4, 4}}, {}, &heads, &rows).ok());
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_DOUBLE_EQ(heads[0].previous_token_share, 1.0);
  EXPECT_DOUBLE_EQ(heads[0].entropy, 0.0);
  EXPECT_DOUBLE_EQ(heads[0].sparsity, 0.75);
  EXPECT_DOUBLE_EQ(heads[0].max_attention, 1.0);
  EXPECT_DOUBLE_EQ(heads[0].mean_distance, 0.75);  // rows 1..3 at distance 1, row 0 at 0
  EXPECT_DOUBLE_EQ(heads[0].first_token_share, 0.5);  // rows 0 and 1
  EXPECT_NEAR(heads[1].entropy, std::log(4.0), 1e-6);
  EXPECT_NEAR(heads[1].normalized_entropy, 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(heads[1].sparsity, 0.0);
  EXPECT_NEAR(heads[1].average_attention, 0.25, 1e-7);
  EXPECT_NEAR(heads[1].previous_token_share, 0.25, 1e-7);
  EXPECT_NEAR(heads[1].diagonal_share, 0.25, 1e-7);
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[2].argmax, 1);
}

TEST(HeadStatistics, NaNRowsAreSkipped) {
  auto w = two_heads();
  for (int j = 0; j < 4; ++j) w[16 + j] = NAN;
  std::vector<mha::HeadStatistics> heads;
  ASSERT_TRUE(mha::head_statistics(TensorView{w.data(), w.size(), {1, 2, 4, 4}}, {}, &heads, nullptr).ok());
  EXPECT_EQ(heads[1].rows, 3);
  EXPECT_EQ(heads[0].rows, 4);
}

TEST(HeadSimilarity, JensenShannonBounds) {
  auto w = two_heads();
  std::vector<double> jsd;
  ASSERT_TRUE(mha::head_similarity(TensorView{w.data(), w.size(), {2, 4, 4}}, &jsd).ok());
  EXPECT_EQ(jsd[0], 0.0);
  EXPECT_EQ(jsd[1], jsd[2]);
  // JS(one-hot, uniform over 4) = ln 2 - 5/8 ln(5/4) ... computed directly:
  const double m1 = 0.625, m0 = 0.125;
  const double expected = 0.5 * std::log(1.0 / m1) + 0.5 * (0.25 * std::log(0.25 / m1) + 3 * 0.25 * std::log(0.25 / m0));
  EXPECT_NEAR(jsd[1], expected, 1e-7);
  std::vector<float> a = {1, 0}, b = {0, 1};
  std::vector<double> per_row;
  double mean = 0;
  ASSERT_TRUE(mha::js_divergence(TensorView{a.data(), 2, {1, 2}}, TensorView{b.data(), 2, {1, 2}}, &per_row, &mean).ok());
  EXPECT_NEAR(mean, std::log(2.0), 1e-12);
}

TEST(HeadStatistics, BadShapesAreReported) {
  std::vector<float> w(10, 0.1f);
  std::vector<mha::HeadStatistics> heads;
  auto s = mha::head_statistics(TensorView{w.data(), w.size(), {10}}, {}, &heads, nullptr);
  EXPECT_EQ(s.code(), mha::StatusCode::kShapeMismatch);
  s = mha::head_statistics(TensorView{w.data(), w.size(), {1, 3, 4}}, {}, &heads, nullptr);
  EXPECT_EQ(s.code(), mha::StatusCode::kLengthMismatch);
  mha::StatisticsOptions bad;
  bad.sparsity_threshold = 2;
  s = mha::head_statistics(TensorView{w.data(), w.size(), {1, 2, 5}}, bad, &heads, nullptr);
  EXPECT_EQ(s.code(), mha::StatusCode::kInvalidArgument);
}

}  // namespace
