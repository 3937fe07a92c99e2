// The tokenizer of Universal Sentence Encoder lite, id for id as its TF.js tokenizer
// (@tensorflow-models/universal-sentence-encoder, a port of SentencePiece's EncodeAsIds) cuts
// text already in NFKC (the reference's first step, String.prototype.normalize: the caller's),
// quirks included:
//  - a piece listed twice keeps the last listing (its id and score);
//  - a position no piece starts at is covered by the unknown piece (id 0, score 0, one code point);
//  - best[end] is replaced when it is still 0 (unset, or a path of score 0) or when a path
//    scores at least as much (ties go to the later path);
//  - the backward pass steps back by the chosen piece's length in UTF-16 code units;
//  - consecutive unknown pieces are merged into one.
// The lattice is walked forward in one pass (start positions in order, each relaxing the ends
// of the pieces starting there), which updates every best[end] in the reference's order
// (ascending start) and keeps memory linear in the text's length.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <string>

#include "mha/encoder.h"

namespace mha {
namespace {

Status invalid(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

void append_utf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Strict UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF). Returns the offset of
// the first byte that is not part of a well-formed sequence, or npos.
size_t decode_utf8(std::string_view text, std::u32string* out) {
  out->clear();
  out->reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    int length = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > text.size()) return i;
    char32_t c = length == 1 ? b0 : length == 2 ? (b0 & 0x1F) : length == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (int k = 1; k < length; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return i;
      c = (c << 6) | (byte(i + k) & 0x3F);
    }
    const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[length] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return i;
    out->push_back(c);
    i += static_cast<size_t>(length);
  }
  return std::string_view::npos;
}

// The rest of the reference's processInput after NFKC: "▁" before the text and for every space.
void prepare(const char32_t* normalized, size_t count, std::u32string* text) {
  text->clear();
  if (count == 0) return;
  text->reserve(count + 1);
  text->push_back(Tokenizer::kWordBoundary);
  for (size_t i = 0; i < count; ++i) text->push_back(normalized[i] == U' ' ? Tokenizer::kWordBoundary : normalized[i]);
}

}  // namespace

std::string Tokens::piece_utf8(size_t i) const {
  std::string out;
  for (int32_t k = piece_begin[i]; k < piece_end[i]; ++k) append_utf8(text[static_cast<size_t>(k)], &out);
  return out;
}

Status Tokenizer::FromVocabText(std::string_view text, int reserved, std::unique_ptr<Tokenizer>* out) {
  std::unique_ptr<Tokenizer> tokenizer(new Tokenizer());
  size_t line_start = 0;
  std::u32string piece;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string_view line = text.substr(line_start, line_end - line_start);
    const size_t line_number = tokenizer->pieces_.size() + 1;
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos || tab == 0) {
      return invalid("vocabulary line " + std::to_string(line_number) + ": expected a score, a tab and a piece");
    }
    const std::string score_text(line.substr(0, tab));
    char* end = nullptr;
    errno = 0;
    const double score = std::strtod(score_text.c_str(), &end);
    if (end != score_text.c_str() + score_text.size() || errno == ERANGE) {
      return invalid("vocabulary line " + std::to_string(line_number) + ": the score '" + score_text + "' is not a number");
    }
    const size_t bad = decode_utf8(line.substr(tab + 1), &piece);
    if (bad != std::string_view::npos) {
      return invalid("vocabulary line " + std::to_string(line_number) + ": the piece is not UTF-8 (byte " + std::to_string(bad) + ")");
    }
    tokenizer->pieces_.push_back(piece);
    tokenizer->scores_.push_back(score);
    int32_t units = 0;
    for (char32_t c : piece) units += c >= 0x10000 ? 2 : 1;
    tokenizer->utf16_lengths_.push_back(units);
    line_start = line_end + 1;
  }
  if (reserved < 1 || tokenizer->pieces_.size() <= static_cast<size_t>(reserved)) {
    return invalid("vocabulary: expected more than " + std::to_string(reserved) + " pieces (the reserved ones), got " +
                   std::to_string(tokenizer->pieces_.size()));
  }
  tokenizer->build_trie(reserved);
  *out = std::move(tokenizer);
  return Status::Ok();
}

void Tokenizer::build_trie(int reserved) {
  // Built with maps, then flattened into sorted edge lists.
  std::vector<std::map<char32_t, uint32_t>> children(1);
  std::vector<int32_t> ids(1, -1);
  for (size_t id = static_cast<size_t>(reserved); id < pieces_.size(); ++id) {
    uint32_t node = 0;
    for (char32_t c : pieces_[id]) {
      auto it = children[node].find(c);
      if (it == children[node].end()) {
        const auto child = static_cast<uint32_t>(children.size());
        children[node].emplace(c, child);
        children.emplace_back();
        ids.push_back(-1);
        node = child;
      } else {
        node = it->second;
      }
    }
    if (node != 0) ids[node] = static_cast<int32_t>(id);  // a later listing of a piece wins
  }
  nodes_.assign(children.size(), Node());
  edges_.clear();
  for (size_t n = 0; n < children.size(); ++n) {
    nodes_[n].first_edge = static_cast<uint32_t>(edges_.size());
    nodes_[n].num_edges = static_cast<uint32_t>(children[n].size());
    nodes_[n].id = ids[n];
    for (const auto& [c, child] : children[n]) edges_.push_back({c, child});
  }
}

// chosen[end] = the id of the best path's last piece ending at `end` (0 where none ends).
void Tokenizer::viterbi(const std::u32string& text, std::vector<int32_t>* chosen) const {
  const size_t n = text.size();
  std::vector<double> best(n + 1, 0.0);
  chosen->assign(n + 1, kUnknownId);
  const auto relax = [&](size_t start, size_t end, int32_t id, double score) {
    const double total = score + best[start];
    if (best[end] == 0.0 || total >= best[end]) {
      best[end] = total;
      (*chosen)[end] = id;
    }
  };
  for (size_t start = 0; start < n; ++start) {
    bool matched = false;
    uint32_t node = 0;
    for (size_t end = start + 1; end <= n; ++end) {
      const Node& parent = nodes_[node];
      const Edge* first = edges_.data() + parent.first_edge;
      const Edge* last = first + parent.num_edges;
      const Edge* edge = std::lower_bound(first, last, text[end - 1], [](const Edge& e, char32_t c) { return e.code_point < c; });
      if (edge == last || edge->code_point != text[end - 1]) break;
      node = edge->child;
      const int32_t id = nodes_[node].id;
      if (id >= 0) {
        relax(start, end, id, scores_[static_cast<size_t>(id)]);
        matched = true;
      }
    }
    if (!matched) relax(start, start + 1, kUnknownId, 0.0);
  }
}

Status Tokenizer::check_text_size(size_t count) {
  if (count <= kMaxCodePoints) return Status::Ok();
  return Status(StatusCode::kTooLarge, "a text of " + std::to_string(count) + " characters: at most " +
                                           std::to_string(kMaxCodePoints) + " are tokenized");
}

Status Tokenizer::tokenize(const char32_t* code_points, size_t count, Tokens* out) const {
  MHA_RETURN_IF_ERROR(check_text_size(count));
  for (size_t i = 0; i < count; ++i) {
    if (code_points[i] > 0x10FFFF) {
      return invalid("code point " + std::to_string(i) + " is " + std::to_string(static_cast<uint32_t>(code_points[i])) +
                     ", past U+10FFFF");
    }
  }
  Tokens tokens;
  prepare(code_points, count, &tokens.text);
  std::vector<int32_t> chosen;
  viterbi(tokens.text, &chosen);
  // Backward from the end, stepping back by each piece's UTF-16 length; unknowns merged.
  std::vector<int32_t> ids, begins, ends;
  for (int64_t at = static_cast<int64_t>(tokens.text.size()); at > 0;) {
    const int32_t id = chosen[static_cast<size_t>(at)];
    const int64_t from = std::max<int64_t>(0, at - utf16_lengths_[static_cast<size_t>(id)]);
    if (id == kUnknownId && !ids.empty() && ids.back() == kUnknownId) {
      begins.back() = static_cast<int32_t>(from);
    } else {
      ids.push_back(id);
      begins.push_back(static_cast<int32_t>(from));
      ends.push_back(static_cast<int32_t>(at));
    }
    at -= utf16_lengths_[static_cast<size_t>(id)];
  }
  tokens.ids.assign(ids.rbegin(), ids.rend());
  tokens.piece_begin.assign(begins.rbegin(), begins.rend());
  tokens.piece_end.assign(ends.rbegin(), ends.rend());
  *out = std::move(tokens);
  return Status::Ok();
}

Status Tokenizer::tokenize_utf8(std::string_view text, Tokens* out) const {
  std::u32string code_points;
  const size_t bad = decode_utf8(text, &code_points);
  if (bad != std::string_view::npos) {
    return invalid("the text is not well-formed UTF-8: byte " + std::to_string(bad) + " begins no valid sequence");
  }
  return tokenize(code_points.data(), code_points.size(), out);
}

Status Tokenizer::from_ids(const int32_t* ids, size_t count, Tokens* out) const {
  Tokens tokens;
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= pieces_.size()) {
      return invalid("ids[" + std::to_string(i) + "] is " + std::to_string(ids[i]) + "; expected an id from 0 to " +
                     std::to_string(pieces_.size() - 1));
    }
    const std::u32string& p = pieces_[static_cast<size_t>(ids[i])];
    tokens.ids.push_back(ids[i]);
    tokens.piece_begin.push_back(static_cast<int32_t>(tokens.text.size()));
    tokens.text += p;
    tokens.piece_end.push_back(static_cast<int32_t>(tokens.text.size()));
  }
  *out = std::move(tokens);
  return Status::Ok();
}

}  // namespace mha
