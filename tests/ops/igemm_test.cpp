// SPDX-License-Identifier: Apache-2.0
// The int8 product (igemm.h), on this machine's kernel (VNNI or AVX2): pack_int8_b's layout byte by
// byte, and igemm_packed against sums in int64 on partial tiles, depths that cross the kernel's
// depth blocks or end in a partial group or pair, strided operands, extreme values and several
// threads.
#include "core/ops/igemm.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace vn::ops::testing {
namespace {

std::vector<int8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  return v;
}

TEST(Int8Pack, EveryByteWhereTheLayoutSays) {
  // 45 columns: a full panel and a partial one; 13 rows: three groups of four and a partial one,
  // or six pairs and a partial one; rows 50 bytes apart. Packed starts as a sentinel, so every
  // byte must be written. The layout is this machine's (VNNI or AVX2).
  constexpr int64_t k = 13, n = 45, ldb = 50;
  const std::vector<int8_t> b = random_bytes(static_cast<size_t>(k * ldb), 3);
  std::vector<uint8_t> packed(static_cast<size_t>(packed_int8_b_size(k, n)), 0xAB);
  const bool vnni = igemm_uses_vnni();
  const int64_t rows_per_step = vnni ? 4 : 2, steps = (k + rows_per_step - 1) / rows_per_step;
  ASSERT_EQ(packed.size(), static_cast<size_t>(2 * steps * 4 * kInt8PackCols));
  pack_int8_b(k, n, b.data(), ldb, packed.data(), 2);
  for (int64_t panel = 0; panel < 2; ++panel) {
    for (int64_t step = 0; step < steps; ++step) {
      for (int64_t col = 0; col < kInt8PackCols; ++col) {
        for (int64_t q = 0; q < rows_per_step; ++q) {
          const int64_t row = rows_per_step * step + q, j = panel * kInt8PackCols + col;
          const int want = row < k && j < n ? b[static_cast<size_t>(row * ldb + j)] : 0;
          const size_t at = static_cast<size_t>(panel * int8_panel_bytes(k) + step * 4 * kInt8PackCols);
          if (vnni) {
            // Bytes offset by 128, four rows of a column together.
            const uint8_t got = packed[at + static_cast<size_t>(col * 4 + q)];
            ASSERT_EQ(got, row < k && j < n ? static_cast<uint8_t>(want + 128) : 0) << "row " << row << " column " << j;
          } else {
            // int16 values as they are, two rows of a column together.
            int16_t got = 0;
            std::memcpy(&got, packed.data() + at + static_cast<size_t>(col * 4 + 2 * q), sizeof(got));
            ASSERT_EQ(got, want) << "row " << row << " column " << j;
          }
        }
      }
    }
  }
}

struct Case {
  int64_t m, n, k;
  int threads;
};

// C from igemm_packed with A rows lda > k apart and C rows ldc > n apart, against int64 sums;
// `fill` (when not 0) sets every byte of A and B to it instead of random ones.
void expect_exact(const Case& c, int8_t fill, uint32_t seed) {
  const int64_t lda = c.k + 3, ldc = c.n + 5;
  std::vector<int8_t> a = random_bytes(static_cast<size_t>(c.m * lda), seed);
  std::vector<int8_t> b = random_bytes(static_cast<size_t>(c.k * c.n), seed + 1);
  if (fill != 0) {
    a.assign(a.size(), fill);
    b.assign(b.size(), fill);
  }
  std::vector<uint8_t> packed(static_cast<size_t>(packed_int8_b_size(c.k, c.n)));
  pack_int8_b(c.k, c.n, b.data(), c.n, packed.data(), c.threads);
  std::vector<int32_t> offsets(static_cast<size_t>(c.m));
  int8_row_offsets(c.m, c.k, a.data(), lda, offsets.data());
  std::vector<int32_t> y(static_cast<size_t>(c.m * ldc), -5);
  igemm_packed(c.m, c.n, c.k, a.data(), lda, offsets.data(), packed.data(), y.data(), ldc, c.threads);
  const std::string where = "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                            " threads=" + std::to_string(c.threads);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      int64_t want = -5;  // C's padding between rows is left alone
      if (j < c.n) {
        want = 0;
        for (int64_t p = 0; p < c.k; ++p)
          want += int64_t{a[static_cast<size_t>(i * lda + p)]} * b[static_cast<size_t>(p * c.n + j)];
      }
      ASSERT_EQ(y[static_cast<size_t>(i * ldc + j)], want) << where << " at " << i << "," << j;
    }
  }
}

TEST(Igemm, ExactOnEveryTileShapeAndDepth) {
  if (!igemm_available()) GTEST_SKIP() << "this CPU (or build) has neither AVX-512 VNNI nor AVX2";
  const Case cases[] = {
      {1, 1, 1, 1},      {12, 32, 4, 1},    {13, 33, 5, 1},  {7, 16, 3, 1},     {11, 17, 7, 1},
      {25, 70, 1030, 1}, {64, 100, 600, 3}, {30, 9, 515, 2}, {100, 300, 36, 4}, {5, 1000, 2049, 3},
  };
  uint32_t seed = 20;
  for (const Case& c : cases) expect_exact(c, 0, seed += 2);
}

TEST(Igemm, ExtremeValuesSumExactly) {
  if (!igemm_available()) GTEST_SKIP() << "this CPU (or build) has neither AVX-512 VNNI nor AVX2";
  // -128 · -128 over 3001 terms: 49 million, past float32's exact integers; B's offset bytes are 0
  // and A's row sums the most negative they can be.
  expect_exact({14, 40, 3001, 2}, -128, 1);
  expect_exact({14, 40, 3001, 2}, 127, 1);
}

TEST(Igemm, FinishSeesEveryBlockOnceAndComplete) {
  if (!igemm_available()) GTEST_SKIP() << "this CPU (or build) has neither AVX-512 VNNI nor AVX2";
  for (const int threads : {1, 3}) {
    constexpr int64_t m = 50, n = 300, k = 40;
    const std::vector<int8_t> a = random_bytes(static_cast<size_t>(m * k), 9),
                              b = random_bytes(static_cast<size_t>(k * n), 10);
    std::vector<uint8_t> packed(static_cast<size_t>(packed_int8_b_size(k, n)));
    pack_int8_b(k, n, b.data(), n, packed.data());
    std::vector<int32_t> offsets(static_cast<size_t>(m));
    int8_row_offsets(m, k, a.data(), k, offsets.data());
    std::vector<int32_t> y(static_cast<size_t>(m * n));
    // Blocks are disjoint, so the threads that finish them write disjoint counters.
    std::vector<int> seen(static_cast<size_t>(m * n), 0), complete(static_cast<size_t>(m * n), 0);
    const Int8Finish finish = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) {
          int64_t want = 0;
          for (int64_t p = 0; p < k; ++p)
            want += int64_t{a[static_cast<size_t>(i * k + p)]} * b[static_cast<size_t>(p * n + j)];
          ++seen[static_cast<size_t>(i * n + j)];
          complete[static_cast<size_t>(i * n + j)] = y[static_cast<size_t>(i * n + j)] == want;
        }
      }
    };
    igemm_packed(m, n, k, a.data(), k, offsets.data(), packed.data(), y.data(), n, threads, &finish);
    for (size_t i = 0; i < seen.size(); ++i) {
      ASSERT_EQ(seen[i], 1) << "element " << i << " on " << threads << " thread(s)";
      ASSERT_EQ(complete[i], 1) << "element " << i << " on " << threads << " thread(s)";
    }
  }
}

TEST(Igemm, NoDepthGivesZeros) {
  if (!igemm_available()) GTEST_SKIP() << "this CPU (or build) has neither AVX-512 VNNI nor AVX2";
  std::vector<int32_t> y(6, 9);
  const int8_t a = 0;
  const int32_t offsets[2] = {0, 0};
  igemm_packed(2, 3, 0, &a, 0, offsets, nullptr, y.data(), 3);
  EXPECT_EQ(y, std::vector<int32_t>(6, 0));
}

}  // namespace
}  // namespace vn::ops::testing
