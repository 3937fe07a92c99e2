// GPT-2, BERT, Llama, Mistral and Qwen2 in Hugging Face layout against the PyTorch reference
// (scripts/reference/hf_reference.py, scripts/reference/llama_reference.py): every golden case's per-layer attention weights (H, T, T)
// within 1e-5 and logits within 1e-4 (BERT without a head: the last hidden state and the pooler's
// output within 1e-4), for each dtype's file (F32, F16, BF16; the reference ran on the same rounded
// weights); GPT-2's head importance (the mean drop in log p(next token) per head switched off)
// within 1e-4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mha/models.h"
#include "model_files.h"

namespace mha::models {
namespace {

using mha::testing::models_file;
using mha::testing::read_bytes;
using mha::testing::read_json;

double max_error(const std::vector<float>& got, const std::vector<double>& expected, size_t* count_mismatch) {
  *count_mismatch = got.size() == expected.size() ? 0 : 1;
  double worst = 0;
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    const double e = std::fabs(static_cast<double>(got[i]) - expected[i]);
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

class GoldenModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenModel, MatchesPyTorch) {
  const std::string name = GetParam();
  const nlohmann::json golden = read_json(models_file(name + ".golden.json"));
  const std::string config = read_bytes(models_file(name + "/config.json"));
  for (const auto& [dtype, entry] : golden.at("dtypes").items()) {
    SCOPED_TRACE(name + " " + dtype);
    const std::string file = entry.at("file");
    const std::string weights = read_bytes(models_file(name + "/" + file));
    std::unique_ptr<Model> model;
    const Status loaded = Model::Load(config, "config.json", weights, file, LoadLimits(), &model);
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    double worst_weights = 0, worst_logits = 0, worst_importance = -1;  // -1: not in this case
    for (const auto& run : entry.at("runs")) {
      const std::vector<int32_t> ids = run.at("ids").get<std::vector<int32_t>>();
      const int64_t T = static_cast<int64_t>(ids.size()), H = model->config().num_heads, V = model->config().vocab_size;
      RunResult result;
      const Status ran = model->Run(ids.data(), ids.size(), RunOptions(), &result);
      ASSERT_TRUE(ran.ok()) << ran.message();
      const auto& attentions = run.at("attentions");
      ASSERT_EQ(attentions.size(), result.layers.size());
      for (size_t l = 0; l < result.layers.size(); ++l) {
        EXPECT_EQ(result.layers[l].weights.shape, (Shape{H, T, T}));
        size_t bad_count;
        const double e = max_error(result.layers[l].weights.data, attentions[l].get<std::vector<double>>(), &bad_count);
        EXPECT_EQ(bad_count, 0u) << "layer " << l;
        EXPECT_LE(e, 1e-5) << "layer " << l << " attention weights";
        worst_weights = std::max(worst_weights, e);
      }
      if (run.contains("head_importance")) {
        // the mean drop in log p(next token) per switched-off head, as transformers' head_mask gives it
        Tensor importance;
        const Status s = model->HeadImportance(ids.data(), ids.size(), &importance);
        ASSERT_TRUE(s.ok()) << s.message();
        EXPECT_EQ(importance.shape, (Shape{model->config().num_layers, H}));
        size_t bad_count;
        const double e = max_error(importance.data, run.at("head_importance").get<std::vector<double>>(), &bad_count);
        EXPECT_EQ(bad_count, 0u);
        EXPECT_LE(e, 1e-4) << "head importance";
        worst_importance = std::max(worst_importance, e);
      }
      if (run.contains("logits")) {
        ASSERT_EQ(result.logits.shape, (Shape{T, V}));
        std::vector<float> rows;
        for (int64_t position : run.at("logit_positions").get<std::vector<int64_t>>()) {
          rows.insert(rows.end(), result.logits.data.begin() + position * V, result.logits.data.begin() + (position + 1) * V);
        }
        size_t bad_count;
        const double e = max_error(rows, run.at("logits").get<std::vector<double>>(), &bad_count);
        EXPECT_EQ(bad_count, 0u);
        EXPECT_LE(e, 1e-4) << "logits";
        worst_logits = std::max(worst_logits, e);
      } else {
        EXPECT_FALSE(result.logits.present());
        size_t bad_count;
        double e = max_error(result.hidden.data, run.at("last_hidden_state").get<std::vector<double>>(), &bad_count);
        EXPECT_EQ(bad_count, 0u);
        EXPECT_LE(e, 1e-4) << "last hidden state";
        ASSERT_TRUE(model->has_pooler());
        e = std::max(e, max_error(result.pooled.data, run.at("pooler_output").get<std::vector<double>>(), &bad_count));
        EXPECT_EQ(bad_count, 0u);
        EXPECT_LE(e, 1e-4) << "pooler output";
        worst_logits = std::max(worst_logits, e);
      }
    }
    // The figures docs and reports quote: one line per model and dtype.
    char importance_text[64] = "";
    if (worst_importance >= 0) std::snprintf(importance_text, sizeof importance_text, ", head importance %.3g", worst_importance);
    std::printf("[ golden   ] %s %s: attention weights max error %.3g, logits/outputs max error %.3g%s\n", name.c_str(),
                dtype.c_str(), worst_weights, worst_logits, importance_text);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenModel,
                         ::testing::Values("gpt2-tied", "gpt2-untied", "gpt2-one-head", "gpt2-trained", "bert-mlm", "bert-base-model",
                                           "bert-untied", "nanogpt-char", "llama-gqa", "llama-mqa-llama3",
                                           "llama-linear-bias", "llama-dynamic-v5", "mistral-window", "qwen2-bias-window"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The model scripts/reference/hf_reference.py trained on the repo's sentences predicts held-out
// grammar sentences as PyTorch does: on the ids the reference's tokenizer gave (the golden file's),
// the same top-1 accuracy of the next token, far above chance.
TEST(TrainedModel, PredictsHeldOutSentences) {
  const nlohmann::json golden = read_json(models_file("gpt2-trained.golden.json"));
  const nlohmann::json& training = golden.at("training");
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::Load(read_bytes(models_file("gpt2-trained/config.json")), "config.json",
                          read_bytes(models_file("gpt2-trained/model.safetensors")), "model.safetensors", LoadLimits(), &model)
                  .ok());
  int64_t right = 0, total = 0;
  for (const auto& c : training.at("held_out")) {
    const std::vector<int32_t> ids = c.at("ids").get<std::vector<int32_t>>();
    ASSERT_LE(ids.size(), static_cast<size_t>(model->config().max_positions));
    RunResult r;
    ASSERT_TRUE(model->Run(ids.data(), ids.size(), RunOptions(), &r).ok());
    const int64_t V = model->config().vocab_size;
    for (size_t t = 0; t + 1 < ids.size(); ++t) {
      const float* row = r.logits.data.data() + static_cast<int64_t>(t) * V;
      right += std::max_element(row, row + V) - row == ids[t + 1];
      ++total;
    }
  }
  const double accuracy = static_cast<double>(right) / static_cast<double>(total);
  std::printf("[ trained  ] held-out next-token top-1: %.3f over %lld predictions (PyTorch %.3f; chance %.4f)\n", accuracy,
              static_cast<long long>(total), training.at("held_out_top1").get<double>(), 1.0 / static_cast<double>(model->config().vocab_size));
  EXPECT_EQ(total, training.at("held_out_predictions").get<int64_t>());
  EXPECT_NEAR(accuracy, training.at("held_out_top1").get<double>(), 1.5 / static_cast<double>(total));
  EXPECT_GT(accuracy, 0.3);
}

}  // namespace
}  // namespace mha::models
