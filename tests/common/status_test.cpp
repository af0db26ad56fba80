// SPDX-License-Identifier: Apache-2.0
#include "core/common/status.h"

#include <gtest/gtest.h>

#include "core/common/logging.h"

namespace vn {
namespace {

Result<int> parse_positive(int v) {
  VN_RETURN_IF_NOT(v > 0, StatusCode::kInvalidArgument, "value {} is not positive", v);
  return v;
}

Result<int> doubled(int v) {
  VN_ASSIGN_OR_RETURN(int p, parse_positive(v));
  return 2 * p;
}

Status check_both(int a, int b) {
  VN_RETURN_IF_ERROR(parse_positive(a).status());
  VN_RETURN_IF_ERROR(parse_positive(b).status());
  return Status::OK();
}

TEST(Status, OkIsCheapAndEmpty) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.to_string(), "OK");
}

TEST(Status, CarriesCodeMessageAndNode) {
  Status s(StatusCode::kUnsupportedOp, "no kernel for opset 9", NodeRef{4, "conv1", "Conv"});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnsupportedOp);
  ASSERT_NE(s.node(), nullptr);
  EXPECT_EQ(s.node()->index, 4);
  EXPECT_EQ(s.to_string(), "node 4 'conv1' (Conv): no kernel for opset 9");
  EXPECT_EQ(s.with_context("model.onnx").to_string(), "node 4 'conv1' (Conv): model.onnx: no kernel for opset 9");
}

TEST(Status, WithNodeKeepsTheFirstNode) {
  Status s = make_error(StatusCode::kShapeMismatch, "bad {}", 3).with_node(NodeRef{1, "a", "Add"});
  EXPECT_EQ(s.with_node(NodeRef{2, "b", "Mul"}).node()->name, "a");
}

TEST(Result, PropagatesValuesAndErrors) {
  Result<int> ok = doubled(4);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 8);
  Result<int> bad = doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "value -1 is not positive");
  EXPECT_TRUE(check_both(1, 2).ok());
  EXPECT_EQ(check_both(1, 0).message(), "value 0 is not positive");
}

TEST(ResultDeathTest, ReadingTheValueOfAnErrorAbortsNamingIt) {
  const Result<int> bad = doubled(-1);
  EXPECT_DEATH((void)bad.value(), "check 'ok\\(\\)' failed: .*value -1 is not positive");
  EXPECT_DEATH((void)*bad, "value -1 is not positive");
  const Result<std::string> none{Status(StatusCode::kIoError, "no file")};
  EXPECT_DEATH((void)none->size(), "no file");
}

TEST(Result, FromOkStatusIsAnInternalError) {
  Result<int> r{Status::OK()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(Logging, RingBufferKeepsTheNewestRecords) {
  auto ring = std::make_shared<RingBufferSink>(2);
  set_log_sink(ring);
  VN_LOG_INFO("one {}", 1);
  VN_LOG_WARNING("two");
  VN_LOG_DEBUG("dropped below threshold");
  VN_LOG_ERROR("three");
  set_log_sink(std::make_shared<StderrSink>());
  auto records = ring->snapshot();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].message, "two");
  EXPECT_EQ(records[0].level, LogLevel::kWarning);
  EXPECT_EQ(records[1].message, "three");
}

}  // namespace
}  // namespace vn
