// The data of Unicode normalisation form NFKC (nfkc_tables.cpp, written by
// scripts/tables/gen_nfkc_tables.js from Node.js's String.prototype.normalize). Read by nfkc.cpp
// only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mha::encoder::nfkc {

extern const char* const kUnicodeVersion;

// Code point kDecomposedCodePoints[i] (ascending) decomposes (NFKD, fully) into
// kDecompositionPool[kDecompositionOffsets[i] .. kDecompositionOffsets[i + 1]).
extern const size_t kNumDecompositions;
extern const char32_t kDecomposedCodePoints[];
extern const uint16_t kDecompositionOffsets[];
extern const char32_t kDecompositionPool[];

// Code points first..last have canonical combining class rank `rank` (1 = the lowest nonzero
// class; the order of classes is kept, their numbers are not). Ascending, not overlapping.
struct CombiningRange {
  char32_t first;
  char32_t last;
  uint8_t rank;
};
extern const size_t kNumCombiningRanges;
extern const CombiningRange kCombiningRanges[];

// Canonical composition: first + second -> composite, sorted by (first, second).
struct Composition {
  char32_t first;
  char32_t second;
  char32_t composite;
};
extern const size_t kNumCompositions;
extern const Composition kCompositions[];

}  // namespace mha::encoder::nfkc
