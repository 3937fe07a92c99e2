// The training language keeps its promises: agreement, long-range distractors, a unique
// pronoun antecedent, a repeat whose induction links point where copying needs them; the
// generator is deterministic and draws the same sentences in every build (the committed list
// tests/golden/train/sentences.txt, which the WebAssembly build is checked against too); the
// weights file and float16 conversion round-trip; AdamW decays each tensor at its own rate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "mha/train/grammar.h"
#include "mha/train/trainer.h"

#ifndef MHA_SOURCE_DIR
#define MHA_SOURCE_DIR "."
#endif

namespace mha::train {
namespace {

// The position of the verb's subject: the key of the sentence's verb -> subject link.
int subject_of(const Sentence& s) {
  for (const Link& link : s.links)
    if (link.relation == Relation::kVerbSubject) return link.key;
  return -1;
}

TEST(TrainGrammar, EveryCategoryHasItsOwnName) {
  std::set<std::string> names;
  for (int c = 0; c < kNumCategories; ++c) {
    const std::string name = category_name(static_cast<Category>(c));
    EXPECT_NE(name, "unknown") << "category " << c;
    names.insert(name);
  }
  EXPECT_EQ(static_cast<int>(names.size()), kNumCategories);
  EXPECT_EQ(std::string(category_name(static_cast<Category>(kNumCategories))), "unknown");
  // Every category is used by some word, and the words the page's token strip names by it
  // have the category a reader expects.
  Grammar g;
  std::set<int> used;
  for (const Word& w : g.vocabulary()) used.insert(static_cast<int>(w.category));
  EXPECT_EQ(static_cast<int>(used.size()), kNumCategories);
  const std::pair<const char*, const char*> expected[] = {
      {"<bos>", "special"}, {"these", "determiner"}, {"bigs", "adjective"}, {"queen", "noun"},
      {"follow", "verb"},   {"behind", "preposition"}, {"that", "relativizer"},
      {"so", "connective"}, {"they", "pronoun"},     {"are", "copula"},
      {"hungry", "state"},  {".", "end"},             {"again", "again"},   {"dawn", "time"},
      {"themselves", "reflexive"}};
  for (const auto& [text, category] : expected) {
    const int id = g.id_of(text);
    ASSERT_GE(id, 0) << text;
    EXPECT_STREQ(category_name(g.vocabulary()[id].category), category) << text;
  }
}

TEST(TrainGrammar, SentencesKeepTheirLinksPromises) {
  Grammar g;
  Rng rng(42);
  const auto& w = g.vocabulary();
  int with_distractor = 0, because = 0, so = 0, induction_links = 0, repeated_later_tokens = 0;
  int the_determiners = 0, the_subjects = 0, same_number_nouns = 0, other_number_nouns = 0;
  int reflexives = 0;
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    Sentence s = g.generate(rng);
    const auto& t = s.tokens;
    ASSERT_LE(static_cast<int>(t.size()), Grammar::kMaxLength);
    ASSERT_EQ(t[0], g.bos_id());
    // main verb agrees with its subject; the other form is the same verb in the other number
    const Word& verb = w[t[s.verb]];
    ASSERT_EQ(verb.category, Category::kVerb);
    ASSERT_EQ(w[s.verb_other_form].lemma, verb.lemma);
    ASSERT_NE(w[s.verb_other_form].number, verb.number);
    const int subject = subject_of(s);
    int antecedent = -1;
    for (const Link& link : s.links) {
      ASSERT_LT(link.key, link.query) << g.to_text(t);
      switch (link.relation) {
        case Relation::kVerbSubject:
          ASSERT_EQ(w[t[link.key]].category, Category::kNoun);
          ASSERT_EQ(w[t[link.key]].number, verb.number) << g.to_text(t);
          break;
        case Relation::kModifierNoun:
          ASSERT_EQ(w[t[link.query]].category, Category::kNoun);
          if (w[t[link.key]].number < 0) {  // the, my, your: either number
            ++the_determiners;
            if (link.query == subject) ++the_subjects;
            break;
          }
          ASSERT_EQ(w[t[link.key]].number, w[t[link.query]].number) << g.to_text(t);
          break;
        case Relation::kPronounAntecedent: {
          antecedent = link.key;
          const Word& pronoun = w[t[link.query]];
          const Word& noun = w[t[link.key]];
          ASSERT_EQ(pronoun.category, Category::kPronoun);
          ASSERT_EQ(pronoun.number, noun.number);
          if (noun.number == 0) ASSERT_EQ(pronoun.cls, noun.cls);
          // no other noun could be the antecedent
          for (int p = 1; p < s.pronoun; ++p) {
            if (p == link.key || w[t[p]].category != Category::kNoun) continue;
            const bool same = w[t[p]].number == noun.number && (noun.number == 1 || w[t[p]].cls == noun.cls);
            ASSERT_FALSE(same) << g.to_text(t);
          }
          const std::string& connective = w[t[link.query - 1]].text;
          (connective == "because" ? because : so)++;
          break;
        }
        case Relation::kInduction:
          // the query's token is the token just before the key: copying continues from there
          ASSERT_EQ(t[link.query], t[link.key - 1]) << g.to_text(t);
          ASSERT_EQ(t[link.query + 1], t[link.key]) << g.to_text(t);
          ++induction_links;
          break;
        case Relation::kPrevious:
          ASSERT_EQ(link.key, link.query - 1);
          break;
      }
    }
    ASSERT_GE(subject, 1);
    // a reflexive object takes the subject's number and class, and ends the sentence: no
    // connective, no pronoun and no pronoun link; after an object noun there is one of each
    const Word& object = w[t[s.verb + 1]];
    if (object.category == Category::kReflexive) {
      ++reflexives;
      ASSERT_EQ(object.number, w[t[subject]].number) << g.to_text(t);
      ASSERT_EQ(object.cls, object.number == 1 ? 3 : w[t[subject]].cls) << g.to_text(t);
      ASSERT_EQ(w[t[s.verb + 2]].text, ".") << g.to_text(t);
      ASSERT_EQ(s.verb + 3, s.repeat_start - 1) << g.to_text(t);
      ASSERT_EQ(s.pronoun, -1);
      ASSERT_EQ(antecedent, -1);
      for (int p = 1; p < s.repeat_start; ++p) {
        ASSERT_NE(w[t[p]].category, Category::kConnective) << g.to_text(t);
        ASSERT_NE(w[t[p]].category, Category::kPronoun) << g.to_text(t);
      }
    } else {
      ASSERT_EQ(object.category, Category::kDeterminer) << g.to_text(t);
      ASSERT_GE(antecedent, 1) << g.to_text(t);
      const int object_noun = s.verb + (w[t[s.verb + 2]].category == Category::kAdjective ? 3 : 2);
      ASSERT_EQ(antecedent, w[t[s.pronoun - 1]].text == "because" ? subject : object_noun) << g.to_text(t);
    }
    for (int p = 1; p < s.repeat_start; ++p)  // (the repeat may copy it)
      if (p != s.verb + 1) ASSERT_NE(w[t[p]].category, Category::kReflexive) << g.to_text(t);
    // nouns between subject and verb: distractors of the other number, and (a share of
    // Grammar::kSameNumberShare) nouns of the subject's number
    bool distractor = false;
    for (int p = subject + 1; p < s.verb; ++p) {
      if (w[t[p]].category != Category::kNoun) continue;
      if (w[t[p]].number != verb.number) {
        distractor = true;
        ++other_number_nouns;
      } else {
        ++same_number_nouns;
      }
    }
    with_distractor += distractor;
    // the repeat: 2..6 tokens after "again", a copy of a span whose first token occurs once
    ASSERT_GE(s.repeat_length, 2);
    ASSERT_LE(s.repeat_length, 6);
    ASSERT_EQ(w[t[s.repeat_start - 1]].text, "again");
    for (int k = 0; k < s.repeat_length; ++k) ASSERT_EQ(t[s.repeat_start + k], t[s.source_start + k]);
    int count = 0;
    for (int p = 1; p < s.repeat_start - 1; ++p) count += t[p] == t[s.source_start];
    ASSERT_EQ(count, 1) << g.to_text(t);
    for (int k = 1; k < s.repeat_length; ++k) {
      int c = 0;
      for (int p = 1; p < s.repeat_start - 1; ++p) c += t[p] == t[s.source_start + k];
      repeated_later_tokens += c > 1;
    }
  }
  std::printf("%d sentences: %d with distractors before the verb, %d because / %d so, %d induction links, "
              "%d repeat tokens that also occur elsewhere, %d subjects after the / my / your (%d in all)\n",
              n, with_distractor, because, so, induction_links, repeated_later_tokens, the_subjects, the_determiners);
  // About half the subjects start with the, my or your: their number is in the noun (and
  // adjective) only.
  EXPECT_GT(the_subjects, n / 3);
  EXPECT_LT(the_subjects, 2 * n / 3);
  EXPECT_GT(repeated_later_tokens, 0);
  std::printf("nouns between subject and verb: %d of the other number, %d of the subject's\n",
              other_number_nouns, same_number_nouns);
  const double share = static_cast<double>(same_number_nouns) / (same_number_nouns + other_number_nouns);
  // Below the drawn share: a sentence whose modifier noun has the subject's number and class is
  // dropped when the pronoun refers to the subject (two nouns could be its antecedent).
  EXPECT_GT(share, Grammar::kSameNumberShare - 0.1);
  EXPECT_LT(share, Grammar::kSameNumberShare);
  EXPECT_GT(with_distractor, Grammar::kSameNumberShare > 0 ? n / 3 : n / 2);
  // "because" and "so" are drawn evenly; "because" is dropped more often (a modifier noun of
  // the subject's number and class makes its antecedent ambiguous)
  EXPECT_EQ(because + so, n - reflexives);
  EXPECT_GT(because, (n - reflexives) / 3);
  EXPECT_GT(so, (n - reflexives) / 3);
  std::printf("reflexive objects: %d of %d\n", reflexives, n);
  EXPECT_GT(reflexives, n / 4);
  EXPECT_LT(reflexives, n / 2);
  Rng example(1);
  std::printf("example: %s\n", g.to_text(g.generate(example).tokens).c_str());
}

TEST(TrainGrammar, SameNumberShareZeroMakesEveryModifierNounADistractor) {
  Grammar g(2, 0.0);
  Rng rng(42);
  const auto& w = g.vocabulary();
  for (int i = 0; i < 1000; ++i) {
    Sentence s = g.generate(rng);
    const auto& t = s.tokens;
    const int subject = subject_of(s);
    ASSERT_GE(subject, 1);
    for (int p = subject + 1; p < s.verb; ++p)
      if (w[t[p]].category == Category::kNoun) ASSERT_NE(w[t[p]].number, w[t[s.verb]].number) << g.to_text(t);
  }
}

TEST(TrainGrammar, SameNumberShareSetsTheShareOfModifierNounsOfTheSubjectsNumber) {
  for (double share : {0.33, 0.5}) {
    Grammar g(2, share);
    Rng rng(42);
    const auto& w = g.vocabulary();
    int same = 0, other = 0;
    for (int i = 0; i < 2000; ++i) {
      Sentence s = g.generate(rng);
      const auto& t = s.tokens;
      const int subject = subject_of(s);
      ASSERT_GE(subject, 1);
      ASSERT_EQ(w[t[subject]].number, w[t[s.verb]].number) << g.to_text(t);
      for (int p = subject + 1; p < s.verb; ++p)
        if (w[t[p]].category == Category::kNoun) (w[t[p]].number == w[t[s.verb]].number ? same : other)++;
    }
    // sentences whose pronoun would have two candidate antecedents are dropped, and a noun of
    // the subject's number makes that likelier: the kept share is a little below the drawn one
    const double kept = static_cast<double>(same) / (same + other);
    EXPECT_GT(kept, share - 0.1) << share;
    EXPECT_LE(kept, share + 0.02) << share;
  }
}

// LEAD: a share of the sentences opens with "today", "now", "later" or "at" and a time, so
// that the subject starts at position 1, 2 or 3; at a share of 0, never.
TEST(TrainGrammar, LeadShareSetsHowOftenTheSubjectIsMoved) {
  for (double share : {Grammar::kLeadShare, 0.0}) {
    Grammar g(2, Grammar::kSameNumberShare, share);
    Rng rng(42);
    const auto& w = g.vocabulary();
    const int n = 3000;
    int starts[4] = {0, 0, 0, 0};
    std::set<std::string> lead_words;
    for (int i = 0; i < n; ++i) {
      Sentence s = g.generate(rng);
      const auto& t = s.tokens;
      int lead = 0;
      while (w[t[1 + lead]].category == Category::kTime) lead_words.insert(w[t[1 + lead++]].text);
      ASSERT_LE(lead, 2) << g.to_text(t);
      if (lead == 2) ASSERT_EQ(w[t[1]].text, "at") << g.to_text(t);
      if (lead == 1) ASSERT_NE(w[t[1]].text, "at") << g.to_text(t);
      // nowhere else before "again" (the repeat may copy it)
      for (int p = 1 + lead; p < s.repeat_start - 1; ++p) ASSERT_NE(w[t[p]].category, Category::kTime) << g.to_text(t);
      // the subject's noun phrase starts right after the lead
      ASSERT_EQ(w[t[1 + lead]].category, Category::kDeterminer) << g.to_text(t);
      const int subject = subject_of(s);
      ASSERT_TRUE(subject == 2 + lead || subject == 3 + lead) << g.to_text(t);
      ++starts[1 + lead];
    }
    std::printf("lead share %.2f: subject's determiner at position 1: %d, 2: %d, 3: %d of %d\n", share, starts[1],
                starts[2], starts[3], n);
    if (share == 0) {
      EXPECT_EQ(starts[1], n);
      EXPECT_TRUE(lead_words.empty());
    } else {
      // sentences too long for a repeat are redrawn, and a lead makes a sentence longer: the
      // kept share of leads is a little below the drawn one
      EXPECT_NEAR(static_cast<double>(n - starts[1]) / n, share, 0.05);
      EXPECT_NEAR(static_cast<double>(starts[2]) / (starts[2] + starts[3]), 0.5, 0.05);
      EXPECT_EQ(lead_words.size(), 7u);
    }
  }
}

TEST(TrainGrammar, ReflexiveShareZeroDrawsNoReflexive) {
  Grammar g(2, Grammar::kSameNumberShare, Grammar::kLeadShare, 0.0);
  Rng rng(11);
  int because = 0;
  const int n = 3000;
  for (int i = 0; i < n; ++i) {
    Sentence s = g.generate(rng);
    for (int token : s.tokens) ASSERT_NE(g.vocabulary()[token].category, Category::kReflexive);
    ASSERT_EQ(g.vocabulary()[s.tokens[s.verb + 1]].category, Category::kDeterminer);
    because += g.vocabulary()[s.tokens[s.pronoun - 1]].text == "because";
  }
  std::printf("without reflexives, \"because\": %d of %d\n", because, n);
  EXPECT_GT(because, n / 3);
  EXPECT_LT(because, 2 * n / 3);
}

// The sentence of each seed 0-99 (what the page's examples and the train view draw), as the
// committed list has them. The list is the grammar's fixed point across compilers: g++ and
// clang once drew the same seed's object noun phrase in different orders (two draws as one
// call's arguments), so the page and `npm run train` saw different sentences.
// MHA_WRITE_SENTENCES=1 rewrites the list after a deliberate change to the grammar.
TEST(TrainGrammar, SentencesMatchTheCommittedList) {
  const std::string path = std::string(MHA_SOURCE_DIR) + "/tests/golden/train/sentences.txt";
  Grammar g;
  std::vector<std::string> drawn;
  for (int seed = 0; seed < 100; ++seed) {
    Rng rng(static_cast<uint64_t>(seed));
    drawn.push_back(std::to_string(seed) + "\t" + g.to_text(g.generate(rng).tokens));
  }
  const char* write = std::getenv("MHA_WRITE_SENTENCES");
  if (write && std::string(write) == "1") {
    std::ofstream out(path);
    out << "# seed<TAB>sentence: Grammar().generate(Rng(seed)) for seeds 0-99 (tests/cpp/train_grammar_test.cpp,\n"
           "# tests/js/train-sentences.test.js). Rewrite with MHA_WRITE_SENTENCES=1 after changing the grammar.\n";
    for (const std::string& line : drawn) out << line << "\n";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "cannot open " << path;
  std::vector<std::string> listed;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') listed.push_back(line);
  ASSERT_EQ(listed.size(), drawn.size()) << path;
  for (size_t i = 0; i < drawn.size(); ++i) EXPECT_EQ(drawn[i], listed[i]) << "seed " << i;
}

TEST(TrainGrammar, GenerationIsDeterministicFromTheSeed) {
  Grammar g;
  Rng a(7), b(7), c(8);
  std::set<std::string> differ;
  for (int i = 0; i < 50; ++i) {
    Sentence x = g.generate(a), y = g.generate(b), z = g.generate(c);
    EXPECT_EQ(x.tokens, y.tokens);
    if (x.tokens != z.tokens) differ.insert(g.to_text(z.tokens));
  }
  EXPECT_GT(differ.size(), 40u);
}

TEST(TrainGrammar, ParseAcceptsTheVocabularyAndNamesUnknownWords) {
  Grammar g;
  Sentence s;
  ASSERT_TRUE(g.parse("These old dogs like a cat because they are hungry.", &s).ok());
  EXPECT_EQ(g.to_text(s.tokens), "these old dogs like a cat because they are hungry.");
  ASSERT_TRUE(g.parse("the dogs like my cat.", &s).ok());  // the, my, your: either number
  ASSERT_TRUE(g.parse("at noon the dogs like my cat.", &s).ok());
  Status bad = g.parse("some dogs like a cat", &s);
  EXPECT_FALSE(bad.ok());
  std::printf("error: %s\n", bad.message().c_str());
  EXPECT_NE(bad.message().find("\"some\""), std::string::npos);
}

TEST(TrainGrammar, HeldOutSentencesAreFixedAndDistinct) {
  Grammar g;
  std::vector<Sentence> a = held_out_sentences(g, 300), b = held_out_sentences(g, 300);
  std::set<std::vector<int>> unique;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens);
    unique.insert(a[i].tokens);
  }
  EXPECT_EQ(unique.size(), a.size());
}

TEST(TrainOptimizer, EachTensorDecaysAtItsOwnRate) {
  // With zero gradients an AdamW step is its weight decay alone: every element times
  // 1 - lr * (its tensor's rate). Embeddings at embedding_weight_decay, the other matrices at
  // weight_decay, biases and layer norms not at all.
  ModelConfig config;
  config.vocab_size = Grammar().vocab_size();
  TrainConfig train;
  train.weight_decay = 0.01;
  train.embedding_weight_decay = 0.3;
  const std::vector<ParameterSpec> specs = optimizer_specs(config, train);
  const size_t total = specs.back().offset + specs.back().size;
  std::vector<float> params(total, 1.0f), grads(total, 0.0f);
  AdamW<float> optimizer(specs, AdamWConfig{0.9, 0.95, 1e-8, train.weight_decay});
  const double lr = 0.1;
  optimizer.update(params, grads, lr);
  int checked = 0;
  for (const ParameterSpec& spec : specs) {
    const bool embedding = spec.name == "wte.weight" || spec.name == "wpe.weight";
    const double rate = !spec.decay ? 0 : embedding ? 0.3 : 0.01;
    for (size_t i = spec.offset; i < spec.offset + spec.size; ++i)
      ASSERT_FLOAT_EQ(params[i], static_cast<float>(1 - lr * rate)) << spec.name << " element " << i - spec.offset;
    checked += embedding;
  }
  EXPECT_EQ(checked, 2) << "wte and wpe";
}

TEST(TrainInit, SplitChannelsKeepTokensAndPositionsApart) {
  // The trainer's default start: tokens in channels C/2.., positions (evenly spaced sinusoids)
  // in channels ..C/2, at the same norm; every position distinct.
  ModelConfig config;
  Grammar g;
  config.vocab_size = g.vocab_size();
  Model<float> model(config);
  model.initialize(5, TrainConfig().init);
  const int C = config.d_model;
  const float* wte = model.parameters().data() + model.specs()[0].offset;
  const float* wpe = model.parameters().data() + model.specs()[1].offset;
  double token_in_position_half = 0, position_in_token_half = 0, token_norm = 0, position_norm = 0;
  for (int v = 0; v < config.vocab_size; ++v)
    for (int i = 0; i < C; ++i) {
      const double x = wte[v * C + i];
      (i < C / 2 ? token_in_position_half : token_norm) += x * x;
    }
  for (int t = 0; t < config.context; ++t)
    for (int i = 0; i < C; ++i) {
      const double x = wpe[t * C + i];
      (i < C / 2 ? position_norm : position_in_token_half) += x * x;
    }
  token_norm = std::sqrt(token_norm / config.vocab_size);
  position_norm = std::sqrt(position_norm / config.context);
  double closest = 1e9;  // smallest distance between two positions
  for (int a = 0; a < config.context; ++a)
    for (int b = a + 1; b < config.context; ++b) {
      double d = 0;
      for (int i = 0; i < C; ++i) d += (wpe[a * C + i] - wpe[b * C + i]) * (wpe[a * C + i] - wpe[b * C + i]);
      closest = std::min(closest, std::sqrt(d));
    }
  std::printf("token norm %.3f, position norm %.3f (sqrt(C) = %.3f); closest two positions %.3f apart\n", token_norm,
              position_norm, std::sqrt(static_cast<double>(C)), closest);
  EXPECT_EQ(token_in_position_half, 0.0);
  EXPECT_EQ(position_in_token_half, 0.0);
  EXPECT_NEAR(position_norm, std::sqrt(static_cast<double>(C)), 1e-4);
  EXPECT_NEAR(token_norm, std::sqrt(static_cast<double>(C)), 0.15 * std::sqrt(static_cast<double>(C)));
  EXPECT_GT(closest, 1.0);
}

TEST(TrainWeights, Float16RoundTripsAndRoundsToNearestEven) {
  const float cases[] = {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f, 0.1f, -0.333333f};
  for (float v : cases) {
    const float back = half_to_float(float_to_half(v));
    EXPECT_LE(std::abs(back - v), std::abs(v) * 1e-3f + 3e-8f) << v;
  }
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);            // past the largest half: infinity
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3C00);  // halfway: to even
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3C02);
  for (uint32_t h = 0; h < 0x7C00; ++h) EXPECT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h);
}

TEST(TrainWeights, FileRoundTripsAndRejectsBadInput) {
  ModelConfig config;
  config.vocab_size = 12;
  config.context = 8;
  config.d_model = 16;
  config.num_heads = 4;
  config.num_layers = 2;
  Model<float> model(config);
  model.initialize(3);
  std::vector<uint8_t> bytes = encode_weights(model, 3, 100);
  ModelConfig read;
  std::vector<float> params;
  ASSERT_TRUE(decode_weights(bytes.data(), bytes.size(), &read, &params).ok());
  EXPECT_EQ(read.d_model, 16);
  EXPECT_EQ(read.num_heads, 4);
  ASSERT_EQ(params.size(), model.parameters().size());
  std::vector<float> rounded = model.parameters();
  round_to_half(rounded);
  EXPECT_EQ(params, rounded);
  Status truncated = decode_weights(bytes.data(), bytes.size() - 2, &read, &params);
  EXPECT_FALSE(truncated.ok());
  std::printf("truncated: %s\n", truncated.message().c_str());
  bytes[0] = 'X';
  EXPECT_FALSE(decode_weights(bytes.data(), bytes.size(), &read, &params).ok());
}

}  // namespace
}  // namespace mha::train
