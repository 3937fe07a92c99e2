// Bad checkpoints: each refused with a message naming the file and the field or tensor (and,
// for a shape, both shapes). The files are the golden ones with one thing broken.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "mha/models.h"
#include "model_files.h"

namespace mha::models {
namespace {

using mha::testing::models_file;
using mha::testing::read_bytes;

// tensors -> safetensors bytes, all F32 (the inverse of ReadSafetensors)
std::string write_f32(const std::map<std::string, LoadedTensor>& tensors, const nlohmann::json& extra = {}) {
  nlohmann::json header = extra.is_null() ? nlohmann::json::object() : extra;
  std::string data;
  for (const auto& [name, t] : tensors) {
    const size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * 4);
    header[name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string text = header.dump();
  std::string out(8, '\0');
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i) & 0xff);
  return out + text + data;
}

class BadFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    gpt2_config_ = read_bytes(models_file("gpt2-tied/config.json"));
    bert_config_ = read_bytes(models_file("bert-mlm/config.json"));
    ASSERT_TRUE(ReadSafetensors(read_bytes(models_file("gpt2-tied/model.safetensors")), "model.safetensors", LoadLimits(),
                                nullptr, &gpt2_)
                    .ok());
    ASSERT_TRUE(ReadSafetensors(read_bytes(models_file("bert-mlm/model.safetensors")), "model.safetensors", LoadLimits(),
                                nullptr, &bert_)
                    .ok());
  }

  // Loads and expects a refusal whose message holds every one of `parts`.
  static void refused(const std::string& config, const std::string& weights, std::initializer_list<std::string> parts,
                      const LoadLimits& limits = LoadLimits()) {
    std::unique_ptr<Model> model;
    const Status s = Model::Load(config, "config.json", weights, "model.safetensors", limits, &model);
    ASSERT_FALSE(s.ok()) << "loaded, expected a message with " << *parts.begin();
    for (const std::string& part : parts) EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  }

  static std::string with(const std::string& config, const char* field, const nlohmann::json& value) {
    nlohmann::json j = nlohmann::json::parse(config);
    j[field] = value;
    return j.dump();
  }

  std::string gpt2_config_, bert_config_;
  std::map<std::string, LoadedTensor> gpt2_, bert_;
};

TEST_F(BadFiles, TheGoodFilesLoad) {
  std::unique_ptr<Model> model;
  EXPECT_TRUE(Model::Load(gpt2_config_, "config.json", write_f32(gpt2_), "model.safetensors", LoadLimits(), &model).ok());
  EXPECT_TRUE(Model::Load(bert_config_, "config.json", write_f32(bert_), "model.safetensors", LoadLimits(), &model).ok());
  // GPT-2's causal-mask buffers and BERT's position_ids, as older checkpoints carry them, are skipped
  auto g = gpt2_;
  g["transformer.h.0.attn.bias"] = {"F32", {1, 1, 2, 2}, {1, 0, 1, 1}};
  EXPECT_TRUE(Model::Load(gpt2_config_, "config.json", write_f32(g), "model.safetensors", LoadLimits(), &model).ok());
  // LayerNorm's gamma and beta, as checkpoints converted from the original BERT name them
  auto b = bert_;
  b["bert.embeddings.LayerNorm.gamma"] = b["bert.embeddings.LayerNorm.weight"];
  b["bert.embeddings.LayerNorm.beta"] = b["bert.embeddings.LayerNorm.bias"];
  b.erase("bert.embeddings.LayerNorm.weight");
  b.erase("bert.embeddings.LayerNorm.bias");
  EXPECT_TRUE(Model::Load(bert_config_, "config.json", write_f32(b), "model.safetensors", LoadLimits(), &model).ok());
}

TEST_F(BadFiles, MissingTensor) {
  auto t = gpt2_;
  t.erase("transformer.h.1.mlp.c_fc.bias");
  refused(gpt2_config_, write_f32(t), {"model.safetensors", "'transformer.h.1.mlp.c_fc.bias'", "missing", "[96]"});
  t = bert_;
  t.erase("cls.predictions.transform.LayerNorm.weight");
  refused(bert_config_, write_f32(t), {"model.safetensors", "'cls.predictions.transform.LayerNorm.weight'", "missing"});
  // untied: lm_head.weight is needed
  refused(with(gpt2_config_, "tie_word_embeddings", false), write_f32(gpt2_), {"'lm_head.weight'", "missing", "[377, 24]"});
}

TEST_F(BadFiles, WrongShape) {
  auto t = gpt2_;
  t["transformer.wpe.weight"].shape = {16, 48};
  refused(gpt2_config_, write_f32(t), {"model.safetensors", "'transformer.wpe.weight'", "[16, 48]", "expected [32, 24]"});
  t = bert_;
  t["bert.encoder.layer.0.attention.self.key.weight"].shape = {12, 48};
  refused(bert_config_, write_f32(t), {"'bert.encoder.layer.0.attention.self.key.weight'", "[12, 48]", "expected [24, 24]"});
}

TEST_F(BadFiles, UnknownTensor) {
  auto t = bert_;
  t["classifier.weight"] = {"F32", {2, 24}, std::vector<float>(48, 0.5f)};
  refused(bert_config_, write_f32(t), {"model.safetensors", "'classifier.weight'", "not part of a BertForMaskedLM"});
}

TEST_F(BadFiles, NanAndInfiniteWeights) {
  auto t = gpt2_;
  t["transformer.h.0.ln_1.weight"].values[5] = std::numeric_limits<float>::quiet_NaN();
  refused(gpt2_config_, write_f32(t), {"model.safetensors", "'transformer.h.0.ln_1.weight'", "value 5 is NaN"});
  t = bert_;
  t["bert.embeddings.word_embeddings.weight"].values[7] = std::numeric_limits<float>::infinity();
  refused(bert_config_, write_f32(t), {"'bert.embeddings.word_embeddings.weight'", "value 7 is infinite"});
}

TEST_F(BadFiles, DamagedSafetensors) {
  const std::string good = write_f32(gpt2_);
  refused(gpt2_config_, good.substr(0, 5), {"model.safetensors", "shorter than a safetensors header"});
  refused(gpt2_config_, good.substr(0, good.size() - 100), {"model.safetensors", "run past the"});
  std::string header_too_long = good;
  header_too_long[6] = 1;
  refused(gpt2_config_, header_too_long, {"model.safetensors", "header length"});
  std::string not_json = good;
  not_json[8] = '[';
  not_json[9] = '!';
  refused(gpt2_config_, not_json, {"model.safetensors", "not a JSON object"});
  // a dtype the core does not read, on a tensor it needs
  auto t = gpt2_;
  t.erase("transformer.ln_f.bias");
  std::string bytes = write_f32(t, nlohmann::json{{"transformer.ln_f.bias", {{"dtype", "I64"}, {"shape", {24}}, {"data_offsets", {0, 192}}}}});
  refused(gpt2_config_, bytes, {"model.safetensors", "'transformer.ln_f.bias'", "dtype I64"});
  // a shape whose size disagrees with its bytes
  t = gpt2_;
  t.erase("transformer.ln_f.bias");
  bytes = write_f32(t, nlohmann::json{{"transformer.ln_f.bias", {{"dtype", "F32"}, {"shape", {25}}, {"data_offsets", {0, 96}}}}});
  refused(gpt2_config_, bytes, {"'transformer.ln_f.bias'", "shape [25] of F32 needs 100 bytes, its data_offsets hold 96"});
}

TEST_F(BadFiles, FarTooLarge) {
  LoadLimits small;
  small.max_file_bytes = 10000;
  refused(gpt2_config_, write_f32(gpt2_), {"model.safetensors", "bytes, more than the 10000"}, small);
  // a config whose weights and one run would pass the memory limit is refused before any weight is read
  refused(with(with(gpt2_config_, "n_embd", 8192), "n_layer", 48), write_f32(gpt2_),
          {"config.json", "the model needs", "parameters: weights", "more than the 2148 MB it may take"});
  // a shape no file can hold
  auto t = gpt2_;
  t["transformer.wte.weight"].shape = {1 << 30, 1 << 30};
  refused(gpt2_config_, write_f32(t), {"'transformer.wte.weight'", "more values than any file can"});
}

TEST_F(BadFiles, UnsupportedConfig) {
  const std::string weights = write_f32(gpt2_);
  refused(with(gpt2_config_, "model_type", "gemma"), weights, {"config.json", "'model_type'", "gemma"});
  refused(with(gpt2_config_, "scale_attn_by_inverse_layer_idx", true), weights, {"config.json", "'scale_attn_by_inverse_layer_idx'"});
  refused(with(gpt2_config_, "reorder_and_upcast_attn", true), weights, {"config.json", "'reorder_and_upcast_attn'"});
  refused(with(gpt2_config_, "add_cross_attention", true), weights, {"config.json", "'add_cross_attention'"});
  refused(with(gpt2_config_, "scale_attn_weights", false), weights, {"config.json", "'scale_attn_weights'"});
  refused(with(gpt2_config_, "activation_function", "mish"), weights, {"config.json", "'activation_function'", "mish"});
  refused(with(gpt2_config_, "architectures", {"GPT2ForSequenceClassification"}), weights,
          {"config.json", "'architectures'", "GPT2ForSequenceClassification"});
  refused(with(gpt2_config_, "n_head", 5), weights, {"config.json", "'n_embd'", "'n_head'"});
  refused(with(gpt2_config_, "n_layer", "two"), weights, {"config.json", "'n_layer'", "integer"});
  refused(with(gpt2_config_, "layer_norm_epsilon", -1), weights, {"config.json", "'layer_norm_epsilon'"});
  refused("{\"model_type\": \"gpt2\",", weights, {"config.json", "not valid JSON"});
  const std::string bert = write_f32(bert_);
  refused(with(bert_config_, "position_embedding_type", "relative_key"), bert, {"config.json", "'position_embedding_type'"});
  refused(with(bert_config_, "is_decoder", true), bert, {"config.json", "'is_decoder'"});
  refused(with(bert_config_, "hidden_act", "gelu_10"), bert, {"config.json", "'hidden_act'", "gelu_10"});
}

TEST_F(BadFiles, BadRunInputs) {
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::Load(gpt2_config_, "config.json", write_f32(gpt2_), "model.safetensors", LoadLimits(), &model).ok());
  RunResult r;
  const std::vector<int32_t> too_many(33, 1), out_of_range = {1, 377};
  Status s = model->Run(too_many.data(), too_many.size(), RunOptions(), &r);
  EXPECT_EQ(s.code(), StatusCode::kTooLarge) << s.message();
  s = model->Run(out_of_range.data(), out_of_range.size(), RunOptions(), &r);
  EXPECT_NE(s.message().find("id 1 is 377"), std::string::npos) << s.message();
  Tensor importance;
  s = model->HeadImportance(out_of_range.data(), 1, &importance);
  EXPECT_NE(s.message().find("at least two tokens"), std::string::npos) << s.message();
  std::unique_ptr<Model> bert;
  ASSERT_TRUE(Model::Load(bert_config_, "config.json", write_f32(bert_), "model.safetensors", LoadLimits(), &bert).ok());
  s = bert->HeadImportance(out_of_range.data(), 2, &importance);
  EXPECT_NE(s.message().find("causal LM head"), std::string::npos) << s.message();
  RunOptions ablate;
  ablate.ablate = {{2, 0}};
  s = model->Run(out_of_range.data(), 1, ablate, &r);
  EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.message();
}

// Ablation through the core: switching a head off changes the logits and keeps the weights.
TEST_F(BadFiles, AblationChangesPredictions) {
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::Load(gpt2_config_, "config.json", write_f32(gpt2_), "model.safetensors", LoadLimits(), &model).ok());
  const std::vector<int32_t> ids = {40, 83, 6, 82, 280};
  RunResult plain, ablated;
  ASSERT_TRUE(model->Run(ids.data(), ids.size(), RunOptions(), &plain).ok());
  RunOptions options;
  options.ablate = {{1, 2}};
  ASSERT_TRUE(model->Run(ids.data(), ids.size(), options, &ablated).ok());
  EXPECT_EQ(plain.layers[1].weights.data, ablated.layers[1].weights.data);
  double change = 0;
  for (size_t i = 0; i < plain.logits.data.size(); ++i) change = std::max(change, std::fabs(double(plain.logits.data[i]) - ablated.logits.data[i]));
  EXPECT_GT(change, 1e-3);
}

}  // namespace
}  // namespace mha::models

namespace mha::models {
namespace {

// Damage at random (bytes overwritten, the file cut short): every load returns, with an error
// or a model that runs; under the asan preset any read out of bounds is fatal.
TEST(RandomDamage, SafetensorsAndConfigNeverCrash) {
  const std::string config = mha::testing::read_bytes(mha::testing::models_file("gpt2-one-head/config.json"));
  const std::string weights = mha::testing::read_bytes(mha::testing::models_file("gpt2-one-head/model.safetensors"));
  uint64_t state = 0x9e3779b97f4a7c15ull;
  const auto next = [&](uint64_t n) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<size_t>(state % n);
  };
  // damage within the first `span` bytes (the JSON headers hold the structure)
  const auto damage = [&](std::string s, size_t span) {
    const size_t edits = 1 + next(4);
    for (size_t e = 0; e < edits; ++e) s[next(std::min(span, s.size()))] = static_cast<char>(next(256));
    if (next(4) == 0) s.resize(next(s.size()));
    return s;
  };
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | static_cast<unsigned char>(weights[static_cast<size_t>(i)]);
  size_t loaded = 0, refused = 0;
  const std::vector<int32_t> ids = {1, 2, 3, 4};
  for (int round = 0; round < 400; ++round) {
    // one file damaged a round: config.json, the safetensors header, or anywhere in the weights
    const size_t which = next(3);
    const std::string c = which == 0 ? damage(config, config.size()) : config;
    const std::string w = which == 1 ? damage(weights, 8 + header) : which == 2 ? damage(weights, weights.size()) : weights;
    std::unique_ptr<Model> model;
    const Status s = Model::Load(c, "config.json", w, "model.safetensors", LoadLimits(), &model);
    if (s.ok()) {
      ++loaded;
      RunResult r;
      const Status ran = model->Run(ids.data(), ids.size(), RunOptions(), &r);
      EXPECT_TRUE(ran.ok() || !ran.message().empty());
    } else {
      ++refused;
      EXPECT_FALSE(s.message().empty());
    }
  }
  std::printf("[ damage   ] 400 damaged checkpoints: %zu loaded, %zu refused\n", loaded, refused);
  EXPECT_GT(refused, 0u);
  EXPECT_GT(loaded, 0u);
}


// The Llama-family fields the runtime does not compute are refused by name.
TEST(LlamaFamilyConfig, UnsupportedFieldsAreRefusedByName) {
  const nlohmann::json base = nlohmann::json::parse(read_bytes(models_file("llama-gqa/config.json")));
  const auto refused = [&](const nlohmann::json& changes, std::initializer_list<std::string> parts) {
    nlohmann::json j = base;
    j.merge_patch(changes);
    ModelConfig config;
    const Status s = ParseConfig(j.dump(), "config.json", &config);
    ASSERT_FALSE(s.ok()) << j.dump();
    for (const std::string& part : parts) EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  };
  refused({{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}}}, {"config.json", "rope_scaling.rope_type", "yarn", "not supported yet"});
  refused({{"rope_scaling", {{"type", "longrope"}, {"short_factor", {1.0}}}}}, {"rope_scaling.type", "longrope"});
  refused({{"rope_parameters", {{"rope_type", "yarn"}, {"rope_theta", 1e4}}}}, {"rope_parameters.rope_type", "yarn"});
  refused({{"partial_rotary_factor", 0.5}}, {"'partial_rotary_factor'", "not supported yet"});
  refused({{"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}}}}, {"rope_scaling.low_freq_factor", "is missing"});
  refused({{"rope_scaling", {{"rope_type", "ntk"}, {"factor", 2.0}}}}, {"'ntk'", "not supported ("});
  refused({{"num_key_value_heads", 3}}, {"'num_key_value_heads' (3) must divide 'num_attention_heads' (4)"});
  refused({{"head_dim", 7}}, {"even head width"});
  refused({{"model_type", "gemma"}}, {"field 'model_type' is 'gemma'", "llama, mistral, qwen2"});
  refused({{"model_type", "mixtral"}}, {"field 'model_type' is 'mixtral'"});
  refused({{"architectures", {"LlamaForSequenceClassification"}}}, {"'architectures'", "LlamaForCausalLM, LlamaModel"});
  refused({{"model_type", "mistral"}, {"architectures", {"MistralForCausalLM"}}, {"sliding_window", 0}}, {"'sliding_window' must be a positive integer"});
}

// What each family reads from its config: defaults, rope types, biases and windows.
TEST(LlamaFamilyConfig, FieldsAreRead) {
  const nlohmann::json base = nlohmann::json::parse(read_bytes(models_file("llama-gqa/config.json")));
  const auto parsed = [&](const nlohmann::json& changes) {
    nlohmann::json j = base;
    j.merge_patch(changes);
    ModelConfig config;
    const Status s = ParseConfig(j.dump(), "config.json", &config);
    EXPECT_TRUE(s.ok()) << s.message();
    return config;
  };
  ModelConfig c = parsed(nlohmann::json::object());
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_EQ(c.rope_type, "default");
  ASSERT_EQ(c.rotary.inv_freq.size(), 4u);
  EXPECT_FLOAT_EQ(c.rotary.inv_freq[1], 1.0f / std::pow(10000.0f, 0.25f));
  c = parsed({{"tie_word_embeddings", nullptr}, {"num_key_value_heads", nullptr}});  // absent: false; H
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.num_kv_heads, 4);
  c = parsed({{"rope_scaling", {{"type", "linear"}, {"factor", 4.0}}}});
  EXPECT_EQ(c.rope_type, "linear");
  EXPECT_FLOAT_EQ(c.rotary.inv_freq[1], 1.0f / std::pow(10000.0f, 0.25f) / 4.0f);
  c = parsed({{"rope_scaling", {{"rope_type", "dynamic"}, {"factor", 4.0}}}});  // within the trained length: default
  EXPECT_FLOAT_EQ(c.rotary.inv_freq[1], 1.0f / std::pow(10000.0f, 0.25f));
  c = parsed({{"model_type", "mistral"}, {"architectures", {"MistralModel"}}});
  EXPECT_EQ(c.sliding_window, 4096);  // MistralConfig's default
  EXPECT_EQ(c.task, Task::kNone);
  {
    nlohmann::json j = base;  // sliding_window null: no window (merge_patch would remove the key)
    j["model_type"] = "mistral";
    j["architectures"] = {"MistralForCausalLM"};
    j["sliding_window"] = nullptr;
    ASSERT_TRUE(ParseConfig(j.dump(), "config.json", &c).ok());
    EXPECT_EQ(c.sliding_window, 0);
  }
  c = parsed({{"model_type", "qwen2"}, {"architectures", {"Qwen2ForCausalLM"}}, {"sliding_window", 16}});
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_FALSE(c.out_bias);
  EXPECT_EQ(c.sliding_window, 0);  // use_sliding_window absent: false
  c = parsed({{"model_type", "qwen2"}, {"architectures", {"Qwen2ForCausalLM"}}, {"use_sliding_window", true},
              {"sliding_window", 16}, {"max_window_layers", 1}});
  EXPECT_EQ(c.sliding_window, 16);
  EXPECT_EQ(c.window_from_layer, 1);
  c = parsed({{"attention_bias", true}, {"mlp_bias", true}});
  EXPECT_TRUE(c.qkv_bias && c.out_bias && c.mlp_bias);
}

// A bare LlamaModel file (no "model." prefix, no head) loads and gives the hidden states.
TEST(LlamaFamilyConfig, BareModelLoads) {
  nlohmann::json config = nlohmann::json::parse(read_bytes(models_file("llama-gqa/config.json")));
  config["architectures"] = {"LlamaModel"};
  std::map<std::string, LoadedTensor> tensors, bare;
  ASSERT_TRUE(ReadSafetensors(read_bytes(models_file("llama-gqa/model.safetensors")), "model.safetensors", LoadLimits(), nullptr,
                              &tensors)
                  .ok());
  for (auto& [name, t] : tensors) {
    if (name.rfind("model.", 0) == 0) bare[name.substr(6)] = t;
  }
  std::unique_ptr<Model> model;
  const Status s = Model::Load(config.dump(), "config.json", write_f32(bare), "model.safetensors", LoadLimits(), &model);
  ASSERT_TRUE(s.ok()) << s.message();
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5};
  RunResult r;
  ASSERT_TRUE(model->Run(ids.data(), ids.size(), RunOptions(), &r).ok());
  EXPECT_FALSE(r.logits.present());
  EXPECT_EQ(r.hidden.shape, (Shape{5, 32}));
  EXPECT_EQ(r.layers[0].weights.shape, (Shape{4, 5, 5}));
  EXPECT_EQ(r.layers[0].concat.present(), false);
}

}  // namespace
}  // namespace mha::models
