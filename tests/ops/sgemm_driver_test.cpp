// SPDX-License-Identifier: Apache-2.0
// sgemm (sgemm_driver.h), the float32 product of MatMul and Gemm, against a product in double:
// every combination of transposes, strided operands, few rows and many, columns in several packed
// chunks, split over threads; and the same bits at every thread count and inside a batch.
#include "core/ops/sgemm_driver.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace vn::ops::testing {
namespace {

struct Case {
  GemmShape s;
  std::vector<float> a, b;
  std::vector<double> want;  // m x n
};

/// The product in double of the case's operands.
void compute_want(Case& c) {
  const GemmShape& s = c.s;
  const auto at_a = [&](int64_t i, int64_t p) {
    return c.a[static_cast<size_t>(s.trans_a ? p * s.lda + i : i * s.lda + p)];
  };
  const auto at_b = [&](int64_t p, int64_t j) {
    return c.b[static_cast<size_t>(s.trans_b ? j * s.ldb + p : p * s.ldb + j)];
  };
  c.want.assign(static_cast<size_t>(s.m * s.n), 0.0);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < s.k; ++p) acc += static_cast<double>(at_a(i, p)) * at_b(p, j);
      c.want[static_cast<size_t>(i * s.n + j)] = acc;
    }
  }
}

/// Operands stored with rows wider than they need (lda, ldb past the used columns hold NaN, which
/// must never reach C).
Case make(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Case c;
  const int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  c.s = GemmShape{trans_a, trans_b, m, n, k, a_cols + 2, b_cols + 5, n + 3};
  c.a.assign(static_cast<size_t>(a_rows * c.s.lda), NAN);
  c.b.assign(static_cast<size_t>(b_rows * c.s.ldb), NAN);
  for (int64_t r = 0; r < a_rows; ++r)
    for (int64_t q = 0; q < a_cols; ++q) c.a[static_cast<size_t>(r * c.s.lda + q)] = dist(rng);
  for (int64_t r = 0; r < b_rows; ++r)
    for (int64_t q = 0; q < b_cols; ++q) c.b[static_cast<size_t>(r * c.s.ldb + q)] = dist(rng);
  compute_want(c);
  return c;
}

std::string fmt_case(const GemmShape& s) {
  return "trans_a=" + std::to_string(s.trans_a) + " trans_b=" + std::to_string(s.trans_b) +
         " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k);
}

/// C from sgemm at `threads`, with a sentinel past each row's n columns.
std::vector<float> run(const Case& c, int threads) {
  std::vector<float> out(static_cast<size_t>(c.s.m * c.s.ldc), 42.0f);
  sgemm(c.s, c.a.data(), c.b.data(), out.data(), threads);
  return out;
}

void check(const Case& c, const std::vector<float>& out) {
  for (int64_t i = 0; i < c.s.m; ++i) {
    for (int64_t j = 0; j < c.s.n; ++j) {
      const double want = c.want[static_cast<size_t>(i * c.s.n + j)];
      // Float32 sums of k products of magnitude <= 1, in any order.
      ASSERT_NEAR(out[static_cast<size_t>(i * c.s.ldc + j)], want,
                  1e-6 * static_cast<double>(c.s.k + 1) + 1e-6 * std::abs(want))
          << i << "," << j;
    }
    for (int64_t j = c.s.n; j < c.s.ldc; ++j) ASSERT_EQ(out[static_cast<size_t>(i * c.s.ldc + j)], 42.0f);
  }
}

TEST(Sgemm, MatchesTheProductForEveryLayoutAndTheSameBitsAtAnyThreadCount) {
  // Few rows (<= 4: dot products or scaled rows), partial row blocks, partial and half panels;
  // depths of none, one pass and several; 1200 columns at depth 600 pack in two chunks.
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (int64_t m : {1, 4, 5, 19, 200}) {
        for (int64_t n : {1, 17, 33, 1200}) {
          for (int64_t k : {0, 1, 37, 600}) {
            if (m * n * k > 2'000'000) continue;  // the double product's time (sanitized, unoptimized)
            const Case c = make(ta, tb, m, n, k, static_cast<uint32_t>(m * 7919 + n * 31 + k));
            SCOPED_TRACE(fmt_case(c.s));
            const std::vector<float> one = run(c, 1);
            check(c, one);
            for (int threads : {2, 3, 8}) EXPECT_EQ(run(c, threads), one) << threads << " threads";
          }
        }
      }
    }
  }
}

TEST(Sgemm, LargeProductsSplitOverThreadsGiveTheBitsOfOneThread) {
  for (bool tb : {false, true}) {
    const Case c = make(false, tb, 150, 700, 300, 7);
    const std::vector<float> one = run(c, 1);
    check(c, one);
    EXPECT_EQ(run(c, 4), one);
  }
}

TEST(Sgemm, ChunksOfPackedColumnsSplitIntoTasksStayInsideTheirChunk) {
  // 1200 columns at depth 600 pack in chunks of 27 panels and 11; few row blocks make the tasks
  // split the chunk's panels. On a fresh thread the packed buffer has exactly one chunk's size,
  // so a task reading past its chunk reads past the buffer (the sanitizer pass runs this).
  for (int64_t m : {5, 40}) {
    const Case c = make(false, false, m, 1200, 600, 11);
    std::vector<float> out;
    std::thread([&] { out = run(c, 2); }).join();
    check(c, out);
  }
}

TEST(Sgemm, APanelTransformGivesTheProductOfTheTransformedB) {
  // Rounding B's packed panels (as the engine rounds weights to its operand format) must equal
  // the product of a B rounded beforehand, with few rows too (which otherwise skip packing) and
  // with B's columns in several chunks.
  const PanelTransform to_bf16 = [](std::span<float> v) {
    for (float& x : v) x = std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0xFFFF0000u);
  };
  for (int64_t m : {2, 40}) {
    for (bool tb : {false, true}) {
      Case c = make(false, tb, m, 1200, 600, 13);
      std::vector<float> got(static_cast<size_t>(c.s.m * c.s.ldc), 42.0f);
      sgemm(c.s, c.a.data(), c.b.data(), got.data(), 2, &to_bf16);
      to_bf16(c.b);  // NaN padding stays NaN, and is never read
      compute_want(c);
      SCOPED_TRACE("m=" + std::to_string(m) + " trans_b=" + std::to_string(tb));
      check(c, got);
      // With packed rows the same kernel runs on the same values: the same bits.
      if (m > 4) EXPECT_EQ(got, run(c, 2));
    }
  }
}

TEST(Sgemm, ABatchGivesEachProductTheBitsItHasAlone) {
  const Case c = make(false, false, 40, 70, 90, 3);
  std::vector<std::vector<float>> outs(6, std::vector<float>(static_cast<size_t>(c.s.m * c.s.ldc), 42.0f));
  std::vector<GemmOperands> batch;
  for (auto& o : outs) batch.push_back({c.a.data(), c.b.data(), o.data()});
  sgemm_batched(c.s, batch, 4);
  const std::vector<float> alone = run(c, 1);
  for (const auto& o : outs) EXPECT_EQ(o, alone);
}

}  // namespace
}  // namespace vn::ops::testing
