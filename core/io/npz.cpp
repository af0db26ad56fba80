// SPDX-License-Identifier: Apache-2.0
#include "core/io/npz.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "core/io/npy.h"
#include "core/ir/mapped_file.h"

namespace vn::io {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kFlagEncrypted = 0x0001;
constexpr uint16_t kFlagUtf8 = 0x0800;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflated = 8;
// Python's zipfile switches to ZIP64 records above this size, offset or count; so do we.
constexpr uint64_t kZip64Limit = (uint64_t{1} << 31) - 1;
constexpr uint64_t kZip64CountLimit = 0xffff;
// Deflate cannot expand data by more than about 1032:1 (zlib's documented maximum ratio).
constexpr uint64_t kMaxDeflateRatio = 1032;
// zlib counts in uInt; feed it in slices well below that.
constexpr uint64_t kZlibSlice = uint64_t{1} << 30;
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;

Status zip_error(std::string message) { return Status(StatusCode::kIoError, "invalid .npz archive: " + message); }

template <typename... Args>
Status zip_error(fmt::format_string<Args...> format, Args&&... args) {
  return zip_error(fmt::format(format, std::forward<Args>(args)...));
}

uint64_t le(std::string_view bytes, uint64_t offset, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[offset + static_cast<uint64_t>(i)]);
  return v;
}
uint16_t le16(std::string_view b, uint64_t off) { return static_cast<uint16_t>(le(b, off, 2)); }
uint32_t le32(std::string_view b, uint64_t off) { return static_cast<uint32_t>(le(b, off, 4)); }
uint64_t le64(std::string_view b, uint64_t off) { return le(b, off, 8); }

void put16(std::string& out, uint64_t v) {
  for (int i = 0; i < 2; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put32(std::string& out, uint64_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t crc32_of(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  uint64_t left = bytes.size();
  while (left > 0) {
    const auto n = static_cast<uInt>(std::min(left, kZlibSlice));
    crc = crc32(crc, p, n);
    p += n;
    left -= n;
  }
  return static_cast<uint32_t>(crc);
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

struct Entry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0;
  uint64_t uncompressed = 0;
  uint64_t local_offset = 0;
};

// Reads the ZIP64 extended-information extra field: only the fields whose 32-bit slots hold 0xffffffff
// are present, in this order.
Status apply_zip64_extra(std::string_view extra, Entry& e, bool size32_full, bool csize32_full, bool offset32_full) {
  size_t pos = 0;
  while (pos + 4 <= extra.size()) {
    const uint16_t id = le16(extra, pos);
    const uint16_t len = le16(extra, pos + 2);
    if (pos + 4 + len > extra.size()) return zip_error("member '{}' has a truncated extra field", e.name);
    if (id == kZip64ExtraId) {
      const std::string_view data = extra.substr(pos + 4, len);
      size_t at = 0;
      auto take = [&](uint64_t& field) -> bool {
        if (at + 8 > data.size()) return false;
        field = le64(data, at);
        at += 8;
        return true;
      };
      if ((size32_full && !take(e.uncompressed)) || (csize32_full && !take(e.compressed)) ||
          (offset32_full && !take(e.local_offset))) {
        return zip_error("member '{}' has a truncated ZIP64 extra field", e.name);
      }
      return Status::OK();
    }
    pos += 4 + len;
  }
  if (size32_full || csize32_full || offset32_full) {
    return zip_error("member '{}' needs a ZIP64 extra field but has none", e.name);
  }
  return Status::OK();
}

struct Directory {
  uint64_t count = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

Result<Directory> find_directory(std::string_view bytes) {
  if (bytes.size() < kEndSize) return zip_error("truncated: {} bytes is too short for a zip archive", bytes.size());
  // The end record sits at the very end unless the archive has a comment (at most 65535 bytes).
  const size_t lowest = bytes.size() - kEndSize > 0xffff ? bytes.size() - kEndSize - 0xffff : 0;
  std::optional<size_t> end;
  for (size_t pos = bytes.size() - kEndSize + 1; pos-- > lowest;) {
    if (le32(bytes, pos) == kEndSig && pos + kEndSize + le16(bytes, pos + 20) <= bytes.size()) {
      end = pos;
      break;
    }
  }
  if (!end) return zip_error("no end-of-central-directory record (not a zip archive, or truncated)");
  const size_t e = *end;
  Directory dir;
  const uint16_t disk = le16(bytes, e + 4);
  const uint16_t cd_disk = le16(bytes, e + 6);
  dir.count = le16(bytes, e + 10);
  dir.size = le32(bytes, e + 12);
  dir.offset = le32(bytes, e + 16);
  uint64_t directory_end = e;
  const bool zip64 = dir.count == 0xffff || dir.size == 0xffffffff || dir.offset == 0xffffffff ||
                     (e >= kZip64LocatorSize && le32(bytes, e - kZip64LocatorSize) == kZip64LocatorSig);
  if (zip64) {
    if (e < kZip64LocatorSize || le32(bytes, e - kZip64LocatorSize) != kZip64LocatorSig) {
      return zip_error("ZIP64 archive without a ZIP64 end-of-central-directory locator");
    }
    const uint64_t record = le64(bytes, e - kZip64LocatorSize + 8);
    if (record > e - kZip64LocatorSize || e - kZip64LocatorSize - record < kZip64EndSize ||
        le32(bytes, record) != kZip64EndSig) {
      return zip_error("bad ZIP64 end-of-central-directory record");
    }
    if (le32(bytes, record + 16) != 0 || le32(bytes, record + 20) != 0) {
      return zip_error("multi-part zip archives are not supported");
    }
    dir.count = le64(bytes, record + 32);
    dir.size = le64(bytes, record + 40);
    dir.offset = le64(bytes, record + 48);
    directory_end = record;
  } else if (disk != 0 || cd_disk != 0) {
    return zip_error("multi-part zip archives are not supported");
  }
  if (dir.offset > directory_end || dir.size > directory_end - dir.offset) {
    return zip_error("central directory ({} bytes at offset {}) lies outside the {}-byte archive (truncated?)",
                     dir.size, dir.offset, bytes.size());
  }
  if (dir.count > dir.size / kCentralHeaderSize) {
    return zip_error("central directory of {} bytes cannot hold {} entries", dir.size, dir.count);
  }
  return dir;
}

Result<std::vector<Entry>> read_directory(std::string_view bytes, const Directory& dir) {
  std::vector<Entry> entries;
  entries.reserve(static_cast<size_t>(dir.count));
  const uint64_t end = dir.offset + dir.size;
  uint64_t pos = dir.offset;
  for (uint64_t i = 0; i < dir.count; ++i) {
    if (end - pos < kCentralHeaderSize || le32(bytes, pos) != kCentralSig) {
      return zip_error("central directory entry {} is corrupt", i);
    }
    Entry e;
    e.flags = le16(bytes, pos + 8);
    e.method = le16(bytes, pos + 10);
    e.crc = le32(bytes, pos + 16);
    e.compressed = le32(bytes, pos + 20);
    e.uncompressed = le32(bytes, pos + 24);
    const uint16_t name_len = le16(bytes, pos + 28);
    const uint16_t extra_len = le16(bytes, pos + 30);
    const uint16_t comment_len = le16(bytes, pos + 32);
    e.local_offset = le32(bytes, pos + 42);
    const uint64_t var_len = uint64_t{name_len} + extra_len + comment_len;
    if (end - pos - kCentralHeaderSize < var_len) return zip_error("central directory entry {} is truncated", i);
    e.name = std::string(bytes.substr(pos + kCentralHeaderSize, name_len));
    if (!(e.flags & kFlagUtf8) && !is_ascii(e.name)) {
      return zip_error("member name of entry {} is neither ASCII nor flagged UTF-8", i);
    }
    VN_RETURN_IF_ERROR(apply_zip64_extra(bytes.substr(pos + kCentralHeaderSize + name_len, extra_len), e,
                                         e.uncompressed == 0xffffffff, e.compressed == 0xffffffff,
                                         e.local_offset == 0xffffffff));
    entries.push_back(std::move(e));
    pos += kCentralHeaderSize + var_len;
  }
  return entries;
}

Result<std::string> inflate_member(std::string_view compressed, uint64_t expected, const std::string& name) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return zip_error("cannot initialise zlib for member '{}'", name);
  struct Guard {
    z_stream* zs;
    ~Guard() { inflateEnd(zs); }
  } guard{&zs};
  // The buffer grows with the output rather than trusting the declared size up front.
  std::string out(static_cast<size_t>(std::min<uint64_t>(expected, uint64_t{1} << 20)), '\0');
  uint64_t produced = 0;
  uint64_t in_pos = 0;
  while (true) {
    if (zs.avail_in == 0 && in_pos < compressed.size()) {
      const uint64_t n = std::min<uint64_t>(compressed.size() - in_pos, kZlibSlice);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + in_pos));
      zs.avail_in = static_cast<uInt>(n);
      in_pos += n;
    }
    unsigned char probe = 0;
    const bool probing = produced == expected;
    if (probing) {
      zs.next_out = &probe;
      zs.avail_out = 1;
    } else {
      if (produced == out.size()) out.resize(static_cast<size_t>(std::min<uint64_t>(expected, out.size() * 2)));
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
      zs.avail_out = static_cast<uInt>(std::min<uint64_t>(out.size() - produced, kZlibSlice));
    }
    const uInt avail_out_before = zs.avail_out;
    const uInt avail_in_before = zs.avail_in;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const uInt got = avail_out_before - zs.avail_out;
    if (probing && got > 0) {
      return zip_error("member '{}' inflates to more than its declared {} bytes", name, expected);
    }
    produced += got;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
      return zip_error("member '{}' has corrupt deflate data: {}", name, zs.msg ? zs.msg : "unknown error");
    }
    if (rc == Z_MEM_ERROR) return zip_error("out of memory inflating member '{}'", name);
    if (got == 0 && zs.avail_in == avail_in_before && in_pos >= compressed.size()) {
      return zip_error("member '{}' has truncated deflate data", name);
    }
  }
  if (produced != expected) {
    return zip_error("member '{}' inflates to {} bytes but declares {}", name, produced, expected);
  }
  return out;
}

Result<std::string> deflate_bytes(std::string_view data) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return make_error(StatusCode::kInternal, "cannot initialise zlib deflate");
  }
  struct Guard {
    z_stream* zs;
    ~Guard() { deflateEnd(zs); }
  } guard{&zs};
  std::string out(static_cast<size_t>(deflateBound(&zs, static_cast<uLong>(data.size()))), '\0');
  uint64_t in_pos = 0;
  uint64_t produced = 0;
  while (true) {
    if (zs.avail_in == 0 && in_pos < data.size()) {
      const uint64_t n = std::min<uint64_t>(data.size() - in_pos, kZlibSlice);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_pos));
      zs.avail_in = static_cast<uInt>(n);
      in_pos += n;
    }
    if (produced == out.size()) out.resize(out.size() + (uint64_t{1} << 16));
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(std::min<uint64_t>(out.size() - produced, kZlibSlice));
    const uInt before = zs.avail_out;
    const int rc = deflate(&zs, in_pos >= data.size() && zs.avail_in == 0 ? Z_FINISH : Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) return make_error(StatusCode::kInternal, "zlib deflate failed ({})", rc);
  }
  out.resize(static_cast<size_t>(produced));
  return out;
}

Result<TensorMap> npz_decode_impl(std::string_view bytes) {
  VN_ASSIGN_OR_RETURN(Directory dir, find_directory(bytes));
  VN_ASSIGN_OR_RETURN(std::vector<Entry> entries, read_directory(bytes, dir));
  TensorMap tensors;
  for (const Entry& e : entries) {
    if (!e.name.empty() && e.name.back() == '/' && e.uncompressed == 0) continue;  // a directory entry
    if (e.flags & kFlagEncrypted) return zip_error("member '{}' is encrypted", e.name);
    if (e.method != kMethodStored && e.method != kMethodDeflated) {
      return zip_error("member '{}' uses compression method {}; only stored (0) and deflated (8) are supported", e.name,
                       e.method);
    }
    if (e.uncompressed > kMaxTensorBytes) {
      return zip_error("member '{}' declares {} bytes, more than the {} GiB limit on one tensor", e.name,
                       e.uncompressed, kMaxTensorBytes >> 30);
    }
    if (e.local_offset > bytes.size() || bytes.size() - e.local_offset < kLocalHeaderSize ||
        le32(bytes, e.local_offset) != kLocalSig) {
      return zip_error("member '{}' has no local header at offset {} (truncated?)", e.name, e.local_offset);
    }
    const uint64_t data_start =
        e.local_offset + kLocalHeaderSize + le16(bytes, e.local_offset + 26) + le16(bytes, e.local_offset + 28);
    if (data_start > bytes.size() || bytes.size() - data_start < e.compressed) {
      return zip_error("member '{}' is truncated: {} compressed bytes declared, {} present", e.name, e.compressed,
                       data_start > bytes.size() ? 0 : bytes.size() - data_start);
    }
    const std::string_view raw = bytes.substr(data_start, e.compressed);
    std::string inflated;
    std::string_view member;
    if (e.method == kMethodStored) {
      if (e.compressed != e.uncompressed) {
        return zip_error("stored member '{}' declares {} compressed but {} uncompressed bytes", e.name, e.compressed,
                         e.uncompressed);
      }
      member = raw;
    } else {
      if (e.uncompressed > e.compressed * kMaxDeflateRatio + 1024) {
        return zip_error("member '{}' declares {} bytes from {} compressed bytes, more than deflate can produce",
                         e.name, e.uncompressed, e.compressed);
      }
      VN_ASSIGN_OR_RETURN(inflated, inflate_member(raw, e.uncompressed, e.name));
      member = inflated;
    }
    const uint32_t crc = crc32_of(member);
    if (crc != e.crc) {
      return zip_error("CRC mismatch in member '{}' (stored {:08x}, computed {:08x}): the archive is corrupt", e.name,
                       e.crc, crc);
    }
    std::string name = e.name;
    if (name.size() >= 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    if (tensors.contains(name)) return zip_error("duplicate member '{}'", e.name);
    Result<Tensor> tensor = npy_decode(member);
    if (!tensor.ok()) return tensor.status().with_context(fmt::format("npz member '{}'", e.name));
    tensors.set(std::move(name), std::move(tensor).value());
  }
  return tensors;
}

Result<std::string> npz_encode_impl(const TensorMap& tensors, bool compress) {
  std::string out;
  std::string central;
  uint64_t count = 0;
  for (const NamedTensor& nt : tensors) {
    Result<std::string> npy = npy_encode(nt.tensor);
    if (!npy.ok()) return npy.status().with_context(fmt::format("tensor '{}'", nt.name));
    const std::string name = nt.name + ".npy";
    if (name.size() > 0xffff) {
      return make_error(StatusCode::kInvalidArgument, "tensor name of {} bytes is too long for a zip archive",
                        nt.name.size());
    }
    const uint32_t crc = crc32_of(*npy);
    std::string deflated;
    if (compress) {
      VN_ASSIGN_OR_RETURN(deflated, deflate_bytes(*npy));
    }
    const std::string_view data = compress ? std::string_view(deflated) : std::string_view(*npy);
    const uint64_t usize = npy->size();
    const uint64_t csize = data.size();
    const uint64_t offset = out.size();
    const bool zip64_sizes = usize > kZip64Limit || csize > kZip64Limit;
    const bool zip64_offset = offset > kZip64Limit;
    const uint16_t flags = is_ascii(name) ? 0 : kFlagUtf8;
    const uint16_t method = compress ? kMethodDeflated : kMethodStored;
    const uint16_t version = (zip64_sizes || zip64_offset) ? 45 : 20;

    put32(out, kLocalSig);
    put16(out, version);
    put16(out, flags);
    put16(out, method);
    put16(out, 0);  // time 00:00:00
    put16(out, kDosDate1980);
    put32(out, crc);
    put32(out, zip64_sizes ? 0xffffffff : csize);
    put32(out, zip64_sizes ? 0xffffffff : usize);
    put16(out, name.size());
    put16(out, zip64_sizes ? 20 : 0);
    out += name;
    if (zip64_sizes) {
      put16(out, kZip64ExtraId);
      put16(out, 16);
      put64(out, usize);
      put64(out, csize);
    }
    out += data;

    std::string extra;
    if (zip64_sizes) {
      put64(extra, usize);
      put64(extra, csize);
    }
    if (zip64_offset) put64(extra, offset);
    put32(central, kCentralSig);
    put16(central, (3 << 8) | version);  // made by: Unix
    put16(central, version);
    put16(central, flags);
    put16(central, method);
    put16(central, 0);
    put16(central, kDosDate1980);
    put32(central, crc);
    put32(central, zip64_sizes ? 0xffffffff : csize);
    put32(central, zip64_sizes ? 0xffffffff : usize);
    put16(central, name.size());
    put16(central, extra.empty() ? 0 : extra.size() + 4);
    put16(central, 0);                     // comment
    put16(central, 0);                     // disk
    put16(central, 0);                     // internal attributes
    put32(central, uint64_t{0600} << 16);  // external attributes: -rw-------
    put32(central, zip64_offset ? 0xffffffff : offset);
    central += name;
    if (!extra.empty()) {
      put16(central, kZip64ExtraId);
      put16(central, extra.size());
      central += extra;
    }
    ++count;
  }
  const uint64_t cd_offset = out.size();
  const uint64_t cd_size = central.size();
  out += central;
  const bool zip64_end = count > kZip64CountLimit || cd_offset > kZip64Limit || cd_size > kZip64Limit;
  if (zip64_end) {
    const uint64_t record = out.size();
    put32(out, kZip64EndSig);
    put64(out, kZip64EndSize - 12);
    put16(out, (3 << 8) | 45);
    put16(out, 45);
    put32(out, 0);
    put32(out, 0);
    put64(out, count);
    put64(out, count);
    put64(out, cd_size);
    put64(out, cd_offset);
    put32(out, kZip64LocatorSig);
    put32(out, 0);
    put64(out, record);
    put32(out, 1);
  }
  put32(out, kEndSig);
  put16(out, 0);
  put16(out, 0);
  put16(out, zip64_end ? 0xffff : count);
  put16(out, zip64_end ? 0xffff : count);
  put32(out, zip64_end ? 0xffffffff : cd_size);
  put32(out, zip64_end ? 0xffffffff : cd_offset);
  put16(out, 0);  // comment length
  return out;
}

}  // namespace

Result<TensorMap> npz_decode(std::string_view bytes) {
  try {
    return npz_decode_impl(bytes);
  } catch (const std::bad_alloc&) {
    return zip_error("out of memory");
  }
}

Result<std::string> npz_encode(const TensorMap& tensors, bool compress) {
  try {
    return npz_encode_impl(tensors, compress);
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kIoError, "out of memory encoding {} tensors as .npz", tensors.size());
  }
}

Result<TensorMap> npz_load(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
  Result<TensorMap> tensors = npz_decode(bytes);
  if (!tensors.ok()) return tensors.status().with_context(path.string());
  return tensors;
}

Status npz_save(const TensorMap& tensors, const std::filesystem::path& path, bool compress) {
  Result<std::string> bytes = npz_encode(tensors, compress);
  if (!bytes.ok()) return bytes.status().with_context(path.string());
  return file_write_atomic(path, *bytes);
}

}  // namespace vn::io
