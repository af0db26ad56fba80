// SPDX-License-Identifier: Apache-2.0
// Every TensorProto data form decodes to the right Tensor, and inconsistent protos are refused
// without allocating what they claim.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <Eigen/Core>

#include "core/io/tensor_proto.h"
#include "core/ir/onnx_import.h"
#include "tests/ir/onnx_test_util.h"

namespace vn {
namespace {

using ::testing::HasSubstr;

onnx::TensorProto make_proto(int32_t type, std::vector<int64_t> dims, const std::string& name = "t") {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(type);
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

Result<Tensor> decode(const onnx::TensorProto& p) { return io::tensor_from_proto_bytes(p.SerializeAsString()); }

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  auto s = t.values<T>();
  return std::vector<T>(s.begin(), s.end());
}

TEST(TensorData, RawDataIsLittleEndianBytes) {
  onnx::TensorProto p = make_proto(onnx::TensorProto::FLOAT, {2, 2});
  const float v[4] = {1.0f, -2.5f, 3.25f, std::numeric_limits<float>::infinity()};
  p.set_raw_data(v, sizeof(v));
  std::string name;
  Result<Tensor> t = io::tensor_from_proto_bytes(p.SerializeAsString(), &name);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(name, "t");
  EXPECT_EQ(t->shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of<float>(*t), (std::vector<float>{1.0f, -2.5f, 3.25f, std::numeric_limits<float>::infinity()}));
}

TEST(TensorData, RawDataOfSmallTypes) {
  onnx::TensorProto h = make_proto(onnx::TensorProto::FLOAT16, {2});
  const uint16_t half_bits[2] = {0x3C00, 0xC000};  // 1.0, -2.0
  h.set_raw_data(half_bits, sizeof(half_bits));
  Result<Tensor> th = decode(h);
  ASSERT_TRUE(th.ok()) << th.status().to_string();
  EXPECT_EQ(static_cast<float>(th->values<Eigen::half>()[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(th->values<Eigen::half>()[1]), -2.0f);

  onnx::TensorProto b = make_proto(onnx::TensorProto::BOOL, {3});
  b.set_raw_data(std::string("\x01\x00\x01", 3));
  Result<Tensor> tb = decode(b);
  ASSERT_TRUE(tb.ok()) << tb.status().to_string();
  EXPECT_EQ(values_of<bool>(*tb), (std::vector<bool>{true, false, true}));

  onnx::TensorProto i8 = make_proto(onnx::TensorProto::INT8, {2});
  i8.set_raw_data(std::string("\xFF\x7F", 2));
  Result<Tensor> ti = decode(i8);
  ASSERT_TRUE(ti.ok());
  EXPECT_EQ(values_of<int8_t>(*ti), (std::vector<int8_t>{-1, 127}));
}

TEST(TensorData, FloatDoubleInt32Int64Fields) {
  onnx::TensorProto f = make_proto(onnx::TensorProto::FLOAT, {3});
  for (float v : {0.5f, -1.0f, 2.0f}) f.add_float_data(v);
  Result<Tensor> tf = decode(f);
  ASSERT_TRUE(tf.ok()) << tf.status().to_string();
  EXPECT_EQ(values_of<float>(*tf), (std::vector<float>{0.5f, -1.0f, 2.0f}));

  onnx::TensorProto d = make_proto(onnx::TensorProto::DOUBLE, {2});
  d.add_double_data(1e300);
  d.add_double_data(-0.125);
  Result<Tensor> td = decode(d);
  ASSERT_TRUE(td.ok());
  EXPECT_EQ(values_of<double>(*td), (std::vector<double>{1e300, -0.125}));

  onnx::TensorProto i32 = make_proto(onnx::TensorProto::INT32, {2});
  i32.add_int32_data(std::numeric_limits<int32_t>::min());
  i32.add_int32_data(7);
  Result<Tensor> ti32 = decode(i32);
  ASSERT_TRUE(ti32.ok());
  EXPECT_EQ(values_of<int32_t>(*ti32), (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 7}));

  onnx::TensorProto i64 = make_proto(onnx::TensorProto::INT64, {});
  i64.add_int64_data(std::numeric_limits<int64_t>::max());
  Result<Tensor> ti64 = decode(i64);
  ASSERT_TRUE(ti64.ok());
  EXPECT_EQ(ti64->rank(), 0);
  EXPECT_EQ(values_of<int64_t>(*ti64), (std::vector<int64_t>{std::numeric_limits<int64_t>::max()}));
}

TEST(TensorData, Int32DataHoldsSmallIntegersAndBool) {
  onnx::TensorProto i8 = make_proto(onnx::TensorProto::INT8, {3});
  for (int v : {-128, -1, 127}) i8.add_int32_data(v);
  Result<Tensor> t8 = decode(i8);
  ASSERT_TRUE(t8.ok()) << t8.status().to_string();
  EXPECT_EQ(values_of<int8_t>(*t8), (std::vector<int8_t>{-128, -1, 127}));

  onnx::TensorProto u8 = make_proto(onnx::TensorProto::UINT8, {2});
  u8.add_int32_data(0);
  u8.add_int32_data(255);
  Result<Tensor> tu8 = decode(u8);
  ASSERT_TRUE(tu8.ok());
  EXPECT_EQ(values_of<uint8_t>(*tu8), (std::vector<uint8_t>{0, 255}));

  onnx::TensorProto i16 = make_proto(onnx::TensorProto::INT16, {2});
  i16.add_int32_data(-32768);
  i16.add_int32_data(1234);
  Result<Tensor> t16 = decode(i16);
  ASSERT_TRUE(t16.ok());
  EXPECT_EQ(values_of<int16_t>(*t16), (std::vector<int16_t>{-32768, 1234}));

  onnx::TensorProto u16 = make_proto(onnx::TensorProto::UINT16, {1});
  u16.add_int32_data(65535);
  Result<Tensor> tu16 = decode(u16);
  ASSERT_TRUE(tu16.ok());
  EXPECT_EQ(values_of<uint16_t>(*tu16), (std::vector<uint16_t>{65535}));

  onnx::TensorProto b = make_proto(onnx::TensorProto::BOOL, {3});
  for (int v : {1, 0, 1}) b.add_int32_data(v);
  Result<Tensor> tb = decode(b);
  ASSERT_TRUE(tb.ok());
  EXPECT_EQ(values_of<bool>(*tb), (std::vector<bool>{true, false, true}));
}

TEST(TensorData, Int32DataHoldsHalfAndBFloat16BitPatterns) {
  onnx::TensorProto h = make_proto(onnx::TensorProto::FLOAT16, {4});
  for (int bits : {0x3C00, 0xC000, 0x7BFF, 0x0001}) h.add_int32_data(bits);  // 1, -2, 65504, smallest subnormal
  Result<Tensor> th = decode(h);
  ASSERT_TRUE(th.ok()) << th.status().to_string();
  auto hv = th->values<Eigen::half>();
  EXPECT_EQ(static_cast<float>(hv[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(hv[1]), -2.0f);
  EXPECT_EQ(static_cast<float>(hv[2]), 65504.0f);
  EXPECT_EQ(static_cast<float>(hv[3]), 5.9604644775390625e-08f);

  onnx::TensorProto bf = make_proto(onnx::TensorProto::BFLOAT16, {3});
  for (int bits : {0x3F80, 0xC040, 0x4049}) bf.add_int32_data(bits);  // 1, -3, 3.140625
  Result<Tensor> tbf = decode(bf);
  ASSERT_TRUE(tbf.ok()) << tbf.status().to_string();
  auto bv = tbf->values<Eigen::bfloat16>();
  EXPECT_EQ(static_cast<float>(bv[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(bv[1]), -3.0f);
  EXPECT_EQ(static_cast<float>(bv[2]), 3.140625f);
}

TEST(TensorData, Uint64DataHoldsUnsignedTypes) {
  onnx::TensorProto u32 = make_proto(onnx::TensorProto::UINT32, {2});
  u32.add_uint64_data(4294967295u);
  u32.add_uint64_data(3);
  Result<Tensor> t32 = decode(u32);
  ASSERT_TRUE(t32.ok()) << t32.status().to_string();
  EXPECT_EQ(values_of<uint32_t>(*t32), (std::vector<uint32_t>{4294967295u, 3}));

  onnx::TensorProto u64 = make_proto(onnx::TensorProto::UINT64, {1});
  u64.add_uint64_data(std::numeric_limits<uint64_t>::max());
  Result<Tensor> t64 = decode(u64);
  ASSERT_TRUE(t64.ok());
  EXPECT_EQ(values_of<uint64_t>(*t64), (std::vector<uint64_t>{std::numeric_limits<uint64_t>::max()}));
}

TEST(TensorData, StringData) {
  onnx::TensorProto s = make_proto(onnx::TensorProto::STRING, {3});
  s.add_string_data("alpha");
  s.add_string_data("");
  s.add_string_data(std::string("nul\0byte", 8));
  Result<Tensor> t = decode(s);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(values_of<std::string>(*t), (std::vector<std::string>{"alpha", "", std::string("nul\0byte", 8)}));

  onnx::TensorProto raw = make_proto(onnx::TensorProto::STRING, {1});
  raw.set_raw_data("abc");
  Result<Tensor> bad = decode(raw);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("string tensors cannot use raw_data"));
}

TEST(TensorData, EmptyTensorsNeedNoData) {
  onnx::TensorProto e = make_proto(onnx::TensorProto::FLOAT, {0, 3});
  Result<Tensor> t = decode(e);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->numel(), 0);
  EXPECT_EQ(t->shape(), (Shape{0, 3}));
}

TEST(TensorData, LengthMismatchesAreRefused) {
  onnx::TensorProto raw = make_proto(onnx::TensorProto::FLOAT, {2, 3});
  raw.set_raw_data(std::string(20, '\0'));
  Result<Tensor> r = decode(raw);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_THAT(r.status().message(), HasSubstr("raw_data holds 20 bytes, but shape (2, 3) of float32 needs 24"));

  onnx::TensorProto field = make_proto(onnx::TensorProto::INT64, {4});
  field.add_int64_data(1);
  Result<Tensor> f = decode(field);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("int64_data holds 1 values, but shape (4,) of int64 needs 4"));

  // Values in the wrong field for the type are as good as missing.
  onnx::TensorProto wrong = make_proto(onnx::TensorProto::FLOAT, {1});
  wrong.add_int64_data(1);
  Result<Tensor> w = decode(wrong);
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("float_data holds 0 values"));
}

TEST(TensorData, HugeClaimedShapesAreRefusedBeforeAllocating) {
  onnx::TensorProto p = make_proto(onnx::TensorProto::FLOAT, {1000000, 1000000});
  p.set_raw_data(std::string(16, '\0'));
  Result<Tensor> t = decode(p);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("limit"));

  // Under kMaxTensorBytes but far more than the data: refused by the length check, not allocated.
  onnx::TensorProto q = make_proto(onnx::TensorProto::FLOAT, {1 << 30, 8});
  q.add_float_data(1.0f);
  Result<Tensor> u = decode(q);
  ASSERT_FALSE(u.ok());
  EXPECT_THAT(u.status().message(), HasSubstr("float_data holds 1 values"));

  onnx::TensorProto overflow = make_proto(onnx::TensorProto::INT8, {std::numeric_limits<int64_t>::max(), 4});
  Result<Tensor> o = decode(overflow);
  ASSERT_FALSE(o.ok());
}

TEST(TensorData, MalformedProtosAreRefused) {
  onnx::TensorProto neg = make_proto(onnx::TensorProto::FLOAT, {-1});
  Result<Tensor> n = decode(neg);
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.status().message(), HasSubstr("negative dimension -1"));

  onnx::TensorProto seg = make_proto(onnx::TensorProto::FLOAT, {1});
  seg.add_float_data(1.0f);
  seg.mutable_segment()->set_begin(0);
  seg.mutable_segment()->set_end(1);
  Result<Tensor> s = decode(seg);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("segmented"));

  onnx::TensorProto undefined = make_proto(onnx::TensorProto::UNDEFINED, {1});
  undefined.add_float_data(1.0f);
  Result<Tensor> u = decode(undefined);
  ASSERT_FALSE(u.ok());
  EXPECT_THAT(u.status().message(), HasSubstr("no data type"));

  onnx::TensorProto complex = make_proto(onnx::TensorProto::COMPLEX128, {1});
  complex.add_double_data(1.0);
  complex.add_double_data(2.0);
  Result<Tensor> c = decode(complex);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnsupportedDType);
  EXPECT_THAT(c.status().message(), HasSubstr("complex128"));

  onnx::TensorProto ext = make_proto(onnx::TensorProto::FLOAT, {1});
  testing::make_external(ext, "w.bin");
  Result<Tensor> e = decode(ext);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("cannot be resolved"));
}

TEST(TensorData, InitializersUseTheSameDecoder) {
  // The text syntax has no float16 literals, so the initializer is added by hand.
  onnx::ModelProto proto = testing::proto_from_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float16[2] X) => (float16[2] Y) { Y = Add(X, H) }
)ONNX");
  onnx::TensorProto* h = proto.mutable_graph()->add_initializer();
  *h = make_proto(onnx::TensorProto::FLOAT16, {2}, "H");
  h->add_int32_data(0x3C00);
  h->add_int32_data(0x4000);
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  auto v = m->graph.initializers[0].tensor.values<Eigen::half>();
  EXPECT_EQ(static_cast<float>(v[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(v[1]), 2.0f);
}

}  // namespace
}  // namespace vn
