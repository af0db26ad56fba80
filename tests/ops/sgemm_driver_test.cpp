// SPDX-License-Identifier: Apache-2.0
// sgemm (sgemm_driver.h), the float32 product of MatMul and Gemm, against a product in double:
// every combination of transposes, strided operands, few rows and many, columns in several packed
// chunks, split over threads; and the same bits at every thread count and inside a batch.
#include "core/ops/sgemm_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/ops/sgemm.h"

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
  // 250 rows are two tasks of 125 even at one thread (21 blocks of 12 rows are over a task's 20),
  // each cut into blocks of 11 and 12 rows.
  for (const int64_t m : {150, 250}) {
    for (bool tb : {false, true}) {
      const Case c = make(false, tb, m, 700, 300, 7);
      SCOPED_TRACE(fmt_case(c.s));
      const std::vector<float> one = run(c, 1);
      check(c, one);
      EXPECT_EQ(run(c, 4), one);
    }
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
      if (m > 4) {
        EXPECT_EQ(got, run(c, 2));
      }
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

/// The case's B as a tensor of its own, the constant a model would hold.
Tensor constant_b(const Case& c) {
  Tensor t(DType::kFloat32, {static_cast<int64_t>(c.b.size())});
  std::copy(c.b.begin(), c.b.end(), t.mutable_data<float>());
  return t;
}

/// sgemm with a finish that checks each block: every element seen once, already at its final
/// sums (`want`, C without a finish), then rewritten (2c + 1), which no later pass may undo.
void expect_finished_blocks(const Case& c, const std::vector<float>& want, int threads,
                            const PanelTransform* transform = nullptr, const Tensor* constant = nullptr,
                            Narrow kept_as = Narrow::kNone) {
  std::vector<float> out(static_cast<size_t>(c.s.m * c.s.ldc), 42.0f);
  std::vector<int> seen(static_cast<size_t>(c.s.m * c.s.n), 0);  // blocks are disjoint: no races
  int64_t blocks = 0;
  std::mutex mutex;
  const GemmFinish finish = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    ASSERT_TRUE(0 <= i0 && i0 < i1 && i1 <= c.s.m && 0 <= j0 && j0 < j1 && j1 <= c.s.n);
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t j = j0; j < j1; ++j) {
        ++seen[static_cast<size_t>(i * c.s.n + j)];
        float& v = out[static_cast<size_t>(i * c.s.ldc + j)];
        ASSERT_EQ(v, want[static_cast<size_t>(i * c.s.ldc + j)]) << i << "," << j;
        v = 2.0f * v + 1.0f;
      }
    }
    const std::lock_guard<std::mutex> lock(mutex);
    ++blocks;
  };
  sgemm(c.s, c.a.data(), constant ? constant->data<float>() : c.b.data(), out.data(), threads, transform, constant,
        kept_as, &finish);
  EXPECT_EQ(seen, std::vector<int>(seen.size(), 1));
  for (int64_t i = 0; i < c.s.m; ++i) {
    for (int64_t j = 0; j < c.s.ldc; ++j) {
      const float w = want[static_cast<size_t>(i * c.s.ldc + j)];
      ASSERT_EQ(out[static_cast<size_t>(i * c.s.ldc + j)], j < c.s.n ? 2.0f * w + 1.0f : w) << i << "," << j;
    }
  }
  // Products of many row blocks are finished a row block at a time, in cache, not all at once.
  if (c.s.m >= 48 && c.s.k > 0) EXPECT_GE(blocks, c.s.m / kPackRows);
}

TEST(Sgemm, AFinishSeesEachBlockOnceWithItsFinalSums) {
  // Few rows (column chunks), packed and transposed A, several passes over k (600 = 3 x 200), no
  // depth, columns packed in two chunks, over one and three threads.
  for (bool ta : {false, true}) {
    for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{3, 300, 70},
                                  {200, 33, 600},
                                  {100, 1200, 600},
                                  {50, 70, 0},
                                  {250, 700, 30}}) {
      const Case c = make(ta, false, m, n, k, static_cast<uint32_t>(m + n + k));
      SCOPED_TRACE(fmt_case(c.s));
      const std::vector<float> want = run(c, 1);
      for (int threads : {1, 3}) expect_finished_blocks(c, want, threads);
    }
  }
  // B's kept panels, and its kept panels rounded to bfloat16 and widened by the tasks.
  const Case c = make(false, true, 60, 300, 70, 23);
  const Tensor owner = constant_b(c);
  expect_finished_blocks(c, run(c, 1), 2, nullptr, &owner);
  const PanelTransform to_bf16 = [](std::span<float> v) {
    for (float& x : v) x = std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0xFFFF0000u);
  };
  std::vector<float> rounded(static_cast<size_t>(c.s.m * c.s.ldc), 42.0f);
  sgemm(c.s, c.a.data(), c.b.data(), rounded.data(), 1, &to_bf16);
  expect_finished_blocks(c, rounded, 2, &to_bf16, &owner, Narrow::kBFloat16);
}

TEST(PackedWeights, AConstantBIsPackedOnceAndGivesTheBitsOfPackingItAtEachProduct) {
  for (bool tb : {false, true}) {
    const Case c = make(false, tb, 40, 300, 70, 13);
    SCOPED_TRACE(fmt_case(c.s));
    const Tensor owner = constant_b(c);
    const std::vector<float> packed_each_time = run(c, 2);
    const size_t before = packed_weights().bytes();
    size_t kept = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (int threads : {1, 3}) {
        std::vector<float> out(static_cast<size_t>(c.s.m * c.s.ldc), 42.0f);
        sgemm(c.s, c.a.data(), owner.data<float>(), out.data(), threads, nullptr, &owner);
        EXPECT_EQ(out, packed_each_time) << "pass " << pass << ", " << threads << " threads";
        // 300 columns: 10 panels of 32 x 70 floats, packed at the first product only (which may
        // also free the panels of the previous case's constant, gone now).
        if (kept == 0) kept = packed_weights().bytes();
        EXPECT_EQ(packed_weights().bytes(), kept);
      }
    }
    EXPECT_GE(kept, 10 * 32 * 70 * sizeof(float));
    EXPECT_LE(kept, before + 10 * 32 * 70 * sizeof(float));
    // The batched products read the same panels.
    std::vector<std::vector<float>> outs(3, std::vector<float>(static_cast<size_t>(c.s.m * c.s.ldc), 42.0f));
    std::vector<GemmOperands> batch;
    for (auto& o : outs) batch.push_back({c.a.data(), owner.data<float>(), o.data()});
    sgemm_batched(c.s, batch, 3, nullptr, &owner);
    for (const auto& o : outs) EXPECT_EQ(o, packed_each_time);
    EXPECT_EQ(packed_weights().bytes(), kept);
  }
}

TEST(PackedWeights, FewRowsPackNothingAndAConstantsPanelsGoWithItsModel) {
  const Case few = make(false, false, 3, 300, 70, 17);
  const Tensor few_owner = constant_b(few);
  const size_t start = packed_weights().bytes();
  std::vector<float> out(static_cast<size_t>(few.s.m * few.s.ldc), 42.0f);
  sgemm(few.s, few.a.data(), few_owner.data<float>(), out.data(), 1, nullptr, &few_owner);
  EXPECT_EQ(out, run(few, 1));
  EXPECT_EQ(packed_weights().bytes(), start);  // dot products and scaled rows read B where it lies

  const Case c = make(false, false, 40, 64, 50, 19);
  std::vector<float> y(static_cast<size_t>(c.s.m * c.s.ldc), 42.0f);
  size_t with_first = 0;
  {
    const Tensor gone = constant_b(c);
    sgemm(c.s, c.a.data(), gone.data<float>(), y.data(), 1, nullptr, &gone);
    with_first = packed_weights().bytes();
    EXPECT_GE(with_first, 2 * 32 * 50 * sizeof(float));
  }
  // The model holding the first constant is gone: adding the next entry (of the same size) frees
  // its panels.
  const Tensor next = constant_b(c);
  sgemm(c.s, c.a.data(), next.data<float>(), y.data(), 1, nullptr, &next);
  EXPECT_EQ(packed_weights().bytes(), with_first);
  EXPECT_EQ(y, run(c, 1));
}

// Over the cap nothing is kept (the products then pack B themselves); under it the one entry is
// returned again, in sgemm.h's panel layout.
TEST(PackedWeights, PanelsOverTheCapAreNotKeptAndKeptOnesAreReturnedAgain) {
  PackedWeights small(1000);
  const Case c = make(false, false, 40, 64, 50, 23);
  const Tensor owner = constant_b(c);
  EXPECT_EQ(small.panels(owner, c.s, owner.data<float>(), 1), nullptr);  // 12.8 KB of panels
  EXPECT_EQ(small.bytes(), 0u);
  PackedWeights large(size_t{1} << 20);
  const std::shared_ptr<const float[]> p = large.panels(owner, c.s, owner.data<float>(), 2);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(large.panels(owner, c.s, owner.data<float>(), 2), p);
  // Panel 1 holds columns 32..63 at each depth: B's row 0, column 32 is its first value.
  EXPECT_EQ(p[32 * 50], c.b[32]);
}

}  // namespace
}  // namespace vn::ops::testing
