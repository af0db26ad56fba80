// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <random>

namespace vn::data {

/// numpy.random.RandomState(seed) reproduced bit for bit: the same MT19937 stream and the same
/// derivations numpy's legacy generator uses for random_sample and bounded randint per dtype.
/// Polygraphy's synthetic inputs come from this generator, so matching it lets a user reproduce
/// a Polygraphy run exactly.
class NumpyRandomState {
 public:
  /// Seeds like RandomState(seed): MT19937 init_genrand with the low 32 bits.
  explicit NumpyRandomState(uint32_t seed) : mt_(seed) {}

  uint32_t next_uint32() { return static_cast<uint32_t>(mt_()); }
  uint64_t next_uint64();
  /// random_sample(): a double in [0, 1) with 53 random bits (genrand_res53).
  double random_sample();

  /// randint(low, low + range + 1) for dtypes of 32 or 64 bits: masked rejection sampling on
  /// 32-bit draws when the range fits in 32 bits, on 64-bit draws otherwise.
  uint64_t bounded_uint64(uint64_t range);
  uint32_t bounded_uint32(uint32_t range);
  /// The same for 16- and 8-bit dtypes, which numpy serves from a buffered 32-bit draw
  /// (two 16-bit or four 8-bit pieces per draw, low bits first). Buffer state lives in the
  /// caller's BitBuffer because numpy resets it for every randint call.
  struct BitBuffer {
    uint32_t bits = 0;
    int remaining = 0;
  };
  uint16_t bounded_uint16(uint16_t range, BitBuffer& buffer);
  uint8_t bounded_uint8(uint8_t range, BitBuffer& buffer);
  /// randint(0, 2, dtype=bool): one bit per value from a buffered 32-bit draw, low bits first.
  bool random_bool(BitBuffer& buffer);

 private:
  std::mt19937 mt_;
};

}  // namespace vn::data
