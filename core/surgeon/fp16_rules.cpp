// SPDX-License-Identifier: Apache-2.0
#include "core/surgeon/fp16_rules.h"

#include <algorithm>

namespace vn::surgeon {
namespace {

constexpr std::string_view kBlockList = "in onnxconverter-common's DEFAULT_OP_BLOCK_LIST";
constexpr std::string_view kRandom = "random generator: kept in float32 so that it draws as the original does";

constexpr Fp16BlockedOp kBlockedOps[] = {
    {"ArrayFeatureExtractor", kBlockList},
    {"Binarizer", kBlockList},
    {"CastMap", kBlockList},
    {"CategoryMapper", kBlockList},
    {"DictVectorizer", kBlockList},
    {"FeatureVectorizer", kBlockList},
    {"Imputer", kBlockList},
    {"LabelEncoder", kBlockList},
    {"LinearClassifier", kBlockList},
    {"LinearRegressor", kBlockList},
    {"Normalizer", kBlockList},
    {"OneHotEncoder", kBlockList},
    {"SVMClassifier", kBlockList},
    {"SVMRegressor", kBlockList},
    {"Scaler", kBlockList},
    {"TreeEnsembleClassifier", kBlockList},
    {"TreeEnsembleRegressor", kBlockList},
    {"ZipMap", kBlockList},
    {"NonMaxSuppression", kBlockList},
    {"TopK", kBlockList},
    {"RoiAlign", kBlockList},
    {"Resize", kBlockList},
    {"Range", kBlockList},
    {"CumSum", kBlockList},
    {"Min", kBlockList},
    {"Max", kBlockList},
    {"Upsample", kBlockList},
    {"RandomNormal", kRandom},
    {"RandomNormalLike", kRandom},
    {"RandomUniform", kRandom},
    {"RandomUniformLike", kRandom},
    {"Multinomial", kRandom},
    {"Bernoulli", kRandom},
};

}  // namespace

std::span<const Fp16BlockedOp> fp16_blocked_ops() { return kBlockedOps; }

std::string_view fp16_block_reason(std::string_view op_type) {
  const auto it = std::find_if(std::begin(kBlockedOps), std::end(kBlockedOps),
                               [&](const Fp16BlockedOp& b) { return b.op_type == op_type; });
  return it == std::end(kBlockedOps) ? std::string_view() : it->reason;
}

bool fp16_random_op(std::string_view op_type) { return fp16_block_reason(op_type) == kRandom; }

}  // namespace vn::surgeon
