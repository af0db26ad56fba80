// SPDX-License-Identifier: Apache-2.0
// Einsum against loops written out per equation.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Einsum, MatMulTransposeAndImplicitOutput) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};   // (2, 3)
  const std::vector<float> b = {1, 0, 2, 1, -1, 3};  // (3, 2)
  OpTester mm("Einsum", 12);
  mm.attr("equation", "ij,jk->ik");
  mm.input<float>({2, 3}, a).input<float>({3, 2}, b);
  mm.output<float>({2, 2}, {1 + 4 - 3, 0 + 2 + 9, 4 + 10 - 6, 0 + 5 + 18});
  mm.run();
  // Implicit output: the labels used once, in alphabetical order ("ik").
  OpTester im("Einsum", 12);
  im.attr("equation", "ij, jk");
  im.input<float>({2, 3}, a).input<float>({3, 2}, b);
  im.output<float>({2, 2}, {2, 11, 8, 23});
  im.run();
  OpTester tr("Einsum", 12);
  tr.attr("equation", "ij->ji");
  tr.input<float>({2, 3}, a);
  tr.output<float>({3, 2}, {1, 4, 2, 5, 3, 6});
  tr.run();
  // Implicit "ba" sorts to "ab": a transpose.
  OpTester it("Einsum", 12);
  it.attr("equation", "ba");
  it.input<float>({2, 3}, a);
  it.output<float>({3, 2}, {1, 4, 2, 5, 3, 6});
  it.run();
}

TEST(Einsum, DiagonalTraceSumAndOuterProduct) {
  const std::vector<double> m = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  OpTester d("Einsum", 12);
  d.attr("equation", "ii->i");
  d.input<double>({3, 3}, m);
  d.output<double>({3}, {1, 5, 9});
  d.run();
  OpTester tr("Einsum", 12);
  tr.attr("equation", "ii");
  tr.input<double>({3, 3}, m);
  tr.output<double>({}, {15});
  tr.run();
  OpTester s("Einsum", 12);
  s.attr("equation", "ij->");
  s.input<double>({3, 3}, m);
  s.output<double>({}, {45});
  s.run();
  OpTester o("Einsum", 12);
  o.attr("equation", "i,j->ij");
  o.input<double>({2}, {1, 2}).input<double>({3}, {3, 4, 5});
  o.output<double>({2, 3}, {3, 4, 5, 6, 8, 10});
  o.run();
  OpTester ip("Einsum", 12);
  ip.attr("equation", "i,i");
  ip.input<double>({3}, {1, 2, 3}).input<double>({3}, {4, 5, 6});
  ip.output<double>({}, {32});
  ip.run();
}

TEST(Einsum, EllipsisBatchMatMulWithBroadcast) {
  // (2, 1, 2) x (3, 2, 1) over "...ij,...jk->...ik": the batch dims broadcast to (3, 2).
  const std::vector<float> a = {1, 2, 3, 4};
  const std::vector<float> b = {1, 1, 2, 0, 0, 3};
  std::vector<float> y;
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 2; ++q) y.push_back(a[q * 2] * b[p * 2] + a[q * 2 + 1] * b[p * 2 + 1]);
  OpTester t("Einsum", 12);
  t.attr("equation", "...ij,...jk->...ik");
  t.input<float>({2, 1, 2}, a).input<float>({3, 1, 2, 1}, b);
  t.output<float>({3, 2, 1, 1}, y);
  t.run();
  // A batch diagonal: "...ii->...i".
  OpTester d("Einsum", 12);
  d.attr("equation", "...ii->...i");
  d.input<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  d.output<float>({2, 2}, {1, 4, 5, 8});
  d.run();
}

TEST(Einsum, AttentionScoresAgainstLoops) {
  // "bhqd,bhkd->bhqk" with b=2, h=3, q=4, k=5, d=6: the batched-GEMM path.
  const int B = 2, H = 3, Q = 4, K = 5, D = 6;
  const std::vector<float> q = random_floats(B * H * Q * D, 51), k = random_floats(B * H * K * D, 52);
  std::vector<float> y;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < Q; ++i)
        for (int j = 0; j < K; ++j) {
          double acc = 0;
          for (int d = 0; d < D; ++d)
            acc += double(q[((b * H + h) * Q + i) * D + d]) * k[((b * H + h) * K + j) * D + d];
          y.push_back(static_cast<float>(acc));
        }
  OpTester t("Einsum", 12);
  t.attr("equation", "bhqd,bhkd->bhqk");
  t.input<float>({B, H, Q, D}, q).input<float>({B, H, K, D}, k);
  t.output<float>({B, H, Q, K}, y);
  t.tolerance(1e-6, 1e-5);
  t.run();
}

TEST(Einsum, TwoOperandDiagonalsAndOneSidedSums) {
  // "ii,ij->j": y_j = sum_i A_ii B_ij.
  OpTester d("Einsum", 12);
  d.attr("equation", "ii,ij->j");
  d.input<float>({2, 2}, {1, 2, 3, 4}).input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  d.output<float>({3}, {1 * 1 + 4 * 4, 1 * 2 + 4 * 5, 1 * 3 + 4 * 6});
  d.run();
  // "ab,c->ca": b is summed in the first operand only.
  OpTester o("Einsum", 12);
  o.attr("equation", "ab,c->ca");
  o.input<double>({2, 2}, {1, 2, 3, 4}).input<double>({2}, {10, 100});
  o.output<double>({2, 2}, {30, 70, 300, 700});
  o.run();
  // An empty contraction dimension gives zeros.
  OpTester z("Einsum", 12);
  z.attr("equation", "ij,jk->ik");
  z.input<float>({2, 0}, {}).input<float>({0, 3}, {});
  z.output<float>({2, 3}, {0, 0, 0, 0, 0, 0});
  z.run();
}

TEST(Einsum, ThreeOperandsAndIntegers) {
  OpTester t("Einsum", 12);
  t.attr("equation", "i,ij,j->");
  t.input<int32_t>({2}, {1, 2}).input<int32_t>({2, 2}, {1, 2, 3, 4}).input<int32_t>({2}, {5, 6});
  // sum_ij x_i A_ij y_j = 1*(5 + 12) + 2*(15 + 24) = 95
  t.output<int32_t>({}, {95});
  t.run();
}

TEST(Einsum, ErrorsNameTheProblem) {
  OpTester n("Einsum", 12);
  n.attr("equation", "ij,jk->ik");
  n.input<float>({2, 2}, {1, 2, 3, 4});
  n.expect_failure(StatusCode::kInvalidModel, "equation 'ij,jk->ik' has 2 input terms but the node has 1 inputs");
  OpTester r("Einsum", 12);
  r.attr("equation", "ijk->i");
  r.input<float>({2, 2}, {1, 2, 3, 4});
  r.expect_failure(StatusCode::kShapeMismatch, "equation term 0 has 3 labels but input 0 has rank 2");
  OpTester s("Einsum", 12);
  s.attr("equation", "ij,jk->ik");
  s.input<float>({2, 2}, {1, 2, 3, 4}).input<float>({3, 1}, {1, 2, 3});
  s.expect_failure(StatusCode::kShapeMismatch, "dimension 0 of input 1 has size 3 but its label has size 2");
  OpTester o("Einsum", 12);
  o.attr("equation", "ij->ik");
  o.input<float>({2, 2}, {1, 2, 3, 4});
  o.expect_failure(StatusCode::kInvalidModel, "output label 'k' of 'ij->ik' appears in no input");
  OpTester c("Einsum", 12);
  c.attr("equation", "i1->i");
  c.input<float>({2, 2}, {1, 2, 3, 4});
  c.expect_failure(StatusCode::kInvalidModel, "has the character '1'");
}

}  // namespace
}  // namespace vn::ops::testing
