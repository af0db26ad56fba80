// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- Tile --------------------------------------------------------------------------------------

TEST(Tile, RepeatsEveryAxis) {
  for (int64_t opset : {6, 13}) {
    OpTester t("Tile", opset);
    t.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({2}, {2, 3});
    t.output<float>({4, 6}, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
    t.run();
  }
  OpTester s("Tile", 13);
  s.input<std::string>({1, 2}, {"a", "b"}).input<int64_t>({2}, {2, 1});
  s.output<std::string>({2, 2}, {"a", "b", "a", "b"});
  s.run();
  OpTester z("Tile", 13);
  z.input<int32_t>({2}, {1, 2}).input<int64_t>({1}, {0});
  z.output<int32_t>({0}, {});
  z.run();
  OpTester scalar("Tile", 13);
  scalar.input<int32_t>({}, {5}).input<int64_t>({0}, {});
  scalar.output<int32_t>({}, {5});
  scalar.run();
}

TEST(Tile, Opset1RepeatsOneAxis) {
  OpTester t("Tile", 1);
  t.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({}, {2}).input<int64_t>({}, {1});
  t.output<float>({2, 4}, {1, 2, 1, 2, 3, 4, 3, 4});
  t.run();
}

TEST(Tile, ErrorsNameTheProblem) {
  OpTester n("Tile", 13);
  n.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({3}, {1, 2, 3});
  n.expect_failure(StatusCode::kShapeMismatch, "repeats has 3 entries but the input (2, 2) has rank 2");
  OpTester neg("Tile", 13);
  neg.input<float>({2}, {1, 2}).input<int64_t>({1}, {-1});
  neg.expect_failure(StatusCode::kInvalidModel, "repeats[0] is negative (-1)");
  OpTester big("Tile", 13);
  big.input<float>({2}, {1, 2}).input<int64_t>({1}, {int64_t{1} << 40});
  big.expect_failure(StatusCode::kShapeMismatch, "too large");
}

// ---- Trilu -------------------------------------------------------------------------------------

TEST(Trilu, UpperAndLowerWithOffsets) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // 3 x 4
  OpTester u("Trilu", 14);
  u.input<float>({3, 4}, x);
  u.output<float>({3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  u.run();
  OpTester u1("Trilu", 14);
  u1.input<float>({3, 4}, x).input<int64_t>({}, {1});
  u1.output<float>({3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  u1.run();
  OpTester l("Trilu", 14);
  l.attr("upper", int64_t{0});
  l.input<float>({3, 4}, x).input<int64_t>({}, {-1});
  l.output<float>({3, 4}, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  l.run();
  // k beyond the matrix keeps (upper, very negative k) or drops (lower, very negative k) everything.
  OpTester all("Trilu", 14);
  all.input<int64_t>({2, 1, 2}, {1, 2, 3, 4}).input<int64_t>({}, {std::numeric_limits<int64_t>::min()});
  all.output<int64_t>({2, 1, 2}, {1, 2, 3, 4});
  all.run();
  OpTester none("Trilu", 14);
  none.attr("upper", int64_t{0});
  none.input<int64_t>({2, 1, 2}, {1, 2, 3, 4}).input<int64_t>({}, {-100});
  none.output<int64_t>({2, 1, 2}, {0, 0, 0, 0});
  none.run();
}

TEST(Trilu, ErrorsNameTheProblem) {
  OpTester r("Trilu", 14);
  r.input<float>({3}, {1, 2, 3});
  r.expect_failure(StatusCode::kShapeMismatch, "input must have rank >= 2, got shape (3,)");
  OpTester k("Trilu", 14);
  k.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({2}, {0, 1});
  k.expect_failure(StatusCode::kShapeMismatch, "k must hold one value, got 2");
}

}  // namespace
}  // namespace vn::ops::testing
