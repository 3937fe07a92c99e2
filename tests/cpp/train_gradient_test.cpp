// Finite-difference checks of the decoder's backward pass, in double: every parameter tensor's
// analytic gradient against central differences (sampled elements), and each kernel on its own
// through the whole model (layer norm, attention, GELU, MLP, embeddings, cross-entropy).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "mha/train/grammar.h"
#include "mha/train/model.h"

namespace mha::train {
namespace {

struct Batch {
  std::vector<int> tokens, targets;
  int B, T;
};

Batch RandomBatch(const ModelConfig& config, int B, int T, uint64_t seed) {
  Rng rng(seed);
  Batch batch{std::vector<int>(B * T), std::vector<int>(B * T), B, T};
  for (int i = 0; i < B * T; ++i) {
    batch.tokens[i] = rng.below(config.vocab_size);
    // about one target in five ignored, as padding is
    batch.targets[i] = rng.chance(0.2) ? -1 : rng.below(config.vocab_size);
  }
  return batch;
}

// Perturbs the weights away from GPT-2's init so LayerNorm gains and biases are not trivial.
void Randomize(Model<double>& model, uint64_t seed) {
  model.initialize(seed);
  Rng rng(seed + 1);
  for (double& p : model.parameters()) p += 0.3 * rng.normal();
}

TEST(TrainGradient, EveryParameterTensorMatchesCentralDifferences) {
  ModelConfig config;
  config.vocab_size = 11;
  config.context = 6;
  config.d_model = 8;
  config.num_heads = 2;
  config.num_layers = 2;
  Model<double> model(config);
  Randomize(model, 7);
  Batch batch = RandomBatch(config, 2, 6, 3);

  model.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
  model.backward();
  const std::vector<double> analytic = model.gradients();

  const double h = 1e-5;
  const double tolerance = 1e-6;
  double worst = 0;
  Rng pick(11);
  for (const ParameterSpec& spec : model.specs()) {
    double worst_tensor = 0;
    // every element of small tensors, 24 sampled elements of larger ones
    std::vector<size_t> elements;
    if (spec.size <= 48) {
      for (size_t i = 0; i < spec.size; ++i) elements.push_back(i);
    } else {
      for (int k = 0; k < 24; ++k) elements.push_back(static_cast<size_t>(pick.below(static_cast<int>(spec.size))));
    }
    for (size_t e : elements) {
      double& w = model.parameters()[spec.offset + e];
      const double saved = w;
      w = saved + h;
      const double plus = model.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
      w = saved - h;
      const double minus = model.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
      w = saved;
      const double numeric = (plus - minus) / (2 * h);
      const double a = analytic[spec.offset + e];
      const double error = std::abs(a - numeric) / std::max(1.0, std::abs(numeric));
      worst_tensor = std::max(worst_tensor, error);
    }
    std::printf("  %-28s %3zu elements  max error %.3e (tolerance %.0e)\n", spec.name.c_str(),
                elements.size(), worst_tensor, tolerance);
    EXPECT_LE(worst_tensor, tolerance) << spec.name;
    worst = std::max(worst, worst_tensor);
  }
  std::printf("finite differences: max error %.3e over all tensors (tolerance %.0e)\n", worst, tolerance);
}

TEST(TrainGradient, FloatModelAgreesWithDouble) {
  // The trainer runs in float: its gradients must match the double model's to float accuracy.
  ModelConfig config;
  config.vocab_size = 13;
  config.context = 8;
  config.d_model = 16;
  config.num_heads = 4;
  config.num_layers = 2;
  Model<double> reference(config);
  Randomize(reference, 21);
  Model<float> model(config);
  for (size_t i = 0; i < model.parameters().size(); ++i)
    model.parameters()[i] = static_cast<float>(reference.parameters()[i]);
  Batch batch = RandomBatch(config, 3, 8, 5);
  const double loss_ref = reference.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
  const double loss = model.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T);
  reference.backward();
  model.backward();
  double max_ref = 0, max_error = 0;
  for (size_t i = 0; i < model.gradients().size(); ++i) {
    max_ref = std::max(max_ref, std::abs(reference.gradients()[i]));
    max_error = std::max(max_error, std::abs(reference.gradients()[i] - model.gradients()[i]));
  }
  std::printf("float vs double: loss %.8f vs %.8f; gradient max error %.3e of max %.3e (tolerance 1e-4 relative)\n",
              loss, loss_ref, max_error, max_ref);
  EXPECT_NEAR(loss, loss_ref, 1e-5 * std::abs(loss_ref));
  EXPECT_LE(max_error, 1e-4 * max_ref);
}

TEST(TrainGradient, PackedRowsMatchThePaddedBatch) {
  // The trainer leaves each row's padding out (forward with lengths): the loss, the gradients
  // and the attention maps before each row's end must be those of the padded batch.
  ModelConfig config;
  config.vocab_size = 11;
  config.context = 9;
  config.d_model = 16;
  config.num_heads = 4;
  config.num_layers = 2;
  Model<double> model(config);
  Randomize(model, 8);
  const int B = 3, T = 9;
  const std::vector<int> lengths = {7, 4, 6};
  Batch batch = RandomBatch(config, B, T, 12);
  for (int b = 0; b < B; ++b)
    for (int t = lengths[b]; t < T; ++t) batch.targets[b * T + t] = -1;  // padding: no target
  const double loss_padded = model.forward(batch.tokens.data(), batch.targets.data(), B, T);
  model.backward();
  const std::vector<double> grads_padded = model.gradients();
  std::vector<double> att_padded(model.attention(1), model.attention(1) + static_cast<size_t>(B) * 4 * T * T);
  const int V = config.vocab_size;
  const std::vector<double> logits_b1_t0(model.logits() + 1 * T * V, model.logits() + (1 * T + 1) * V);
  const double loss_packed = model.forward(batch.tokens.data(), batch.targets.data(), B, T, lengths.data());
  // Packed, row 1's first position follows row 0's 7 positions.
  for (int v = 0; v < V; ++v) EXPECT_NEAR(model.logits()[7 * V + v], logits_b1_t0[v], 1e-12);
  model.backward();
  double max_grad = 0, max_error = 0;
  for (size_t i = 0; i < grads_padded.size(); ++i) {
    max_grad = std::max(max_grad, std::abs(grads_padded[i]));
    max_error = std::max(max_error, std::abs(grads_padded[i] - model.gradients()[i]));
  }
  double att_error = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < 4; ++h)
      for (int t = 0; t < lengths[b]; ++t)
        for (int t2 = 0; t2 < T; ++t2) {
          const size_t i = ((static_cast<size_t>(b) * 4 + h) * T + t) * T + t2;
          att_error = std::max(att_error, std::abs(att_padded[i] - model.attention(1)[i]));
        }
  std::printf("packed vs padded: loss %.12f vs %.12f; gradient max error %.3e of max %.3e; attention %.3e (tolerance 1e-12)\n",
              loss_packed, loss_padded, max_error, max_grad, att_error);
  EXPECT_NEAR(loss_packed, loss_padded, 1e-12);
  EXPECT_LE(max_error, 1e-12 * std::max(1.0, max_grad));
  EXPECT_LE(att_error, 1e-12);
  // A length out of 1 .. T is refused.
  const std::vector<int> bad = {9, 0, 6};
  EXPECT_TRUE(std::isnan(model.forward(batch.tokens.data(), batch.targets.data(), B, T, bad.data())));
}

TEST(TrainGradient, IgnoredTargetsAndFutureTokensGiveNoGradient) {
  // Causality: changing a token after position t changes nothing before t; a target of -1
  // contributes nothing.
  ModelConfig config;
  config.vocab_size = 9;
  config.context = 5;
  config.d_model = 8;
  config.num_heads = 2;
  config.num_layers = 1;
  Model<double> model(config);
  Randomize(model, 4);
  std::vector<int> tokens = {1, 2, 3, 4, 5}, targets = {2, -1, -1, -1, -1};
  const double loss_a = model.forward(tokens.data(), targets.data(), 1, 5);
  tokens[3] = 8;
  const double loss_b = model.forward(tokens.data(), targets.data(), 1, 5);
  std::printf("loss with a later token changed: %.12f vs %.12f\n", loss_a, loss_b);
  EXPECT_EQ(loss_a, loss_b);
  model.backward();
  // wpe rows 1.. receive no gradient: only position 0's target counts, and it sees only itself.
  const ParameterSpec& wpe = model.specs()[1];
  double later_rows = 0;
  for (size_t i = config.d_model; i < wpe.size; ++i) later_rows = std::max(later_rows, std::abs(model.gradients()[wpe.offset + i]));
  EXPECT_EQ(later_rows, 0.0);
}

}  // namespace
}  // namespace mha::train
