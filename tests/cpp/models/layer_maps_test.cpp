// The maps a run keeps: PoolMaps against values worked out by hand, and a run that keeps one
// layer's weights (or none, or every layer's max-pooled) against the run that keeps them all.
#include <gtest/gtest.h>

#include <algorithm>
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

TEST(PoolMaps, TakesTheLargestOfEachBlockWorkedOutByHand) {
  // one head, T = 5 pooled to S = 2: row and column blocks [0, 2) and [2, 5)
  const std::vector<float> map = {
      0.1f, 0.2f, 0.0f, 0.0f, 0.0f,   //
      0.3f, 0.0f, 0.0f, 0.9f, 0.0f,   //
      0.0f, 0.0f, 0.05f, 0.0f, 0.0f,  //
      0.7f, 0.0f, 0.0f, 0.0f, 0.0f,   //
      0.0f, 0.6f, 0.0f, 0.0f, 0.4f,   //
  };
  std::vector<float> pooled(4);
  PoolMaps(pooled.data(), map.data(), 1, 5, 2);
  // top-left rows 0-1 cols 0-1: .1 .2 .3 0 -> .3; top-right rows 0-1 cols 2-4: max .9;
  // bottom-left rows 2-4 cols 0-1: .7; bottom-right rows 2-4 cols 2-4: .4
  EXPECT_EQ(pooled, (std::vector<float>{0.3f, 0.9f, 0.7f, 0.4f}));
  // two heads, S = T copies
  std::vector<float> two(map);
  two.insert(two.end(), map.begin(), map.end());
  std::vector<float> copied(two.size());
  PoolMaps(copied.data(), two.data(), 2, 5, 5);
  EXPECT_EQ(copied, two);
}

std::unique_ptr<Model> load_golden(const std::string& name) {
  std::unique_ptr<Model> model;
  const Status loaded = Model::Load(read_bytes(models_file(name + "/config.json")), "config.json",
                                    read_bytes(models_file(name + "/model.safetensors")), "model.safetensors", LoadLimits(), &model);
  EXPECT_TRUE(loaded.ok()) << loaded.message();
  return model;
}

TEST(LayerMaps, OneLayersWeightsEqualTheFullRunsAndTheOthersAreFreed) {
  std::unique_ptr<Model> model = load_golden("gpt2-tied");
  ASSERT_TRUE(model);
  const nlohmann::json golden = read_json(models_file("gpt2-tied.golden.json"));
  const std::vector<int32_t> ids = golden.at("dtypes").at("F32").at("runs").at(0).at("ids").get<std::vector<int32_t>>();
  const int64_t L = model->config().num_layers, T = static_cast<int64_t>(ids.size());
  RunResult full;
  ASSERT_TRUE(model->Run(ids.data(), ids.size(), RunOptions(), &full).ok());
  for (int64_t l = 0; l < L; ++l) {
    RunOptions options;
    options.weights_layer = l;
    options.pooled_size = 3;
    RunResult one = full;  // storage reused from a run that kept every layer: the others must go
    ASSERT_TRUE(model->Run(ids.data(), ids.size(), options, &one).ok());
    for (int64_t k = 0; k < L; ++k) {
      const LayerResult& kept = one.layers[static_cast<size_t>(k)];
      if (k == l) {
        EXPECT_EQ(kept.weights.shape, full.layers[static_cast<size_t>(k)].weights.shape);
        EXPECT_EQ(kept.weights.data, full.layers[static_cast<size_t>(k)].weights.data) << "layer " << k;
      } else {
        EXPECT_TRUE(kept.weights.shape.empty());
        EXPECT_EQ(kept.weights.data.capacity(), 0u) << "layer " << k << "'s maps are still held";
      }
      const int64_t H = model->config().num_heads, S = std::min<int64_t>(3, T);
      std::vector<float> expected(static_cast<size_t>(H * S * S));
      PoolMaps(expected.data(), full.layers[static_cast<size_t>(k)].weights.data.data(), H, T, S);
      EXPECT_EQ(kept.pooled.shape, (Shape{H, S, S}));
      EXPECT_EQ(kept.pooled.data, expected);
      EXPECT_EQ(kept.residual.data, full.layers[static_cast<size_t>(k)].residual.data);
    }
    EXPECT_EQ(one.logits.data, full.logits.data);
  }
  RunOptions none;
  none.weights_layer = kNoLayer;
  RunResult nothing;
  ASSERT_TRUE(model->Run(ids.data(), ids.size(), none, &nothing).ok());
  for (const LayerResult& layer : nothing.layers) EXPECT_TRUE(layer.weights.data.empty());
  EXPECT_EQ(nothing.hidden.data, full.hidden.data);
}

TEST(LayerMaps, RefusesALayerOrSizeOutOfRange) {
  std::unique_ptr<Model> model = load_golden("gpt2-tied");
  ASSERT_TRUE(model);
  const std::vector<int32_t> ids = {1, 2, 3};
  RunResult result;
  for (int64_t layer : {int64_t{-3}, model->config().num_layers}) {
    RunOptions options;
    options.weights_layer = layer;
    const Status s = model->Run(ids.data(), ids.size(), options, &result);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("expected a layer from 0 to"), std::string::npos) << s.message();
  }
  RunOptions pooled;
  pooled.pooled_size = -1;
  EXPECT_EQ(model->Run(ids.data(), ids.size(), pooled, &result).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mha::models
