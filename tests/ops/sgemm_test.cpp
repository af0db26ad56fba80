// SPDX-License-Identifier: Apache-2.0
// sgemm_packed (the AVX-512 kernel where the machine has it) and the portable kernel against a
// product in double, on packed operands written here from the layout sgemm.h documents: partial
// row blocks and panels, half-empty last panels, several passes over k, A packed or read in place;
// and B read where it lies (sgemm_direct_b) against B packed, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/ops/sgemm.h"

namespace vn::ops::testing {
namespace {

struct Operands {
  std::vector<float> a, packed_a, packed_b, bias;
  std::vector<double> want;  // m x n
};

Operands make(int64_t m, int64_t n, int64_t k, bool with_bias, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Operands o;
  o.a.resize(static_cast<size_t>(m * k));
  std::vector<float> b(static_cast<size_t>(k * n));
  for (float& v : o.a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  if (with_bias) {
    o.bias.resize(static_cast<size_t>(m));
    for (float& v : o.bias) v = dist(rng);
  }
  // The documented layouts. Packed A starts as a sentinel, so pack_a must write all of it; packed
  // B's columns past n are zero, as the convolution writes them.
  o.packed_a.assign(static_cast<size_t>(packed_a_size(m, k)), -7.0f);
  pack_a(m, k, o.a.data(), k, 0, (m + kPackRows - 1) / kPackRows, o.packed_a.data());
  o.packed_b.assign(static_cast<size_t>(packed_b_size(k, n)), 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) {
      o.packed_b[static_cast<size_t>(j / kPackCols * k * kPackCols + p * kPackCols + j % kPackCols)] =
          b[static_cast<size_t>(p * n + j)];
    }
  }
  o.want.assign(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = with_bias ? o.bias[static_cast<size_t>(i)] : 0.0;
      for (int64_t p = 0; p < k; ++p) {
        acc += static_cast<double>(o.a[static_cast<size_t>(i * k + p)]) * b[static_cast<size_t>(p * n + j)];
      }
      o.want[static_cast<size_t>(i * n + j)] = acc;
    }
  }
  return o;
}

using Kernel = void (*)(int64_t, int64_t, int64_t, const float*, int64_t, const float*, const float*, float*, int64_t,
                        const TileFinish*);

void check(Kernel kernel, int64_t m, int64_t n, int64_t k, bool packed, bool with_bias) {
  const Operands o = make(m, n, k, with_bias, static_cast<uint32_t>(m * 1000 + n * 10 + k));
  // C has a wider row than n and a sentinel past each row's n columns, which must survive.
  const int64_t ldc = n + 3;
  std::vector<float> c(static_cast<size_t>(m * ldc), 42.0f);
  kernel(m, n, k, packed ? o.packed_a.data() : o.a.data(), packed ? 0 : k, o.packed_b.data(),
         with_bias ? o.bias.data() : nullptr, c.data(), ldc, nullptr);
  SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
               (packed ? " packed" : " in place") + (with_bias ? " bias" : ""));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double want = o.want[static_cast<size_t>(i * n + j)];
      // Float32 sums of k products of magnitude <= 1, in any order.
      ASSERT_NEAR(c[static_cast<size_t>(i * ldc + j)], want, 1e-6 * static_cast<double>(k + 1) + 1e-6 * std::abs(want))
          << i << "," << j;
    }
    for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[static_cast<size_t>(i * ldc + j)], 42.0f) << i << "," << j;
  }
}

void check_all(Kernel kernel) {
  // Rows: partial blocks of every size; columns: partial panels, half-empty ones (<= 16), exact
  // panels; depth: none (C is the bias), one pass, several uneven ones (600 = 3 x 200).
  for (int64_t m : {1, 3, 8, 13, 19}) {
    for (int64_t n : {1, 15, 16, 17, 32, 33, 70}) {
      for (int64_t k : {0, 1, 37, 600}) {
        for (bool packed : {true, false}) check(kernel, m, n, k, packed, (m + n + k) % 2 == 0);
      }
    }
  }
}

TEST(SgemmPacked, MatchesTheProductWhereverItRuns) { check_all(sgemm_packed); }

TEST(SgemmPacked, PortableKernelMatchesTheProduct) { check_all(detail::sgemm_packed_portable); }

using DirectKernel = void (*)(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, const float*,
                              float*, int64_t, const TileFinish*);

/// B read where it lies (rows ldb apart, its last row ending the buffer) gives C bit for bit as B
/// packed does, on the same kernel.
void check_direct(Kernel packed_kernel, DirectKernel direct_kernel) {
  for (int64_t m : {1, 7, 13}) {
    for (int64_t n : {1, 15, 17, 32, 45, 70}) {
      for (int64_t k : {0, 3, 300}) {
        for (bool packed : {true, false}) {
          SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                       (packed ? " packed" : " in place"));
          const Operands o = make(m, n, k, true, static_cast<uint32_t>(m * 7 + n * 3 + k));
          // B from its panels into rows ldb apart, holding only what the product may read.
          const int64_t ldb = n + 5;
          std::vector<float> b(static_cast<size_t>(k == 0 ? 1 : (k - 1) * ldb + n), 0.0f);
          for (int64_t p = 0; p < k; ++p) {
            for (int64_t j = 0; j < n; ++j) {
              b[static_cast<size_t>(p * ldb + j)] =
                  o.packed_b[static_cast<size_t>(j / kPackCols * k * kPackCols + p * kPackCols + j % kPackCols)];
            }
          }
          const float* a = packed ? o.packed_a.data() : o.a.data();
          const int64_t lda = packed ? 0 : k;
          std::vector<float> want(static_cast<size_t>(m * n)), got(static_cast<size_t>(m * n));
          packed_kernel(m, n, k, a, lda, o.packed_b.data(), o.bias.data(), want.data(), n, nullptr);
          direct_kernel(m, n, k, a, lda, b.data(), ldb, o.bias.data(), got.data(), n, nullptr);
          ASSERT_EQ(got, want);
        }
      }
    }
  }
}

TEST(SgemmDirectB, GivesTheBitsOfPackedBWhereverItRuns) { check_direct(sgemm_packed, sgemm_direct_b); }

TEST(SgemmDirectB, PortableKernelGivesTheBitsOfPackedB) {
  check_direct(detail::sgemm_packed_portable, detail::sgemm_direct_b_portable);
}

/// Every element of C is one chain of fused multiply-adds along k, from its bias (or zero), bit for
/// bit, whatever the tile's rows and columns: the kernels of every machine (AVX-512, AVX2) give the
/// same bits, and a tile shape may change without changing one.
void check_chains(Kernel kernel) {
  for (int64_t m = 1; m <= 13; ++m) {
    for (int64_t n : {1, 8, 15, 16, 17, 24, 31, 32, 33}) {
      for (int64_t k : {0, 5, 300, 600}) {
        for (bool packed : {true, false}) {
          SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                       (packed ? " packed" : " in place"));
          const bool with_bias = (m + n) % 2 == 0;
          const Operands o = make(m, n, k, with_bias, static_cast<uint32_t>(m * 31 + n * 7 + k));
          std::vector<float> want(static_cast<size_t>(m * n)), got(static_cast<size_t>(m * n));
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              float acc = with_bias ? o.bias[static_cast<size_t>(i)] : 0.0f;
              for (int64_t p = 0; p < k; ++p) {
                const float b =
                    o.packed_b[static_cast<size_t>(j / kPackCols * k * kPackCols + p * kPackCols + j % kPackCols)];
                acc = std::fma(o.a[static_cast<size_t>(i * k + p)], b, acc);
              }
              want[static_cast<size_t>(i * n + j)] = acc;
            }
          }
          kernel(m, n, k, packed ? o.packed_a.data() : o.a.data(), packed ? 0 : k, o.packed_b.data(),
                 with_bias ? o.bias.data() : nullptr, got.data(), n, nullptr);
          ASSERT_EQ(got, want);
        }
      }
    }
  }
}

TEST(SgemmPacked, EverySumIsOneChainOfFusedMultiplyAddsWhereverItRuns) { check_chains(sgemm_packed); }

#if defined(__FMA__)
// The portable kernel fuses its multiply-adds where the build has FMA (plain C++ elsewhere).
TEST(SgemmPacked, PortableKernelSumsEachElementAsOneChainOfFusedMultiplyAdds) {
  check_chains(detail::sgemm_packed_portable);
}
#endif

TEST(SgemmPacked, PackAWritesBlocksOfRowsDepthFirstAndZeroPadsTheLast) {
  // A is 3 x 2 with rows 4 apart: one block, its rows past 3 zero.
  const std::vector<float> a = {1, 2, -1, -1, 3, 4, -1, -1, 5, 6, -1, -1};
  std::vector<float> packed(static_cast<size_t>(packed_a_size(3, 2)), -9.0f);
  pack_a(3, 2, a.data(), 4, 0, 1, packed.data());
  std::vector<float> want(static_cast<size_t>(2 * kPackRows), 0.0f);
  want[0] = 1, want[1] = 3, want[2] = 5;
  want[static_cast<size_t>(kPackRows)] = 2, want[static_cast<size_t>(kPackRows) + 1] = 4;
  want[static_cast<size_t>(kPackRows) + 2] = 6;
  EXPECT_EQ(packed, want);
}

}  // namespace
}  // namespace vn::ops::testing
