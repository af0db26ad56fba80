// SPDX-License-Identifier: Apache-2.0
#include "core/io/npy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <cstring>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/io/base64.h"
#include "tests/io/test_util.h"

namespace vn::io {
namespace {

using testing::fixture_path;
using testing::read_fixture;
using testing::TempDir;

// polygraphy-notes §2.2: np.save of [[1, 2], [3, 4]] as float32, base64-encoded.
constexpr const char* kWorkedSample =
    "k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIpLCB9ICAgICAgICAgICAgICAgIC"
    "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAIA/AAAAQAAAQEAAAIBA";

std::string npy_with_header(std::string_view header, std::string_view data, int version = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const size_t n = header.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (version >= 2) {
    out += static_cast<char>((n >> 16) & 0xff);
    out += static_cast<char>((n >> 24) & 0xff);
  }
  out += header;
  out += data;
  return out;
}

std::string float_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// Fills a tensor with a deterministic byte pattern (0/1 for bool).
Tensor patterned(DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  auto* bytes = static_cast<unsigned char*>(t.mutable_raw());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    bytes[i] = dtype == DType::kBool ? static_cast<unsigned char>((i * 7) % 3 == 0)
                                     : static_cast<unsigned char>((i * 131 + 17) & 0xff);
  }
  if (const std::optional<NarrowFormat> f = dtype_narrow_format(dtype)) {
    // Valid elements only: the low bits of the pattern, unpacked as the type stores them.
    std::vector<uint8_t> packed(t.nbytes());
    for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>((i * 131 + 17) & 0xff);
    narrow_unpack(*f, packed.data(), t.numel(), bytes);
    if (narrow_packed_bits(*f) == 8 && !packed.empty()) std::memcpy(bytes, packed.data(), packed.size());
  }
  return t;
}

Status decode_error(std::string_view bytes) {
  Result<Tensor> r = npy_decode(bytes);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return Status::OK();
  EXPECT_EQ(r.status().code(), StatusCode::kIoError) << r.status().to_string();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << "one-line message: " << r.status().message();
  return r.status();
}

bool contains(const Status& s, std::string_view needle) { return s.message().find(needle) != std::string::npos; }

TEST(Npy, DecodesTheWorkedSample) {
  Result<std::string> bytes = base64_decode(kWorkedSample);
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 144u);
  Result<Tensor> t = npy_decode(*bytes);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DType::kFloat32);
  EXPECT_EQ(t->shape(), (Shape{2, 2}));
  EXPECT_EQ(std::vector<float>(t->values<float>().begin(), t->values<float>().end()), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Npy, EncodesTheWorkedSampleByteForByte) {
  Tensor t = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  Result<std::string> npy = npy_encode(t);
  ASSERT_TRUE(npy.ok()) << npy.status().to_string();
  EXPECT_EQ(npy->size(), 144u);
  EXPECT_EQ(base64_encode(*npy), kWorkedSample);
}

TEST(Npy, HeaderLayoutMatchesNumpy) {
  Result<std::string> npy = npy_encode(Tensor::from_vector<float>({1, 1, 2, 2}, {0, 0, 0, 0}));
  ASSERT_TRUE(npy.ok());
  const std::string expected_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }";
  EXPECT_EQ(npy->substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(npy->substr(10, expected_dict.size()), expected_dict);
  EXPECT_EQ((*npy)[127], '\n');
  EXPECT_EQ(npy->find_first_not_of(' ', 10 + expected_dict.size()), 127u);

  Result<std::string> scalar = npy_encode(Tensor::scalar<int64_t>(5));
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->substr(10, 60), "{'descr': '<i8', 'fortran_order': False, 'shape': (), }     ");
  EXPECT_EQ(scalar->size(), 128u + 8u);

  Result<std::string> one_d = npy_encode(Tensor::from_vector<uint8_t>({3}, {1, 2, 3}));
  ASSERT_TRUE(one_d.ok());
  EXPECT_NE(one_d->find("'descr': '|u1', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
}

TEST(Npy, RoundTripsEveryNumpyDtypeAndShape) {
  const std::vector<Shape> shapes = {{}, {1}, {7}, {2, 3}, {0}, {0, 4}, {3, 0, 2}, {2, 1, 3, 1, 2}};
  int tested = 0;
  for (size_t i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    if (dtype_numpy_descr(dtype).empty()) continue;
    for (const Shape& shape : shapes) {
      Tensor t = patterned(dtype, shape);
      Result<std::string> npy = npy_encode(t);
      ASSERT_TRUE(npy.ok()) << dtype_name(dtype) << " " << npy.status().to_string();
      size_t header_len = static_cast<unsigned char>((*npy)[8]) | (static_cast<unsigned char>((*npy)[9]) << 8);
      EXPECT_EQ((10 + header_len) % 64, 0u) << dtype_name(dtype) << shape_to_string(shape);
      EXPECT_EQ(npy->size(), 10 + header_len + t.nbytes());
      Result<Tensor> back = npy_decode(*npy);
      ASSERT_TRUE(back.ok()) << dtype_name(dtype) << " " << back.status().to_string();
      EXPECT_TRUE(back->same_as(t)) << dtype_name(dtype) << " " << shape_to_string(shape);
      ++tested;
    }
  }
  EXPECT_EQ(tested, 23 * 8);  // every dtype but string
}

TEST(Npy, WritesMlDtypesNamesAndReadsNumpysOwnDescrs) {
  // bfloat16 and the narrow types are written with the ml_dtypes name as descr, which np.load
  // turns back into the type once ml_dtypes is imported.
  Tensor bf16 = Tensor::from_vector<Eigen::bfloat16>({2}, {Eigen::bfloat16(1.5f), Eigen::bfloat16(-2.0f)});
  Result<std::string> npy = npy_encode(bf16);
  ASSERT_TRUE(npy.ok()) << npy.status().to_string();
  EXPECT_NE(npy->find("'descr': 'bfloat16'"), std::string::npos);
  Result<Tensor> back = npy_decode(*npy);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->same_as(bf16));
  Tensor i4(DType::kInt4, {3});
  static_cast<uint8_t*>(i4.mutable_raw())[0] = 0xF8;  // -8, stored sign-extended as ml_dtypes does
  Result<std::string> i4npy = npy_encode(i4);
  ASSERT_TRUE(i4npy.ok());
  EXPECT_NE(i4npy->find("'descr': 'int4'"), std::string::npos);
  EXPECT_EQ(static_cast<uint8_t>((*i4npy)[i4npy->size() - 3]), 0xF8);
  // np.save's own descr for bfloat16 is '<V2' (the only two-byte ml_dtypes type).
  std::string v2 = *npy;
  v2.replace(v2.find("'bfloat16'"), 10, "'<V2'     ");
  Result<Tensor> from_v2 = npy_decode(v2);
  ASSERT_TRUE(from_v2.ok()) << from_v2.status().to_string();
  EXPECT_TRUE(from_v2->same_as(bf16));
  // '|V1' could be any one-byte ml_dtypes type: refused with what to do instead.
  std::string v1 = *i4npy;
  v1.replace(v1.find("'int4'"), 6, "'|V1' ");
  Status ambiguous = decode_error(v1);
  EXPECT_TRUE(contains(ambiguous, "'|V1'")) << ambiguous.message();
  EXPECT_TRUE(contains(ambiguous, "float8_e4m3fn")) << ambiguous.message();
  // A byte that is no int4 value never enters a tensor.
  std::string bad = *i4npy;
  bad.back() = 0x35;
  Status invalid = decode_error(bad);
  EXPECT_TRUE(contains(invalid, "0x35")) << invalid.message();
  EXPECT_TRUE(contains(invalid, "int4")) << invalid.message();
}

TEST(Npy, RefusesTypesNumpyLacks) {
  Result<std::string> str = npy_encode(Tensor(DType::kString, {1}));
  ASSERT_FALSE(str.ok());
  EXPECT_EQ(str.status().code(), StatusCode::kUnsupportedDType);
  EXPECT_FALSE(npy_encode(Tensor()).ok());
}

TEST(Npy, DecodesFortranOrder) {
  Result<Tensor> t = npy_load(fixture_path("fortran_int32.npy"));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ASSERT_EQ(t->shape(), (Shape{2, 3, 4}));
  for (int32_t i = 0; i < 24; ++i) EXPECT_EQ(t->data<int32_t>()[i], i);
  // Hand-made: a (2, 3) float array stored column-major.
  const std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n";
  Result<Tensor> hand = npy_decode(npy_with_header(header, float_bytes({1, 4, 2, 5, 3, 6})));
  ASSERT_TRUE(hand.ok()) << hand.status().to_string();
  EXPECT_EQ(std::vector<float>(hand->values<float>().begin(), hand->values<float>().end()),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // 1-D and empty Fortran arrays are the same bytes as C arrays.
  Result<Tensor> one_d =
      npy_decode(npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", float_bytes({7, 8})));
  ASSERT_TRUE(one_d.ok());
  EXPECT_EQ(one_d->data<float>()[1], 8.0f);
  EXPECT_TRUE(npy_decode(npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (0, 3), }", "")).ok());
}

TEST(Npy, DecodesVersion2And3Headers) {
  Result<Tensor> t = npy_load(fixture_path("v2_header.npy"));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->shape(), (Shape{3}));
  EXPECT_EQ(t->data<double>()[0], 1.5);
  EXPECT_EQ(t->data<double>()[1], -2.25);
  EXPECT_EQ(t->data<double>()[2], 3.0);
  Result<Tensor> v3 =
      npy_decode(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", float_bytes({2}), 3));
  ASSERT_TRUE(v3.ok()) << v3.status().to_string();
  EXPECT_EQ(v3->data<float>()[0], 2.0f);
}

TEST(Npy, EncodesVersion2WhenTheHeaderOutgrowsVersion1) {
  const Shape shape(22000, 1);  // "1, " per dimension: a header over 65535 bytes
  Tensor t = Tensor::from_vector<float>(shape, {42.0f});
  Result<std::string> npy = npy_encode(t);
  ASSERT_TRUE(npy.ok());
  EXPECT_EQ((*npy)[6], '\x02');
  EXPECT_EQ((*npy)[7], '\x00');
  uint32_t header_len = 0;
  std::memcpy(&header_len, npy->data() + 8, 4);
  EXPECT_GT(header_len, 65535u);
  EXPECT_EQ((12 + header_len) % 64, 0u);
  Result<Tensor> back = npy_decode(*npy);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->same_as(t));
}

TEST(Npy, ParsesHeadersRobustly) {
  const std::string data = float_bytes({1, 2});
  for (const char* header : {
           "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
           "{ 'descr' :'<f4' ,'fortran_order':False,'shape':( 2 , ) , }\n",
           "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}      \n",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }",
           "{'descr': u'<f4', 'fortran_order': False, 'shape': [2], 'extra': {'nested': (1, 'x')}}",
           "{'descr': '=f4', 'fortran_order': False, 'shape': (2,), }",
           "{'descr': 'f4', 'fortran_order': False, 'shape': (2,), }",
       }) {
    Result<Tensor> t = npy_decode(npy_with_header(header, data));
    ASSERT_TRUE(t.ok()) << header << ": " << t.status().to_string();
    EXPECT_EQ(t->shape(), (Shape{2}));
    EXPECT_EQ(t->data<float>()[1], 2.0f);
  }
  Result<Tensor> scalar =
      npy_decode(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': ()}", float_bytes({3})));
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->rank(), 0);
  EXPECT_EQ(scalar->data<float>()[0], 3.0f);
  Result<Tensor> big_endian_byte =
      npy_decode(npy_with_header("{'descr': '>u1', 'fortran_order': False, 'shape': (1,)}", "\x05"));
  ASSERT_TRUE(big_endian_byte.ok());  // byte order is meaningless for one-byte types
  EXPECT_EQ(big_endian_byte->data<uint8_t>()[0], 5);
}

TEST(Npy, NormalizesBoolBytes) {
  Result<Tensor> t = npy_decode(
      npy_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}", std::string("\x00\x01\x07", 3)));
  ASSERT_TRUE(t.ok());
  const auto* raw = static_cast<const unsigned char*>(t->raw());
  EXPECT_EQ(raw[0], 0);
  EXPECT_EQ(raw[1], 1);
  EXPECT_EQ(raw[2], 1);
}

TEST(Npy, RefusesHostileShapesBeforeAllocating) {
  const std::string huge = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000, 1000000), }";
  EXPECT_TRUE(contains(decode_error(npy_with_header(huge, "")), "limit"));
  const std::string overflow =
      "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }";
  (void)decode_error(npy_with_header(overflow, ""));
  const std::string bignum = "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999999,), }";
  EXPECT_TRUE(contains(decode_error(npy_with_header(bignum, "")), "too large"));
  const std::string negative = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }";
  EXPECT_TRUE(contains(decode_error(npy_with_header(negative, "")), "negative"));
}

TEST(Npy, RefusesTruncatedAndOversizedData) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  Status short_data = decode_error(npy_with_header(header, float_bytes({1, 2, 3})));
  EXPECT_TRUE(contains(short_data, "truncated")) << short_data.message();
  EXPECT_TRUE(contains(short_data, "16")) << short_data.message();
  EXPECT_TRUE(contains(decode_error(npy_with_header(header, float_bytes({1, 2, 3, 4, 5}))), "unexpected"));
  // Every prefix of a valid file is an error, never a crash.
  Result<std::string> full = base64_decode(kWorkedSample);
  ASSERT_TRUE(full.ok());
  for (size_t n = 0; n < full->size(); ++n) (void)decode_error(std::string_view(*full).substr(0, n));
}

TEST(Npy, RefusesMalformedHeaders) {
  const std::string data = float_bytes({1});
  struct Case {
    std::string header;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"{'fortran_order': False, 'shape': (1,), }", "'descr'"},
      {"{'descr': '<f4', 'shape': (1,), }", "'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, }", "'shape'"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "big-endian"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "object"},
      {"{'descr': '|V4', 'fortran_order': False, 'shape': (1,), }", "void"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "structured"},
      {"{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", "string"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "complex"},
      {"{'descr': '<M8[s]', 'fortran_order': False, 'shape': (1,), }", "datetime"},
      {"{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }", "unsupported dtype descr '<f3'"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (1,), }", "must be a string"},
      {"{'descr': '<f4', 'fortran_order': 'no', 'shape': (1,), }", "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 1, }", "tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.0,), }", "integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('1',), }", "tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), ", "cannot parse"},
      {"{'descr': '<f4' 'fortran_order': False}", "cannot parse"},
      {"['descr', '<f4']", "not a dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk", "after the header"},
      {"{'descr: '<f4'}", "cannot parse"},
      {"{'descr': '<f4', 'fortran_order': Flase, 'shape': (1,), }", "Flase"},
      {"{1: 2}", "keys must be strings"},
      {"", "cannot parse"},
      {std::string(1000, '(') + std::string(1000, ')'), "too deep"},
  };
  for (const Case& c : cases) {
    Status s = decode_error(npy_with_header(c.header, data));
    EXPECT_TRUE(contains(s, c.expect)) << c.header << " -> " << s.message();
  }
}

TEST(Npy, RefusesBadPreambles) {
  EXPECT_TRUE(contains(decode_error("not an npy file at all"), "magic"));
  EXPECT_TRUE(contains(decode_error(""), "truncated"));
  EXPECT_TRUE(contains(decode_error("\x93NUM"), "truncated"));
  std::string v4 = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", float_bytes({1}));
  v4[6] = 4;
  EXPECT_TRUE(contains(decode_error(v4), "version 4.0"));
  std::string long_header = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "");
  long_header[9] = 0x7f;
  EXPECT_TRUE(contains(decode_error(long_header), "truncated"));
  EXPECT_TRUE(contains(decode_error(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12)), "too large"));
}

TEST(Npy, SavesAtomicallyAndLoads) {
  TempDir dir;
  Tensor t = Tensor::from_vector<int16_t>({2, 2}, {-1, 2, -3, 4});
  ASSERT_TRUE(npy_save(t, dir / "t.npy").ok());
  EXPECT_EQ(dir.entry_count(), 1u);  // no temporary file left behind
  Result<Tensor> back = npy_load(dir / "t.npy");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->same_as(t));
  // Overwrites an existing file.
  ASSERT_TRUE(npy_save(Tensor::scalar<double>(2.5), dir / "t.npy").ok());
  back = npy_load(dir / "t.npy");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data<double>()[0], 2.5);
}

TEST(Npy, FileErrorsNameThePath) {
  TempDir dir;
  Result<Tensor> missing = npy_load(dir / "missing.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_TRUE(contains(missing.status(), "missing.npy")) << missing.status().message();
  Result<Tensor> directory = npy_load(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_TRUE(contains(directory.status(), "directory"));
  {
    FILE* f = std::fopen((dir / "bad.npy").c_str(), "wb");
    std::fputs("garbage", f);
    std::fclose(f);
  }
  Result<Tensor> bad = npy_load(dir / "bad.npy");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.status(), "bad.npy")) << bad.status().message();
  EXPECT_TRUE(contains(bad.status(), "magic")) << bad.status().message();
  Status unwritable = npy_save(Tensor::scalar<float>(1), dir / "no_such_dir" / "x.npy");
  ASSERT_FALSE(unwritable.ok());
  EXPECT_EQ(unwritable.code(), StatusCode::kIoError);
  EXPECT_TRUE(contains(unwritable, "x.npy")) << unwritable.message();
  Status str = npy_save(Tensor(DType::kString, {1}), dir / "str.npy");
  ASSERT_FALSE(str.ok());
  EXPECT_TRUE(contains(str, "str.npy"));
  EXPECT_FALSE(std::filesystem::exists(dir / "str.npy"));
  ASSERT_TRUE(npy_save(Tensor(DType::kBFloat16, {1}), dir / "bf16.npy").ok());
}

}  // namespace
}  // namespace vn::io
