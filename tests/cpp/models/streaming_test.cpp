// Weights streamed in chunks: whatever the chunk size (a value split between two chunks, a
// header split anywhere), the model computes exactly what it computes from the whole file; a
// file cut short is refused at the end; the memory planned before the weights refuses a model
// with its numbers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mha/models.h"
#include "model_files.h"

namespace mha::models {
namespace {

using mha::testing::models_file;
using mha::testing::read_bytes;

std::unique_ptr<Model> streamed(const std::string& name, const std::string& weights_file, size_t chunk, bool size_known) {
  ModelConfig config;
  EXPECT_TRUE(ParseConfig(read_bytes(models_file(name + "/config.json")), "config.json", &config).ok());
  std::unique_ptr<Model> model;
  EXPECT_TRUE(Model::Create(config, LoadLimits(), &model).ok());
  const std::string bytes = read_bytes(models_file(name + "/" + weights_file));
  EXPECT_TRUE(model->BeginWeights(weights_file, size_known ? bytes.size() : 0).ok());
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    const Status s = model->FeedWeights(reinterpret_cast<const uint8_t*>(bytes.data()) + at, std::min(chunk, bytes.size() - at));
    EXPECT_TRUE(s.ok()) << s.message();
  }
  const Status s = model->FinishWeights();
  EXPECT_TRUE(s.ok()) << s.message();
  return model;
}

TEST(Streaming, AnyChunkSizeGivesTheSameModel) {
  const std::vector<int32_t> ids = {5, 17, 2, 40, 11, 9};
  for (const std::string name : {"gpt2-tied", "bert-mlm"}) {
    for (const std::string file : {"model.safetensors", "model.f16.safetensors", "model.bf16.safetensors"}) {
      std::unique_ptr<Model> whole;
      ASSERT_TRUE(Model::Load(read_bytes(models_file(name + "/config.json")), "config.json",
                              read_bytes(models_file(name + "/" + file)), file, LoadLimits(), &whole).ok());
      RunResult expected;
      ASSERT_TRUE(whole->Run(ids.data(), ids.size(), RunOptions(), &expected).ok());
      // a float16 / bfloat16 file's matrices stay 16-bit: half the bytes of the float32 file's
      if (file != "model.safetensors") {
        std::unique_ptr<Model> f32;
        ASSERT_TRUE(Model::Load(read_bytes(models_file(name + "/config.json")), "config.json",
                                read_bytes(models_file(name + "/model.safetensors")), "model.safetensors", LoadLimits(), &f32).ok());
        EXPECT_LT(whole->weight_bytes(), f32->weight_bytes() * 6 / 10) << name << " " << file;
      }
      for (const size_t chunk : {size_t{1}, size_t{3}, size_t{4093}}) {
        std::unique_ptr<Model> model = streamed(name, file, chunk, chunk != 3);
        RunResult r;
        ASSERT_TRUE(model->Run(ids.data(), ids.size(), RunOptions(), &r).ok());
        EXPECT_EQ(r.logits.data, expected.logits.data) << name << " " << file << " in chunks of " << chunk;
        EXPECT_EQ(r.layers.back().weights.data, expected.layers.back().weights.data);
        Tensor a, b;
        ASSERT_TRUE(model->AttentionParameter(0, "in_proj_weight", &a).ok());
        ASSERT_TRUE(whole->AttentionParameter(0, "in_proj_weight", &b).ok());
        EXPECT_EQ(a.data, b.data);
      }
    }
  }
}

TEST(Streaming, ACutFileIsRefusedAtTheEnd) {
  ModelConfig config;
  ASSERT_TRUE(ParseConfig(read_bytes(models_file("gpt2-tied/config.json")), "config.json", &config).ok());
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::Create(config, LoadLimits(), &model).ok());
  const std::string bytes = read_bytes(models_file("gpt2-tied/model.safetensors"));
  ASSERT_TRUE(model->BeginWeights("model.safetensors", 0).ok());
  ASSERT_TRUE(model->FeedWeights(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size() - 10).ok());
  const Status s = model->FinishWeights();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("run past the"), std::string::npos) << s.message();
  const std::vector<int32_t> ids = {1, 2};
  RunResult r;
  EXPECT_NE(model->Run(ids.data(), ids.size(), RunOptions(), &r).message().find("not loaded"), std::string::npos);
}

TEST(Streaming, ThePlanRefusesWithItsNumbers) {
  ModelConfig config;
  ASSERT_TRUE(ParseConfig(read_bytes(models_file("gpt2-tied/config.json")), "config.json", &config).ok());
  config.hidden = 1024;
  config.num_heads = 16;
  config.num_kv_heads = 16;
  config.head_dim = 64;
  config.num_layers = 24;
  config.intermediate = 4096;
  config.vocab_size = 50257;
  config.max_positions = 1024;
  std::unique_ptr<Model> model;
  LoadLimits limits;
  // GPT-2 medium's shape: 1,419,321,344 bytes of weights in float32, refused before any is allocated
  limits.max_memory_bytes = 1'000'000'000;
  const Status s = Model::Create(config, limits, &model);
  ASSERT_EQ(s.code(), StatusCode::kTooLarge);
  for (const char* part : {"the model needs 1", "354823168 parameters", "weights 1420 MB", "a run of 128 tokens", "more than the 1000 MB"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace mha::models
