// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Transpose, DefaultReversesAxes) {
  for (int64_t opset : {1, 13}) {
    OpTester t("Transpose", opset);
    t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    t.output<float>({3, 2}, {1, 4, 2, 5, 3, 6});
    t.run();
  }
}

TEST(Transpose, PermutationsOfRank4AgainstOracle) {
  const Shape in = {2, 3, 4, 5};
  std::vector<int64_t> x(120);
  for (int64_t i = 0; i < 120; ++i) x[static_cast<size_t>(i)] = i;
  const std::vector<std::vector<int64_t>> perms = {
      {0, 2, 3, 1}, {0, 3, 1, 2}, {3, 2, 1, 0}, {1, 0, 2, 3}, {0, 1, 2, 3}};
  for (const auto& perm : perms) {
    Shape out(4);
    for (size_t i = 0; i < 4; ++i) out[i] = in[static_cast<size_t>(perm[i])];
    std::vector<int64_t> y;
    std::vector<int64_t> o(4, 0);
    for (o[0] = 0; o[0] < out[0]; ++o[0])
      for (o[1] = 0; o[1] < out[1]; ++o[1])
        for (o[2] = 0; o[2] < out[2]; ++o[2])
          for (o[3] = 0; o[3] < out[3]; ++o[3]) {
            int64_t src[4];
            for (size_t i = 0; i < 4; ++i) src[perm[i]] = o[i];
            y.push_back(((src[0] * 3 + src[1]) * 4 + src[2]) * 5 + src[3]);
          }
    OpTester t("Transpose", 13);
    t.attr("perm", perm);
    t.input<int64_t>(in, x);
    t.output<int64_t>(out, y);
    t.run();
  }
}

/// Transposes `in` by `perm` on `threads` threads and checks every element against the
/// definition (out[o] = in[o permuted back]), for element type T.
template <typename T>
void check_against_definition(const Shape& in, const std::vector<int64_t>& perm, int threads) {
  const size_t rank = in.size();
  int64_t numel = 1;
  for (int64_t d : in) numel *= d;
  std::vector<T> x(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) x[static_cast<size_t>(i)] = static_cast<T>(i * 7 + 3);
  Shape out(rank), in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * in[i];
  for (size_t i = 0; i < rank; ++i) out[i] = in[static_cast<size_t>(perm[i])];
  std::vector<T> y;
  std::vector<int64_t> o(rank, 0);
  for (int64_t n = 0; n < numel; ++n) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += o[i] * in_strides[static_cast<size_t>(perm[i])];
    y.push_back(x[static_cast<size_t>(src)]);
    for (size_t d = rank; d-- > 0;) {
      if (++o[d] < out[d]) break;
      o[d] = 0;
    }
  }
  OpTester t("Transpose", 13);
  t.attr("perm", perm);
  t.threads(threads);
  t.input<T>(in, x);
  t.output<T>(out, y);
  t.run();
}

// The row copies, the 8 x 8 tiles (whole, and the edges of sizes that are no multiple of 8) and
// the bands shared among threads, for 1-, 2-, 4- and 8-byte elements, with axes of size 1 and
// axes that stay adjacent (merged) among them.
TEST(Transpose, TiledAndRowCopiesMatchTheDefinition) {
  struct Case {
    Shape in;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {
      {{96, 30, 29}, {1, 2, 0}},   // NCHW -> NHWC with N dropped: a 2-D transpose
      {{1, 870, 96}, {0, 2, 1}},   // and back
      {{197, 12, 64}, {1, 2, 0}},  // attention's keys turned
      {{197, 12, 64}, {1, 0, 2}},  // heads split: rows of 64 copied
      {{5, 1, 13, 11, 3}, {2, 0, 4, 1, 3}},
      {{3, 17, 9, 2}, {0, 3, 2, 1}},
      {{2, 3, 4, 5, 6, 7}, {0, 1, 3, 2, 4, 5}},
      {{16, 8}, {1, 0}},
      {{1, 1, 7}, {2, 1, 0}},
  };
  for (const Case& c : cases) {
    for (int threads : {1, 3}) {
      SCOPED_TRACE(::testing::Message() << shape_to_string(c.in) << " threads " << threads);
      check_against_definition<uint8_t>(c.in, c.perm, threads);
      check_against_definition<int16_t>(c.in, c.perm, threads);
      check_against_definition<int32_t>(c.in, c.perm, threads);
      check_against_definition<float>(c.in, c.perm, threads);
      check_against_definition<int64_t>(c.in, c.perm, threads);
    }
  }
}

TEST(Transpose, OtherTypesScalarsAndEmpty) {
  OpTester b("Transpose", 13);
  b.input<bool>({1, 2, 2}, {true, false, false, true});
  b.attr("perm", Shape{2, 1, 0});
  b.output<bool>({2, 2, 1}, {true, false, false, true});
  b.run();
  OpTester s("Transpose", 13);
  s.input<std::string>({2, 1}, {"x", "y"});
  s.output<std::string>({1, 2}, {"x", "y"});
  s.run();
  OpTester z("Transpose", 13);
  z.input<float>({}, {3});
  z.output<float>({}, {3});
  z.run();
  OpTester e("Transpose", 13);
  e.input<float>({0, 2}, {});
  e.output<float>({2, 0}, {});
  e.run();
}

TEST(Transpose, InvalidPermFails) {
  OpTester t("Transpose", 13);
  t.attr("perm", Shape{0, 0});
  t.input<float>({2, 2}, {1, 2, 3, 4});
  t.expect_failure(StatusCode::kInvalidModel, "perm [0, 0] is not a permutation of the 2 axes");
  OpTester n("Transpose", 13);
  n.attr("perm", Shape{1, 0, 2});
  n.input<float>({2, 2}, {1, 2, 3, 4});
  n.expect_failure(StatusCode::kInvalidModel, "perm [1, 0, 2] is not a permutation");
}

}  // namespace
}  // namespace vn::ops::testing
