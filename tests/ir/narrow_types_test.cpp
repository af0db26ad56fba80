// SPDX-License-Identifier: Apache-2.0
// The narrow element types (float8, float4e2m1, int4/uint4, int2/uint2): conversions against the
// values ONNX's reference (ml_dtypes) gives, packed TensorProto layouts both ways, and hostile
// protos refused with one line.
#include "core/ir/narrow_types.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <Eigen/Core>

#include "core/data/feeds.h"
#include "core/io/tensor_proto.h"
#include "core/ir/onnx_proto.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "tests/ir/ir_test_util.h"

namespace vn {
namespace {

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const NarrowCastOptions kNoSaturate{.saturate = false};

uint8_t enc(NarrowFormat f, double v, const NarrowCastOptions& o = {}) { return narrow_encode(f, v, o); }

TEST(NarrowTypes, Float8SpecialValues) {
  // e4m3fn: no infinity, NaN S.1111.111, max 448.
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, 448), 0x7E);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, 1e6), 0x7E);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, kInf), 0x7E);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, -kInf), 0xFE);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, kInf, kNoSaturate), 0x7F);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, -1e6, kNoSaturate), 0xFF);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, kNaN), 0x7F);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, -1e-7), 0x80);  // negative zero kept
  EXPECT_TRUE(std::isnan(narrow_decode(NarrowFormat::kE4M3FN, 0xFF)));
  EXPECT_EQ(narrow_decode(NarrowFormat::kE4M3FN, 0x01), std::ldexp(1.0, -9));  // smallest subnormal
  // e5m2: IEEE-like, with infinities.
  EXPECT_EQ(enc(NarrowFormat::kE5M2, 1e6), 0x7B);
  EXPECT_EQ(enc(NarrowFormat::kE5M2, 1e6, kNoSaturate), 0x7C);
  EXPECT_EQ(enc(NarrowFormat::kE5M2, -kInf, kNoSaturate), 0xFC);
  EXPECT_EQ(enc(NarrowFormat::kE5M2, kNaN), 0x7E);
  EXPECT_EQ(narrow_decode(NarrowFormat::kE5M2, 0x7C), kInf);
  EXPECT_EQ(narrow_decode(NarrowFormat::kE5M2, 0x7B), 57344.0);
  // fnuz: NaN is 0x80, no negative zero, other biases.
  EXPECT_EQ(enc(NarrowFormat::kE4M3FNUZ, kNaN), 0x80);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FNUZ, 1e6), 0x7F);
  EXPECT_EQ(narrow_decode(NarrowFormat::kE4M3FNUZ, 0x7F), 240.0);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FNUZ, 1e6, kNoSaturate), 0x80);
  EXPECT_EQ(enc(NarrowFormat::kE5M2FNUZ, -1e-7), 0x00);
  EXPECT_EQ(enc(NarrowFormat::kE5M2FNUZ, -kInf, kNoSaturate), 0x80);
  EXPECT_EQ(enc(NarrowFormat::kE5M2FNUZ, -1e6), 0xFF);
  EXPECT_TRUE(std::isnan(narrow_decode(NarrowFormat::kE5M2FNUZ, 0x80)));
  EXPECT_EQ(narrow_decode(NarrowFormat::kE5M2FNUZ, 0x00), 0.0);
}

TEST(NarrowTypes, Float8RoundsToNearestEven) {
  // e4m3fn near 1: the grid step is 1/8. 1 + 1/16 ties between 1 (even) and 1.125.
  EXPECT_EQ(narrow_decode(NarrowFormat::kE4M3FN, enc(NarrowFormat::kE4M3FN, 1.0625)), 1.0);
  EXPECT_EQ(narrow_decode(NarrowFormat::kE4M3FN, enc(NarrowFormat::kE4M3FN, 1.1875)), 1.25);  // tie to even
  EXPECT_EQ(narrow_decode(NarrowFormat::kE4M3FN, enc(NarrowFormat::kE4M3FN, 1.0626)), 1.125);
  // Above max: 464 ties between 448 (even) and 480 (beyond max), so it stays 448; 470 overflows.
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, 464.0, kNoSaturate), 0x7E);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, 470.0, kNoSaturate), 0x7F);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, 470.0), 0x7E);
  // Subnormals tie to even too: 2^-10 is half the smallest subnormal.
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, std::ldexp(1.0, -10)), 0x00);
  EXPECT_EQ(enc(NarrowFormat::kE4M3FN, 3 * std::ldexp(1.0, -10)), 0x02);
  // Every code decodes and encodes back to itself (NaNs to the canonical NaN).
  for (NarrowFormat f : {NarrowFormat::kE4M3FN, NarrowFormat::kE4M3FNUZ, NarrowFormat::kE5M2,
                         NarrowFormat::kE5M2FNUZ}) {
    for (int c = 0; c < 256; ++c) {
      const double v = narrow_decode(f, static_cast<uint8_t>(c));
      if (std::isnan(v)) continue;
      EXPECT_EQ(enc(f, v, kNoSaturate), c) << static_cast<int>(f) << " " << c;
    }
  }
}

TEST(NarrowTypes, E8M0RoundingModes) {
  EXPECT_EQ(enc(NarrowFormat::kE8M0, 1.0), 127);
  EXPECT_EQ(enc(NarrowFormat::kE8M0, 1.1), 128);  // up (default): away from zero
  EXPECT_EQ(enc(NarrowFormat::kE8M0, 0.124), 124);
  EXPECT_EQ(enc(NarrowFormat::kE8M0, 1.1, {.rounding = E8M0Rounding::kDown}), 127);
  EXPECT_EQ(enc(NarrowFormat::kE8M0, 1.4, {.rounding = E8M0Rounding::kNearest}), 127);
  EXPECT_EQ(enc(NarrowFormat::kE8M0, 1.5, {.rounding = E8M0Rounding::kNearest}), 128);  // ties up
  EXPECT_EQ(enc(NarrowFormat::kE8M0, 0.0), 0);
  EXPECT_EQ(enc(NarrowFormat::kE8M0, kNaN), 0xFF);
  EXPECT_EQ(enc(NarrowFormat::kE8M0, kInf), 0xFE);
  EXPECT_EQ(enc(NarrowFormat::kE8M0, kInf, kNoSaturate), 0xFF);
  EXPECT_EQ(enc(NarrowFormat::kE8M0, 1e300), 0xFE);
  EXPECT_EQ(narrow_decode(NarrowFormat::kE8M0, 0), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(narrow_decode(NarrowFormat::kE8M0, 0xFF)));
}

TEST(NarrowTypes, Float4AndSmallIntegers) {
  // float4e2m1, as ONNX's Cast test: 0.25 ties to 0, -3.5 to -4, beyond 6 saturates, NaN is -0.
  const std::vector<double> in = {0.48, 0.25, 1.05, -3.5, -8.0, 9.0, kNaN, -kInf, -0.0};
  const std::vector<uint8_t> want = {1, 0, 2, 14, 15, 7, 8, 15, 8};
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(enc(NarrowFormat::kE2M1, in[i]), want[i]) << in[i];
  EXPECT_EQ(narrow_decode(NarrowFormat::kE2M1, 0x0F), -6.0);
  // int4/uint4/int2 wrap after truncation, as numpy's astype through ml_dtypes.
  EXPECT_EQ(static_cast<int8_t>(enc(NarrowFormat::kInt4, 9.0)), -7);
  EXPECT_EQ(static_cast<int8_t>(enc(NarrowFormat::kInt4, -8.9)), -8);
  EXPECT_EQ(enc(NarrowFormat::kUInt4, -1.0), 15);
  EXPECT_EQ(static_cast<int8_t>(enc(NarrowFormat::kInt2, 2.0)), -2);
  EXPECT_EQ(enc(NarrowFormat::kUInt2, 7.0), 3);
  EXPECT_EQ(enc(NarrowFormat::kInt4, kNaN), 0);
  EXPECT_EQ(static_cast<int8_t>(narrow_encode_int(NarrowFormat::kInt4, 17)), 1);
}

TEST(NarrowTypes, PackingOddCountsLowBitsFirst) {
  const std::vector<uint8_t> int4 = {0xF8, 0x07, 0xFF};  // -8, 7, -1
  std::vector<uint8_t> packed(narrow_packed_size(NarrowFormat::kInt4, 3));
  ASSERT_EQ(packed.size(), 2u);
  narrow_pack(NarrowFormat::kInt4, int4.data(), 3, packed.data());
  EXPECT_EQ(packed, (std::vector<uint8_t>{0x78, 0x0F}));
  std::vector<uint8_t> back(3);
  narrow_unpack(NarrowFormat::kInt4, packed.data(), 3, back.data());
  EXPECT_EQ(back, int4);
  const std::vector<uint8_t> int2 = {0xFE, 0x01, 0xFF, 0x00, 0x01};  // -2, 1, -1, 0, 1
  std::vector<uint8_t> p2(narrow_packed_size(NarrowFormat::kInt2, 5));
  ASSERT_EQ(p2.size(), 2u);
  narrow_pack(NarrowFormat::kInt2, int2.data(), 5, p2.data());
  EXPECT_EQ(p2, (std::vector<uint8_t>{0x36, 0x01}));
  std::vector<uint8_t> b2(5);
  narrow_unpack(NarrowFormat::kInt2, p2.data(), 5, b2.data());
  EXPECT_EQ(b2, int2);
  EXPECT_EQ(narrow_first_invalid(NarrowFormat::kInt4, int4.data(), 3), -1);
  const std::vector<uint8_t> bad = {0x01, 0x35};
  EXPECT_EQ(narrow_first_invalid(NarrowFormat::kInt4, bad.data(), 2), 1);
}

onnx::TensorProto make_proto(int32_t type, std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_name("t");
  p.set_data_type(type);
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

Result<Tensor> decode(const onnx::TensorProto& p) { return io::tensor_from_proto_bytes(p.SerializeAsString()); }

TEST(NarrowTypes, TensorProtoPackedRawDataAndInt32Data) {
  onnx::TensorProto p = make_proto(22, {3});  // INT4
  p.set_raw_data(std::string("\x78\x0F", 2));
  Result<Tensor> t = decode(p);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DType::kInt4);
  EXPECT_EQ(tensor_to_doubles(*t).value(), (std::vector<double>{-8, 7, -1}));
  onnx::TensorProto q = make_proto(22, {3});
  q.add_int32_data(0x78);
  q.add_int32_data(0x0F);
  Result<Tensor> tq = decode(q);
  ASSERT_TRUE(tq.ok()) << tq.status().to_string();
  EXPECT_TRUE(tq->same_as(*t));
  onnx::TensorProto f8 = make_proto(17, {2});  // FLOAT8E4M3FN, one code per int32_data entry
  f8.add_int32_data(0x7E);
  f8.add_int32_data(0x38);
  Result<Tensor> tf8 = decode(f8);
  ASSERT_TRUE(tf8.ok()) << tf8.status().to_string();
  EXPECT_EQ(tensor_to_doubles(*tf8).value(), (std::vector<double>{448, 1}));
}

TEST(NarrowTypes, EveryNarrowTypeRoundTripsThroughATensorProto) {
  for (size_t i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    const std::optional<NarrowFormat> f = dtype_narrow_format(dtype);
    if (!f) continue;
    for (int64_t n : {0, 1, 5, 8}) {
      Tensor t(dtype, {n});
      auto* codes = static_cast<uint8_t*>(t.mutable_raw());
      for (int64_t k = 0; k < n; ++k) codes[k] = narrow_encode_int(*f, k - 3);
      Result<std::string> bytes = tensor_proto_encode(t, "x");
      ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
      onnx::TensorProto proto;
      ASSERT_TRUE(proto.ParseFromString(*bytes));
      EXPECT_EQ(proto.raw_data().size(), narrow_packed_size(*f, n)) << dtype_name(dtype);
      Result<Tensor> back = io::tensor_from_proto_bytes(*bytes);
      ASSERT_TRUE(back.ok()) << back.status().to_string();
      EXPECT_TRUE(back->same_as(t)) << dtype_name(dtype) << " " << n;
    }
  }
}

TEST(NarrowTypes, HostileProtosGiveOneLineErrors) {
  const auto error_of = [](const onnx::TensorProto& p) {
    Result<Tensor> r = decode(p);
    EXPECT_FALSE(r.ok());
    const std::string m = r.ok() ? std::string() : r.status().message();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  };
  onnx::TensorProto truncated = make_proto(22, {5});  // int4 x5 needs 3 packed bytes
  truncated.set_raw_data(std::string("\x12\x34", 2));
  EXPECT_THAT(error_of(truncated), HasSubstr("raw_data holds 2 bytes, but shape (5,) of int4 needs 3 (packed, 2 elements per byte)"));
  onnx::TensorProto wrong_size = make_proto(17, {4});  // float8 x4 with 3 bytes
  wrong_size.set_raw_data(std::string("\x01\x02\x03", 3));
  EXPECT_THAT(error_of(wrong_size), HasSubstr("needs 4"));
  onnx::TensorProto int2 = make_proto(26, {9});  // int2 x9 needs 3 bytes
  int2.add_int32_data(1);
  EXPECT_THAT(error_of(int2), HasSubstr("int32_data holds 1 values"));
  onnx::TensorProto not_a_byte = make_proto(21, {2});
  not_a_byte.add_int32_data(300);
  EXPECT_THAT(error_of(not_a_byte), HasSubstr("not a byte"));
  onnx::TensorProto unknown = make_proto(99, {1});
  unknown.set_raw_data(std::string("\x00", 1));
  EXPECT_THAT(error_of(unknown), HasSubstr("data type 99 is not supported"));
}

TEST(NarrowTypes, TensorCastUsesCastDefaults) {
  Tensor x = Tensor::from_vector<float>({4}, {1e6f, -0.0f, 9.0f, std::numeric_limits<float>::quiet_NaN()});
  Result<Tensor> f8 = tensor_cast(x, DType::kFloat8E4M3FN);
  ASSERT_TRUE(f8.ok());
  const auto* c = static_cast<const uint8_t*>(f8->raw());
  EXPECT_EQ(std::vector<uint8_t>(c, c + 4), (std::vector<uint8_t>{0x7E, 0x80, 0x51, 0x7F}));
  Result<Tensor> i4 = tensor_cast(x, DType::kInt4);
  ASSERT_TRUE(i4.ok());
  EXPECT_EQ(tensor_to_doubles(*i4).value()[2], -7.0);
  Result<Tensor> back = tensor_cast(*f8, DType::kFloat32);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->values<float>()[0], 448.0f);
  EXPECT_TRUE(std::isnan(back->values<float>()[3]));
}

TEST(NarrowTypes, AUint16PbFedToABFloat16InputIsItsBitPattern) {
  // ONNX's generators before ml_dtypes wrote bfloat16 test data as uint16; `--load-inputs x.pb`
  // used to refuse it ("input 'x' is uint16 but the model declares bfloat16").
  testing::TempDir dir;
  ASSERT_TRUE(io::tensor_proto_save(Tensor::from_vector<uint16_t>({2}, {0x3F80, 0xC040}), "x", dir / "x.pb").ok());
  Graph g;
  ValueInfo in;
  in.name = "x";
  in.dtype = DType::kBFloat16;
  g.inputs.push_back(in);
  Result<std::vector<TensorMap>> feeds = data::load_feeds({dir / "x.pb"}, g);
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  const Tensor* x = (*feeds)[0].find("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->dtype(), DType::kBFloat16);
  EXPECT_EQ(static_cast<float>(x->values<Eigen::bfloat16>()[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(x->values<Eigen::bfloat16>()[1]), -3.0f);
  // A bfloat16 TensorProto round-trips as itself.
  Tensor bf = Tensor::from_vector<Eigen::bfloat16>({1}, {Eigen::bfloat16(0.5f)});
  ASSERT_TRUE(io::tensor_proto_save(bf, "x", dir / "y.pb").ok());
  Result<NamedTensor> back = io::tensor_proto_load(dir / "y.pb");
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->tensor.same_as(bf));
}

}  // namespace
}  // namespace vn
