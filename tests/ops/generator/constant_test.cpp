// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Constant, ValueTensor) {
  for (int64_t opset : {1, 9, 11, 12, 13}) {
    OpTester t("Constant", opset);
    t.attr("value", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}));
    t.output<float>({2, 2}, {1, 2, 3, 4});
    t.run();
  }
}

TEST(Constant, ScalarAndListAttributesFromOpset12) {
  OpTester f("Constant", 12);
  f.attr("value_float", 2.5f);
  f.output<float>({}, {2.5f});
  f.run();
  OpTester fs("Constant", 13);
  fs.attr("value_floats", std::vector<float>{1.0f, -1.0f});
  fs.output<float>({2}, {1.0f, -1.0f});
  fs.run();
  OpTester i("Constant", 13);
  i.attr("value_int", int64_t{-7});
  i.output<int64_t>({}, {-7});
  i.run();
  OpTester is("Constant", 12);
  is.attr("value_ints", Shape{1, 3, 224, 224});
  is.output<int64_t>({4}, {1, 3, 224, 224});
  is.run();
  OpTester s("Constant", 13);
  s.attr("value_string", "hello");
  s.output<std::string>({}, {"hello"});
  s.run();
  OpTester ss("Constant", 13);
  ss.attr("value_strings", std::vector<std::string>{"a", "b"});
  ss.output<std::string>({2}, {"a", "b"});
  ss.run();
}

TEST(Constant, ExactlyOneValueAttribute) {
  OpTester none("Constant", 13);
  none.unchecked_output();
  none.expect_failure(StatusCode::kInvalidModel, "exactly one value attribute must be set, found 0");
  OpTester two("Constant", 13);
  two.attr("value_int", int64_t{1}).attr("value_float", 1.0f);
  two.unchecked_output();
  two.expect_failure(StatusCode::kInvalidModel, "found 2");
  OpTester sparse("Constant", 13);
  sparse.attr("sparse_value", Tensor::from_vector<float>({1}, {1}));
  sparse.unchecked_output();
  sparse.expect_failure(StatusCode::kUnsupportedAttr, "sparse_value constants are not supported");
  OpTester wrong("Constant", 13);
  wrong.attr("value", 1.0f);
  wrong.unchecked_output();
  wrong.expect_failure(StatusCode::kInvalidModel, "attribute value is not a tensor");
}

TEST(ConstantOfShape, DefaultFloatZeroAndValue) {
  OpTester t("ConstantOfShape", 9);
  t.input<int64_t>({2}, {2, 3});
  t.output<float>({2, 3}, std::vector<float>(6, 0.0f));
  t.run();
  OpTester v("ConstantOfShape", 9);
  v.attr("value", Tensor::from_vector<int64_t>({1}, {-1}));
  v.input<int64_t>({1}, {4});
  v.output<int64_t>({4}, {-1, -1, -1, -1});
  v.run();
  OpTester b("ConstantOfShape", 9);
  b.attr("value", Tensor::from_vector<bool>({1}, {true}));
  b.input<int64_t>({2}, {0, 5});
  b.output<bool>({0, 5}, {});
  b.run();
  OpTester s("ConstantOfShape", 9);
  s.attr("value", Tensor::from_vector<double>({1}, {0.25}));
  s.input<int64_t>({0}, {});
  s.output<double>({}, {0.25});
  s.run();
}

TEST(ConstantOfShape, ErrorsNameTheProblem) {
  OpTester n("ConstantOfShape", 9);
  n.input<int64_t>({2}, {2, -1});
  n.expect_failure(StatusCode::kInvalidModel, "shape has negative dimension -1");
  OpTester v("ConstantOfShape", 9);
  v.attr("value", Tensor::from_vector<float>({2}, {1, 2}));
  v.input<int64_t>({1}, {2});
  v.expect_failure(StatusCode::kInvalidModel, "attribute value must be a one-element tensor");
}

TEST(Range, IntegerAndFloat) {
  OpTester t("Range", 11);
  t.input<int64_t>({}, {3}).input<int64_t>({}, {10}).input<int64_t>({}, {3});
  t.output<int64_t>({3}, {3, 6, 9});
  t.run();
  OpTester n("Range", 11);
  n.input<int32_t>({}, {10}).input<int32_t>({}, {4}).input<int32_t>({}, {-3});
  n.output<int32_t>({2}, {10, 7});
  n.run();
  OpTester f("Range", 11);
  f.input<float>({}, {1.0f}).input<float>({}, {2.0f}).input<float>({}, {0.25f});
  f.output<float>({4}, {1.0f, 1.25f, 1.5f, 1.75f});
  f.run();
  OpTester e("Range", 11);
  e.input<double>({}, {5}).input<double>({}, {1}).input<double>({}, {1});
  e.output<double>({0}, {});
  e.run();
  OpTester big("Range", 11);
  big.input<int64_t>({}, {-9223372036854775807LL - 1})
      .input<int64_t>({}, {9223372036854775807LL})
      .input<int64_t>({}, {9223372036854775807LL});
  big.output<int64_t>({3}, {-9223372036854775807LL - 1, -1, 9223372036854775806LL});
  big.run();
}

TEST(Range, ErrorsNameTheProblem) {
  OpTester z("Range", 11);
  z.input<int64_t>({}, {0}).input<int64_t>({}, {5}).input<int64_t>({}, {0});
  z.expect_failure(StatusCode::kInvalidModel, "delta is 0");
  OpTester t("Range", 11);
  t.input<int64_t>({}, {0}).input<int32_t>({}, {5}).input<int64_t>({}, {1});
  t.expect_failure(StatusCode::kInvalidModel, "limit must be int64 like the data, got int32");
  OpTester s("Range", 11);
  s.input<float>({2}, {0, 1}).input<float>({}, {5}).input<float>({}, {1});
  s.expect_failure(StatusCode::kShapeMismatch, "start must be a scalar");
  OpTester u("Range", 11);
  u.input<uint8_t>({}, {0}).input<uint8_t>({}, {5}).input<uint8_t>({}, {1});
  u.expect_failure(StatusCode::kUnsupportedDType, "uint8");
}

TEST(Range, Version27HalfTypesComputeInTheStashType) {
  using half = Eigen::half;
  // 0.1 is not a float16: start + i * delta in float32, rounded once, as the stash type says.
  // float16(0.1) = 0.0999755859375 < 0.1, so 6 steps fit below 1.5.
  OpTester h("Range", 27);
  h.input<half>({}, {half(1.0f)}).input<half>({}, {half(1.5f)}).input<half>({}, {half(0.1f)});
  std::vector<half> want;
  for (int i = 0; i < 6; ++i) want.push_back(half(1.0f + static_cast<float>(i) * static_cast<float>(half(0.1f))));
  h.output<half>({6}, want);
  h.tolerance(0, 0);
  h.run();
  OpTester b("Range", 27);
  b.attr("stash_type", int64_t{11});
  b.input<Eigen::bfloat16>({}, {Eigen::bfloat16(4.0f)}).input<Eigen::bfloat16>({}, {Eigen::bfloat16(0.0f)});
  b.input<Eigen::bfloat16>({}, {Eigen::bfloat16(-1.5f)});
  b.output<Eigen::bfloat16>({3}, {Eigen::bfloat16(4.0f), Eigen::bfloat16(2.5f), Eigen::bfloat16(1.0f)});
  b.run();
  // Other types ignore stash_type; stash types other than float32 and float64 are refused.
  OpTester i("Range", 27);
  i.attr("stash_type", int64_t{1});
  i.input<int32_t>({}, {10}).input<int32_t>({}, {4}).input<int32_t>({}, {-3});
  i.output<int32_t>({2}, {10, 7});
  i.run();
  OpTester s("Range", 27);
  s.attr("stash_type", int64_t{10});
  s.input<float>({}, {0}).input<float>({}, {1}).input<float>({}, {1});
  s.expect_failure(StatusCode::kUnsupportedAttr, "stash_type 10 is not float32 (1) or float64 (11)");
  OpTester old("Range", 11);
  old.input<half>({}, {half(0.0f)}).input<half>({}, {half(1.0f)}).input<half>({}, {half(1.0f)});
  old.expect_failure(StatusCode::kUnsupportedDType, "float16");
}

}  // namespace
}  // namespace vn::ops::testing
