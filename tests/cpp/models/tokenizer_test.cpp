// The tokenizers of tokenizer.json against the reference's ids (tests/golden/models/
// tokenizer_cases.json, written by scripts/reference/hf_tokenizer_cases.js with
// @huggingface/tokenizers): every case of every tokenizer exact; and the bad tokenizer.json files
// refused by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mha/hf_tokenizer.h"
#include "model_files.h"

namespace mha::models {
namespace {

using mha::testing::models_file;
using mha::testing::read_bytes;
using mha::testing::read_json;

TEST(HfTokenizer, MatchesReferenceIds) {
  const nlohmann::json cases = read_json(models_file("tokenizer_cases.json"));
  size_t total = 0, matched = 0;
  for (const auto& [name, entry] : cases.at("tokenizers").items()) {
    std::unique_ptr<HfTokenizer> tokenizer;
    const Status loaded = HfTokenizer::FromJson(read_bytes(models_file("tokenizers/" + name + "/tokenizer.json")),
                                                "tokenizer.json", &tokenizer);
    ASSERT_TRUE(loaded.ok()) << name << ": " << loaded.message();
    for (const auto& c : entry.at("cases")) {
      const std::string text = c.at("text");
      std::vector<int32_t> ids;
      const Status encoded = tokenizer->encode(text, &ids);
      ASSERT_TRUE(encoded.ok()) << encoded.message();
      ++total;
      const std::vector<int32_t> expected = c.at("ids").get<std::vector<int32_t>>();
      if (ids == expected) {
        ++matched;
      } else {
        std::string got, want;
        for (int32_t id : ids) got += tokenizer->token(id) + "|";
        for (int32_t id : expected) want += tokenizer->token(id) + "|";
        ADD_FAILURE() << name << " on \"" << text << "\":\n  got      " << got << "\n  expected " << want;
      }
    }
  }
  std::printf("[ tokens   ] %zu of %zu cases match the reference ids\n", matched, total);
  EXPECT_GT(total, 80u);
}

TEST(HfTokenizer, KindsAndSpecialTokens) {
  std::unique_ptr<HfTokenizer> bpe, wordpiece;
  ASSERT_TRUE(HfTokenizer::FromJson(read_bytes(models_file("tokenizers/bpe/tokenizer.json")), "tokenizer.json", &bpe).ok());
  ASSERT_TRUE(HfTokenizer::FromJson(read_bytes(models_file("tokenizers/wordpiece-uncased/tokenizer.json")), "tokenizer.json",
                                    &wordpiece)
                  .ok());
  EXPECT_EQ(bpe->kind(), HfTokenizer::Kind::kByteLevelBpe);
  EXPECT_EQ(wordpiece->kind(), HfTokenizer::Kind::kWordPiece);
  std::vector<int32_t> ids;
  ASSERT_TRUE(wordpiece->encode("a [MASK] b", &ids).ok());
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(wordpiece->token(ids.front()), "[CLS]");
  EXPECT_EQ(wordpiece->token(ids[2]), "[MASK]");
  EXPECT_EQ(wordpiece->token(ids.back()), "[SEP]");
  const Status bad = bpe->encode(std::string("ok \xff"), &ids);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("byte 3"), std::string::npos) << bad.message();
}

// A damaged tokenizer.json: each is refused with a message naming the file and the field.
TEST(HfTokenizer, RefusesDamagedFiles) {
  const std::string good = read_bytes(models_file("tokenizers/bpe/tokenizer.json"));
  nlohmann::json j = nlohmann::json::parse(good);
  const auto refused = [](const std::string& text, const std::string& field) {
    std::unique_ptr<HfTokenizer> t;
    const Status s = HfTokenizer::FromJson(text, "tokenizer.json", &t);
    EXPECT_FALSE(s.ok()) << field;
    EXPECT_NE(s.message().find("tokenizer.json"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
  };
  refused(good.substr(0, good.size() / 2), "not valid JSON");
  nlohmann::json k = j;
  k["model"]["type"] = "Unigram";
  refused(k.dump(), "model.type");
  k = j;
  k["model"].erase("vocab");
  refused(k.dump(), "model.vocab");
  k = j;
  k["model"]["merges"][0] = "nospace";
  refused(k.dump(), "model.merges");
  k = j;
  k["model"]["merges"][1] = "q \xc3\xa9\xc3\xa9\xc3\xa9";
  refused(k.dump(), "model.merges");
  k = j;
  k["model"]["byte_fallback"] = true;
  refused(k.dump(), "model.byte_fallback");
  k = j;
  k["pre_tokenizer"] = {{"type", "Whitespace"}};
  refused(k.dump(), "pre_tokenizer");
  k = j;
  k["model"]["vocab"]["Ġthe"] = "seven";
  refused(k.dump(), "model.vocab");
  nlohmann::json w = nlohmann::json::parse(read_bytes(models_file("tokenizers/wordpiece-uncased/tokenizer.json")));
  k = w;
  k["normalizer"] = {{"type", "NFKC"}};
  refused(k.dump(), "normalizer");
  k = w;
  k["post_processor"]["special_tokens"]["[CLS]"]["ids"] = {999999};
  refused(k.dump(), "post_processor");
  k = w;
  k["model"]["unk_token"] = "[NOPE]";
  refused(k.dump(), "model.unk_token");
}

}  // namespace
}  // namespace mha::models
