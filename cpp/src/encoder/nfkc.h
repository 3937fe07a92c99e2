// Unicode normalisation form NFKC, as String.prototype.normalize('NFKC') gives it (the tables'
// Unicode version is nfkc::kUnicodeVersion). Code points are taken as they come: a lone
// surrogate (0xD800..0xDFFF), which JavaScript strings may hold, is left as it is, as
// normalize() leaves it. Linear in the input's length (marks are sorted with a stable sort).
#pragma once

#include <string>

namespace mha::encoder {

// out = NFKC(in[0 .. count)); every in[i] <= 0x10FFFF.
void nfkc_normalize(const char32_t* in, size_t count, std::u32string* out);

// The Unicode version of the tables.
const char* nfkc_unicode_version();

}  // namespace mha::encoder
