// Writing on with a key/value cache: a text extended step by step (a prompt, then one token at a
// time, or in uneven pieces) gives each new position the logits and every layer's attention row
// that a full Run of the whole text gives it, to 1e-5, in GPT-2 (learned positions), Llama with
// grouped-query attention and rotary positions, Mistral's sliding window on every layer and
// Qwen2's on the upper layers (windows shorter than the text). BERT, which attends both ways, is
// refused; so is a text past max_positions, leaving the cache as it was. Reset and `from` write
// the text again from a position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "mha/models.h"
#include "model_files.h"

namespace mha::models {
namespace {

using mha::testing::models_file;
using mha::testing::read_bytes;

std::unique_ptr<Model> load(const std::string& name) {
  std::unique_ptr<Model> model;
  const Status s = Model::Load(read_bytes(models_file(name + "/config.json")), "config.json",
                               read_bytes(models_file(name + "/model.safetensors")), "model.safetensors", LoadLimits(), &model);
  EXPECT_TRUE(s.ok()) << name << ": " << s.message();
  return model;
}

// The worst |a - b| over rows [from, from + R) of a (T, width) tensor, against (R, width) b.
double rows_error(const std::vector<float>& full, int64_t width, int64_t from, const std::vector<float>& rows) {
  double worst = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double d = std::abs(static_cast<double>(full[static_cast<size_t>(from * width) + i]) - rows[i]);
    worst = std::max(worst, std::isnan(d) ? INFINITY : d);
  }
  return worst;
}

// Extends `model` by ids in pieces of the given sizes and checks every piece against a full run.
void check_steps(const std::string& name, const std::vector<int32_t>& ids, const std::vector<int64_t>& pieces) {
  std::unique_ptr<Model> model = load(name);
  ASSERT_TRUE(model);
  const int64_t T = static_cast<int64_t>(ids.size()), V = model->config().vocab_size, H = model->config().num_heads;
  RunResult full;
  ASSERT_TRUE(model->Run(ids.data(), ids.size(), RunOptions(), &full).ok());
  double worst_logits = 0, worst_weights = 0;
  int64_t at = 0;
  for (const int64_t R : pieces) {
    ExtendResult step;
    const Status s = model->Extend(ids.data() + at, static_cast<size_t>(R), &step);
    ASSERT_TRUE(s.ok()) << name << ": " << s.message();
    EXPECT_EQ(step.first, at);
    ASSERT_EQ(step.logits.shape, (Shape{R, V}));
    worst_logits = std::max(worst_logits, rows_error(full.logits.data, V, at, step.logits.data));
    const int64_t S = at + R;
    ASSERT_EQ(step.weights.size(), full.layers.size());
    for (size_t l = 0; l < step.weights.size(); ++l) {
      ASSERT_EQ(step.weights[l].shape, (Shape{H, R, S})) << name << " layer " << l;
      // the full run's weights (H, T, T): head h's rows at .. at + R - 1, their first S columns
      // (the rest are the causal mask's zeros)
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t i = 0; i < R; ++i) {
          for (int64_t j = 0; j < T; ++j) {
            const float expected = full.layers[l].weights.data[static_cast<size_t>((h * T + at + i) * T + j)];
            if (j >= S) {
              EXPECT_EQ(expected, 0.0f);
              continue;
            }
            const float got = step.weights[l].data[static_cast<size_t>((h * R + i) * S + j)];
            worst_weights = std::max(worst_weights, static_cast<double>(std::abs(expected - got)));
          }
        }
      }
    }
    at += R;
  }
  EXPECT_EQ(model->cached_length(), T);
  EXPECT_LE(worst_logits, 1e-5) << name;
  EXPECT_LE(worst_weights, 1e-5) << name;
  std::printf("%-18s pieces of %zu: logits max error %.2e, attention rows %.2e (tolerance 1e-5)\n", name.c_str(), pieces.size(),
              worst_logits, worst_weights);
}

const std::vector<int32_t> kText = {5, 17, 2, 40, 11, 9, 100, 3, 250, 7, 7, 64, 19, 8};

TEST(KvCache, OneTokenAtATimeEqualsTheFullRun) {
  for (const std::string name : {"gpt2-tied", "gpt2-untied", "llama-gqa", "llama-mqa-llama3", "mistral-window", "qwen2-bias-window"}) {
    std::vector<int64_t> pieces = {5};  // a prompt, then one token a step
    for (size_t i = 5; i < kText.size(); ++i) pieces.push_back(1);
    check_steps(name, kText, pieces);
  }
}

TEST(KvCache, UnevenPiecesEqualTheFullRun) {
  for (const std::string name : {"gpt2-tied", "llama-gqa", "mistral-window", "qwen2-bias-window"}) {
    check_steps(name, kText, {1, 3, 1, 6, 2, 1});
  }
}

TEST(KvCache, ResetAndFromStartTheTextAgain) {
  std::unique_ptr<Model> model = load("llama-gqa");
  ExtendResult first, again;
  ASSERT_TRUE(model->Extend(kText.data(), 4, &first).ok());
  ASSERT_TRUE(model->Extend(kText.data(), 2, &again).ok());
  EXPECT_EQ(again.first, 4);
  model->ResetCache();
  EXPECT_EQ(model->cached_length(), 0);
  ASSERT_TRUE(model->Extend(kText.data(), 4, &again).ok());
  EXPECT_EQ(again.first, 0);
  EXPECT_EQ(again.logits.data, first.logits.data);
  // from: the text after its first 2 positions written over
  ExtendResult tail;
  ASSERT_TRUE(model->Extend(kText.data() + 2, 2, 2, &tail).ok());
  EXPECT_EQ(tail.first, 2);
  EXPECT_EQ(model->cached_length(), 4);
  const int64_t V = model->config().vocab_size;
  EXPECT_EQ(std::vector<float>(first.logits.data.begin() + 2 * V, first.logits.data.end()), tail.logits.data);
  EXPECT_EQ(model->Extend(kText.data(), 1, 5, &tail).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model->cached_length(), 4);
}

TEST(KvCache, BertIsRefused) {
  std::unique_ptr<Model> model = load("bert-mlm");
  ExtendResult r;
  const Status s = model->Extend(kText.data(), 3, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("causal"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("BERT"), std::string::npos) << s.message();
}

TEST(KvCache, PositionsPastTheMaximumAreRefusedAndTheCacheKept) {
  std::unique_ptr<Model> model = load("gpt2-tied");  // n_positions 32
  const int64_t P = model->config().max_positions;
  std::vector<int32_t> ids(static_cast<size_t>(P - 1), 5);
  ExtendResult r;
  ASSERT_TRUE(model->Extend(ids.data(), ids.size(), &r).ok());
  const std::vector<int32_t> two = {6, 7};
  const Status s = model->Extend(two.data(), 2, &r);
  EXPECT_EQ(s.code(), StatusCode::kTooLarge);
  EXPECT_NE(s.message().find("at most " + std::to_string(P)), std::string::npos) << s.message();
  EXPECT_EQ(model->cached_length(), P - 1);
  ASSERT_TRUE(model->Extend(two.data(), 1, &r).ok());  // the last position still fits
  EXPECT_EQ(r.first, P - 1);
  const std::vector<int32_t> bad = {100000};
  EXPECT_EQ(model->Extend(bad.data(), 1, &r).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mha::models
