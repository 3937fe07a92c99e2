// Unicode's punctuation and symbol code points (categories P* and S*), as ranges
// (punctuation_table.cpp, written by scripts/tables/gen_punctuation_table.js). Read by
// tokenizer.cpp.
#pragma once

#include <cstddef>

namespace mha::encoder {

struct CodePointRange {
  char32_t first;
  char32_t last;
};
extern const size_t kNumPunctuationRanges;
extern const CodePointRange kPunctuationRanges[];  // ascending, not overlapping

}  // namespace mha::encoder
