// The tokenizer on NFKC text (the caller's): the reference's quirks (ties, unknown runs merged,
// a piece listed twice) and bad input. Ids of real sentences are checked against the reference
// tokenizer in golden_test.cpp; which pieces make a word, in tests/js/encoder.test.js.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mha/encoder.h"
#include "model_files.h"

namespace mha {
namespace {

class TokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status status = testing::load_tokenizer(&tokenizer_);
    ASSERT_TRUE(status.ok()) << status.message();
  }
  std::vector<int32_t> ids(const std::string& utf8) {
    Tokens tokens;
    const Status status = tokenizer_->tokenize_utf8(utf8, &tokens);
    EXPECT_TRUE(status.ok()) << status.message();
    return tokens.ids;
  }
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_F(TokenizerTest, Pieces) {
  Tokens tokens;
  ASSERT_TRUE(tokenizer_->tokenize_utf8("The cat sat on the mat because it was tired.", &tokens).ok());
  ASSERT_EQ(tokens.ids.size(), 12u);
  EXPECT_EQ(tokens.piece_utf8(0), "\u2581The");
  EXPECT_EQ(tokens.piece_utf8(5), "\u2581ma");
  EXPECT_EQ(tokens.piece_utf8(6), "t");
  EXPECT_EQ(tokens.piece_utf8(11), ".");
  for (size_t i = 0; i < tokens.ids.size(); ++i) {
    if (tokens.ids[i] != Tokenizer::kUnknownId) {
      EXPECT_EQ(tokenizer_->piece(tokens.ids[i]), tokens.text.substr(tokens.piece_begin[i], tokens.piece_end[i] - tokens.piece_begin[i]));
    }
  }
}

TEST_F(TokenizerTest, UnknownRunsMergeIntoOnePiece) {
  Tokens tokens;
  ASSERT_TRUE(tokenizer_->tokenize_utf8("a \xe2\x98\x83\xe2\x98\x83\xe2\x98\x83 b", &tokens).ok());  // three snowmen
  int unknowns = 0;
  for (size_t i = 0; i < tokens.ids.size(); ++i) {
    if (tokens.ids[i] == Tokenizer::kUnknownId) {
      ++unknowns;
      EXPECT_EQ(tokens.piece_utf8(i), "\xe2\x98\x83\xe2\x98\x83\xe2\x98\x83");
    }
  }
  EXPECT_EQ(unknowns, 1);
}

TEST_F(TokenizerTest, EmptyAndSpaces) {
  EXPECT_TRUE(ids("").empty());
  const std::vector<int32_t> spaces = ids("     ");
  ASSERT_FALSE(spaces.empty());
  Tokens tokens;
  ASSERT_TRUE(tokenizer_->tokenize_utf8("     ", &tokens).ok());
  EXPECT_EQ(tokens.text, std::u32string(6, Tokenizer::kWordBoundary));
}

TEST_F(TokenizerTest, BadInputIsRefusedWithAMessage) {
  Tokens tokens;
  Status status = tokenizer_->tokenize_utf8("ok \xff no", &tokens);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("byte 3"), std::string::npos) << status.message();
  const char32_t too_big[] = {U'a', 0x110000};
  status = tokenizer_->tokenize(too_big, 2, &tokens);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("past U+10FFFF"), std::string::npos) << status.message();
  const int32_t bad_id[] = {5, 9000};
  status = tokenizer_->from_ids(bad_id, 2, &tokens);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("9000"), std::string::npos) << status.message();
  // and it still works
  EXPECT_EQ(ids("a").size(), 1u);
}

TEST_F(TokenizerTest, AMegabyteOfTextIsLinear) {
  std::string text;
  while (text.size() < (1u << 20)) text += "The quick brown fox jumps over the lazy dog. ";
  Tokens tokens;
  ASSERT_TRUE(tokenizer_->tokenize_utf8(text, &tokens).ok());
  const int sentences = static_cast<int>(text.size() / 45);
  EXPECT_GT(tokens.ids.size(), 10u * sentences);
  EXPECT_EQ(tokens.piece_utf8(tokens.ids.size() - 1), "\u2581");  // the last space
}

TEST(TokenizerVocabulary, DamagedVocabularyIsRefused) {
  std::unique_ptr<Tokenizer> tokenizer;
  Status status = Tokenizer::FromVocabText("0\ta\nnot-a-number\tb\n", 1, &tokenizer);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("line 2"), std::string::npos) << status.message();
  status = Tokenizer::FromVocabText("0\ta\n0 b\n", 1, &tokenizer);
  EXPECT_NE(status.message().find("line 2"), std::string::npos) << status.message();
  status = Tokenizer::FromVocabText("0\t<unk>\n", 1, &tokenizer);
  EXPECT_FALSE(status.ok());
}

TEST(TokenizerVocabulary, ALaterListingOfAPieceWins) {
  // "ab" -> "▁ab": with the second listing of "▁ab" (id 5, -2.5) it beats ▁ + a + b (-3); the
  // first listing (id 4, -5) would not.
  std::unique_ptr<Tokenizer> tokenizer;
  ASSERT_TRUE(Tokenizer::FromVocabText("0\t\ufffd\n-1\t\u2581\n-1\ta\n-1\tb\n-5\t\u2581ab\n-2.5\t\u2581ab\n", 1, &tokenizer).ok());
  Tokens tokens;
  ASSERT_TRUE(tokenizer->tokenize_utf8("ab", &tokens).ok());
  EXPECT_EQ(tokens.ids, (std::vector<int32_t>{5}));
}

TEST(TokenizerVocabulary, TiesGoToThePieceThatStartsLater) {
  // "a" -> "▁a": "▁a" (-2) and "▁" + "a" (-1 - 1) tie; the reference keeps the later start.
  std::unique_ptr<Tokenizer> tokenizer;
  ASSERT_TRUE(Tokenizer::FromVocabText("0\t\ufffd\n-1\t\u2581\n-1\ta\n-2\t\u2581a\n", 1, &tokenizer).ok());
  Tokens tokens;
  ASSERT_TRUE(tokenizer->tokenize_utf8("a", &tokens).ok());
  EXPECT_EQ(tokens.ids, (std::vector<int32_t>{1, 2}));
}

TEST(TokenizerVocabulary, AnUnknownCodePointScoresZero) {
  // No piece starts at "x": it is unknown (score 0); the two merge into one piece. (The
  // backward pass steps over an unknown by the length of piece 0, "\ufffd", one code unit.)
  std::unique_ptr<Tokenizer> tokenizer;
  ASSERT_TRUE(Tokenizer::FromVocabText("0\t\ufffd\n-1\t\u2581\n-1\ta\n", 1, &tokenizer).ok());
  Tokens tokens;
  ASSERT_TRUE(tokenizer->tokenize_utf8("axx", &tokens).ok());
  EXPECT_EQ(tokens.ids, (std::vector<int32_t>{1, 2, 0}));
  EXPECT_EQ(tokens.piece_utf8(2), "xx");
}

}  // namespace
}  // namespace mha
