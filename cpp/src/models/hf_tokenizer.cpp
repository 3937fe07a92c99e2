// HfTokenizer: tokenizer.json's byte-level BPE and WordPiece (mha/hf_tokenizer.h). Text is
// handled as code points; every step follows the reference's (@huggingface/tokenizers) order.
#include "mha/hf_tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "models/unicode_tables.h"

namespace mha::models {
namespace {

using nlohmann::json;

Status bad(const std::string& file, const std::string& message) {
  return Status(StatusCode::kInvalidConfig, file + ": " + message);
}

bool in_ranges(const unicode::Range* ranges, size_t count, char32_t c) {
  const unicode::Range* end = ranges + count;
  const unicode::Range* it = std::upper_bound(ranges, end, c, [](char32_t v, const unicode::Range& r) { return v < r.first; });
  return it != ranges && c <= (it - 1)->last;
}

bool is_letter(char32_t c) { return in_ranges(unicode::kLetter, unicode::kLetterCount, c); }
bool is_number(char32_t c) { return in_ranges(unicode::kNumber, unicode::kNumberCount, c); }
bool is_mn(char32_t c) { return in_ranges(unicode::kNonspacingMark, unicode::kNonspacingMarkCount, c); }
bool is_cased(char32_t c) { return in_ranges(unicode::kCased, unicode::kCasedCount, c); }
bool is_case_ignorable(char32_t c) { return in_ranges(unicode::kCaseIgnorable, unicode::kCaseIgnorableCount, c); }

// JavaScript's \s: WhiteSpace and LineTerminator.
bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
         c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff;
}

// BertPreTokenizer's punctuation: \p{P} and every ASCII symbol.
bool is_bert_punctuation(char32_t c) {
  return (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e) ||
         in_ranges(unicode::kPunctuation, unicode::kPunctuationCount, c);
}

// BERT's CJK blocks. The reference tests UTF-16 code units, so the astral blocks (U+20000 and
// up) are never padded there; so not here either.
bool is_chinese_char(char32_t c) {
  return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0xf900 && c <= 0xfaff);
}

char32_t lower_one(char32_t c) {
  const unicode::Pair* end = unicode::kLowercase + unicode::kLowercaseCount;
  const unicode::Pair* it =
      std::lower_bound(unicode::kLowercase, end, c, [](const unicode::Pair& p, char32_t v) { return p.from < v; });
  return it != end && it->from == c ? it->to : c;
}

// String.prototype.toLowerCase: per code point, U+0130 to "i̇", and capital sigma to final
// sigma where a cased letter precedes it (case-ignorables between) and none follows.
std::u32string to_lower(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char32_t c = s[i];
    if (c == 0x130) {
      out += U"i\u0307";
    } else if (c == 0x3a3) {
      size_t j = i;
      while (j > 0 && is_case_ignorable(s[j - 1])) --j;
      const bool before = j > 0 && is_cased(s[j - 1]);
      size_t k = i + 1;
      while (k < s.size() && is_case_ignorable(s[k])) ++k;
      const bool after = k < s.size() && is_cased(s[k]);
      out += before && !after ? char32_t{0x3c2} : char32_t{0x3c3};
    } else {
      out += lower_one(c);
    }
  }
  return out;
}

// normalize('NFD') with every \p{Mn} removed.
std::u32string strip_accents(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  const unicode::Decomposition* end = unicode::kStripped + unicode::kStrippedCount;
  for (char32_t c : s) {
    if (c >= 0xac00 && c < 0xac00 + 11172) {  // Hangul syllable: L V (T) by formula
      const char32_t index = c - 0xac00;
      out += static_cast<char32_t>(0x1100 + index / 588);
      out += static_cast<char32_t>(0x1161 + (index % 588) / 28);
      if (index % 28 != 0) out += static_cast<char32_t>(0x11a7 + index % 28);
      continue;
    }
    const unicode::Decomposition* it = std::lower_bound(
        unicode::kStripped, end, c, [](const unicode::Decomposition& d, char32_t v) { return d.from < v; });
    if (it != end && it->from == c) {
      out.append(unicode::kStrippedPool + it->offset, it->length);
    } else if (!is_mn(c)) {
      out += c;
    }
  }
  return out;
}

void append_utf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    *out += static_cast<char>(c);
  } else if (c < 0x800) {
    *out += static_cast<char>(0xc0 | c >> 6);
    *out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    *out += static_cast<char>(0xe0 | c >> 12);
    *out += static_cast<char>(0x80 | (c >> 6 & 0x3f));
    *out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    *out += static_cast<char>(0xf0 | c >> 18);
    *out += static_cast<char>(0x80 | (c >> 12 & 0x3f));
    *out += static_cast<char>(0x80 | (c >> 6 & 0x3f));
    *out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

std::string to_utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) append_utf8(c, &out);
  return out;
}

// Strict UTF-8 (no overlongs, surrogates or values past U+10FFFF); returns the offset of the
// first bad byte, or npos.
size_t decode_utf8(std::string_view in, std::u32string* out) {
  out->clear();
  size_t i = 0;
  while (i < in.size()) {
    const unsigned char b = static_cast<unsigned char>(in[i]);
    int extra;
    char32_t c, min;
    if (b < 0x80) { c = b; extra = 0; min = 0; }
    else if ((b & 0xe0) == 0xc0) { c = b & 0x1f; extra = 1; min = 0x80; }
    else if ((b & 0xf0) == 0xe0) { c = b & 0x0f; extra = 2; min = 0x800; }
    else if ((b & 0xf8) == 0xf0) { c = b & 0x07; extra = 3; min = 0x10000; }
    else return i;
    if (in.size() - i <= static_cast<size_t>(extra)) return i;  // truncated
    for (int k = 1; k <= extra; ++k) {
      const unsigned char n = static_cast<unsigned char>(in[i + static_cast<size_t>(k)]);
      if ((n & 0xc0) != 0x80) return i;
      c = c << 6 | (n & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return i;
    *out += c;
    i += static_cast<size_t>(extra) + 1;
  }
  return std::string_view::npos;
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the rest to 256 + n.
const std::vector<char32_t>& byte_to_unicode() {
  static const std::vector<char32_t> table = [] {
    std::vector<char32_t> t(256, 0);
    std::vector<bool> kept(256, false);
    for (int b = '!'; b <= '~'; ++b) kept[static_cast<size_t>(b)] = true;
    for (int b = 0xa1; b <= 0xac; ++b) kept[static_cast<size_t>(b)] = true;
    for (int b = 0xae; b <= 0xff; ++b) kept[static_cast<size_t>(b)] = true;
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) t[static_cast<size_t>(b)] = kept[static_cast<size_t>(b)] ? static_cast<char32_t>(b) : next++;
    return t;
  }();
  return table;
}

bool is_string_or_null(const json& j, const char* key) { return !j.contains(key) || j[key].is_null() || j[key].is_string(); }

}  // namespace

int32_t HfTokenizer::token_id(const std::string& token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

const std::string& HfTokenizer::token(int32_t id) const {
  static const std::string none;
  return id >= 0 && id < static_cast<int32_t>(tokens_.size()) ? tokens_[static_cast<size_t>(id)] : none;
}

struct HfTokenizer::Builder {
  static std::string type_of(const json& v) {
    return v.is_object() && v.contains("type") && v["type"].is_string() ? v["type"].get<std::string>() : std::string();
  }
  static bool flag(const json& v, const char* key, bool fallback) {
    return v.contains(key) && v[key].is_boolean() ? v[key].get<bool>() : fallback;
  }

  // model.vocab and added_tokens: token -> id, ids non-negative; the unknown token.
  static Status vocabulary(const json& j, const json& m, const std::string& file, HfTokenizer* t) {
    if (!m.contains("vocab") || !m["vocab"].is_object()) return bad(file, "field 'model.vocab' must be an object of token: id");
    int32_t max_id = -1;
    for (auto it = m["vocab"].begin(); it != m["vocab"].end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() > (1 << 24)) {
        return bad(file, "field 'model.vocab': the id of '" + it.key() + "' is not an integer from 0 to 16777216");
      }
      const int32_t id = it.value().get<int32_t>();
      t->vocab_[it.key()] = id;
      max_id = std::max(max_id, id);
    }
    if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
      if (!j["added_tokens"].is_array()) return bad(file, "field 'added_tokens' must be a list");
      for (const json& a : j["added_tokens"]) {
        if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
            !a["content"].is_string() || a["id"].get<int64_t>() < 0 || a["id"].get<int64_t>() > (1 << 24)) {
          return bad(file, "field 'added_tokens': each entry needs an integer 'id' and a string 'content'");
        }
        Added added;
        const std::string content = a["content"].get<std::string>();
        if (decode_utf8(content, &added.content) != std::string_view::npos || added.content.empty()) {
          return bad(file, "field 'added_tokens': a content is empty or not UTF-8");
        }
        added.id = a["id"].get<int32_t>();
        added.lstrip = flag(a, "lstrip", false);
        added.rstrip = flag(a, "rstrip", false);
        added.normalized = flag(a, "normalized", false);
        t->vocab_[content] = added.id;
        max_id = std::max(max_id, added.id);
        t->added_.push_back(std::move(added));
      }
    }
    t->vocab_size_ = max_id + 1;
    t->tokens_.assign(static_cast<size_t>(t->vocab_size_), "");
    for (const auto& [token, id] : t->vocab_) t->tokens_[static_cast<size_t>(id)] = token;
    if (!is_string_or_null(m, "unk_token")) return bad(file, "field 'model.unk_token' must be a string or null");
    if (m.contains("unk_token") && m["unk_token"].is_string()) {
      t->unk_id_ = t->token_id(m["unk_token"].get<std::string>());
      if (t->unk_id_ < 0) return bad(file, "field 'model.unk_token' names a token the vocabulary does not have");
    }
    return Status::Ok();
  }

  // Byte-level BPE: no normalizer, the ByteLevel pre-tokenizer, merges as "a b" or ["a", "b"].
  static Status bpe(const json& m, const json& normalizer, const json& pre, const json& post, const std::string& file,
                    HfTokenizer* t) {
    if (!normalizer.is_null()) return bad(file, "field 'normalizer' is '" + type_of(normalizer) + "': not supported for BPE (null is)");
    // ByteLevel (GPT-2), or none: the text as one word of code points (a character-level
    // vocabulary, as scripts/export/export_nanogpt.py writes one)
    if (!pre.is_null() && type_of(pre) != "ByteLevel") {
      return bad(file, "field 'pre_tokenizer' is '" + type_of(pre) + "': not supported for BPE (ByteLevel or null is)");
    }
    t->byte_level_ = !pre.is_null();
    t->add_prefix_space_ = flag(pre, "add_prefix_space", false);
    t->use_regex_ = flag(pre, "use_regex", true);
    if (!post.is_null() && type_of(post) != "ByteLevel") {
      return bad(file, "field 'post_processor' is '" + type_of(post) + "': not supported for BPE (ByteLevel or null is)");
    }
    if (flag(m, "byte_fallback", false)) return bad(file, "field 'model.byte_fallback' is true: not supported");
    if (m.contains("dropout") && !m["dropout"].is_null()) return bad(file, "field 'model.dropout' is set: not supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      if (!is_string_or_null(m, key) || (m.contains(key) && m[key].is_string() && !m[key].get<std::string>().empty())) {
        return bad(file, std::string("field 'model.") + key + "' is set: not supported (byte-level BPE has none)");
      }
    }
    t->ignore_merges_ = flag(m, "ignore_merges", false);
    if (!m.contains("merges") || !m["merges"].is_array()) return bad(file, "field 'model.merges' must be a list");
    int32_t rank = 0;
    for (const json& merge : m["merges"]) {
      std::string a, b;
      if (merge.is_string()) {
        const std::string s = merge.get<std::string>();
        const size_t space = s.find(' ');
        if (space == std::string::npos) return bad(file, "field 'model.merges': merge " + std::to_string(rank) + " has no space");
        a = s.substr(0, space);
        b = s.substr(space + 1);
      } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
        a = merge[0].get<std::string>();
        b = merge[1].get<std::string>();
      } else {
        return bad(file, "field 'model.merges': merge " + std::to_string(rank) + " is neither \"a b\" nor [\"a\", \"b\"]");
      }
      if (t->token_id(a) < 0 || t->token_id(b) < 0 || t->token_id(a + b) < 0) {
        return bad(file, "field 'model.merges': merge " + std::to_string(rank) + " ('" + a + "', '" + b +
                             "') joins pieces the vocabulary does not have");
      }
      std::u32string ua, ub;
      decode_utf8(a, &ua);
      decode_utf8(b, &ub);
      t->merge_ranks_.emplace(std::make_pair(ua, ub), rank++);
    }
    return Status::Ok();
  }

  // WordPiece: BertNormalizer or none, BertPreTokenizer or none, the subword prefix.
  static Status wordpiece(const json& m, const json& normalizer, const json& pre, const std::string& file, HfTokenizer* t) {
    if (!normalizer.is_null()) {
      if (type_of(normalizer) != "BertNormalizer") {
        return bad(file, "field 'normalizer' is '" + type_of(normalizer) + "': not supported for WordPiece (BertNormalizer is)");
      }
      t->has_normalizer_ = true;
      t->clean_text_ = flag(normalizer, "clean_text", true);
      t->handle_chinese_chars_ = flag(normalizer, "handle_chinese_chars", true);
      t->lowercase_ = flag(normalizer, "lowercase", true);
      // strip_accents null follows lowercase
      t->strip_accents_ = flag(normalizer, "strip_accents", t->lowercase_);
    }
    if (!pre.is_null() && type_of(pre) != "BertPreTokenizer") {
      return bad(file, "field 'pre_tokenizer' is '" + type_of(pre) + "': not supported for WordPiece (BertPreTokenizer is)");
    }
    t->bert_pre_tokenizer_ = !pre.is_null();
    if (!is_string_or_null(m, "continuing_subword_prefix")) return bad(file, "field 'model.continuing_subword_prefix' must be a string");
    if (m.contains("continuing_subword_prefix") && m["continuing_subword_prefix"].is_string()) {
      decode_utf8(m["continuing_subword_prefix"].get<std::string>(), &t->continuing_prefix_);
    }
    if (m.contains("max_input_chars_per_word") && m["max_input_chars_per_word"].is_number_integer()) {
      t->max_input_chars_per_word_ = m["max_input_chars_per_word"].get<int64_t>();
    }
    if (t->unk_id_ < 0) return bad(file, "field 'model.unk_token' is missing (WordPiece needs one)");
    return Status::Ok();
  }

  // The special tokens before and after a text: TemplateProcessing's single, BertProcessing's
  // cls and sep, or none.
  static Status post_processor(const json& post, const std::string& file, HfTokenizer* t) {
    const std::string post_type = type_of(post);
    const auto special = [&](const std::string& token, std::vector<int32_t>* ids) -> Status {
      const int32_t id = t->token_id(token);
      if (id < 0) return bad(file, "field 'post_processor': special token '" + token + "' is not in the vocabulary");
      ids->push_back(id);
      return Status::Ok();
    };
    if (post_type == "TemplateProcessing") {
      if (!post.contains("single") || !post["single"].is_array()) return bad(file, "field 'post_processor.single' must be a list");
      bool seen_sequence = false;
      for (const json& item : post["single"]) {
        if (item.contains("Sequence")) {
          seen_sequence = true;
          continue;
        }
        if (!item.contains("SpecialToken") || !item["SpecialToken"].contains("id") || !item["SpecialToken"]["id"].is_string()) {
          return bad(file, "field 'post_processor.single': an item is neither Sequence nor SpecialToken");
        }
        const std::string name = item["SpecialToken"]["id"].get<std::string>();
        std::vector<int32_t>* ids = seen_sequence ? &t->suffix_ids_ : &t->prefix_ids_;
        // special_tokens maps the name to its ids
        const bool listed = post.contains("special_tokens") && post["special_tokens"].is_object() &&
                            post["special_tokens"].contains(name) && post["special_tokens"][name].contains("ids") &&
                            post["special_tokens"][name]["ids"].is_array();
        if (!listed) {
          MHA_RETURN_IF_ERROR(special(name, ids));
          continue;
        }
        for (const json& id : post["special_tokens"][name]["ids"]) {
          if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= t->vocab_size_) {
            return bad(file, "field 'post_processor.special_tokens." + name + ".ids' holds an id outside the vocabulary");
          }
          ids->push_back(id.get<int32_t>());
        }
      }
    } else if (post_type == "BertProcessing") {
      for (const char* key : {"cls", "sep"}) {
        if (!post.contains(key) || !post[key].is_array() || post[key].size() != 2 || !post[key][0].is_string()) {
          return bad(file, std::string("field 'post_processor.") + key + "' must be [token, id]");
        }
      }
      MHA_RETURN_IF_ERROR(special(post["cls"][0].get<std::string>(), &t->prefix_ids_));
      MHA_RETURN_IF_ERROR(special(post["sep"][0].get<std::string>(), &t->suffix_ids_));
    } else if (!post.is_null()) {
      return bad(file, "field 'post_processor' is '" + post_type +
                           "': not supported for WordPiece (TemplateProcessing, BertProcessing or null is)");
    }
    return Status::Ok();
  }
};

Status HfTokenizer::FromJson(std::string_view json_text, const std::string& file, std::unique_ptr<HfTokenizer>* out) {
  const json j = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (j.is_discarded()) return bad(file, "not valid JSON");
  if (!j.is_object()) return bad(file, "expected a JSON object");
  if (!j.contains("model") || !j["model"].is_object()) return bad(file, "field 'model' is missing");
  const json& m = j["model"];
  if (!m.contains("type") || !m["type"].is_string()) return bad(file, "field 'model.type' is missing");
  std::unique_ptr<HfTokenizer> t(new HfTokenizer());
  const std::string type = m["type"].get<std::string>();
  if (type == "BPE") {
    t->kind_ = Kind::kByteLevelBpe;
  } else if (type == "WordPiece") {
    t->kind_ = Kind::kWordPiece;
  } else {
    return bad(file, "field 'model.type' is '" + type + "': not supported (BPE and WordPiece are)");
  }
  MHA_RETURN_IF_ERROR(Builder::vocabulary(j, m, file, t.get()));
  const json null_value;
  const json& normalizer = j.contains("normalizer") ? j["normalizer"] : null_value;
  const json& pre = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : null_value;
  const json& post = j.contains("post_processor") ? j["post_processor"] : null_value;
  if (t->kind_ == Kind::kByteLevelBpe) {
    MHA_RETURN_IF_ERROR(Builder::bpe(m, normalizer, pre, post, file, t.get()));
  } else {
    MHA_RETURN_IF_ERROR(Builder::wordpiece(m, normalizer, pre, file, t.get()));
    MHA_RETURN_IF_ERROR(Builder::post_processor(post, file, t.get()));
  }
  *out = std::move(t);
  return Status::Ok();
}

// Splits on added tokens (those with this `normalized` flag): the longest at each position, left
// to right; lstrip / rstrip trim the whitespace beside them. Pieces carry id -1, added tokens
// their id.
void HfTokenizer::split_added(const std::u32string& text, bool normalized,
                              std::vector<std::pair<std::u32string, int32_t>>* out) const {
  // When the tokenizer has a normalizer, normalized tokens are matched after it, in normalised
  // form; with none, every added token is matched on the raw text.
  const bool any_normalizer = has_normalizer_;
  std::vector<const Added*> candidates;
  std::vector<std::u32string> forms;
  for (const Added& a : added_) {
    const bool matched_late = a.normalized && any_normalizer;
    if (matched_late != normalized) continue;
    candidates.push_back(&a);
    forms.push_back(matched_late ? normalize(a.content) : a.content);
  }
  out->clear();
  size_t start = 0, i = 0;
  while (i < text.size()) {
    size_t best = 0;
    int32_t id = -1;
    bool lstrip = false, rstrip = false;
    for (size_t k = 0; k < candidates.size(); ++k) {
      const std::u32string& f = forms[k];
      if (f.size() > best && text.compare(i, f.size(), f) == 0) {
        best = f.size();
        id = candidates[k]->id;
        lstrip = candidates[k]->lstrip;
        rstrip = candidates[k]->rstrip;
      }
    }
    if (best == 0) {
      ++i;
      continue;
    }
    if (i > start) out->emplace_back(text.substr(start, i - start), -1);
    if (lstrip && !out->empty() && out->back().second < 0) {
      std::u32string& prev = out->back().first;
      while (!prev.empty() && is_space(prev.back())) prev.pop_back();
    }
    out->emplace_back(text.substr(i, best), id);
    i += best;
    if (rstrip) {
      while (i < text.size() && is_space(text[i])) ++i;
    }
    start = i;
  }
  if (start < text.size()) out->emplace_back(text.substr(start), -1);
}

std::u32string HfTokenizer::normalize(const std::u32string& text) const {
  if (!has_normalizer_) return text;
  std::u32string s;
  if (clean_text_) {
    for (char32_t c : text) {
      const bool control = c != U'\t' && c != U'\n' && c != U'\r' && in_ranges(unicode::kControl, unicode::kControlCount, c);
      if (c == 0 || c == 0xfffd || control) continue;
      s += is_space(c) ? U' ' : c;
    }
  } else {
    s = text;
  }
  if (handle_chinese_chars_) {
    std::u32string padded;
    for (char32_t c : s) {
      if (is_chinese_char(c)) {
        padded += U' ';
        padded += c;
        padded += U' ';
      } else {
        padded += c;
      }
    }
    s.swap(padded);
  }
  if (lowercase_) s = to_lower(s);
  if (strip_accents_) s = strip_accents(s);
  return s;
}

void HfTokenizer::pre_tokenize(const std::u32string& input, std::vector<std::u32string>* words) const {
  words->clear();
  if (kind_ == Kind::kWordPiece) {
    if (!bert_pre_tokenizer_) {
      if (!input.empty()) words->push_back(input);
      return;
    }
    // [^\s P]+ | [P] over the trimmed text; whitespace between is dropped
    std::u32string word;
    for (char32_t c : input) {
      if (is_space(c) || is_bert_punctuation(c)) {
        if (!word.empty()) words->push_back(word);
        word.clear();
        if (!is_space(c)) words->push_back(std::u32string(1, c));
      } else {
        word += c;
      }
    }
    if (!word.empty()) words->push_back(word);
    return;
  }
  if (!byte_level_) {
    if (!input.empty()) words->push_back(input);
    return;
  }
  std::u32string text = input;
  if (add_prefix_space_ && (text.empty() || text[0] != U' ')) text.insert(text.begin(), U' ');
  std::vector<std::u32string> pieces;
  if (!use_regex_) {
    pieces.push_back(text);
  } else {
    const size_t n = text.size();
    size_t i = 0;
    while (i < n) {
      size_t end = i;
      // 's|'t|'re|'ve|'m|'ll|'d
      if (text[i] == U'\'') {
        for (const char32_t* c : {U"s", U"t", U"re", U"ve", U"m", U"ll", U"d"}) {
          const std::u32string tail(c);
          if (text.compare(i + 1, tail.size(), tail) == 0) {
            end = i + 1 + tail.size();
            break;
          }
        }
      }
      //  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+
      if (end == i) {
        // a space is in none of the three classes, so " ?" takes it whenever it is there
        const size_t j = text[i] == U' ' ? i + 1 : i;
        for (bool (*cls)(char32_t) : {+[](char32_t c) { return is_letter(c); }, +[](char32_t c) { return is_number(c); },
                                      +[](char32_t c) { return !is_space(c) && !is_letter(c) && !is_number(c); }}) {
          if (j < n && cls(text[j])) {
            size_t k = j;
            while (k < n && cls(text[k])) ++k;
            end = k;
            break;
          }
        }
      }
      // \s+(?!\S) | \s+: a run of whitespace, less its last one when a word follows (which then
      // goes with the word), unless the run is that one alone
      if (end == i) {
        size_t k = i;
        while (k < n && is_space(text[k])) ++k;
        end = (k < n && k - i >= 2) ? k - 1 : k;
      }
      pieces.push_back(text.substr(i, end - i));
      i = end;
    }
  }
  const std::vector<char32_t>& map = byte_to_unicode();
  for (const std::u32string& piece : pieces) {
    std::u32string mapped;
    for (unsigned char b : to_utf8(piece)) mapped += map[b];
    words->push_back(mapped);
  }
}

void HfTokenizer::bpe(const std::u32string& word, std::vector<int32_t>* ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    const int32_t whole = token_id(to_utf8(word));
    if (whole >= 0) {
      ids->push_back(whole);
      return;
    }
  }
  std::vector<std::u32string> symbols;
  for (char32_t c : word) symbols.emplace_back(1, c);
  // The lowest-ranked adjacent pair, the leftmost of equals, merged until none is in the table.
  while (symbols.size() > 1) {
    int32_t best_rank = -1;
    size_t best = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = merge_ranks_.find({symbols[i], symbols[i + 1]});
      if (it != merge_ranks_.end() && (best_rank < 0 || it->second < best_rank)) {
        best_rank = it->second;
        best = i;
      }
    }
    if (best_rank < 0) break;
    symbols[best] += symbols[best + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  for (const std::u32string& s : symbols) {
    const int32_t id = token_id(to_utf8(s));
    if (id >= 0) ids->push_back(id);
    else if (unk_id_ >= 0) ids->push_back(unk_id_);
  }
}

void HfTokenizer::wordpiece(const std::u32string& word, std::vector<int32_t>* ids) const {
  if (static_cast<int64_t>(word.size()) > max_input_chars_per_word_) {
    ids->push_back(unk_id_);
    return;
  }
  std::vector<int32_t> pieces;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t found = -1;
    while (start < end) {
      std::u32string piece = word.substr(start, end - start);
      if (start > 0) piece = continuing_prefix_ + piece;
      found = token_id(to_utf8(piece));
      if (found >= 0) break;
      --end;
    }
    if (found < 0) {
      ids->push_back(unk_id_);
      return;
    }
    pieces.push_back(found);
    start = end;
  }
  ids->insert(ids->end(), pieces.begin(), pieces.end());
}

Status HfTokenizer::model(const std::u32string& word, std::vector<int32_t>* ids) const {
  if (kind_ == Kind::kByteLevelBpe) bpe(word, ids);
  else wordpiece(word, ids);
  return Status::Ok();
}

Status HfTokenizer::encode(std::string_view utf8, std::vector<int32_t>* ids) const {
  std::u32string text;
  const size_t bad_at = decode_utf8(utf8, &text);
  if (bad_at != std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument, "the text is not UTF-8: byte " + std::to_string(bad_at));
  }
  std::vector<int32_t> out = prefix_ids_;
  std::vector<std::pair<std::u32string, int32_t>> sections, subsections;
  std::vector<std::u32string> words;
  split_added(text, false, &sections);
  for (const auto& [section, section_id] : sections) {
    if (section_id >= 0) {
      out.push_back(section_id);
      continue;
    }
    const std::u32string normalized = normalize(section);
    split_added(normalized, true, &subsections);
    for (const auto& [sub, sub_id] : subsections) {
      if (sub_id >= 0) {
        out.push_back(sub_id);
        continue;
      }
      std::u32string trimmed = sub;
      if (kind_ == Kind::kWordPiece && bert_pre_tokenizer_) {  // BertPreTokenizer trims first
        while (!trimmed.empty() && is_space(trimmed.back())) trimmed.pop_back();
        size_t lead = 0;
        while (lead < trimmed.size() && is_space(trimmed[lead])) ++lead;
        trimmed.erase(0, lead);
      }
      pre_tokenize(trimmed, &words);
      for (const std::u32string& w : words) MHA_RETURN_IF_ERROR(model(w, &out));
    }
  }
  out.insert(out.end(), suffix_ids_.begin(), suffix_ids_.end());
  *ids = std::move(out);
  return Status::Ok();
}

}  // namespace mha::models
