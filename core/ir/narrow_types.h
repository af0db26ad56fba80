// SPDX-License-Identifier: Apache-2.0
// The element types narrower than a byte's worth of precision that ONNX added after IR version 8:
// float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0), float4e2m1, int4/uint4 and int2/uint2.
//
// In memory every element takes one byte (packing happens only at I/O, see pack_narrow):
//  - the float types hold their bit code (float4e2m1 in the low nibble, the high nibble zero);
//  - the integer types hold their value as int8_t/uint8_t (int4 -1 is 0xFF, uint2 3 is 0x03), as
//    ml_dtypes stores them, so that an .npy file's bytes are the tensor's bytes.
// A byte that is no element of its type (an int4 byte of 0x35, a float4 byte above 0x0F) never
// enters a Tensor: readers check with narrow_first_invalid.
//
// Conversions from double follow ONNX Cast (opset 19 and later) and the reference evaluator that
// wrote ONNX's expected outputs (ml_dtypes):
//  - float8: round to nearest, ties to even, subnormals included. saturate (Cast's default) sends
//    finite values beyond the largest to ±max and ±Inf to ±max; without it they become Inf (e5m2)
//    or NaN (the types without infinities). NaN stays NaN: 0x7F/0xFF (e4m3fn), 0x7E/0xFE (e5m2)
//    with its sign, 0x80 for the fnuz types, which have no negative zero (-0 becomes +0).
//  - float8e8m0 (2^(code-127), 0xFF NaN, no sign, no zero): the exponent of |x| rounded per
//    RoundMode (up: away from zero, the default; down: toward zero; nearest: ties up); beyond
//    2^127 saturates to 0xFE (or NaN without saturate); NaN is 0xFF, ±Inf 0xFE (0xFF without
//    saturate), zero 0x00 (2^-127, the smallest).
//  - float4e2m1 (±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, no Inf or NaN): ties to even, always saturating;
//    NaN becomes -0 (0x8), as ml_dtypes gives it and ONNX's expected outputs hold.
//  - int4/uint4/int2/uint2 from a float: truncated toward zero, then wrapped modulo 2^bits
//    (numpy's astype through ml_dtypes: Cast FLOAT 9.0 to INT4 is -7); NaN becomes 0. From an
//    integer: wrapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vn {

enum class NarrowFormat : uint8_t {
  kE4M3FN,
  kE4M3FNUZ,
  kE5M2,
  kE5M2FNUZ,
  kE8M0,
  kE2M1,
  kInt4,
  kUInt4,
  kInt2,
  kUInt2,
};

/// How float8e8m0 rounds (Cast-24's round_mode).
enum class E8M0Rounding : uint8_t { kUp, kDown, kNearest };

/// Options of a conversion to a narrow type; the defaults are Cast's.
struct NarrowCastOptions {
  bool saturate = true;
  E8M0Rounding rounding = E8M0Rounding::kUp;
};

/// The value of a code (NaN and ±Inf included).
double narrow_decode(NarrowFormat format, uint8_t code);
/// The code of `v` per the rules above.
uint8_t narrow_encode(NarrowFormat format, double v, const NarrowCastOptions& options = {});
/// The code of an integer: exact where it fits; wrapped for the integer types, rounded and saturated
/// for the float types (through narrow_encode).
uint8_t narrow_encode_int(NarrowFormat format, int64_t v, const NarrowCastOptions& options = {});
/// Bits per element in packed form: 4 for float4e2m1 and int4/uint4, 2 for int2/uint2, 8 otherwise.
int narrow_packed_bits(NarrowFormat format);
/// Whether the format is one of the integer types.
bool narrow_is_integer(NarrowFormat format);
/// Index of the first byte of `codes` that is not an element of the type, or -1 when all are.
int64_t narrow_first_invalid(NarrowFormat format, const uint8_t* codes, int64_t n);

/// Bytes that `n` elements take packed (low bits first: element 2k of int4 in the low nibble of
/// byte k, element 2k+1 in the high nibble; int2 four per byte from the lowest bits).
size_t narrow_packed_size(NarrowFormat format, int64_t n);
/// Packs `n` one-byte elements into narrow_packed_size bytes; unused high bits of the last byte are 0.
void narrow_pack(NarrowFormat format, const uint8_t* codes, int64_t n, uint8_t* packed);
/// The inverse of narrow_pack (integer types sign-extended per the in-memory layout).
void narrow_unpack(NarrowFormat format, const uint8_t* packed, int64_t n, uint8_t* codes);

/// One element of a narrow type: a distinct C++ type per format, so that dtype dispatch can name
/// it. Only conversions are defined; arithmetic happens after converting to float or double.
template <NarrowFormat F>
struct Narrow {
  uint8_t bits = 0;

  static constexpr NarrowFormat kFormat = F;
  static constexpr Narrow from_bits(uint8_t b) {
    Narrow n;
    n.bits = b;
    return n;
  }
  static Narrow from_double(double v, const NarrowCastOptions& options = {}) {
    return from_bits(narrow_encode(F, v, options));
  }
  explicit operator double() const { return narrow_decode(F, bits); }
  explicit operator float() const { return static_cast<float>(narrow_decode(F, bits)); }
  friend bool operator==(Narrow a, Narrow b) { return a.bits == b.bits; }
};

using Float8E4M3FN = Narrow<NarrowFormat::kE4M3FN>;
using Float8E4M3FNUZ = Narrow<NarrowFormat::kE4M3FNUZ>;
using Float8E5M2 = Narrow<NarrowFormat::kE5M2>;
using Float8E5M2FNUZ = Narrow<NarrowFormat::kE5M2FNUZ>;
using Float8E8M0 = Narrow<NarrowFormat::kE8M0>;
using Float4E2M1 = Narrow<NarrowFormat::kE2M1>;
using Int4 = Narrow<NarrowFormat::kInt4>;
using UInt4 = Narrow<NarrowFormat::kUInt4>;
using Int2 = Narrow<NarrowFormat::kInt2>;
using UInt2 = Narrow<NarrowFormat::kUInt2>;

/// Whether T is one of the Narrow types.
template <typename T>
inline constexpr bool is_narrow_v = false;
template <NarrowFormat F>
inline constexpr bool is_narrow_v<Narrow<F>> = true;

}  // namespace vn
