// SPDX-License-Identifier: Apache-2.0
#include "core/data/numpy_random.h"

namespace vn::data {
namespace {

template <typename U>
U mask_for(U range) {
  U mask = range;
  for (unsigned shift = 1; shift < sizeof(U) * 8; shift <<= 1) mask |= static_cast<U>(mask >> shift);
  return mask;
}

}  // namespace

uint64_t NumpyRandomState::next_uint64() {
  const uint64_t hi = next_uint32();
  return (hi << 32) | next_uint32();
}

double NumpyRandomState::random_sample() {
  const uint32_t a = next_uint32() >> 5;
  const uint32_t b = next_uint32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

uint64_t NumpyRandomState::bounded_uint64(uint64_t range) {
  if (range == 0) return 0;
  if (range <= 0xFFFFFFFFull) {
    if (range == 0xFFFFFFFFull) return next_uint32();
    return bounded_uint32(static_cast<uint32_t>(range));
  }
  if (range == ~uint64_t{0}) return next_uint64();
  const uint64_t mask = mask_for(range);
  uint64_t v;
  while ((v = next_uint64() & mask) > range) {
  }
  return v;
}

uint32_t NumpyRandomState::bounded_uint32(uint32_t range) {
  if (range == 0) return 0;
  if (range == 0xFFFFFFFFu) return next_uint32();
  const uint32_t mask = mask_for(range);
  uint32_t v;
  while ((v = next_uint32() & mask) > range) {
  }
  return v;
}

uint16_t NumpyRandomState::bounded_uint16(uint16_t range, BitBuffer& buffer) {
  if (range == 0) return 0;
  const uint16_t mask = mask_for(range);
  for (;;) {
    if (buffer.remaining == 0) {
      buffer.bits = next_uint32();
      buffer.remaining = 1;
    } else {
      buffer.bits >>= 16;
      buffer.remaining -= 1;
    }
    const auto v = static_cast<uint16_t>(static_cast<uint16_t>(buffer.bits) & mask);
    if (range == 0xFFFF || v <= range) return v;
  }
}

uint8_t NumpyRandomState::bounded_uint8(uint8_t range, BitBuffer& buffer) {
  if (range == 0) return 0;
  const uint8_t mask = mask_for(range);
  for (;;) {
    if (buffer.remaining == 0) {
      buffer.bits = next_uint32();
      buffer.remaining = 3;
    } else {
      buffer.bits >>= 8;
      buffer.remaining -= 1;
    }
    const auto v = static_cast<uint8_t>(static_cast<uint8_t>(buffer.bits) & mask);
    if (range == 0xFF || v <= range) return v;
  }
}

bool NumpyRandomState::random_bool(BitBuffer& buffer) {
  if (buffer.remaining == 0) {
    buffer.bits = next_uint32();
    buffer.remaining = 31;
  } else {
    buffer.bits >>= 1;
    buffer.remaining -= 1;
  }
  return (buffer.bits & 1u) != 0;
}

}  // namespace vn::data
