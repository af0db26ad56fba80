// SPDX-License-Identifier: Apache-2.0
// Models newer than libonnx 1.12's protobuf (IR version 8): the fields and element types it keeps
// aside as unknown are read past when they cannot change the computation (metadata, multi-device
// annotations) and refused otherwise, never silently dropped.
#include <gtest/gtest.h>

#include <google/protobuf/unknown_field_set.h>

#include "core/ir/onnx_import.h"
#include "core/ir/onnx_schema.h"
#include "tests/ir/onnx_test_util.h"

namespace vn {
namespace {

using vn::testing::proto_from_text;

onnx::ModelProto relu_model() {
  return proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2] x) => (float[2] y) {
      y = Relu(x)
    })");
}

Result<Model> load(const onnx::ModelProto& proto) {
  return load_model_from_bytes(proto.SerializeAsString(), {}, LoadOptions{});
}

TEST(OnnxFields, MetadataAndDeviceConfigurationsAreReadPast) {
  onnx::ModelProto proto = relu_model();
  proto.set_ir_version(10);
  auto* node_fields = proto.mutable_graph()->mutable_node(0)->mutable_unknown_fields();
  node_fields->AddLengthDelimited(9, "\x0a\x03key\x12\x05value");  // NodeProto.metadata_props
  node_fields->AddLengthDelimited(10, "");                          // NodeProto.device_configurations
  proto.mutable_graph()->mutable_unknown_fields()->AddLengthDelimited(16, "");  // GraphProto.metadata_props
  proto.mutable_graph()->mutable_input(0)->mutable_unknown_fields()->AddLengthDelimited(4, "");
  proto.mutable_unknown_fields()->AddLengthDelimited(26, "");  // ModelProto.configuration
  Result<Model> model = load(proto);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->graph.nodes.size(), 1u);
}

TEST(OnnxFields, AFunctionOverloadIsRefused) {
  onnx::ModelProto proto = relu_model();
  proto.mutable_graph()->mutable_node(0)->mutable_unknown_fields()->AddLengthDelimited(8, "fast");
  Result<Model> model = load(proto);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("field 'overload' is not supported"), std::string::npos)
      << model.status().message();
}

TEST(OnnxFields, AnElementTypeBeyondOnnxsIsRefusedByNumber) {
  onnx::ModelProto proto = proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2] x) => (float[2] y) {
      y = Add(x, w)
    })");
  onnx::TensorProto* w = proto.mutable_graph()->add_initializer();
  w->set_name("w");
  w->add_dims(2);
  w->set_raw_data(std::string("\x38\x38", 2));
  // The field is an int32: values beyond ONNX 1.23's last type (int2, 26) are read, then refused.
  w->set_data_type(27);
  Result<Model> model = load(proto);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupportedDType);
  EXPECT_NE(model.status().message().find("tensor 'w': ONNX data type 27 is not supported"),
            std::string::npos)
      << model.status().message();
}

TEST(OnnxFields, AnUnknownFieldIsRefusedNamingWhereItIs) {
  onnx::ModelProto proto = relu_model();
  proto.mutable_graph()->mutable_unknown_fields()->AddVarint(99, 1);
  Result<Model> model = load(proto);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("graph 'g': field 99 of onnx.GraphProto is newer than what Vernier reads"),
            std::string::npos)
      << model.status().message();
}

TEST(OnnxFields, IrVersionsNewerThanTheTableAreRefused) {
  onnx::ModelProto proto = relu_model();
  proto.set_ir_version(kNewestIrVersion);
  EXPECT_TRUE(load(proto).ok());
  proto.set_ir_version(kNewestIrVersion + 1);
  Result<Model> model = load(proto);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("IR version 15 is newer than the 14 Vernier reads"), std::string::npos)
      << model.status().message();
}

TEST(OnnxFields, AttributesAndArityAreCheckedAtOpsetsNewerThanLibonnx) {
  // Relu-14 has no attributes and one input; libonnx 1.12's checker does not judge opset 18.
  onnx::ModelProto proto = relu_model();
  onnx::AttributeProto* a = proto.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(0.5f);
  Result<Model> model = load(proto);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("has attribute 'alpha', which Relu-14 (opset 18) does not define"),
            std::string::npos)
      << model.status().message();

  proto = proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2] x) => (float[2] y) {
      y = Relu(x, x)
    })");
  model = load(proto);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("has 2 inputs; Relu-14 (opset 18) takes 1 to 1"), std::string::npos)
      << model.status().message();
}

TEST(OnnxFields, RequiredAttributesAreCheckedAtNewOpsets) {
  onnx::ModelProto proto = proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 21]>
    g (float[2] x) => (int64[2] y) {
      y = Cast(x)
    })");
  Result<Model> model = load(proto);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("lacks attribute 'to', which Cast-21 requires"), std::string::npos)
      << model.status().message();
}

}  // namespace
}  // namespace vn
