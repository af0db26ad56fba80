// SPDX-License-Identifier: Apache-2.0
// Helpers for tests that build ONNX protobuf messages directly (hostile and unusual inputs that
// Vernier's own writer never produces).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include "tests/ir/ir_test_util.h"

namespace vn::testing {

/// Parses ONNX text syntax into a ModelProto; fails the test on a syntax error.
inline onnx::ModelProto proto_from_text(std::string_view text) {
  const std::string buffer(text);
  onnx::ModelProto proto;
  onnx::OnnxParser parser(buffer.c_str());
  const auto st = parser.Parse(proto);
  EXPECT_TRUE(st.IsOK()) << st.ErrorMessage();
  return proto;
}

inline void save_proto(const google::protobuf::MessageLite& proto, const std::filesystem::path& path) {
  write_bytes(path, proto.SerializeAsString());
}

/// Marks `tensor` as external data at `location`, with optional offset and length entries.
inline void make_external(onnx::TensorProto& tensor, const std::string& location, const std::string& offset = "",
                          const std::string& length = "") {
  tensor.clear_raw_data();
  tensor.clear_float_data();
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  tensor.clear_external_data();
  const auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    auto* e = tensor.add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  add("offset", offset);
  add("length", length);
}

}  // namespace vn::testing
