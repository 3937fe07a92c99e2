// printf's %.17g from the exact decimal expansion of a double (see the header).
//
// A finite double is m * 2^e (m < 2^53, an integer): its expansion is finite, at most 767
// significant digits. It is built in a digit array by halving or doubling m, then rounded at
// the 17th significant digit, half to even on the exact tail.
#include "mha/format.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace mha {

namespace {

// Digits of m * 2^e: m has at most 16 digits, doubling adds at most 309 before the point and
// halving at most 1074 after it (leading zeros included).
constexpr int kMaxDigits = 16 + 309 + 1074 + 2;

}  // namespace

std::string format_g17(double value) {
  const std::string sign = std::signbit(value) ? "-" : "";
  if (!std::isfinite(value)) return sign + (std::isnan(value) ? "nan" : "inf");
  if (value == 0) return sign + "0";
  int e = 0;
  uint64_t m = static_cast<uint64_t>(std::ldexp(std::frexp(std::fabs(value), &e), 53));  // |value| = m * 2^(e - 53)
  e -= 53;
  // digits[0 .. count) with the point after `point` of them.
  char digits[kMaxDigits];
  int count = 0;
  for (uint64_t r = m; r; r /= 10) digits[count++] = static_cast<char>(r % 10);
  for (int i = 0; i < count / 2; ++i) std::swap(digits[i], digits[count - 1 - i]);
  int point = count;
  for (; e > 0; --e) {  // * 2
    int carry = 0;
    for (int i = count; i-- > 0;) {
      const int v = digits[i] * 2 + carry;
      digits[i] = static_cast<char>(v % 10);
      carry = v / 10;
    }
    if (carry) {
      for (int i = count++; i > 0; --i) digits[i] = digits[i - 1];
      digits[0] = static_cast<char>(carry);
      ++point;
    }
  }
  for (; e < 0; ++e) {  // / 2, one more digit after the point when odd
    if (digits[count - 1] % 2) digits[count++] = 0;
    int remainder = 0;
    for (int i = 0; i < count; ++i) {
      const int v = remainder * 10 + digits[i];
      digits[i] = static_cast<char>(v / 2);
      remainder = v % 2;
    }
  }
  int first = 0;
  while (digits[first] == 0) ++first;
  // Round to 17 significant digits, half to even.
  constexpr int kPrecision = 17;
  const int cut = first + kPrecision;
  if (cut < count) {
    bool tail = false;
    for (int i = cut + 1; i < count; ++i) tail = tail || digits[i] != 0;
    const bool up = digits[cut] > 5 || (digits[cut] == 5 && (tail || digits[cut - 1] % 2));
    int i = cut - 1;
    for (; up && i >= first && digits[i] == 9; --i) digits[i] = 0;
    if (up && i >= first) ++digits[i];
    if (up && i < first) {  // 9...9 became 0...0: a 1 before them
      if (first == 0) {
        for (int j = count++; j > 0; --j) digits[j] = digits[j - 1];
        ++point;
        ++first;
      }
      digits[--first] = 1;
    }
  }
  for (int i = count; i < first + kPrecision; ++i) digits[i] = 0;
  const int exponent = point - first - 1;  // of the %e form
  // At most: sign, "0.0000", 17 digits, the point, "e+308".
  char text[40];
  int n = 0;
  if (std::signbit(value)) text[n++] = '-';
  int last = first + kPrecision - 1;  // the last significant digit kept, trailing zeros dropped
  if (exponent >= -4 && exponent < kPrecision) {
    const int fraction = first + exponent + 1;  // the index of the first digit after the point
    while (last >= fraction && digits[last] == 0) --last;
    if (exponent < 0) {
      text[n++] = '0';
      text[n++] = '.';
      for (int i = exponent + 1; i < 0; ++i) text[n++] = '0';
    }
    for (int i = first; i <= last || i < fraction; ++i) {
      if (i == fraction && exponent >= 0) text[n++] = '.';
      text[n++] = static_cast<char>('0' + digits[i]);
    }
    return std::string(text, static_cast<size_t>(n));
  }
  while (last > first && digits[last] == 0) --last;
  for (int i = first; i <= last; ++i) {
    text[n++] = static_cast<char>('0' + digits[i]);
    if (i == first && last > first) text[n++] = '.';
  }
  text[n++] = 'e';
  text[n++] = exponent < 0 ? '-' : '+';
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude >= 100) text[n++] = static_cast<char>('0' + magnitude / 100);
  text[n++] = static_cast<char>('0' + magnitude / 10 % 10);
  text[n++] = static_cast<char>('0' + magnitude % 10);
  return std::string(text, static_cast<size_t>(n));
}

}  // namespace mha
