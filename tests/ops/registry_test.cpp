// SPDX-License-Identifier: Apache-2.0
// The since-versions each op is registered at, written out from the ONNX 1.12 operator changelog
// (checked against onnx::OpSchemaRegistry on Debian's libonnx 1.12). A registration change must
// update this table, which keeps version coverage a deliberate decision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ops/op_registry.h"

namespace vn::ops {
namespace {

const std::map<std::string, std::vector<int64_t>>& expected_versions() {
  static const std::map<std::string, std::vector<int64_t>> table = {
      {"Abs", {1, 6, 13}},
      {"Acos", {7}},
      {"Acosh", {9}},
      {"Add", {1, 6, 7, 13, 14}},
      {"And", {1, 7}},
      {"ArgMax", {1, 11, 12, 13}},
      {"ArgMin", {1, 11, 12, 13}},
      {"Asin", {7}},
      {"Asinh", {9}},
      {"Atan", {7}},
      {"Atanh", {9}},
      {"AveragePool", {1, 7, 10, 11}},
      {"BatchNormalization", {1, 6, 7, 9, 14, 15}},
      {"Bernoulli", {15}},
      {"BitShift", {11}},
      {"BlackmanWindow", {17}},
      {"Cast", {1, 6, 9, 13}},
      {"CastLike", {15}},
      {"Ceil", {1, 6, 13}},
      {"Celu", {12}},
      {"Clip", {1, 6, 11, 12, 13}},
      {"Compress", {9, 11}},
      {"Concat", {1, 4, 11, 13}},
      {"Constant", {1, 9, 11, 12, 13}},
      {"ConstantOfShape", {9}},
      {"Conv", {1, 11}},
      {"ConvInteger", {10}},
      {"ConvTranspose", {1, 11}},
      {"Cos", {7}},
      {"Cosh", {9}},
      {"CumSum", {11, 14}},
      {"DFT", {17}},
      {"DepthToSpace", {1, 11, 13}},
      {"DequantizeLinear", {10, 13}},
      {"Det", {11}},
      {"Div", {1, 6, 7, 13, 14}},
      {"Dropout", {1, 6, 7, 10, 12, 13}},
      {"DynamicQuantizeLinear", {11}},
      {"Einsum", {12}},
      {"Elu", {1, 6}},
      {"Equal", {1, 7, 11, 13}},
      {"Erf", {9, 13}},
      {"Exp", {1, 6, 13}},
      {"Expand", {8, 13}},
      {"EyeLike", {9}},
      {"Flatten", {1, 9, 11, 13}},
      {"Floor", {1, 6, 13}},
      {"GRU", {7, 14}},
      {"Gather", {1, 11, 13}},
      {"GatherElements", {11, 13}},
      {"GatherND", {11, 12, 13}},
      {"Gemm", {1, 6, 7, 9, 11, 13}},
      {"GlobalAveragePool", {1}},
      {"GlobalLpPool", {1, 2}},
      {"GlobalMaxPool", {1}},
      {"Greater", {1, 7, 9, 13}},
      {"GreaterOrEqual", {12, 16}},
      {"GridSample", {16}},
      {"HammingWindow", {17}},
      {"HannWindow", {17}},
      {"HardSigmoid", {1, 6}},
      {"HardSwish", {14}},
      {"Hardmax", {1, 11, 13}},
      {"Identity", {1, 13, 14, 16}},
      {"If", {1, 11, 13, 16}},
      {"InstanceNormalization", {1, 6}},
      {"IsInf", {10}},
      {"IsNaN", {9, 13}},
      {"LRN", {1, 13}},
      {"LSTM", {7, 14}},
      {"LayerNormalization", {17}},
      {"LeakyRelu", {1, 6, 16}},
      {"Less", {1, 7, 9, 13}},
      {"LessOrEqual", {12, 16}},
      {"Log", {1, 6, 13}},
      {"LogSoftmax", {1, 11, 13}},
      {"Loop", {1, 11, 13, 16}},
      {"LpNormalization", {1}},
      {"LpPool", {1, 2, 11}},
      {"MatMul", {1, 9, 13}},
      {"MatMulInteger", {10}},
      {"Max", {1, 6, 8, 12, 13}},
      {"MaxPool", {1, 8, 10, 11, 12}},
      {"MaxRoiPool", {1}},
      {"MaxUnpool", {9, 11}},
      {"Mean", {1, 6, 8, 13}},
      {"MeanVarianceNormalization", {9, 13}},
      {"MelWeightMatrix", {17}},
      {"Min", {1, 6, 8, 12, 13}},
      {"Mod", {10, 13}},
      {"Mul", {1, 6, 7, 13, 14}},
      {"Multinomial", {7}},
      {"Neg", {1, 6, 13}},
      {"NonMaxSuppression", {10, 11}},
      {"NonZero", {9, 13}},
      {"Not", {1}},
      {"OneHot", {9, 11}},
      {"Or", {1, 7}},
      {"PRelu", {1, 6, 7, 9, 16}},
      {"Pad", {1, 2, 11, 13}},
      {"Pow", {1, 7, 12, 13, 15}},
      {"QLinearConv", {10}},
      {"QLinearMatMul", {10}},
      {"QuantizeLinear", {10, 13}},
      {"RNN", {7, 14}},
      {"RandomNormal", {1}},
      {"RandomNormalLike", {1}},
      {"RandomUniform", {1}},
      {"RandomUniformLike", {1}},
      {"Range", {11}},
      {"Reciprocal", {1, 6, 13}},
      {"ReduceL1", {1, 11, 13}},
      {"ReduceL2", {1, 11, 13}},
      {"ReduceLogSum", {1, 11, 13}},
      {"ReduceLogSumExp", {1, 11, 13}},
      {"ReduceMax", {1, 11, 12, 13}},
      {"ReduceMean", {1, 11, 13}},
      {"ReduceMin", {1, 11, 12, 13}},
      {"ReduceProd", {1, 11, 13}},
      {"ReduceSum", {1, 11, 13}},
      {"ReduceSumSquare", {1, 11, 13}},
      {"Relu", {1, 6, 13, 14}},
      {"Reshape", {1, 5, 13, 14}},
      {"Resize", {10, 11, 13}},
      {"ReverseSequence", {10}},
      {"RoiAlign", {10, 16}},
      {"Round", {11}},
      {"STFT", {17}},
      {"Scan", {8, 9, 11, 16}},
      {"Scatter", {9, 11}},
      {"ScatterElements", {11, 13, 16}},
      {"ScatterND", {11, 13, 16}},
      {"Selu", {1, 6}},
      {"Shape", {1, 13, 15}},
      {"Shrink", {9}},
      {"Sigmoid", {1, 6, 13}},
      {"Sign", {9, 13}},
      {"Sin", {7}},
      {"Sinh", {9}},
      {"Size", {1, 13}},
      {"Slice", {1, 10, 11, 13}},
      {"Softmax", {1, 11, 13}},
      {"Softplus", {1}},
      {"Softsign", {1}},
      {"SpaceToDepth", {1, 13}},
      {"Split", {1, 2, 11, 13}},
      {"Sqrt", {1, 6, 13}},
      {"Squeeze", {1, 11, 13}},
      {"StringNormalizer", {10}},
      {"Sub", {1, 6, 7, 13, 14}},
      {"Sum", {1, 6, 8, 13}},
      {"Tan", {7}},
      {"Tanh", {1, 6, 13}},
      {"TfIdfVectorizer", {9}},
      {"ThresholdedRelu", {10}},
      {"Tile", {1, 6, 13}},
      {"TopK", {1, 10, 11}},
      {"Transpose", {1, 13}},
      {"Trilu", {14}},
      {"Unique", {11}},
      {"Unsqueeze", {1, 11, 13}},
      {"Upsample", {7, 9}},
      {"Where", {9, 16}},
      {"Xor", {1, 7}},
  };
  return table;
}

TEST(Registry, SinceVersionsMatchTheOnnxChangelog) {
  std::map<std::string, std::vector<int64_t>> registered;
  for (const KernelDef& def : reference_registry().all()) {
    EXPECT_EQ(def.domain, "") << def.op_type;
    EXPECT_NE(def.fn, nullptr) << def.op_type;
    EXPECT_LE(def.since_version, 17) << def.op_type << " is registered above libonnx 1.12's opset 17";
    registered[def.op_type].push_back(def.since_version);
  }
  EXPECT_EQ(registered, expected_versions());
}

TEST(Registry, EveryOpResolvesAtOpset17AndNotBelowItsFirstVersion) {
  for (const auto& [op, versions] : expected_versions()) {
    const KernelDef* latest = reference_registry().find("", op, 17);
    ASSERT_NE(latest, nullptr) << op;
    EXPECT_EQ(latest->since_version, versions.back()) << op;
    EXPECT_EQ(reference_registry().find("ai.onnx", op, versions.front())->since_version, versions.front()) << op;
    if (versions.front() > 1) {
      EXPECT_EQ(reference_registry().find("", op, versions.front() - 1), nullptr) << op;
    }
  }
  EXPECT_FALSE(reference_registry().knows("", "NoSuchOp"));
  EXPECT_EQ(reference_registry().find("com.microsoft", "Relu", 17), nullptr);
}

}  // namespace
}  // namespace vn::ops
