// SPDX-License-Identifier: Apache-2.0
#include "core/ir/narrow_types.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vn {
namespace {

/// A small IEEE-like float: sign, `ebits` exponent bits with `bias`, `mbits` mantissa bits.
struct MiniFloat {
  int ebits;
  int mbits;
  int bias;
  double max;  // largest finite value
  enum class Specials { kIeee, kFn, kFnuz, kNone } specials;
};

constexpr MiniFloat mini(NarrowFormat f) {
  switch (f) {
    case NarrowFormat::kE4M3FN: return {4, 3, 7, 448.0, MiniFloat::Specials::kFn};
    case NarrowFormat::kE4M3FNUZ: return {4, 3, 8, 240.0, MiniFloat::Specials::kFnuz};
    case NarrowFormat::kE5M2: return {5, 2, 15, 57344.0, MiniFloat::Specials::kIeee};
    case NarrowFormat::kE5M2FNUZ: return {5, 2, 16, 57344.0, MiniFloat::Specials::kFnuz};
    case NarrowFormat::kE2M1: return {2, 1, 1, 6.0, MiniFloat::Specials::kNone};
    default: return {0, 0, 0, 0.0, MiniFloat::Specials::kNone};
  }
}

int int_bits(NarrowFormat f) {
  return f == NarrowFormat::kInt4 || f == NarrowFormat::kUInt4 ? 4 : 2;
}
bool int_signed(NarrowFormat f) { return f == NarrowFormat::kInt4 || f == NarrowFormat::kInt2; }

double mini_decode(const MiniFloat& m, uint8_t code) {
  const int width = 1 + m.ebits + m.mbits;
  const bool negative = (code >> (width - 1)) & 1;
  const int e = (code >> m.mbits) & ((1 << m.ebits) - 1);
  const int man = code & ((1 << m.mbits) - 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int emax = (1 << m.ebits) - 1;
  switch (m.specials) {
    case MiniFloat::Specials::kIeee:
      if (e == emax) return man == 0 ? (negative ? -1.0 : 1.0) * std::numeric_limits<double>::infinity() : nan;
      break;
    case MiniFloat::Specials::kFn:
      if (e == emax && man == (1 << m.mbits) - 1) return nan;
      break;
    case MiniFloat::Specials::kFnuz:
      if (code == 0x80) return nan;
      break;
    case MiniFloat::Specials::kNone: break;
  }
  const double magnitude = e == 0 ? std::ldexp(man, 1 - m.bias - m.mbits)
                                  : std::ldexp((1 << m.mbits) + man, e - m.bias - m.mbits);
  return negative ? -magnitude : magnitude;
}

uint8_t mini_encode(const MiniFloat& m, double v, bool saturate) {
  const int width = 1 + m.ebits + m.mbits;
  const uint8_t sign = std::signbit(v) ? static_cast<uint8_t>(1u << (width - 1)) : 0;
  const bool fnuz = m.specials == MiniFloat::Specials::kFnuz;
  if (std::isnan(v)) {
    switch (m.specials) {
      case MiniFloat::Specials::kIeee: return sign | 0x7E;
      case MiniFloat::Specials::kFn: return sign | 0x7F;
      case MiniFloat::Specials::kFnuz: return 0x80;
      case MiniFloat::Specials::kNone: return 0x08;  // ml_dtypes gives -0, whatever the NaN's sign
    }
  }
  const double a = std::fabs(v);
  // The code of a magnitude already on the type's grid and within range.
  const auto code_of = [&](double x) -> uint8_t {
    if (x == 0.0) return 0;
    const int min_exp = 1 - m.bias;
    int e = std::max(std::ilogb(x), min_exp);
    auto q = static_cast<int64_t>(std::ldexp(x, m.mbits - e));
    if (e == min_exp && q < (int64_t{1} << m.mbits)) return static_cast<uint8_t>(q);  // subnormal
    return static_cast<uint8_t>(((e + m.bias) << m.mbits) | (q - (int64_t{1} << m.mbits)));
  };
  const auto overflow = [&]() -> uint8_t {
    if (saturate || m.specials == MiniFloat::Specials::kNone) return sign | code_of(m.max);
    switch (m.specials) {
      case MiniFloat::Specials::kIeee: return sign | static_cast<uint8_t>(((1 << m.ebits) - 1) << m.mbits);
      case MiniFloat::Specials::kFn: return sign | 0x7F;
      default: return 0x80;
    }
  };
  if (std::isinf(a)) return overflow();
  double rounded = 0.0;
  if (a > 0.0) {
    const int e = std::max(std::ilogb(a), 1 - m.bias);
    const double quantum = std::ldexp(1.0, e - m.mbits);
    rounded = std::nearbyint(a / quantum) * quantum;  // ties to even in the default rounding mode
  }
  if (rounded > m.max) return overflow();
  if (rounded == 0.0 && fnuz) return 0;
  return sign | code_of(rounded);
}

uint8_t e8m0_encode(double v, const NarrowCastOptions& o) {
  if (std::isnan(v)) return 0xFF;
  const double a = std::fabs(v);
  if (std::isinf(a)) return o.saturate ? 0xFE : 0xFF;
  if (a == 0.0) return 0;
  int e = std::ilogb(a);
  const double frac = std::ldexp(a, -e) - 1.0;  // in [0, 1)
  if ((o.rounding == E8M0Rounding::kUp && frac > 0.0) || (o.rounding == E8M0Rounding::kNearest && frac >= 0.5)) ++e;
  const int code = e + 127;
  if (code < 0) return 0;
  if (code > 254) return o.saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(code);
}

uint8_t int_wrap(NarrowFormat f, int64_t v) {
  const int bits = int_bits(f);
  const auto low = static_cast<uint8_t>(static_cast<uint64_t>(v) & ((1u << bits) - 1));
  if (int_signed(f) && (low >> (bits - 1))) return static_cast<uint8_t>(low | (0xFFu << bits));
  return low;
}

}  // namespace

double narrow_decode(NarrowFormat format, uint8_t code) {
  switch (format) {
    case NarrowFormat::kE8M0:
      return code == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, code - 127);
    case NarrowFormat::kInt4:
    case NarrowFormat::kInt2: return static_cast<int8_t>(code);
    case NarrowFormat::kUInt4:
    case NarrowFormat::kUInt2: return code;
    default: return mini_decode(mini(format), code);
  }
}

uint8_t narrow_encode(NarrowFormat format, double v, const NarrowCastOptions& options) {
  switch (format) {
    case NarrowFormat::kE8M0: return e8m0_encode(v, options);
    case NarrowFormat::kInt4:
    case NarrowFormat::kUInt4:
    case NarrowFormat::kInt2:
    case NarrowFormat::kUInt2: {
      if (std::isnan(v)) return 0;
      // Truncation toward zero; beyond int64 the low bits are zero anyway.
      const double t = std::trunc(v);
      if (!(std::fabs(t) < 9.2e18)) return 0;
      return int_wrap(format, static_cast<int64_t>(t));
    }
    default: return mini_encode(mini(format), v, options.saturate);
  }
}

uint8_t narrow_encode_int(NarrowFormat format, int64_t v, const NarrowCastOptions& options) {
  if (narrow_is_integer(format)) return int_wrap(format, v);
  return narrow_encode(format, static_cast<double>(v), options);
}

bool narrow_is_integer(NarrowFormat format) {
  return format == NarrowFormat::kInt4 || format == NarrowFormat::kUInt4 || format == NarrowFormat::kInt2 ||
         format == NarrowFormat::kUInt2;
}

int narrow_packed_bits(NarrowFormat format) {
  switch (format) {
    case NarrowFormat::kE2M1:
    case NarrowFormat::kInt4:
    case NarrowFormat::kUInt4: return 4;
    case NarrowFormat::kInt2:
    case NarrowFormat::kUInt2: return 2;
    default: return 8;
  }
}

int64_t narrow_first_invalid(NarrowFormat format, const uint8_t* codes, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t c = codes[i];
    bool ok = true;
    switch (format) {
      case NarrowFormat::kE2M1:
      case NarrowFormat::kUInt4: ok = c <= 0x0F; break;
      case NarrowFormat::kUInt2: ok = c <= 0x03; break;
      case NarrowFormat::kInt4: ok = static_cast<int8_t>(c) >= -8 && static_cast<int8_t>(c) <= 7; break;
      case NarrowFormat::kInt2: ok = static_cast<int8_t>(c) >= -2 && static_cast<int8_t>(c) <= 1; break;
      default: break;
    }
    if (!ok) return i;
  }
  return -1;
}

size_t narrow_packed_size(NarrowFormat format, int64_t n) {
  const int per_byte = 8 / narrow_packed_bits(format);
  return static_cast<size_t>((n + per_byte - 1) / per_byte);
}

void narrow_pack(NarrowFormat format, const uint8_t* codes, int64_t n, uint8_t* packed) {
  const int bits = narrow_packed_bits(format);
  const int per_byte = 8 / bits;
  const size_t size = narrow_packed_size(format, n);
  for (size_t k = 0; k < size; ++k) packed[k] = 0;
  const auto mask = static_cast<unsigned>((1u << bits) - 1);
  for (int64_t i = 0; i < n; ++i) {
    packed[i / per_byte] = static_cast<uint8_t>(packed[i / per_byte] | ((codes[i] & mask) << ((i % per_byte) * bits)));
  }
}

void narrow_unpack(NarrowFormat format, const uint8_t* packed, int64_t n, uint8_t* codes) {
  const int bits = narrow_packed_bits(format);
  const int per_byte = 8 / bits;
  const auto mask = static_cast<unsigned>((1u << bits) - 1);
  const bool sign_extend = format == NarrowFormat::kInt4 || format == NarrowFormat::kInt2;
  for (int64_t i = 0; i < n; ++i) {
    auto c = static_cast<uint8_t>((packed[i / per_byte] >> ((i % per_byte) * bits)) & mask);
    if (sign_extend && (c >> (bits - 1))) c = static_cast<uint8_t>(c | (0xFFu << bits));
    codes[i] = c;
  }
}

}  // namespace vn
