// The decoder's attention agrees with the core's: each layer's Model::attention_module (a
// mha::MultiHeadAttention made from attn.qkv and attn.proj), run causally on the layer's input,
// gives the maps, the concatenated head outputs and the out-projection the trainer's own
// forward computes, for fresh weights and for the shipped trained model. attention_maps (what
// the page shows) is the core's forward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "mha/train/trainer.h"

#ifndef MHA_SOURCE_DIR
#define MHA_SOURCE_DIR "."
#endif

namespace mha::train {
namespace {

// Weights and head outputs within kTolerance; the out-projection, a sum of C products of
// values a few units large, within kTolerance + kTolerance * |value| (torch.allclose's form).
constexpr double kTolerance = 1e-5;

struct LayerErrors {
  double weights = 0, heads = 0, output = 0;
};

// The trainer's forward on one sentence against the core's forward of every layer.
std::vector<LayerErrors> CompareLayers(Model<float>& model, const std::vector<int>& tokens) {
  const ModelConfig& c = model.config();
  const int T = static_cast<int>(tokens.size()), C = c.d_model;
  std::vector<int> targets(T, -1);
  model.forward(tokens.data(), targets.data(), 1, T);
  std::vector<LayerErrors> errors;
  for (int l = 0; l < c.num_layers; ++l) {
    std::unique_ptr<MultiHeadAttention> attention;
    EXPECT_TRUE(model.attention_module(l, &attention).ok());
    const TensorView x{model.attention_input(l), static_cast<size_t>(T) * C, {T, C}};
    ForwardOptions options;
    options.is_causal = true;
    options.average_attn_weights = false;
    options.return_concat = true;
    ForwardResult core;
    const Status status = attention->forward(x, x, x, MaskView(), MaskView(), options, &core);
    EXPECT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(core.weights.shape, (Shape{c.num_heads, T, T}));
    LayerErrors e;
    const float* att = model.attention(l);  // (1, H, T, T)
    for (size_t i = 0; i < core.weights.data.size(); ++i) e.weights = std::max(e.weights, double(std::abs(core.weights.data[i] - att[i])));
    const float* heads = model.attention_heads(l);  // (T, C)
    for (size_t i = 0; i < core.concat.data.size(); ++i) e.heads = std::max(e.heads, double(std::abs(core.concat.data[i] - heads[i])));
    // attn.proj of the trainer's heads: heads . W_O^T + b_O
    Tensor w_o, b_o;
    EXPECT_TRUE(attention->get_parameter("out_proj.weight", &w_o).ok());
    EXPECT_TRUE(attention->get_parameter("out_proj.bias", &b_o).ok());
    for (int t = 0; t < T; ++t) {
      for (int o = 0; o < C; ++o) {
        double y = b_o.data[o];
        for (int i = 0; i < C; ++i) y += double(heads[t * C + i]) * w_o.data[o * C + i];
        e.output = std::max(e.output, std::abs(y - core.output.data[t * C + o]) / (1 + std::abs(y)));
      }
    }
    errors.push_back(e);
  }
  return errors;
}

void ExpectAgreement(Model<float>& model, const Grammar& grammar, const char* what) {
  for (uint64_t seed : {5, 12, 1, 7}) {
    Rng rng(seed);
    const Sentence s = grammar.generate(rng);
    const std::vector<LayerErrors> errors = CompareLayers(model, s.tokens);
    for (size_t l = 0; l < errors.size(); ++l) {
      std::printf("%s, sentence %llu (T=%zu), layer %zu: max |error| weights %.2e, heads %.2e, out-projection %.2e relative (tolerance %.0e)\n",
                  what, static_cast<unsigned long long>(seed), s.tokens.size(), l, errors[l].weights, errors[l].heads,
                  errors[l].output, kTolerance);
      EXPECT_LE(errors[l].weights, kTolerance);
      EXPECT_LE(errors[l].heads, kTolerance);
      EXPECT_LE(errors[l].output, kTolerance);
    }
    // What the page shows is the core's forward, layer after layer.
    std::vector<float> maps;
    ASSERT_TRUE(attention_maps(model, s.tokens, &maps).ok());
    const size_t T = s.tokens.size(), per_layer = static_cast<size_t>(model.config().num_heads) * T * T;
    ASSERT_EQ(maps.size(), per_layer * model.config().num_layers);
    for (int l = 0; l < model.config().num_layers; ++l) {
      double error = 0;
      for (size_t i = 0; i < per_layer; ++i) error = std::max(error, double(std::abs(maps[l * per_layer + i] - model.attention(l)[i])));
      EXPECT_LE(error, kTolerance) << "attention_maps, layer " << l;
    }
  }
}

ModelConfig GrammarModel(const Grammar& grammar) {
  ModelConfig config;
  config.vocab_size = grammar.vocab_size();
  config.context = Grammar::kMaxLength;
  return config;
}

TEST(TrainAttention, FreshWeightsAgreeWithTheCore) {
  const TrainConfig train;
  const Grammar grammar = grammar_of(train);
  Model<float> model(GrammarModel(grammar));
  model.initialize(3, train.init);
  ExpectAgreement(model, grammar, "fresh weights");
}

TEST(TrainAttention, TheShippedModelAgreesWithTheCore) {
  const std::string path = std::string(MHA_SOURCE_DIR) + "/web/sources/weights/trained-seed1.bin";
  std::ifstream file(path, std::ios::binary);
  ASSERT_TRUE(file) << "cannot read " << path;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const Grammar grammar = grammar_of(TrainConfig());
  Model<float> model(GrammarModel(grammar));
  const Status status = load_weights(bytes.data(), bytes.size(), &model);
  ASSERT_TRUE(status.ok()) << status.message();
  ExpectAgreement(model, grammar, "shipped model");
}

TEST(TrainAttention, ALayerOutOfRangeIsAnError) {
  Model<float> model(ModelConfig{});
  std::unique_ptr<MultiHeadAttention> attention;
  EXPECT_EQ(model.attention_module(2, &attention).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model.attention_module(-1, &attention).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(attention, nullptr);
}

}  // namespace
}  // namespace mha::train
