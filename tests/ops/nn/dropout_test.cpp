// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Dropout, InferenceIsIdentityAndSharesStorage) {
  for (int64_t opset : {1, 6, 7, 10, 12, 13}) {
    OpTester t("Dropout", opset);
    const Tensor x = Tensor::from_vector<float>({2, 2}, {1, -2, 3, 4});
    if (opset < 12) t.attr("ratio", 0.5f);  // an input from opset 12
    t.input(x);
    t.output<float>({2, 2}, {1, -2, 3, 4});
    const std::vector<Tensor> out = t.run();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].raw(), x.raw());
  }
}

TEST(Dropout, BoolMaskFromOpset10) {
  for (int64_t opset : {10, 12, 13}) {
    OpTester t("Dropout", opset);
    t.input<float>({3}, {1, 2, 3});
    t.output<float>({3}, {1, 2, 3});
    t.output<bool>({3}, {true, true, true});
    t.run();
  }
}

TEST(Dropout, MaskOfDataTypeBeforeOpset10) {
  OpTester t("Dropout", 7);
  t.input<double>({2}, {5, 6});
  t.output<double>({2}, {5, 6});
  t.output<double>({2}, {1, 1});
  t.run();
}

TEST(Dropout, Opset12InputsInInferenceMode) {
  OpTester t("Dropout", 12);
  t.input<float>({2}, {1, 2}).input<float>({}, {0.3f}).input<bool>({}, {false});
  t.output<float>({2}, {1, 2});
  t.output<bool>({2}, {true, true});
  t.run();
  OpTester z("Dropout", 13);
  z.input<float>({2}, {1, 2}).input<float>({}, {0.0f}).input<bool>({}, {true});
  z.output<float>({2}, {1, 2});
  z.run();
}

TEST(Dropout, TrainingWithNonZeroRatioIsRefused) {
  OpTester t("Dropout", 13);
  t.input<float>({2}, {1, 2}).input<float>({}, {0.5f}).input<bool>({}, {true});
  t.unchecked_output();
  t.expect_failure(StatusCode::kUnsupportedAttr, "training_mode=true with ratio 0.5");
}

TEST(Dropout, BadTrainingModeFails) {
  OpTester t("Dropout", 13);
  t.input<float>({2}, {1, 2}).omitted_input().input<float>({}, {1.0f});
  t.unchecked_output();
  t.expect_failure(StatusCode::kInvalidModel, "training_mode must be a bool scalar");
}

}  // namespace
}  // namespace vn::ops::testing
