// Small helpers of the model loader: half-precision conversions and shapes as text.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "mha/attention.h"

namespace mha::models {

// IEEE binary16 -> float32, subnormals, infinities and NaN included.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, fraction = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (fraction == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      uint32_t f = fraction;
      do {
        ++e;
        f <<= 1;
      } while ((f & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (f & 0x3ffu) << 13;
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | fraction << 13;
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | fraction << 13;
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// bfloat16 is float32's upper half.
inline float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = uint32_t{b} << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace mha::models
