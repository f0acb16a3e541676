// 16-bit floating-point storage types: IEEE binary16 (Half) and bfloat16.
// They are storage only: convert to float to compute.
//
//   hone::Half h = hone::Half::from_float(1.5f);
//   float f = h.to_float();
//   hone::BFloat16 b = hone::BFloat16::from_float(f);   // round to nearest even
#pragma once

#include <bit>
#include <cstdint>

namespace hone {

struct Half {
  uint16_t bits = 0;

  static Half from_bits(uint16_t b) { return Half{b}; }
  /// Round to nearest even; overflow goes to infinity, NaN stays NaN.
  static Half from_float(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or nan
      return Half{static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u))};
    }
    if (abs >= 0x477ff000u) return Half{static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to inf
    if (abs < 0x38800000u) {  // subnormal half (or zero)
      // value = abs_float; half subnormal unit = 2^-24.
      const float af = std::bit_cast<float>(abs);
      // Scale to units of 2^-24 and round to nearest even using float arithmetic.
      const float scaled = af * 16777216.0f;  // 2^24
      uint32_t q = static_cast<uint32_t>(scaled);
      const float rem = scaled - static_cast<float>(q);
      if (rem > 0.5f || (rem == 0.5f && (q & 1u))) ++q;
      return Half{static_cast<uint16_t>(sign | q)};
    }
    // normal: rebias exponent 127 -> 15, keep 10 mantissa bits, round to nearest even.
    uint32_t m = abs + 0xc8000000u;  // subtract (127-15) << 23
    const uint32_t round_bit = 0x1000u, sticky = 0x0fffu;
    uint32_t h = m >> 13;
    if ((m & round_bit) && ((m & sticky) || (h & 1u))) ++h;
    return Half{static_cast<uint16_t>(sign | h)};
  }
  float to_float() const {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exp = (bits >> 10) & 0x1fu;
    const uint32_t man = bits & 0x3ffu;
    if (exp == 0) {
      const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
      return sign ? -v : v;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
    return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
  }
};

struct BFloat16 {
  uint16_t bits = 0;

  static BFloat16 from_bits(uint16_t b) { return BFloat16{b}; }
  static BFloat16 from_float(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((x >> 16) | 0x40u)};
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return BFloat16{static_cast<uint16_t>((x + rounding) >> 16)};
  }
  float to_float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
};

}  // namespace hone
