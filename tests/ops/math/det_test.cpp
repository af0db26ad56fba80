// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Det, TwoByTwoAndBatched) {
  OpTester t("Det", 11);
  t.input<float>({2, 2}, {1, 2, 3, 4});
  t.output<float>({}, {-2});
  t.run();
  // A batch of (2, 3): a 3x3 needing a pivot (zero at [0][0]), a singular one, then the identity.
  OpTester b("Det", 11);
  b.input<double>({3, 3, 3}, {0, 2, 1, 3, 1, 0, 1, 1, 1,  //
                              1, 2, 3, 2, 4, 6, 7, 8, 9,  //
                              1, 0, 0, 0, 1, 0, 0, 0, 1});
  // det([[0,2,1],[3,1,0],[1,1,1]]) = 0*(1-0) - 2*(3-0) + 1*(3-1) = -4.
  b.output<double>({3}, {-4, 0, 1});
  b.tolerance(1e-12, 1e-12);
  b.run();
}

TEST(Det, RejectsNonSquareAndIntegers) {
  OpTester s("Det", 11);
  s.input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  s.expect_failure(StatusCode::kShapeMismatch, "X must be (..., M, M) square matrices, got (2, 3)");
  OpTester i("Det", 11);
  i.input<int32_t>({1, 1}, {1});
  i.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

}  // namespace
}  // namespace vn::ops::testing
