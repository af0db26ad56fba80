// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_depth.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vn {
namespace {

using ::testing::HasSubstr;

std::string nested(int depth) { return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']'); }

TEST(JsonDepth, AllowsTheLimitAndRefusesOneMore) {
  EXPECT_TRUE(check_json_depth(nested(kMaxJsonDepth)).ok());
  const Status deep = check_json_depth(nested(kMaxJsonDepth + 1));
  EXPECT_EQ(deep.code(), StatusCode::kIoError);
  EXPECT_THAT(deep.message(), HasSubstr("nested deeper than 64 levels (at byte 64)"));
  EXPECT_FALSE(check_json_depth(std::string(100000, '{')).ok());
}

TEST(JsonDepth, BracketsInStringsDoNotCount) {
  EXPECT_TRUE(check_json_depth("[\"" + std::string(1000, '[') + "\\\"[[[\"]", 2).ok());
  EXPECT_TRUE(check_json_depth(R"({"a": {"b": "\\"}})", 2).ok());
  EXPECT_FALSE(check_json_depth(R"({"a": {"b": [1]}})", 2).ok());
}

}  // namespace
}  // namespace vn
