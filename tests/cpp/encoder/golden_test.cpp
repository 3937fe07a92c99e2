// The encoder against the model's own TF.js graph and tokenizer (tests/golden/encoder, written
// by scripts/reference/gen_encoder_golden.js), float32 weights: ids equal, attention weights within
// 1e-5, embedding within 1e-4. Prints the largest errors beside the tolerances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mha/encoder.h"
#include "model_files.h"

namespace mha {
namespace {

struct Golden {
  nlohmann::json cases;
  std::vector<float> floats;
  double weights_tolerance = 0, embedding_tolerance = 0;
};

bool load_golden(Golden* golden, std::string* error) {
  const std::string dir = std::string(MHA_SOURCE_DIR) + "/tests/golden/encoder/";
  std::ifstream json_file(dir + "cases.json");
  std::ifstream float_file(dir + "cases.f32", std::ios::binary);
  if (!json_file || !float_file) {
    *error = "cannot read " + dir + "cases.json / cases.f32";
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(json_file);
  golden->cases = j.at("cases");
  golden->weights_tolerance = j.at("tolerances").at("weights");
  golden->embedding_tolerance = j.at("tolerances").at("embedding");
  const std::string bytes((std::istreambuf_iterator<char>(float_file)), std::istreambuf_iterator<char>());
  golden->floats.resize(bytes.size() / sizeof(float));
  std::copy(bytes.data(), bytes.data() + golden->floats.size() * sizeof(float), reinterpret_cast<char*>(golden->floats.data()));
  if (golden->floats.size() != j.at("float_count").get<size_t>()) {
    *error = "cases.f32 holds " + std::to_string(golden->floats.size()) + " floats, cases.json says " + j.at("float_count").dump();
    return false;
  }
  return true;
}

double max_abs_diff(const std::vector<float>& got, const float* expected, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - expected[i]));
  return worst;
}

// The tokenizer takes NFKC text: the case's NFKC form where the generator wrote one (the
// reference's String.prototype.normalize), else the text, which NFKC leaves as it is.
Status tokenize_case(const Tokenizer& tokenizer, const nlohmann::json& c, Tokens* tokens) {
  for (const char* key : {"nfkc_code_points", "code_points"}) {
    if (c.contains(key)) {
      const std::vector<char32_t> cps = c.at(key).get<std::vector<char32_t>>();
      return tokenizer.tokenize(cps.data(), cps.size(), tokens);
    }
  }
  return tokenizer.tokenize_utf8(c.value("nfkc", c.at("text").get<std::string>()), tokens);
}

TEST(EncoderGolden, MatchesTheTfjsGraphAndTokenizer) {
  Golden golden;
  std::string error;
  ASSERT_TRUE(load_golden(&golden, &error)) << error;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Encoder> encoder;
  Status status = testing::load_tokenizer(&tokenizer);
  ASSERT_TRUE(status.ok()) << status.message();
  status = testing::load_encoder("model-f32.safetensors", &encoder);
  ASSERT_TRUE(status.ok()) << status.message();

  double worst_weights = 0, worst_embedding = 0;
  std::string worst_weights_case, worst_embedding_case;
  size_t ids_equal = 0, tokens = 0;
  for (const nlohmann::json& c : golden.cases) {
    const std::string name = c.at("name");
    Tokens t;
    status = tokenize_case(*tokenizer, c, &t);
    ASSERT_TRUE(status.ok()) << name << ": " << status.message();
    const std::vector<int32_t> expected_ids = c.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(t.ids, expected_ids) << name;
    ids_equal += t.ids == expected_ids;
    tokens += expected_ids.size();
    const size_t kept = c.contains("truncated_to") ? c.at("truncated_to").get<size_t>() : expected_ids.size();
    EncodeResult result;
    status = encoder->encode(expected_ids.data(), kept, EncodeOptions(), &result);
    ASSERT_TRUE(status.ok()) << name << ": " << status.message();
    for (size_t l = 0; l < result.layers.size(); ++l) {
      const nlohmann::json& w = c.at("weights")[l];
      ASSERT_EQ(result.layers[l].weights.shape, w.at("shape").get<Shape>()) << name << " layer " << l;
      const double err = max_abs_diff(result.layers[l].weights.data, golden.floats.data() + w.at("offset").get<size_t>(),
                                      result.layers[l].weights.data.size());
      EXPECT_LE(err, golden.weights_tolerance) << name << " layer " << l;
      if (err > worst_weights) worst_weights = err, worst_weights_case = name + " layer " + std::to_string(l);
    }
    const nlohmann::json& e = c.at("embedding");
    ASSERT_EQ(result.embedding.shape, e.at("shape").get<Shape>()) << name;
    const double err = max_abs_diff(result.embedding.data, golden.floats.data() + e.at("offset").get<size_t>(),
                                    result.embedding.data.size());
    EXPECT_LE(err, golden.embedding_tolerance) << name;
    if (err > worst_embedding) worst_embedding = err, worst_embedding_case = name;
  }
  std::printf("  %zu cases (%zu tokens): ids equal in %zu; attention weights max |diff| %.2e (tolerance %.0e, %s); "
              "embedding max |diff| %.2e (tolerance %.0e, %s)\n",
              golden.cases.size(), tokens, ids_equal, worst_weights, golden.weights_tolerance, worst_weights_case.c_str(),
              worst_embedding, golden.embedding_tolerance, worst_embedding_case.c_str());
}

}  // namespace
}  // namespace mha
