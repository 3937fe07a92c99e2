// Unicode data of the Hugging Face tokenizers, generated (scripts/tables/gen_hf_unicode_tables.js)
// from Node.js's RegExp properties, toLowerCase and normalize('NFD'): what the reference
// tokenizer in JavaScript sees.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mha::models::unicode {

struct Range {  // inclusive
  char32_t first, last;
};
struct Pair {
  char32_t from, to;
};
struct Decomposition {  // kStrippedPool[offset .. offset + length)
  char32_t from;
  uint32_t offset, length;
};

extern const char* const kUnicodeVersion;
extern const Range kLetter[], kNumber[], kPunctuation[], kNonspacingMark[], kControl[], kCased[], kCaseIgnorable[];
extern const size_t kLetterCount, kNumberCount, kPunctuationCount, kNonspacingMarkCount, kControlCount, kCasedCount,
    kCaseIgnorableCount;
extern const Pair kLowercase[];
extern const size_t kLowercaseCount;
extern const Decomposition kStripped[];
extern const size_t kStrippedCount;
extern const char32_t kStrippedPool[];

}  // namespace mha::models::unicode
