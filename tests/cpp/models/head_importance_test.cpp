// Model::HeadImportance (each head's run restarted at its layer from the cached clean stream,
// the LM head on positions t < T-1 only) against the slow path it replaces: for every head, a
// whole Run with ablate {(l, h)}, then log p(ids[t+1]) from its logits with a log-softmax in
// double. Within 1e-6 on every golden GPT-2 model and text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "mha/models.h"
#include "model_files.h"

namespace mha::models {
namespace {

using mha::testing::models_file;
using mha::testing::read_bytes;
using mha::testing::read_json;

// log softmax(logits[t])[ids[t + 1]] for t < T - 1, in double
std::vector<double> next_token_logprobs(const Tensor& logits, const std::vector<int32_t>& ids) {
  const int64_t V = logits.shape[1];
  std::vector<double> out;
  for (size_t t = 0; t + 1 < ids.size(); ++t) {
    const float* row = logits.data.data() + static_cast<int64_t>(t) * V;
    const double max = *std::max_element(row, row + V);
    double sum = 0;
    for (int64_t v = 0; v < V; ++v) sum += std::exp(row[v] - max);
    out.push_back(row[ids[t + 1]] - max - std::log(sum));
  }
  return out;
}

std::vector<float> slow_head_importance(Model* model, const std::vector<int32_t>& ids) {
  const int64_t L = model->config().num_layers, H = model->config().num_heads;
  RunResult clean;
  EXPECT_TRUE(model->Run(ids.data(), ids.size(), RunOptions(), &clean).ok());
  const std::vector<double> baseline = next_token_logprobs(clean.logits, ids);
  std::vector<float> importance;
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t h = 0; h < H; ++h) {
      RunOptions options;
      options.ablate = {{l, h}};
      RunResult ablated;
      EXPECT_TRUE(model->Run(ids.data(), ids.size(), options, &ablated).ok());
      const std::vector<double> lp = next_token_logprobs(ablated.logits, ids);
      double drop = 0;
      for (size_t t = 0; t < lp.size(); ++t) drop += baseline[t] - lp[t];
      importance.push_back(static_cast<float>(drop / static_cast<double>(lp.size())));
    }
  }
  return importance;
}

class HeadImportanceFastPath : public ::testing::TestWithParam<std::string> {};

TEST_P(HeadImportanceFastPath, MatchesOneWholeRunPerHead) {
  const std::string name = GetParam();
  const nlohmann::json golden = read_json(models_file(name + ".golden.json"));
  std::unique_ptr<Model> model;
  const Status loaded = Model::Load(read_bytes(models_file(name + "/config.json")), "config.json",
                                    read_bytes(models_file(name + "/model.safetensors")), "model.safetensors", LoadLimits(), &model);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  double worst = 0;
  size_t texts = 0;
  for (const auto& run : golden.at("dtypes").at("F32").at("runs")) {
    const std::vector<int32_t> ids = run.at("ids").get<std::vector<int32_t>>();
    // every prefix length from 2 tokens, so that T - 1 covers each remainder of the GEMM's 4-row tiles
    for (size_t T : {size_t{2}, size_t{3}, size_t{4}, size_t{5}, ids.size()}) {
      if (T > ids.size()) continue;
      const std::vector<int32_t> prefix(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(T));
      Tensor fast;
      const Status s = model->HeadImportance(prefix.data(), prefix.size(), &fast);
      ASSERT_TRUE(s.ok()) << s.message();
      const std::vector<float> slow = slow_head_importance(model.get(), prefix);
      ASSERT_EQ(fast.data.size(), slow.size());
      for (size_t i = 0; i < slow.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(fast.data[i]) - slow[i]));
      ++texts;
    }
  }
  std::printf("[ importance ] %s: %zu token sequences, fast path against one whole run per head: max |diff| %.3g (tolerance 1e-6)\n",
              name.c_str(), texts, worst);
  EXPECT_LE(worst, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Models, HeadImportanceFastPath,
                         ::testing::Values("gpt2-tied", "gpt2-untied", "gpt2-one-head", "gpt2-trained", "nanogpt-char"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace mha::models
