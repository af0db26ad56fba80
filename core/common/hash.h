// SPDX-License-Identifier: Apache-2.0
// The hashes whose values must reproduce across runs, builds and platforms (std::hash need not):
// file names, builder seeds, fault draws, tactic replay ids, model digests.
#pragma once

#include <cstdint>
#include <string_view>

namespace vn {

inline constexpr uint64_t kFnv1aBasis = 14695981039346656037ull;
inline constexpr uint64_t kFnv1aPrime = 1099511628211ull;

/// FNV-1a, 64 bits, of `bytes`, continuing from `h` (the basis for a fresh hash).
constexpr uint64_t fnv1a(std::string_view bytes, uint64_t h = kFnv1aBasis) {
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnv1aPrime;
  }
  return h;
}

/// One FNV-1a step over a whole 64-bit word (for hashing numbers without their bytes' order).
constexpr uint64_t fnv1a_word(uint64_t h, uint64_t word) { return (h ^ word) * kFnv1aPrime; }

/// SplitMix64: `x` mixed into 64 well-spread bits, so that counter-based draws (element i, seed s)
/// do not depend on what else was drawn.
constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace vn
