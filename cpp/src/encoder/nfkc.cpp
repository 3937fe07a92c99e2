// NFKC in three passes over the text (UAX #15): decompose every code point (compatibility
// decomposition, Hangul by formula), put each run of combining marks in canonical order, then
// compose canonically (a mark joins the last starter unless a mark of the same or a higher
// class, or a starter, lies between them).
#include "encoder/nfkc.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "encoder/nfkc_tables.h"

namespace mha::encoder {
namespace {

// Hangul syllables: S = S_BASE + (L·V_COUNT + V)·T_COUNT + T.
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr char32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

// Below U+00A0 nothing decomposes; below U+0300 no code point has a combining class or is the
// second of a composition pair.
constexpr char32_t kFirstDecomposed = 0xA0;
constexpr char32_t kFirstMark = 0x300;

bool is_hangul_syllable(char32_t c) { return c >= kSBase && c < kSBase + kSCount; }

int combining_rank(char32_t c) {
  if (c < kFirstMark) return 0;
  const nfkc::CombiningRange* begin = nfkc::kCombiningRanges;
  const nfkc::CombiningRange* end = begin + nfkc::kNumCombiningRanges;
  const nfkc::CombiningRange* it =
      std::upper_bound(begin, end, c, [](char32_t v, const nfkc::CombiningRange& r) { return v < r.first; });
  if (it == begin) return 0;
  --it;
  return c <= it->last ? it->rank : 0;
}

// Appends the full decomposition of c to out.
void decompose(char32_t c, std::u32string* out) {
  if (c < kFirstDecomposed) {
    out->push_back(c);
    return;
  }
  if (is_hangul_syllable(c)) {
    const char32_t s = c - kSBase;
    out->push_back(kLBase + s / kNCount);
    out->push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out->push_back(kTBase + s % kTCount);
    return;
  }
  const char32_t* begin = nfkc::kDecomposedCodePoints;
  const char32_t* end = begin + nfkc::kNumDecompositions;
  const char32_t* it = std::lower_bound(begin, end, c);
  if (it == end || *it != c) {
    out->push_back(c);
    return;
  }
  const size_t i = static_cast<size_t>(it - begin);
  out->append(nfkc::kDecompositionPool + nfkc::kDecompositionOffsets[i],
              nfkc::kDecompositionPool + nfkc::kDecompositionOffsets[i + 1]);
}

// Stable sort of every maximal run of marks (rank > 0) by rank.
void canonical_order(std::u32string* text) {
  std::vector<std::pair<int, char32_t>> run;
  size_t i = 0;
  while (i < text->size()) {
    if (combining_rank((*text)[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    run.clear();
    for (; j < text->size(); ++j) {
      const int rank = combining_rank((*text)[j]);
      if (rank == 0) break;
      run.emplace_back(rank, (*text)[j]);
    }
    if (run.size() > 1) {
      std::stable_sort(run.begin(), run.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t k = 0; k < run.size(); ++k) (*text)[i + k] = run[k].second;
    }
    i = j;
  }
}

// The composite of a + b, or 0 when they do not compose.
char32_t compose_pair(char32_t a, char32_t b) {
  if (b < kFirstMark) return 0;
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (is_hangul_syllable(a) && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  const nfkc::Composition* begin = nfkc::kCompositions;
  const nfkc::Composition* end = begin + nfkc::kNumCompositions;
  const nfkc::Composition* it = std::lower_bound(begin, end, std::make_pair(a, b), [](const nfkc::Composition& p, const std::pair<char32_t, char32_t>& key) {
    return p.first < key.first || (p.first == key.first && p.second < key.second);
  });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

// Canonical composition in place: the text shrinks as marks join their starters.
void compose(std::u32string* text) {
  size_t starter = std::u32string::npos;  // index in the output of the last starter
  int last_rank = 0;                      // rank of the last code point written
  size_t written = 0;
  for (size_t i = 0; i < text->size(); ++i) {
    const char32_t c = (*text)[i];
    const int rank = combining_rank(c);
    if (starter != std::u32string::npos && (last_rank < rank || (last_rank == 0 && written == starter + 1))) {
      const char32_t composite = compose_pair((*text)[starter], c);
      if (composite != 0) {
        (*text)[starter] = composite;
        continue;
      }
    }
    if (rank == 0) starter = written;
    last_rank = rank;
    (*text)[written++] = c;
  }
  text->resize(written);
}

}  // namespace

void nfkc_normalize(const char32_t* in, size_t count, std::u32string* out) {
  out->clear();
  out->reserve(count);
  for (size_t i = 0; i < count; ++i) decompose(in[i], out);
  canonical_order(out);
  compose(out);
}

const char* nfkc_unicode_version() { return nfkc::kUnicodeVersion; }

}  // namespace mha::encoder
