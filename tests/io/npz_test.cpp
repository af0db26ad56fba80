// SPDX-License-Identifier: Apache-2.0
#include "core/io/npz.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/io/npy.h"
#include "tests/io/test_util.h"

namespace vn::io {
namespace {

using testing::fixture_path;
using testing::read_fixture;
using testing::TempDir;

bool contains(const Status& s, std::string_view needle) { return s.message().find(needle) != std::string::npos; }

Status decode_error(std::string_view bytes) {
  Result<TensorMap> r = npz_decode(bytes);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return Status::OK();
  EXPECT_EQ(r.status().code(), StatusCode::kIoError) << r.status().to_string();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  return r.status();
}

void put(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t crc_of(std::string_view data) {
  return static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
}

std::string raw_deflate(std::string_view data) {
  z_stream zs{};
  deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

/// One member of a hand-built archive; the declared fields may lie on purpose.
struct Member {
  std::string name;
  std::string data;  // the bytes stored in the archive (already compressed for method 8)
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t usize = 0;
  uint64_t csize = 0;
  uint16_t flags = 0;
  bool zip64 = false;  // sizes and offset in a ZIP64 extra field of the central directory
};

Member stored(std::string name, std::string npy) {
  Member m;
  m.crc = crc_of(npy);
  m.usize = m.csize = npy.size();
  m.name = std::move(name);
  m.data = std::move(npy);
  return m;
}

Member deflated(std::string name, const std::string& npy) {
  Member m;
  m.method = 8;
  m.crc = crc_of(npy);
  m.usize = npy.size();
  m.data = raw_deflate(npy);
  m.csize = m.data.size();
  m.name = std::move(name);
  return m;
}

std::string build_zip(const std::vector<Member>& members, bool zip64_end = false) {
  std::string out;
  std::string central;
  for (const Member& m : members) {
    const uint64_t offset = out.size();
    put(out, 0x04034b50, 4);
    put(out, 20, 2);
    put(out, m.flags, 2);
    put(out, m.method, 2);
    put(out, 0, 4);
    put(out, m.crc, 4);
    put(out, m.csize, 4);
    put(out, m.usize, 4);
    put(out, m.name.size(), 2);
    put(out, 0, 2);
    out += m.name;
    out += m.data;
    put(central, 0x02014b50, 4);
    put(central, 20, 2);
    put(central, m.zip64 ? 45 : 20, 2);
    put(central, m.flags, 2);
    put(central, m.method, 2);
    put(central, 0, 4);
    put(central, m.crc, 4);
    put(central, m.zip64 ? 0xffffffff : m.csize, 4);
    put(central, m.zip64 ? 0xffffffff : m.usize, 4);
    put(central, m.name.size(), 2);
    put(central, m.zip64 ? 28 : 0, 2);
    put(central, 0, 6);  // comment length, disk, internal attributes
    put(central, 0, 4);  // external attributes
    put(central, m.zip64 ? 0xffffffff : offset, 4);
    central += m.name;
    if (m.zip64) {
      put(central, 1, 2);
      put(central, 24, 2);
      put(central, m.usize, 8);
      put(central, m.csize, 8);
      put(central, offset, 8);
    }
  }
  const uint64_t cd_offset = out.size();
  out += central;
  if (zip64_end) {
    const uint64_t record = out.size();
    put(out, 0x06064b50, 4);
    put(out, 44, 8);
    put(out, 45, 2);
    put(out, 45, 2);
    put(out, 0, 8);
    put(out, members.size(), 8);
    put(out, members.size(), 8);
    put(out, central.size(), 8);
    put(out, cd_offset, 8);
    put(out, 0x07064b50, 4);
    put(out, 0, 4);
    put(out, record, 8);
    put(out, 1, 4);
  }
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, zip64_end ? 0xffff : members.size(), 2);
  put(out, zip64_end ? 0xffff : members.size(), 2);
  put(out, zip64_end ? 0xffffffff : central.size(), 4);
  put(out, zip64_end ? 0xffffffff : cd_offset, 4);
  put(out, 0, 2);
  return out;
}

std::string npy_of(const Tensor& t) {
  Result<std::string> npy = npy_encode(t);
  EXPECT_TRUE(npy.ok());
  return npy.ok() ? *npy : std::string();
}

void expect_numpy_fixture(const TensorMap& m) {
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].name, "a");
  EXPECT_EQ(m[1].name, "b");
  EXPECT_EQ(m[2].name, "c");
  EXPECT_EQ(m[3].name, "empty");
  EXPECT_TRUE(m[0].tensor.same_as(Tensor::from_vector<float>({2, 3}, {0, 1, 2, 3, 4, 5})));
  EXPECT_TRUE(m[1].tensor.same_as(Tensor::scalar<int64_t>(-7)));
  EXPECT_TRUE(m[2].tensor.same_as(Tensor::from_vector<bool>({3}, {true, false, true})));
  EXPECT_EQ(m[3].tensor.dtype(), DType::kFloat16);
  EXPECT_EQ(m[3].tensor.shape(), (Shape{0, 3}));
}

TensorMap sample_map() {
  TensorMap m;
  m.set("x", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}));
  m.set("ids", Tensor::from_vector<int64_t>({3}, {-1, 0, 1}));
  m.set("mask", Tensor::scalar<bool>(true));
  m.set("zeros", Tensor(DType::kUInt16, {1000}));
  m.set("caf\xc3\xa9/layer", Tensor::from_vector<uint8_t>({2}, {7, 8}));
  m.set("none", Tensor(DType::kFloat64, {0, 5}));
  return m;
}

void expect_same_map(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_TRUE(a[i].tensor.same_as(b[i].tensor)) << a[i].name;
  }
}

TEST(Npz, DecodesNumpySavez) {
  Result<TensorMap> m = npz_load(fixture_path("npz_stored.npz"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  expect_numpy_fixture(*m);
}

TEST(Npz, DecodesNumpySavezCompressed) {
  Result<TensorMap> m = npz_load(fixture_path("npz_deflated.npz"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  expect_numpy_fixture(*m);
}

TEST(Npz, RoundTripsStoredAndDeflated) {
  const TensorMap m = sample_map();
  for (bool compress : {false, true}) {
    Result<std::string> zip = npz_encode(m, compress);
    ASSERT_TRUE(zip.ok()) << zip.status().to_string();
    Result<TensorMap> back = npz_decode(*zip);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    expect_same_map(m, *back);
  }
  Result<std::string> stored_zip = npz_encode(m, false);
  Result<std::string> deflated_zip = npz_encode(m, true);
  ASSERT_TRUE(stored_zip.ok() && deflated_zip.ok());
  EXPECT_LT(deflated_zip->size(), stored_zip->size());  // the 2000 zero bytes compress
  // The output is reproducible.
  Result<std::string> again = npz_encode(m, true);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *deflated_zip);
}

TEST(Npz, EncodesAnEmptyArchive) {
  Result<std::string> zip = npz_encode(TensorMap{});
  ASSERT_TRUE(zip.ok());
  EXPECT_EQ(zip->size(), 22u);
  Result<TensorMap> back = npz_decode(*zip);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->empty());
}

TEST(Npz, SavesAndLoadsFiles) {
  TempDir dir;
  const TensorMap m = sample_map();
  ASSERT_TRUE(npz_save(m, dir / "a.npz", true).ok());
  EXPECT_EQ(dir.entry_count(), 1u);
  Result<TensorMap> back = npz_load(dir / "a.npz");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_same_map(m, *back);
  Result<TensorMap> missing = npz_load(dir / "missing.npz");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.status(), "missing.npz"));
  TensorMap bf16;
  bf16.set("brain", Tensor::from_vector<Eigen::bfloat16>({2}, {Eigen::bfloat16(0.5f), Eigen::bfloat16(-3.0f)}));
  ASSERT_TRUE(npz_save(bf16, dir / "bf16.npz").ok());
  Result<TensorMap> bf16_back = npz_load(dir / "bf16.npz");
  ASSERT_TRUE(bf16_back.ok()) << bf16_back.status().to_string();
  expect_same_map(bf16, *bf16_back);
  TensorMap bad;
  bad.set("brain", Tensor(DType::kString, {2}));
  Status s = npz_save(bad, dir / "b.npz");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s, "'brain'")) << s.message();
  EXPECT_TRUE(contains(s, "b.npz")) << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir / "b.npz"));
}

TEST(Npz, ReadsZip64ExtraFieldsAndEndRecord) {
  Member a = stored("a.npy", npy_of(Tensor::from_vector<int32_t>({2}, {1, 2})));
  a.zip64 = true;
  Member b = deflated("b.npy", npy_of(Tensor::from_vector<float>({3}, {1, 2, 3})));
  b.zip64 = true;
  Result<TensorMap> m = npz_decode(build_zip({a, b}, true));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].name, "a");
  EXPECT_EQ((*m)[1].name, "b");
  EXPECT_EQ((*m)[1].tensor.data<float>()[2], 3.0f);
}

TEST(Npz, KeepsCentralDirectoryOrderAndNonNpyNames) {
  Member second = stored("second.npy", npy_of(Tensor::scalar<int8_t>(2)));
  Member first = stored("first", npy_of(Tensor::scalar<int8_t>(1)));  // numpy keeps names without .npy as is
  Result<TensorMap> m = npz_decode(build_zip({second, first}));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)[0].name, "second");
  EXPECT_EQ((*m)[1].name, "first");
}

TEST(Npz, DetectsCrcMismatch) {
  std::string zip = read_fixture("npz_stored.npz");
  const size_t data = zip.find("\x93NUMPY");
  ASSERT_NE(data, std::string::npos);
  zip[data + 130] ^= 0x01;  // a data byte of member 'a'
  Status s = decode_error(zip);
  EXPECT_TRUE(contains(s, "CRC mismatch in member 'a.npy'")) << s.message();
  Member m = stored("x.npy", npy_of(Tensor::scalar<float>(1)));
  m.crc ^= 0xdeadbeef;
  EXPECT_TRUE(contains(decode_error(build_zip({m})), "CRC"));
}

TEST(Npz, RefusesTruncatedArchives) {
  for (const char* name : {"npz_stored.npz", "npz_deflated.npz"}) {
    const std::string zip = read_fixture(name);
    for (size_t n = 0; n < zip.size(); ++n) (void)decode_error(std::string_view(zip).substr(0, n));
  }
  EXPECT_TRUE(contains(decode_error("PK"), "truncated"));
  EXPECT_TRUE(contains(decode_error(std::string(100, 'x')), "end-of-central-directory"));
}

TEST(Npz, SurvivesEveryCorruptedByte) {
  // Flipping any single byte must give a clean error or (in don't-care fields) a valid result.
  for (const char* name : {"npz_stored.npz", "npz_deflated.npz"}) {
    const std::string zip = read_fixture(name);
    for (size_t i = 0; i < zip.size(); ++i) {
      for (unsigned char mask : {0x01, 0x80, 0xff}) {
        std::string bad = zip;
        bad[i] = static_cast<char>(bad[i] ^ mask);
        Result<TensorMap> r = npz_decode(bad);
        if (!r.ok()) {
          EXPECT_EQ(r.status().code(), StatusCode::kIoError);
        }
      }
    }
  }
}

TEST(Npz, BoundsInflationByTheDeclaredSize) {
  const std::string big(1 << 20, '\0');  // deflates to about a kilobyte
  Member bomb = deflated("bomb.npy", big);
  bomb.usize = 1000;
  bomb.crc = crc_of(big.substr(0, 1000));
  Status s = decode_error(build_zip({bomb}));
  EXPECT_TRUE(contains(s, "more than its declared 1000 bytes")) << s.message();

  Member liar = deflated("liar.npy", npy_of(Tensor::scalar<float>(1)));
  liar.usize = uint64_t{1} << 33;  // 8 GiB from a few bytes: impossible for deflate
  liar.zip64 = true;
  s = decode_error(build_zip({liar}));
  EXPECT_TRUE(contains(s, "more than deflate can produce")) << s.message();

  Member huge = deflated("huge.npy", npy_of(Tensor::scalar<float>(1)));
  huge.usize = kMaxTensorBytes + 1;
  huge.zip64 = true;
  s = decode_error(build_zip({huge}));
  EXPECT_TRUE(contains(s, "limit")) << s.message();

  Member shorter = deflated("short.npy", npy_of(Tensor::from_vector<float>({4}, {1, 2, 3, 4})));
  shorter.usize += 10;
  s = decode_error(build_zip({shorter}));
  EXPECT_TRUE(contains(s, "inflates to")) << s.message();
}

TEST(Npz, RefusesUnsupportedArchives) {
  Member bzip = stored("a.npy", npy_of(Tensor::scalar<float>(1)));
  bzip.method = 12;
  EXPECT_TRUE(contains(decode_error(build_zip({bzip})), "compression method 12"));
  Member encrypted = stored("a.npy", npy_of(Tensor::scalar<float>(1)));
  encrypted.flags = 1;
  EXPECT_TRUE(contains(decode_error(build_zip({encrypted})), "encrypted"));
  Member a = stored("a.npy", npy_of(Tensor::scalar<float>(1)));
  EXPECT_TRUE(contains(decode_error(build_zip({a, a})), "duplicate member 'a.npy'"));
  Member text = stored("notes.txt", "hello");
  Status s = decode_error(build_zip({text}));
  EXPECT_TRUE(contains(s, "member 'notes.txt'")) << s.message();
  EXPECT_TRUE(contains(s, "magic")) << s.message();
  Member latin = stored("caf\xe9.npy", npy_of(Tensor::scalar<float>(1)));
  EXPECT_TRUE(contains(decode_error(build_zip({latin})), "UTF-8"));
  latin.flags = 0x0800;
  EXPECT_TRUE(npz_decode(build_zip({latin})).ok());  // flagged names are taken as they are
  Member liar = stored("a.npy", npy_of(Tensor::scalar<float>(1)));
  liar.usize += 1;
  EXPECT_TRUE(contains(decode_error(build_zip({liar})), "stored member"));
  Member bad_npy = stored("bad.npy", npy_of(Tensor::from_vector<float>({2}, {1, 2})).substr(0, 130));
  s = decode_error(build_zip({bad_npy}));
  EXPECT_TRUE(contains(s, "npz member 'bad.npy'")) << s.message();
  EXPECT_TRUE(contains(s, "truncated")) << s.message();
}

}  // namespace
}  // namespace vn::io
