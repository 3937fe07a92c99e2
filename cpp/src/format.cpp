// printf's %.17g from the exact decimal expansion of a double (see the header), in three steps:
// expand |value| = m * 2^e (m < 2^53, an integer) into decimal digits by doubling or halving
// m; round at the 17th significant digit, half to even on the exact tail; write the digits in
// %g's fixed or exponent form, trailing zeros dropped.
#include "mha/format.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace mha {

namespace {

constexpr int kPrecision = 17;

// Decimal digits (0-9) at[first .. count), the point after at[point - 1]. m has at most 16
// digits; doubling adds at most 309 before the point, halving at most 1074 after it (leading
// zeros included).
struct Digits {
  char at[16 + 309 + 1074 + 2];
  int count = 0;
  int first = 0;
  int point = 0;
};

void expand(double magnitude, Digits* d) {
  int e = 0;
  const uint64_t m = static_cast<uint64_t>(std::ldexp(std::frexp(magnitude, &e), 53));  // magnitude = m * 2^(e - 53)
  e -= 53;
  for (uint64_t r = m; r; r /= 10) d->at[d->count++] = static_cast<char>(r % 10);
  for (int i = 0; i < d->count / 2; ++i) std::swap(d->at[i], d->at[d->count - 1 - i]);
  d->point = d->count;
  for (; e > 0; --e) {  // * 2
    int carry = 0;
    for (int i = d->count; i-- > 0;) {
      const int v = d->at[i] * 2 + carry;
      d->at[i] = static_cast<char>(v % 10);
      carry = v / 10;
    }
    if (carry) {
      for (int i = d->count++; i > 0; --i) d->at[i] = d->at[i - 1];
      d->at[0] = static_cast<char>(carry);
      ++d->point;
    }
  }
  for (; e < 0; ++e) {  // / 2, one more digit after the point when odd
    if (d->at[d->count - 1] % 2) d->at[d->count++] = 0;
    int remainder = 0;
    for (int i = 0; i < d->count; ++i) {
      const int v = remainder * 10 + d->at[i];
      d->at[i] = static_cast<char>(v / 2);
      remainder = v % 2;
    }
  }
  while (d->at[d->first] == 0) ++d->first;
}

// Keeps kPrecision significant digits (zeros appended when there are fewer).
void round_half_even(Digits* d) {
  const int cut = d->first + kPrecision;
  if (cut < d->count) {
    bool tail = false;
    for (int i = cut + 1; i < d->count; ++i) tail = tail || d->at[i] != 0;
    const bool up = d->at[cut] > 5 || (d->at[cut] == 5 && (tail || d->at[cut - 1] % 2));
    int i = cut - 1;
    for (; up && i >= d->first && d->at[i] == 9; --i) d->at[i] = 0;
    if (up && i >= d->first) ++d->at[i];
    if (up && i < d->first) {  // 9...9 became 0...0: a 1 before them
      if (d->first == 0) {
        for (int j = d->count++; j > 0; --j) d->at[j] = d->at[j - 1];
        ++d->point;
        ++d->first;
      }
      d->at[--d->first] = 1;
    }
  }
  for (int i = d->count; i < d->first + kPrecision; ++i) d->at[i] = 0;
}

// %g: fixed when the exponent is in [-4, 17), else d.ddde+XX; no trailing zeros.
std::string write_g(const Digits& d, bool negative) {
  const int exponent = d.point - d.first - 1;  // of the %e form
  char text[40];  // sign, "0.0000", 17 digits, the point, "e+308"
  int n = 0;
  if (negative) text[n++] = '-';
  int last = d.first + kPrecision - 1;  // the last digit written
  if (exponent >= -4 && exponent < kPrecision) {
    const int fraction = d.first + exponent + 1;  // the index of the first digit after the point
    while (last >= fraction && d.at[last] == 0) --last;
    if (exponent < 0) {
      text[n++] = '0';
      text[n++] = '.';
      for (int i = exponent + 1; i < 0; ++i) text[n++] = '0';
    }
    for (int i = d.first; i <= last || i < fraction; ++i) {
      if (i == fraction && exponent >= 0) text[n++] = '.';
      text[n++] = static_cast<char>('0' + d.at[i]);
    }
    return std::string(text, static_cast<size_t>(n));
  }
  while (last > d.first && d.at[last] == 0) --last;
  for (int i = d.first; i <= last; ++i) {
    text[n++] = static_cast<char>('0' + d.at[i]);
    if (i == d.first && last > d.first) text[n++] = '.';
  }
  text[n++] = 'e';
  text[n++] = exponent < 0 ? '-' : '+';
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude >= 100) text[n++] = static_cast<char>('0' + magnitude / 100);
  text[n++] = static_cast<char>('0' + magnitude / 10 % 10);
  text[n++] = static_cast<char>('0' + magnitude % 10);
  return std::string(text, static_cast<size_t>(n));
}

}  // namespace

std::string format_g17(double value) {
  const bool negative = std::signbit(value);
  if (!std::isfinite(value)) return std::string(negative ? "-" : "") + (std::isnan(value) ? "nan" : "inf");
  if (value == 0) return negative ? "-0" : "0";
  Digits digits;
  expand(std::fabs(value), &digits);
  round_half_even(&digits);
  return write_g(digits, negative);
}

}  // namespace mha
