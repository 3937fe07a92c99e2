// mha::format_g17 writes what printf's %.17g writes (the C library's, here natively), for doubles
// of every magnitude: random bit patterns, integers, halfway cases, subnormals, zeros and
// non-finite values.
#include "mha/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace mha {
namespace {

std::string printf_g17(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

std::vector<double> Samples() {
  std::vector<double> values = {
      0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 0.125, 0.0000005, 0.0000015, 0.0000025, 1e-7, 9.9999995e-7, 1e17, 1e16,
      99999999999999984.0, 1e23, 5e-324, 2.2250738585072014e-308, std::numeric_limits<double>::max(), 1234567.8945,
      4096, 1ull << 53, 9007199254740993.0, 0.1, 0.2, 0.3, 123456789012345678.0, 1e300, 4.35, 2.675,
  };
  for (int k = -30; k <= 308; ++k) {  // around powers of ten, where rounding carries into a new digit
    double v = std::pow(10.0, k);
    for (int step = 0; step < 3; ++step) v = std::nextafter(v, 0.0);
    for (int step = 0; step < 6; ++step, v = std::nextafter(v, HUGE_VAL)) values.push_back(v);
  }
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) values.push_back(v);
  }
  for (int i = 0; i < 800; ++i) {
    values.push_back(static_cast<double>(rng() >> (rng() % 64)));                    // integers
    values.push_back(std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(rng() % 80)));  // binary fractions
    values.push_back(static_cast<double>(rng() % 2000000) / 8.0 - 125000.0);          // halves, quarters, eighths
  }
  return values;
}

TEST(Format, G17IsPrintfs) {
  int compared = 0;
  for (double v : Samples()) {
    ASSERT_EQ(format_g17(v), printf_g17(v)) << "bits " << std::hexfloat << v;
    ++compared;
  }
  std::printf("%d values: format_g17 writes what printf(\"%%.17g\") writes\n", compared);
}

TEST(Format, NonFinite) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(format_g17(inf), "inf");
  EXPECT_EQ(format_g17(-inf), "-inf");
  EXPECT_EQ(format_g17(std::numeric_limits<double>::quiet_NaN()), "nan");
}

}  // namespace
}  // namespace mha
