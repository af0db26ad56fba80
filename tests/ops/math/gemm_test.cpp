// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/ops/half_tensor.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

/// Naive row-major (m × k) · (k × n) in double.
std::vector<double> naive_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k,
                                 int64_t n, int64_t a_offset = 0, int64_t b_offset = 0) {
  std::vector<double> y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) y[i * n + j] += double(a[a_offset + i * k + p]) * double(b[b_offset + p * n + j]);
  return y;
}

std::vector<float> transpose2d(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

TEST(Gemm, HandComputed) {
  OpTester t("Gemm", 13);
  t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  t.input<float>({3, 2}, {1, 0, 0, 1, 1, 1});
  t.input<float>({2}, {10, 20});
  t.output<float>({2, 2}, {14, 25, 20, 31});
  t.run();
}

TEST(Gemm, AlphaBetaTransposesAndBroadcastC) {
  const int64_t m = 4, k = 5, n = 3;
  const std::vector<float> a = random_floats(m * k, 1), b = random_floats(k * n, 2);
  const std::vector<float> c_row = random_floats(n, 3), c_col = random_floats(m, 4), c_full = random_floats(m * n, 5);
  const std::vector<double> ab = naive_matmul(a, b, m, k, n);
  for (int trans_a = 0; trans_a < 2; ++trans_a) {
    for (int trans_b = 0; trans_b < 2; ++trans_b) {
      for (int c_kind = 0; c_kind < 4; ++c_kind) {
        const float alpha = 0.5f, beta = 2.0f;
        std::vector<float> y(static_cast<size_t>(m * n));
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double c = 0.0;
            if (c_kind == 0) c = c_row[j];
            if (c_kind == 1) c = c_col[i];
            if (c_kind == 2) c = c_full[i * n + j];
            if (c_kind == 3) c = 1.5;
            y[i * n + j] = static_cast<float>(alpha * ab[i * n + j] + beta * c);
          }
        }
        OpTester t("Gemm", 11);
        t.attr("alpha", alpha).attr("beta", beta).attr("transA", int64_t{trans_a}).attr("transB", int64_t{trans_b});
        if (trans_a) {
          t.input<float>({k, m}, transpose2d(a, m, k));
        } else {
          t.input<float>({m, k}, a);
        }
        if (trans_b) {
          t.input<float>({n, k}, transpose2d(b, k, n));
        } else {
          t.input<float>({k, n}, b);
        }
        if (c_kind == 0) t.input<float>({n}, c_row);
        if (c_kind == 1) t.input<float>({m, 1}, c_col);
        if (c_kind == 2) t.input<float>({m, n}, c_full);
        if (c_kind == 3) t.input<float>({}, {1.5f});
        t.output<float>({m, n}, y);
        t.run();
      }
    }
  }
}

TEST(Gemm, OptionalCFromOpset11AndDouble) {
  OpTester t("Gemm", 13);
  t.input<double>({1, 2}, {1, 2}).input<double>({2, 1}, {3, 4});
  t.output<double>({1, 1}, {11});
  t.run();
}

TEST(Gemm, IntegerGemm) {
  OpTester t("Gemm", 13);
  t.input<int64_t>({2, 2}, {1, 2, 3, 4}).input<int64_t>({2, 2}, {5, 6, 7, 8}).input<int64_t>({}, {1});
  t.output<int64_t>({2, 2}, {20, 23, 44, 51});
  t.run();
}

TEST(Gemm, Opset6StrictCWithoutBroadcast) {
  OpTester t("Gemm", 6);
  t.input<float>({1, 2}, {1, 2}).input<float>({2, 2}, {1, 0, 0, 1}).input<float>({2}, {1, 1});
  t.expect_failure(StatusCode::kShapeMismatch, "does not equal (broadcast=0)");
  OpTester ok("Gemm", 6);
  ok.attr("broadcast", int64_t{1});
  ok.input<float>({1, 2}, {1, 2}).input<float>({2, 2}, {1, 0, 0, 1}).input<float>({2}, {1, 1});
  ok.output<float>({1, 2}, {2, 3});
  ok.run();
}

TEST(Gemm, InnerDimensionMismatchFails) {
  OpTester t("Gemm", 13);
  t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({2, 2}, {1, 2, 3, 4});
  t.expect_failure(StatusCode::kShapeMismatch, "inner dimensions differ: op(A) is (2, 3) and op(B) is (2, 2)");
}

TEST(Gemm, WrongRankAndBadCFail) {
  OpTester r("Gemm", 13);
  r.input<float>({6}, {1, 2, 3, 4, 5, 6}).input<float>({6, 1}, {1, 2, 3, 4, 5, 6});
  r.expect_failure(StatusCode::kShapeMismatch, "A and B must be 2-D");
  OpTester c("Gemm", 13);
  c.input<float>({2, 2}, {1, 2, 3, 4}).input<float>({2, 2}, {1, 2, 3, 4}).input<float>({3}, {1, 2, 3});
  c.expect_failure(StatusCode::kShapeMismatch, "C of shape (3,) does not broadcast to the output shape (2, 2)");
}

// ---- MatMul ------------------------------------------------------------------------------------

TEST(MatMul, TwoByTwo) {
  for (int64_t opset : {1, 9, 13}) {
    OpTester t("MatMul", opset);
    t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({3, 2}, {7, 8, 9, 10, 11, 12});
    t.output<float>({2, 2}, {58, 64, 139, 154});
    t.run();
  }
}

TEST(MatMul, OneDimensionalOperands) {
  OpTester vv("MatMul", 13);
  vv.input<float>({3}, {1, 2, 3}).input<float>({3}, {4, 5, 6});
  vv.output<float>({}, {32});
  vv.run();
  OpTester vm("MatMul", 13);
  vm.input<float>({2}, {1, 2}).input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  vm.output<float>({3}, {9, 12, 15});
  vm.run();
  OpTester mv("MatMul", 13);
  mv.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({3}, {1, 0, -1});
  mv.output<float>({2}, {-2, -2});
  mv.run();
  OpTester bv("MatMul", 13);
  bv.input<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}).input<float>({2}, {1, 1});
  bv.output<float>({2, 2}, {3, 7, 11, 15});
  bv.run();
  OpTester vb("MatMul", 13);
  vb.input<float>({2}, {1, 1}).input<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  vb.output<float>({2, 2}, {4, 6, 12, 14});
  vb.run();
}

/// Checks MatMul of A (batch_a..., m, k) and B (batch_b..., k, n) against the naive product.
void check_batched(const Shape& batch_a, const Shape& batch_b, const Shape& batch_out, int64_t m, int64_t k,
                   int64_t n) {
  Shape sa = batch_a, sb = batch_b, so = batch_out;
  sa.insert(sa.end(), {m, k});
  sb.insert(sb.end(), {k, n});
  so.insert(so.end(), {m, n});
  const std::vector<float> a = random_floats(static_cast<size_t>(shape_numel(sa)), 21);
  const std::vector<float> b = random_floats(static_cast<size_t>(shape_numel(sb)), 22);
  // Index each operand's matrix for an output batch position by right-aligned broadcasting.
  auto matrix_index = [](const Shape& own, const Shape& out, int64_t flat) {
    int64_t index = 0, stride = 1;
    for (size_t i = out.size(); i-- > 0;) {
      const int64_t coord = flat % out[i];
      flat /= out[i];
      const size_t lead = out.size() - own.size();
      if (i >= lead) {
        const int64_t d = own[i - lead];
        index += (d == 1 ? 0 : coord) * stride;
        stride *= d;
      }
    }
    return index;
  };
  std::vector<float> y;
  for (int64_t bi = 0; bi < shape_numel(batch_out); ++bi) {
    const std::vector<double> p = naive_matmul(a, b, m, k, n, matrix_index(batch_a, batch_out, bi) * m * k,
                                               matrix_index(batch_b, batch_out, bi) * k * n);
    for (double v : p) y.push_back(static_cast<float>(v));
  }
  OpTester t("MatMul", 13);
  t.input<float>(sa, a).input<float>(sb, b);
  t.output<float>(so, y);
  t.tolerance(1e-5, 1e-5);
  t.run();
}

TEST(MatMul, BatchedBroadcasting) {
  check_batched({3}, {3}, {3}, 4, 5, 6);
  check_batched({2, 3}, {}, {2, 3}, 4, 5, 6);      // shared B: folded into one GEMM
  check_batched({}, {2, 3}, {2, 3}, 4, 5, 6);      // shared A
  check_batched({2, 1}, {1, 3}, {2, 3}, 3, 4, 2);  // both sides broadcast
  check_batched({1}, {4}, {4}, 2, 3, 2);
  check_batched({2, 1, 3}, {4, 1}, {2, 4, 3}, 2, 2, 3);
}

TEST(MatMul, LargeAgainstNaive) { check_batched({}, {}, {}, 64, 130, 33); }

TEST(MatMul, IntegersAndZeroK) {
  OpTester t("MatMul", 13);
  t.input<int32_t>({2, 2}, {1, 2, 3, 4}).input<int32_t>({2, 2}, {1, 1, 1, 1});
  t.output<int32_t>({2, 2}, {3, 3, 7, 7});
  t.run();
  OpTester z("MatMul", 13);
  z.input<float>({2, 0}, {}).input<float>({0, 3}, {});
  z.output<float>({2, 3}, {0, 0, 0, 0, 0, 0});
  z.run();
}

TEST(MatMul, MismatchedInnerAndBatchFail) {
  OpTester k("MatMul", 13);
  k.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  k.expect_failure(StatusCode::kShapeMismatch, "inner dimensions differ");
  OpTester b("MatMul", 13);
  b.input<float>({2, 1, 1}, {1, 2}).input<float>({3, 1, 1}, {1, 2, 3});
  b.expect_failure(StatusCode::kShapeMismatch, "batch dimensions of A (2, 1, 1) and B (3, 1, 1) do not broadcast");
  OpTester s("MatMul", 13);
  s.input<float>({}, {1}).input<float>({1}, {1});
  s.expect_failure(StatusCode::kShapeMismatch, "rank >= 1");
}

TEST(MatMulInteger, ZeroPointsScalarPerRowAndPerColumn) {
  // A = [[11, 7, 3], [10, 6, 2]] uint8, B = [[1, 4], [2, 5], [3, 6]] uint8.
  const std::vector<uint8_t> a = {11, 7, 3, 10, 6, 2};
  const std::vector<uint8_t> b = {1, 4, 2, 5, 3, 6};
  OpTester plain("MatMulInteger", 10);
  plain.input<uint8_t>({2, 3}, a).input<uint8_t>({3, 2}, b);
  plain.output<int32_t>({2, 2}, {34, 97, 28, 82});
  plain.run();
  // a_zero_point 2 per tensor, b_zero_point per column (1, 4).
  OpTester zp("MatMulInteger", 10);
  zp.input<uint8_t>({2, 3}, a).input<uint8_t>({3, 2}, b);
  zp.input<uint8_t>({}, {2}).input<uint8_t>({2}, {1, 4});
  // (A - 2) = [[9, 5, 1], [8, 4, 0]], (B - zp) = [[0, 0], [1, 1], [2, 2]].
  zp.output<int32_t>({2, 2}, {7, 7, 4, 4});
  zp.run();
  // a_zero_point per row (1, 0) with int8 inputs and a batch.
  OpTester row("MatMulInteger", 10);
  row.input<int8_t>({2, 1, 2}, {3, -1, -128, 127}).input<int8_t>({2, 1}, {2, -1});
  row.input<int8_t>({1}, {1});
  row.output<int32_t>({2, 1, 1}, {6, -384});
  row.run();
}

TEST(MatMulInteger, RejectsFloatsAndBadZeroPoints) {
  OpTester f("MatMulInteger", 10);
  f.input<float>({1, 1}, {1}).input<float>({1, 1}, {1});
  f.expect_failure(StatusCode::kUnsupportedDType, "input of type float32 is not supported (supported: int8, uint8)");
  OpTester z("MatMulInteger", 10);
  z.input<uint8_t>({2, 2}, {1, 2, 3, 4}).input<uint8_t>({2, 2}, {1, 2, 3, 4});
  z.input<uint8_t>({3}, {1, 2, 3});
  z.expect_failure(StatusCode::kShapeMismatch, "a_zero_point of shape (3,) must be a scalar or hold 2 values");
  OpTester t("MatMulInteger", 10);
  t.input<uint8_t>({1, 1}, {1}).input<uint8_t>({1, 1}, {1});
  t.input<int8_t>({}, {1});
  t.expect_failure(StatusCode::kInvalidModel, "a_zero_point (int8) must have the type of a (uint8)");
}

// float16: the products summed in float32 in k order, each output rounded once, as numpy.matmul
// does. Row 0 is 2^24 + 1 - 2^24, which is 0 in that order (2^24 + 1 rounds to 2^24 in float32)
// and 1 in others; row 1 is 4096 + 2^-11 + 2 = 4098.0005, 4100 rounded once where rounding each
// partial sum to float16 gives 4096. numpy.matmul gives these four values.
TEST(MatMul, HalfTypesSumInFloat32InKOrderAndRoundOnce) {
  const float u = std::ldexp(1.0f, -11);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t opset : {9, 13}) {
    OpTester t("MatMul", opset);
    t.input(narrow_tensor<Eigen::half>({2, 3}, {4096, 1, -4096, 1, u, u}));
    t.input(narrow_tensor<Eigen::half>({3, 2}, {4096, 60000, 1, 60000, 4096, 1}));
    t.output(narrow_tensor<Eigen::half>({2, 2}, {0, inf, 4100, 60032}));
    t.run();
  }
  // Batched, with B broadcast over A's batch; bfloat16 (8 bits) rounds 1 + 2^-8 + 2^-8 once.
  const float b = std::ldexp(1.0f, -8);
  OpTester t("MatMul", 13);
  t.input(narrow_tensor<Eigen::bfloat16>({2, 1, 3}, {1, b, b, 1, b, 0}));
  t.input(narrow_tensor<Eigen::bfloat16>({3}, {1, 1, 1}));
  t.output(narrow_tensor<Eigen::bfloat16>({2, 1}, {1 + 2 * b, 1}));
  t.run();
}

// Gemm on float16 adds alpha·AB and beta·C in float32 and rounds once. Column 0 is alpha·AB =
// 1 + 2^-11 plus beta·C = 2^-11, 1.0009765625 once rounded, where numpy (the ONNX reference) rounds
// AB = 2 + 2^-10 to 2 first and gets 1; column 1 is 0.5·120000 - 2·30000 = 0, where numpy's AB
// overflows to inf. bfloat16 (8 bits): 256 + 1 + 1 is 258, not 256 as sums rounded each step.
TEST(Gemm, HalfTypesRoundOnceAfterAlphaAndBeta) {
  const float u = std::ldexp(1.0f, -11);
  OpTester t("Gemm", 13);
  t.attr("transA", int64_t{1}).attr("alpha", 0.5f).attr("beta", 2.0f);
  t.input(narrow_tensor<Eigen::half>({2, 1}, {2, 2 * u}));
  t.input(narrow_tensor<Eigen::half>({2, 2}, {1, 60000, 1, 0}));
  t.input(narrow_tensor<Eigen::half>({2}, {u / 2, -30000}));
  t.output(narrow_tensor<Eigen::half>({1, 2}, {1 + 2 * u, 0}));
  t.run();
  OpTester b("Gemm", 13);
  b.attr("transB", int64_t{1});
  b.input(narrow_tensor<Eigen::bfloat16>({1, 3}, {1, 1, 1}));
  b.input(narrow_tensor<Eigen::bfloat16>({1, 3}, {256, 1, 1}));
  b.output(narrow_tensor<Eigen::bfloat16>({1, 1}, {258}));
  b.run();
}

}  // namespace
}  // namespace vn::ops::testing
