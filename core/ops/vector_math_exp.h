// SPDX-License-Identifier: Apache-2.0
// The constants of vector_math.cpp's exp (see there), shared with its AVX-512 instance
// (vector_math_avx512.cpp). Internal to core/ops.
#pragma once

namespace vn::ops::vmath::exp_detail {

constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kLn2Hi = 0x1.62e42fefa39efp-1;
constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;
/// Adding 1.5 * 2^52 rounds a double of magnitude below 2^51 to an integer, which then sits in the
/// low bits of the sum.
constexpr double kShifter = 0x1.8p52;
/// P(r) ~ (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2], highest degree first.
constexpr double kExpP[] = {0x1.af389eeb9e5e9p-26, 0x1.28917ca046b86p-22, 0x1.71de0db2eafc6p-19, 0x1.a019b9148739fp-16,
                            0x1.a01a01a7c2f2ep-13, 0x1.6c16c17889f40p-10, 0x1.11111111109b5p-7,  0x1.5555555553d68p-5,
                            0x1.5555555555556p-3,  0x1.0000000000001p-1};
/// exp of a float beyond these rounds to +inf (above 88.7228...) or +0 (below -103.97...).
constexpr double kExpMin = -104.0;
constexpr double kExpMax = 89.0;

}  // namespace vn::ops::vmath::exp_detail
