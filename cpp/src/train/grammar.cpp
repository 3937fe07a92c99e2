#include "mha/train/grammar.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace mha::train {

uint64_t Rng::next_u64() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }

int Rng::below(int n) { return static_cast<int>(uniform() * n); }

double Rng::normal() {
  double u1 = uniform();
  double u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

const char* relation_name(Relation relation) {
  switch (relation) {
    case Relation::kPrevious: return "previous";
    case Relation::kVerbSubject: return "verbSubject";
    case Relation::kPronounAntecedent: return "pronounAntecedent";
    case Relation::kModifierNoun: return "nounModifier";
    case Relation::kInduction: return "induction";
  }
  return "unknown";
}

const char* category_name(Category category) {
  switch (category) {
    case Category::kSpecial: return "special";
    case Category::kDeterminer: return "determiner";
    case Category::kAdjective: return "adjective";
    case Category::kNoun: return "noun";
    case Category::kVerb: return "verb";
    case Category::kPreposition: return "preposition";
    case Category::kRelativizer: return "relativizer";
    case Category::kConnective: return "connective";
    case Category::kPronoun: return "pronoun";
    case Category::kCopula: return "copula";
    case Category::kState: return "state";
    case Category::kEnd: return "end";
    case Category::kAgain: return "again";
    case Category::kTime: return "time";
    case Category::kReflexive: return "reflexive";
  }
  return "unknown";
}

namespace {

constexpr int kHe = 0, kShe = 1, kIt = 2, kThey = 3;

}  // namespace

Grammar::Grammar(int min_repeat_length, double same_number_share, double lead_share,
                 double reflexive_share)
    : min_repeat_length_(std::max(2, std::min(6, min_repeat_length))),
      same_number_share_(std::max(0.0, std::min(1.0, same_number_share))),
      lead_share_(std::max(0.0, std::min(1.0, lead_share))),
      reflexive_share_(std::max(0.0, std::min(0.5, reflexive_share))) {
  auto add = [this](const char* text, Category category, int number, int cls, int lemma) {
    words_.push_back(Word{text, category, number, cls, lemma});
  };
  add("<pad>", Category::kSpecial, -1, -1, -1);
  add("<bos>", Category::kSpecial, -1, -1, -1);
  add(".", Category::kEnd, -1, -1, -1);
  add("again", Category::kAgain, -1, -1, -1);
  const char* determiners[2][3] = {{"a", "this", "each"}, {"these", "those", "many"}};
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i) add(determiners[n][i], Category::kDeterminer, n, -1, i);
  const char* either_number[3] = {"the", "my", "your"};  // determiners of either number
  for (int i = 0; i < 3; ++i) add(either_number[i], Category::kDeterminer, -1, -1, 3 + i);
  const char* adjectives[2][4] = {{"big", "old", "red", "small"}, {"bigs", "olds", "reds", "smalls"}};
  for (int i = 0; i < 4; ++i)
    for (int n = 0; n < 2; ++n) add(adjectives[n][i], Category::kAdjective, n, -1, i);
  const char* nouns[3][3][2] = {{{"man", "men"}, {"boy", "boys"}, {"king", "kings"}},
                                {{"woman", "women"}, {"girl", "girls"}, {"queen", "queens"}},
                                {{"dog", "dogs"}, {"cat", "cats"}, {"box", "boxes"}}};
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 3; ++i)
      for (int n = 0; n < 2; ++n) add(nouns[c][i][n], Category::kNoun, n, c, c * 3 + i);
  const char* verbs[4][2] = {{"sees", "see"}, {"likes", "like"}, {"helps", "help"}, {"follows", "follow"}};
  for (int i = 0; i < 4; ++i)
    for (int n = 0; n < 2; ++n) add(verbs[i][n], Category::kVerb, n, -1, i);
  const char* prepositions[3] = {"near", "with", "behind"};
  for (int i = 0; i < 3; ++i) add(prepositions[i], Category::kPreposition, -1, -1, i);
  add("that", Category::kRelativizer, -1, -1, -1);
  add("because", Category::kConnective, -1, -1, 0);
  add("so", Category::kConnective, -1, -1, 1);
  add("he", Category::kPronoun, 0, kHe, -1);
  add("she", Category::kPronoun, 0, kShe, -1);
  add("it", Category::kPronoun, 0, kIt, -1);
  add("they", Category::kPronoun, 1, kThey, -1);
  add("is", Category::kCopula, 0, -1, 0);
  add("are", Category::kCopula, 1, -1, 0);
  const char* states[4] = {"tired", "hungry", "happy", "late"};
  for (int i = 0; i < 4; ++i) add(states[i], Category::kState, -1, -1, i);
  // The lead's words, last so that the ids before them are those of a grammar without one.
  const char* times[7] = {"today", "now", "later", "at", "noon", "night", "dawn"};
  for (int i = 0; i < 7; ++i) add(times[i], Category::kTime, -1, -1, i);
  // The reflexives, after them: he / she / it class in the singular, then the plural.
  const char* reflexives[4] = {"himself", "herself", "itself", "themselves"};
  for (int i = 0; i < 4; ++i) add(reflexives[i], Category::kReflexive, i == 3 ? 1 : 0, i, -1);
}

int Grammar::id_of(const std::string& text) const {
  for (size_t i = 0; i < words_.size(); ++i)
    if (words_[i].text == text) return static_cast<int>(i);
  return -1;
}

std::vector<int> Grammar::words_of(Category category, int number) const {
  std::vector<int> ids;
  for (size_t i = 0; i < words_.size(); ++i)
    if (words_[i].category == category && (number < 0 || words_[i].number == number))
      ids.push_back(static_cast<int>(i));
  return ids;
}

int Grammar::pick(Rng& rng, Category category, int number) const {
  std::vector<int> ids = words_of(category, number);
  return ids[rng.below(static_cast<int>(ids.size()))];
}

int Grammar::noun(Rng& rng, int number, int cls) const {
  std::vector<int> ids;
  for (int id : words_of(Category::kNoun, number))
    if (words_[id].cls == cls) ids.push_back(id);
  return ids[rng.below(static_cast<int>(ids.size()))];
}

namespace {

struct NounPhrase {
  int noun_position;
  int number;
  int cls;
};

}  // namespace

bool Grammar::try_generate(Rng& rng, Sentence* out) const {
  Sentence s;
  std::vector<int>& t = s.tokens;
  std::vector<NounPhrase> nouns;
  t.push_back(bos_id());

  // NP := DET ADJ? NOUN, with the modifier -> noun links.
  const int either_number[3] = {id_of("the"), id_of("my"), id_of("your")};
  auto noun_phrase = [&](int number, int cls) {
    int det = static_cast<int>(t.size());
    t.push_back(rng.chance(0.5) ? either_number[rng.below(3)] : pick(rng, Category::kDeterminer, number));
    int adj = -1;
    if (rng.chance(0.5)) {
      adj = static_cast<int>(t.size());
      t.push_back(pick(rng, Category::kAdjective, number));
    }
    int n = static_cast<int>(t.size());
    t.push_back(noun(rng, number, cls));
    s.links.push_back({Relation::kModifierNoun, n, det});
    if (adj >= 0) s.links.push_back({Relation::kModifierNoun, n, adj});
    nouns.push_back({n, number, cls});
    return nouns.back();
  };

  // LEAD: one word or "at" and a time, so that the subject does not always start at position 1.
  // No draw when the share is 0 (the sentences of a grammar without a lead).
  if (lead_share_ > 0 && rng.chance(lead_share_)) {
    if (rng.chance(0.5)) {
      t.push_back(id_of("today") + rng.below(3));  // today, now, later
    } else {
      t.push_back(id_of("at"));
      t.push_back(id_of("noon") + rng.below(3));  // noon, night, dawn
    }
  }

  const int subject_number = rng.below(2);
  const int other_number = 1 - subject_number;
  NounPhrase subject = noun_phrase(subject_number, rng.below(3));

  double r = rng.uniform();
  int modifiers = r < 0.2 ? 0 : (r < 0.75 ? 1 : 2);
  for (int m = 0; m < modifiers; ++m) {
    const int kind = rng.below(3);
    // The modifier's noun: of the other number (a distractor), or with a share of
    // same_number_share_ of the subject's number, so that the nearest noun before the verb
    // does not predict the verb's number. No draw when the share is 0 (the same sentences).
    const int number =
        same_number_share_ > 0 && rng.chance(same_number_share_) ? subject_number : other_number;
    switch (kind) {
      case 0:  // prepositional phrase
        t.push_back(pick(rng, Category::kPreposition, -1));
        noun_phrase(number, rng.below(3));
        break;
      case 1:  // subject relative clause: "that likes these dogs"
        t.push_back(id_of("that"));
        t.push_back(pick(rng, Category::kVerb, subject_number));
        noun_phrase(number, rng.below(3));
        break;
      default:  // object relative clause: "that these dogs like"
        t.push_back(id_of("that"));
        noun_phrase(number, rng.below(3));
        t.push_back(pick(rng, Category::kVerb, number));
        break;
    }
  }

  s.verb = static_cast<int>(t.size());
  int verb = pick(rng, Category::kVerb, subject_number);
  t.push_back(verb);
  for (size_t i = 0; i < words_.size(); ++i)
    if (words_[i].category == Category::kVerb && words_[i].lemma == words_[verb].lemma &&
        words_[i].number != subject_number)
      s.verb_other_form = static_cast<int>(i);
  s.links.push_back({Relation::kVerbSubject, s.verb, subject.noun_position});

  // The object: a noun phrase or, in a share reflexive_share_ of the sentences, a reflexive that
  // takes the subject's number and class ("himself" ...). No draw when the share is 0.
  const bool reflexive = reflexive_share_ > 0 && rng.chance(reflexive_share_);
  NounPhrase object{-1, -1, -1};
  if (reflexive) {
    t.push_back(id_of("himself") + (subject_number == 1 ? kThey : subject.cls));
  } else {
    // One draw a statement: the order in which a call's arguments are evaluated is unspecified
    // (g++ and clang differ), and the sentences must be the same in every build.
    const int cls = rng.below(3);
    const int number = rng.below(2);
    object = noun_phrase(number, cls);
  }

  // The second clause follows an object noun only. A reflexive carries the subject's class and
  // number, so after one the pronoun could be read off the reflexive instead of off its
  // antecedent, and the heads that find the antecedent shared their weight with it: the sentence
  // ends there instead.
  if (reflexive) {
    t.push_back(id_of("."));
  } else {
    const bool because = rng.chance(0.5);
    t.push_back(id_of(because ? "because" : "so"));
    const NounPhrase antecedent = because ? subject : object;
    // The antecedent must be the only noun the pronoun could refer to.
    int candidates = 0;
    for (const NounPhrase& n : nouns)
      if (n.number == antecedent.number && (n.number == 1 || n.cls == antecedent.cls)) ++candidates;
    if (candidates != 1) return false;
    s.pronoun = static_cast<int>(t.size());
    t.push_back(id_of(antecedent.number == 1 ? "they" : words_[id_of("he") + antecedent.cls].text));
    s.links.push_back({Relation::kPronounAntecedent, s.pronoun, antecedent.noun_position});
    t.push_back(id_of(antecedent.number == 1 ? "are" : "is"));
    t.push_back(pick(rng, Category::kState, -1));
    t.push_back(id_of("."));
  }

  // The repeat: a span whose first token occurs once before "again" (so what to copy is
  // defined from its first token on); the tokens after it may occur elsewhere too, so that
  // copying needs the token before each one (an induction head), not only which words fit.
  const int first_end = static_cast<int>(t.size());  // positions 1 .. first_end - 1
  const int max_length = std::min(6, kMaxLength - first_end - 2);
  if (max_length < 2) return false;
  const int shortest = std::min(min_repeat_length_, max_length);
  const int length = shortest + rng.below(max_length - shortest + 1);
  std::vector<int> counts(words_.size(), 0);
  for (int i = 1; i < first_end; ++i) ++counts[t[i]];
  std::vector<int> starts;
  for (int start = 1; start + length <= first_end; ++start) {
    if (counts[t[start]] == 1) starts.push_back(start);
  }
  if (starts.empty()) return false;
  const int source = starts[rng.below(static_cast<int>(starts.size()))];
  t.push_back(id_of("again"));
  s.repeat_start = static_cast<int>(t.size());
  s.repeat_length = length;
  s.source_start = source;
  for (int k = 0; k < length; ++k) t.push_back(t[source + k]);
  for (int k = 0; k + 1 < length; ++k)
    s.links.push_back({Relation::kInduction, s.repeat_start + k, source + k + 1});
  t.push_back(id_of("."));

  for (int i = 1; i < static_cast<int>(t.size()); ++i)
    s.links.push_back({Relation::kPrevious, i, i - 1});
  *out = std::move(s);
  return true;
}

Sentence Grammar::generate(Rng& rng) const {
  Sentence s;
  while (!try_generate(rng, &s)) {
  }
  return s;
}

Status Grammar::parse(const std::string& text, Sentence* out) const {
  std::string spaced;
  for (char c : text) {
    if (c == '.') {
      spaced += " . ";
    } else {
      spaced += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  Sentence s;
  s.tokens.push_back(bos_id());
  std::istringstream in(spaced);
  std::string word;
  while (in >> word) {
    int id = id_of(word);
    if (id < 0 || id == pad_id() || id == bos_id())
      return Status(StatusCode::kInvalidArgument,
                    "unknown word \"" + word + "\": expected a word of the training language");
    s.tokens.push_back(id);
  }
  if (s.tokens.size() < 2)
    return Status(StatusCode::kInvalidArgument, "empty sentence: expected at least one word");
  if (static_cast<int>(s.tokens.size()) > kMaxLength)
    return Status(StatusCode::kInvalidArgument,
                  "sentence too long: expected at most " + std::to_string(kMaxLength - 1) +
                      " words, got " + std::to_string(s.tokens.size() - 1));
  for (int i = 1; i < static_cast<int>(s.tokens.size()); ++i)
    s.links.push_back({Relation::kPrevious, i, i - 1});
  *out = std::move(s);
  return Status::Ok();
}

std::string Grammar::to_text(const std::vector<int>& tokens) const {
  std::string text;
  for (int id : tokens) {
    if (id == pad_id() || id == bos_id()) continue;
    if (!text.empty() && words_[id].text != ".") text += ' ';
    text += words_[id].text;
  }
  return text;
}

}  // namespace mha::train
