// SPDX-License-Identifier: Apache-2.0
#include "core/io/tensor_proto.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <Eigen/Core>

#include "tests/ir/ir_test_util.h"

namespace vn {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

std::vector<Tensor> sample_tensors() {
  return {
      Tensor::from_vector<float>({2, 2}, {1.5f, -2.0f, 0.0f, std::numeric_limits<float>::quiet_NaN()}),
      Tensor::from_vector<double>({3}, {1e-300, 2.0, -3.0}),
      Tensor::from_vector<int64_t>({}, {std::numeric_limits<int64_t>::min()}),
      Tensor::from_vector<int32_t>({2}, {-7, 7}),
      Tensor::from_vector<int8_t>({3}, {-128, 0, 127}),
      Tensor::from_vector<uint8_t>({2}, {0, 255}),
      Tensor::from_vector<int16_t>({1}, {-300}),
      Tensor::from_vector<uint16_t>({1}, {65000}),
      Tensor::from_vector<uint32_t>({1}, {4000000000u}),
      Tensor::from_vector<uint64_t>({1}, {std::numeric_limits<uint64_t>::max()}),
      Tensor::from_vector<bool>({3}, {true, false, true}),
      Tensor::from_vector<Eigen::half>({2}, {Eigen::half(1.0f), Eigen::half(-65504.0f)}),
      Tensor::from_vector<Eigen::bfloat16>({2}, {Eigen::bfloat16(3.140625f), Eigen::bfloat16(-1.0f)}),
      Tensor::from_vector<std::string>({2}, {"hello", ""}),
      Tensor(DType::kFloat32, {0, 4}),
  };
}

TEST(TensorProtoIo, SaveLoadRoundTripsEveryDType) {
  TempDir dir;
  const std::vector<Tensor> tensors = sample_tensors();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string name = "tensor_" + std::to_string(i);
    const auto path = dir / (name + ".pb");
    ASSERT_TRUE(io::tensor_proto_save(tensors[i], name, path).ok()) << i;
    Result<NamedTensor> loaded = io::tensor_proto_load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    EXPECT_EQ(loaded->name, name);
    EXPECT_TRUE(loaded->tensor.same_as(tensors[i])) << dtype_name(tensors[i].dtype());
  }
}

TEST(TensorProtoIo, WritesAStandardTensorProto) {
  TempDir dir;
  ASSERT_TRUE(io::tensor_proto_save(Tensor::from_vector<float>({2}, {1, 2}), "x", dir / "x.pb").ok());
  onnx::TensorProto proto;
  ASSERT_TRUE(proto.ParseFromString(testing::read_bytes(dir / "x.pb")));
  EXPECT_EQ(proto.name(), "x");
  EXPECT_EQ(proto.data_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(proto.dims_size(), 1);
  EXPECT_EQ(proto.dims(0), 2);
  EXPECT_EQ(proto.raw_data().size(), 8u);
}

TEST(TensorProtoIo, BytesApiReturnsTheName) {
  onnx::TensorProto proto;
  proto.set_name("logits");
  proto.set_data_type(onnx::TensorProto::INT64);
  proto.add_dims(2);
  proto.add_int64_data(4);
  proto.add_int64_data(-4);
  std::string name;
  Result<Tensor> t = io::tensor_from_proto_bytes(proto.SerializeAsString(), &name);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(name, "logits");
  EXPECT_TRUE(t->same_as(Tensor::from_vector<int64_t>({2}, {4, -4})));
  EXPECT_TRUE(io::tensor_from_proto_bytes(proto.SerializeAsString()).ok());
}

TEST(TensorProtoIo, ErrorsNameTheFile) {
  TempDir dir;
  Result<NamedTensor> missing = io::tensor_proto_load(dir / "absent.pb");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.pb"));

  testing::write_bytes(dir / "garbage.pb", std::string("\xFF\xFF\xFF\xFF\xFF\xFF", 6));
  Result<NamedTensor> garbage = io::tensor_proto_load(dir / "garbage.pb");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kIoError);
  EXPECT_THAT(garbage.status().message(), HasSubstr("garbage.pb: not a valid ONNX TensorProto"));

  testing::write_bytes(dir / "empty.pb", "");
  Result<NamedTensor> empty = io::tensor_proto_load(dir / "empty.pb");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("empty.pb: not a valid ONNX TensorProto"));

  onnx::TensorProto short_data;
  short_data.set_data_type(onnx::TensorProto::FLOAT);
  short_data.add_dims(4);
  short_data.set_raw_data(std::string(4, '\0'));
  testing::write_bytes(dir / "short.pb", short_data.SerializeAsString());
  Result<NamedTensor> truncated = io::tensor_proto_load(dir / "short.pb");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kIoError);
  EXPECT_THAT(truncated.status().message(), HasSubstr("short.pb: unnamed tensor: raw_data holds 4 bytes"));

  EXPECT_EQ(io::tensor_proto_save(Tensor(), "x", dir / "x.pb").code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.pb"));
  EXPECT_EQ(io::tensor_proto_save(Tensor::scalar<float>(1), "x", dir / "no" / "such" / "x.pb").code(),
            StatusCode::kIoError);
}

}  // namespace
}  // namespace vn
