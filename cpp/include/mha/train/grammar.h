// The training language: a small grammar whose structure is known, so that every attention
// head of a trained model can be scored against it. Written once, here; the trainer, the tests
// and the page (through the WebAssembly build) all read sentences from this generator.
//
//   sentence := <bos> LEAD? NP_subj MOD* VERB (NP_obj CONN PRON COPULA STATE | REFL) "."
//               "again" REPEAT "."
//   LEAD     := "today" | "now" | "later" | "at" ("noon" | "night" | "dawn")
//                                        (in a share lead_share of the sentences, 2/3 by
//                                         default, half of them one word, half two: the
//                                         subject starts at position 1, 2 or 3)
//   NP       := DET ADJ? NOUN            (DET and ADJ agree in number with NOUN; half the
//                                         determiners are the, my or your: either number)
//   MOD      := PREP NP_d                (a prepositional phrase)
//             | "that" VERB NP_d         (a subject relative clause; VERB agrees with NP_subj)
//             | "that" NP_d VERB         (an object relative clause; VERB agrees with NP_d)
//   where each NP_d has the other number than the subject (a distractor) or, with a share of
//   same_number_share (0.33 by default), the subject's number. Distractors make the main verb's
//   agreement long-range; nouns of the subject's number between them mean that the nearest
//   noun before the verb does not tell its number (with distractors only, the verb's number
//   is the other one than the nearest noun's), so agreement needs the subject itself.
//   REFL     := "himself" | "herself" | "itself" | "themselves"
//                                        (in a share reflexive_share of the draws, a quarter by
//                                         default: by the subject's class, or themselves in the
//                                         plural; the sentence then ends after it)
//   CONN "because" makes PRON refer to the subject, "so" to the object; PRON is he / she /
//   it (singular, by the noun's class) or they (plural), and the generator only keeps
//   sentences where exactly one noun could be its antecedent. COPULA agrees with PRON
//   (is / are). REPEAT is a copy of a 2-6 token span of the sentence before "again" whose
//   first token occurs once in that part: what to copy is then defined, and since the later
//   tokens of the span may occur more than once, copying them needs the token before each (an
//   induction head), not only a guess of which word fits.
//
// The reflexive gives the main verb a reason to look at the subject noun itself: what may follow
// the verb depends on the subject's number and class, and only the noun carries its class
// (without it, agreement was often shared out over two or three layer-1 heads, each partly on
// the subject: docs/training.md has the figures). A second clause after a
// reflexive would let the pronoun be read off the reflexive, which carries the subject's class
// and number, instead of off its antecedent: pronoun heads then shared their weight between the
// two. There is none: sentences with a reflexive have no pronoun link, and "because" and "so"
// are drawn evenly in the others.
//
// The lead moves the subject: always at positions 1-3, the subject can be found by position,
// and heads that did so spread their weight over its determiner, adjective and noun. Moved,
// it must be found by what it is (docs/training.md has the measured effect).
//
// Adjectives take -s in the plural (big / bigs), as Romance adjectives do, so that they agree
// with their noun visibly. "the", "my" and "your", as in English, take either number: without
// them the subject's determiner, the first one of the sentence, would carry its number, and
// agreement could be learned by looking at it instead of at the subject noun. Three of them, not
// one, so that no determiner is so frequent that a repeated span is often ambiguous.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mha/status.h"

namespace mha::train {

// A small deterministic generator (splitmix64), identical in native code and WebAssembly.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64();
  double uniform();               // [0, 1)
  int below(int n);               // 0 .. n-1
  double normal();                // standard normal (Box-Muller)
  bool chance(double p) { return uniform() < p; }

 private:
  uint64_t state_;
};

enum class Relation : int {
  kPrevious = 0,           // every token -> the token before it
  kVerbSubject = 1,        // main verb -> head noun of its subject
  kPronounAntecedent = 2,  // pronoun -> its antecedent noun
  kModifierNoun = 3,       // noun -> its determiner, noun -> its adjective
  kInduction = 4,          // token of the repeat -> the token after its first occurrence
};
constexpr int kNumRelations = 5;
const char* relation_name(Relation relation);

// A ground-truth attention link: from query position `query` to key position `key`.
struct Link {
  Relation relation;
  int query;
  int key;
};

enum class Category : int {
  kSpecial, kDeterminer, kAdjective, kNoun, kVerb, kPreposition, kRelativizer, kConnective,
  kPronoun, kCopula, kState, kEnd, kAgain, kTime, kReflexive
};
constexpr int kNumCategories = 15;
// "special", "determiner", "adjective", "noun", "verb", "preposition", "relativizer",
// "connective", "pronoun", "copula", "state", "end", "again", "time", "reflexive".
const char* category_name(Category category);

struct Word {
  std::string text;
  Category category;
  int number;   // 0 singular, 1 plural, -1 none
  int cls;      // nouns: 0 he, 1 she, 2 it; pronouns: 0 he, 1 she, 2 it, 3 they; else -1
  int lemma;    // words that differ only by number share a lemma index within the category
};

struct Sentence {
  std::vector<int> tokens;  // token ids, tokens[0] = <bos>
  std::vector<Link> links;
  int verb = -1;            // position of the main verb
  int verb_other_form = -1; // the main verb's token id in the other number
  int pronoun = -1;         // position of the pronoun (-1: none, after a reflexive object)
  int repeat_start = -1;    // position of the first token after "again"
  int repeat_length = 0;
  int source_start = -1;    // position of the span's first occurrence
};

class Grammar {
 public:
  // min_repeat_length (2 .. 6): the repeat's shortest length; its length is drawn evenly from
  // min_repeat_length .. 6 (fewer where the sentence leaves less room).
  // same_number_share (0 .. 1): the share of the modifiers' nouns (NP_d) that take the subject's
  // number instead of the other one; 0 makes every one a distractor of the other number.
  // lead_share (0 .. 1): the share of sentences that open with a LEAD; 0 draws nothing for it
  // (the sentences of a grammar without one).
  // reflexive_share (0 .. 0.5): the share of sentences whose object is a reflexive; 0 draws
  // nothing for it.
  explicit Grammar(int min_repeat_length = 2, double same_number_share = kSameNumberShare,
                   double lead_share = kLeadShare, double reflexive_share = kReflexiveShare);

  const std::vector<Word>& vocabulary() const { return words_; }
  int vocab_size() const { return static_cast<int>(words_.size()); }
  int pad_id() const { return 0; }
  int bos_id() const { return 1; }
  int max_length() const { return kMaxLength; }
  int id_of(const std::string& text) const;  // -1 if not a word of the language

  // A random sentence of at most max_length() tokens, with its links.
  Sentence generate(Rng& rng) const;

  // Words separated by spaces ("." may touch the word before it), without <bos>; the result
  // starts with <bos>. Links: only `previous`, since free text has no known structure.
  Status parse(const std::string& text, Sentence* out) const;
  std::string to_text(const std::vector<int>& tokens) const;

  static constexpr int kMaxLength = 32;
  static constexpr double kSameNumberShare = 0.33;  // the default same_number_share
  static constexpr double kLeadShare = 2.0 / 3;      // the default lead_share
  static constexpr double kReflexiveShare = 0.25;  // the default reflexive_share

 private:
  std::vector<int> words_of(Category category, int number) const;
  int pick(Rng& rng, Category category, int number) const;
  int noun(Rng& rng, int number, int cls) const;
  bool try_generate(Rng& rng, Sentence* out) const;

  std::vector<Word> words_;
  int min_repeat_length_ = 2;
  double same_number_share_ = 0.0;
  double lead_share_ = 0.0;
  double reflexive_share_ = 0.0;
};

}  // namespace mha::train
