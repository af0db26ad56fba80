// SPDX-License-Identifier: Apache-2.0
#include "core/io/npy.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <utility>
#include <vector>
#include "core/ir/mapped_file.h"

namespace vn::io {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kPreludeV1 = 10;  // magic, 2 version bytes, uint16 header length
constexpr size_t kPreludeV2 = 12;  // magic, 2 version bytes, uint32 header length
constexpr size_t kAlign = 64;
constexpr size_t kGrowthAxisMaxDigits = 21;
// numpy refuses headers over 10000 characters by default; real headers stay far below this limit too.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;
constexpr int kMaxLiteralDepth = 16;

Status npy_error(std::string message) { return Status(StatusCode::kIoError, "invalid .npy data: " + message); }

template <typename... Args>
Status npy_error(fmt::format_string<Args...> format, Args&&... args) {
  return npy_error(fmt::format(format, std::forward<Args>(args)...));
}

uint32_t read_le(const char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

/// The subset of Python literals that appears in .npy headers.
struct PyValue {
  enum class Kind { kString, kInt, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string text;                                   // kString
  int64_t integer = 0;                                // kInt
  bool overflow = false;                              // kInt that does not fit int64
  bool boolean = false;                               // kBool
  std::vector<PyValue> items;                         // kTuple, kList; kDict: the values
  // kDict: the (string) keys, parallel to items. Not a vector of pairs: std::pair needs PyValue
  // complete here, which libstdc++ under clang enforces.
  std::vector<std::string> keys;
};

std::string_view kind_name(PyValue::Kind kind) {
  switch (kind) {
    case PyValue::Kind::kString:
      return "a string";
    case PyValue::Kind::kInt:
      return "an integer";
    case PyValue::Kind::kBool:
      return "a bool";
    case PyValue::Kind::kNone:
      return "None";
    case PyValue::Kind::kTuple:
      return "a tuple";
    case PyValue::Kind::kList:
      return "a list";
    case PyValue::Kind::kDict:
      return "a dict";
  }
  return "a value";
}

/// Recursive-descent parser for a Python dict literal (what numpy's safe_eval accepts in practice).
class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text) {}

  Result<PyValue> parse_document() {
    VN_ASSIGN_OR_RETURN(PyValue value, parse_value(0));
    skip_space();
    if (pos_ != text_.size()) return error("unexpected text after the header dict");
    return value;
  }

 private:
  Status error(std::string_view what) const {
    return npy_error("cannot parse header at column {}: {}", pos_ + 1, what);
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  static bool is_ident(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

  Result<PyValue> parse_value(int depth) {
    if (depth > kMaxLiteralDepth) return error("nesting too deep");
    skip_space();
    if (pos_ >= text_.size()) return error("unexpected end of header");
    const char c = text_[pos_];
    if (c == '{') return parse_dict(depth);
    if (c == '(') return parse_sequence(depth, ')');
    if (c == '[') return parse_sequence(depth, ']');
    if (c == '\'' || c == '"') return parse_string();
    if ((c == 'u' || c == 'U') && pos_ + 1 < text_.size() && (text_[pos_ + 1] == '\'' || text_[pos_ + 1] == '"')) {
      ++pos_;  // Python 2 wrote unicode literals as u'...'
      return parse_string();
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return parse_int();
    if (is_ident(c)) {
      const size_t start = pos_;
      while (pos_ < text_.size() && is_ident(text_[pos_])) ++pos_;
      const std::string_view word = text_.substr(start, pos_ - start);
      PyValue v;
      if (word == "True" || word == "False") {
        v.kind = PyValue::Kind::kBool;
        v.boolean = word == "True";
        return v;
      }
      if (word == "None") return v;
      pos_ = start;
      return error(fmt::format("unexpected name '{}'", word));
    }
    return error(fmt::format("unexpected character '{}'", c));
  }

  Result<PyValue> parse_string() {
    const char quote = text_[pos_++];
    PyValue v;
    v.kind = PyValue::Kind::kString;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\n') return error("newline inside a string");
      if (c == '\\') {
        if (pos_ >= text_.size()) break;
        c = text_[pos_++];
        switch (c) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case '0':
            c = '\0';
            break;
          default:
            break;  // \\, \', \" and anything else stand for themselves
        }
      }
      v.text += c;
    }
    if (pos_ >= text_.size()) return error("unterminated string");
    ++pos_;
    return v;
  }

  Result<PyValue> parse_int() {
    PyValue v;
    v.kind = PyValue::Kind::kInt;
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') return error("expected digits");
    uint64_t magnitude = 0;
    while (pos_ < text_.size() && ((text_[pos_] >= '0' && text_[pos_] <= '9') || text_[pos_] == '_')) {
      const char c = text_[pos_++];
      if (c == '_') continue;
      const auto digit = static_cast<uint64_t>(c - '0');
      if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        v.overflow = true;
      } else {
        magnitude = magnitude * 10 + digit;
      }
    }
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;  // Python 2 long suffix
    if (pos_ < text_.size() &&
        (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E' || is_ident(text_[pos_]))) {
      return error("expected an integer");
    }
    if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) v.overflow = true;
    if (!v.overflow) v.integer = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return v;
  }

  Result<PyValue> parse_sequence(int depth, char close) {
    ++pos_;
    PyValue v;
    v.kind = close == ')' ? PyValue::Kind::kTuple : PyValue::Kind::kList;
    bool saw_comma = false;
    while (true) {
      if (consume(close)) break;
      VN_ASSIGN_OR_RETURN(PyValue item, parse_value(depth + 1));
      v.items.push_back(std::move(item));
      if (consume(',')) {
        saw_comma = true;
        continue;
      }
      if (consume(close)) break;
      return error(fmt::format("expected ',' or '{}'", close));
    }
    // "(3)" is a parenthesized 3, not a tuple.
    if (close == ')' && v.items.size() == 1 && !saw_comma) return std::move(v.items[0]);
    return v;
  }

  Result<PyValue> parse_dict(int depth) {
    ++pos_;
    PyValue v;
    v.kind = PyValue::Kind::kDict;
    while (true) {
      if (consume('}')) break;
      VN_ASSIGN_OR_RETURN(PyValue key, parse_value(depth + 1));
      if (key.kind != PyValue::Kind::kString) return error("dict keys must be strings");
      if (!consume(':')) return error("expected ':'");
      VN_ASSIGN_OR_RETURN(PyValue value, parse_value(depth + 1));
      bool replaced = false;
      for (size_t i = 0; i < v.keys.size(); ++i) {
        if (v.keys[i] == key.text) {
          v.items[i] = std::move(value);
          replaced = true;
          break;
        }
      }
      if (!replaced) {
        v.keys.push_back(std::move(key.text));
        v.items.push_back(std::move(value));
      }
      if (consume(',')) continue;
      if (consume('}')) break;
      return error("expected ',' or '}'");
    }
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

const PyValue* find_key(const PyValue& dict, std::string_view key) {
  for (size_t i = 0; i < dict.keys.size(); ++i) {
    if (dict.keys[i] == key) return &dict.items[i];
  }
  return nullptr;
}

Result<DType> dtype_from_descr(const PyValue& descr) {
  if (descr.kind == PyValue::Kind::kList || descr.kind == PyValue::Kind::kTuple) {
    return npy_error("structured (record) dtypes are not supported");
  }
  if (descr.kind != PyValue::Kind::kString) {
    return npy_error("'descr' must be a string, got {}", kind_name(descr.kind));
  }
  const std::string& d = descr.text;
  if (std::optional<DType> dt = dtype_from_numpy_descr(d)) return *dt;
  // numpy always writes a byte-order mark, but a bare "f4" is an unambiguous native-order descr.
  if (!d.empty() && d[0] >= 'a' && d[0] <= 'z') {
    if (std::optional<DType> dt = dtype_from_numpy_descr(std::string(1, '=').append(d))) return *dt;
  }
  std::string_view body = d;
  if (!body.empty() && std::string_view("<>|=!").find(body[0]) != std::string_view::npos) body.remove_prefix(1);
  const std::string_view kind = body.substr(0, body.empty() ? 0 : 1);
  if (kind == "O") return npy_error("object arrays (descr '{}') need pickle and are not supported", d);
  if (kind == "V" && body == "V1") {
    return npy_error(
        "descr '{}' is what np.save writes for every one-byte ml_dtypes type (float8, int4, ...), so the element "
        "type is lost; write the ml_dtypes name as the descr instead (e.g. 'float8_e4m3fn', see the README)",
        d);
  }
  if (kind == "V") return npy_error("void/structured dtype (descr '{}') is not supported", d);
  if (kind == "U" || kind == "S" || kind == "a") return npy_error("string arrays (descr '{}') are not supported", d);
  if (kind == "c") return npy_error("complex arrays (descr '{}') are not supported", d);
  if (kind == "M" || kind == "m") return npy_error("datetime arrays (descr '{}') are not supported", d);
  if (!d.empty() && d[0] == '>') {
    std::string little = d;
    little[0] = '<';
    if (dtype_from_numpy_descr(little)) {
      return npy_error(
          "big-endian data (descr '{}') is not supported; re-save it little-endian with "
          "arr.astype(arr.dtype.newbyteorder('<'))",
          d);
    }
  }
  return npy_error("unsupported dtype descr '{}'", d);
}

Result<Shape> shape_from_header(const PyValue& value) {
  if (value.kind != PyValue::Kind::kTuple && value.kind != PyValue::Kind::kList) {
    return npy_error("'shape' must be a tuple of integers, got {}", kind_name(value.kind));
  }
  Shape shape;
  shape.reserve(value.items.size());
  for (const PyValue& item : value.items) {
    if (item.kind != PyValue::Kind::kInt) {
      return npy_error("'shape' must be a tuple of integers, but holds {}", kind_name(item.kind));
    }
    if (item.overflow) return npy_error("'shape' has a dimension too large to represent");
    if (item.integer < 0) return npy_error("'shape' has a negative dimension {}", item.integer);
    shape.push_back(item.integer);
  }
  return shape;
}

// Copies Fortran-ordered (first index fastest) elements into C order.
void fortran_to_c(const char* src, char* dst, const Shape& shape, size_t elem) {
  const size_t rank = shape.size();
  std::vector<int64_t> c_stride(rank, 1);
  for (size_t k = rank - 1; k > 0; --k) c_stride[k - 1] = c_stride[k] * shape[k];
  std::vector<int64_t> index(rank, 0);
  const int64_t n = shape_numel(shape);
  int64_t dst_off = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + static_cast<size_t>(dst_off) * elem, src + static_cast<size_t>(i) * elem, elem);
    for (size_t k = 0; k < rank; ++k) {
      ++index[k];
      dst_off += c_stride[k];
      if (index[k] < shape[k]) break;
      dst_off -= c_stride[k] * shape[k];
      index[k] = 0;
    }
  }
}

std::string errno_text(int err) { return std::strerror(err); }

Result<Tensor> npy_decode_impl(std::string_view bytes) {
  const size_t magic_seen = std::min(bytes.size(), kMagic.size());
  if (bytes.substr(0, magic_seen) != kMagic.substr(0, magic_seen)) return npy_error("missing the \\x93NUMPY magic");
  if (bytes.size() < kPreludeV1) return npy_error("truncated: {} bytes", bytes.size());
  const auto major = static_cast<unsigned char>(bytes[6]);
  const auto minor = static_cast<unsigned char>(bytes[7]);
  if (minor != 0 || major < 1 || major > 3) return npy_error("unsupported format version {}.{}", major, minor);
  const size_t prelude = major == 1 ? kPreludeV1 : kPreludeV2;
  if (bytes.size() < prelude) return npy_error("truncated: {} bytes", bytes.size());
  const size_t header_len = read_le(bytes.data() + 8, major == 1 ? 2 : 4);
  if (header_len > kMaxHeaderBytes) return npy_error("header of {} bytes is too large", header_len);
  if (header_len > bytes.size() - prelude) {
    return npy_error("truncated: header needs {} bytes, {} present", header_len, bytes.size() - prelude);
  }
  const std::string_view header = bytes.substr(prelude, header_len);
  // Version 1/2 headers are latin-1 and 3 utf-8; the keys and values that matter are ASCII either way.
  VN_ASSIGN_OR_RETURN(PyValue dict, LiteralParser(header).parse_document());
  if (dict.kind != PyValue::Kind::kDict) return npy_error("header is {}, not a dict", kind_name(dict.kind));
  const PyValue* descr = find_key(dict, "descr");
  const PyValue* fortran = find_key(dict, "fortran_order");
  const PyValue* shape_value = find_key(dict, "shape");
  if (!descr) return npy_error("header lacks the 'descr' key");
  if (!fortran) return npy_error("header lacks the 'fortran_order' key");
  if (!shape_value) return npy_error("header lacks the 'shape' key");
  VN_ASSIGN_OR_RETURN(DType dtype, dtype_from_descr(*descr));
  if (fortran->kind != PyValue::Kind::kBool) {
    return npy_error("'fortran_order' must be True or False, got {}", kind_name(fortran->kind));
  }
  VN_ASSIGN_OR_RETURN(Shape shape, shape_from_header(*shape_value));
  Result<int64_t> numel = shape_numel_checked(shape, dtype);
  if (!numel.ok()) return npy_error(numel.status().message());
  const size_t elem = dtype_size(dtype);
  const uint64_t need = static_cast<uint64_t>(*numel) * elem;
  const std::string_view data = bytes.substr(prelude + header_len);
  if (data.size() < need) {
    return npy_error("truncated: shape {} of {} needs {} data bytes, {} present", shape_to_string(shape),
                     dtype_name(dtype), need, data.size());
  }
  if (data.size() > need) {
    return npy_error("{} unexpected bytes after the {} data bytes of shape {} of {}", data.size() - need, need,
                     shape_to_string(shape), dtype_name(dtype));
  }
  VN_ASSIGN_OR_RETURN(Tensor tensor, Tensor::create(dtype, shape));
  if (need > 0) {
    auto* dst = static_cast<char*>(tensor.mutable_raw());
    if (fortran->boolean && shape.size() > 1) {
      fortran_to_c(data.data(), dst, shape, elem);
    } else {
      std::memcpy(dst, data.data(), need);
    }
    if (dtype == DType::kBool) {
      // A bool byte other than 0 or 1 is undefined behaviour once read as bool.
      auto* b = reinterpret_cast<unsigned char*>(dst);
      for (uint64_t i = 0; i < need; ++i) b[i] = b[i] != 0;
    }
    if (const std::optional<NarrowFormat> f = dtype_narrow_format(dtype)) {
      const int64_t bad = narrow_first_invalid(*f, reinterpret_cast<const uint8_t*>(dst), *numel);
      if (bad >= 0) {
        return npy_error("byte 0x{:02x} at flat position {} is not a {} value", reinterpret_cast<const uint8_t*>(dst)[bad],
                         bad, dtype_name(dtype));
      }
    }
  }
  return tensor;
}

Result<std::string> npy_encode_impl(const Tensor& tensor) {
  if (!tensor.defined()) return make_error(StatusCode::kInvalidArgument, "cannot encode an undefined tensor as .npy");
  const std::string_view descr = dtype_numpy_descr(tensor.dtype());
  if (descr.empty()) {
    return make_error(StatusCode::kUnsupportedDType, "{} tensors cannot be encoded as .npy: numpy has no such dtype",
                      dtype_name(tensor.dtype()));
  }
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_to_string(tensor.shape()));
  if (!tensor.shape().empty()) {
    const size_t digits = std::to_string(tensor.shape()[0]).size();
    header.append(kGrowthAxisMaxDigits - std::min(digits, kGrowthAxisMaxDigits), ' ');
  }
  const size_t hlen = header.size() + 1;
  size_t prelude = kPreludeV1;
  size_t padlen = kAlign - (prelude + hlen) % kAlign;
  if (hlen + padlen > 0xffff) {
    prelude = kPreludeV2;
    padlen = kAlign - (prelude + hlen) % kAlign;
  }
  const size_t total_header = hlen + padlen;
  std::string out;
  out.reserve(prelude + total_header + tensor.nbytes());
  out += kMagic;
  out += static_cast<char>(prelude == kPreludeV1 ? 1 : 2);
  out += '\0';
  const int len_bytes = prelude == kPreludeV1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out += static_cast<char>((total_header >> (8 * i)) & 0xff);
  out += header;
  out.append(padlen, ' ');
  out += '\n';
  if (tensor.nbytes() > 0) out.append(static_cast<const char*>(tensor.raw()), tensor.nbytes());
  return out;
}

}  // namespace

Result<Tensor> npy_decode(std::string_view bytes) {
  try {
    return npy_decode_impl(bytes);
  } catch (const std::bad_alloc&) {
    return npy_error("out of memory");
  }
}

Result<std::string> npy_encode(const Tensor& tensor) {
  try {
    return npy_encode_impl(tensor);
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kIoError, "out of memory encoding a {} tensor of shape {} as .npy",
                      dtype_name(tensor.dtype()), shape_to_string(tensor.shape()));
  }
}

Result<Tensor> npy_load(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
  Result<Tensor> tensor = npy_decode(bytes);
  if (!tensor.ok()) return tensor.status().with_context(path.string());
  return tensor;
}

Status npy_save(const Tensor& tensor, const std::filesystem::path& path) {
  Result<std::string> bytes = npy_encode(tensor);
  if (!bytes.ok()) return bytes.status().with_context(path.string());
  return file_write_atomic(path, *bytes);
}

Result<std::string> read_file_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(StatusCode::kIoError, "{}: cannot open: is a directory", path.string());
  }
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return make_error(StatusCode::kIoError, "{}: cannot open: {}", path.string(), errno_text(errno));
  std::string bytes;
  try {
    const uintmax_t size_hint = std::filesystem::file_size(path, ec);
    if (!ec) bytes.reserve(static_cast<size_t>(size_hint));
    char buffer[1 << 16];
    while (true) {
      const size_t n = std::fread(buffer, 1, sizeof(buffer), file.get());
      bytes.append(buffer, n);
      if (n < sizeof(buffer)) break;
    }
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kIoError, "{}: out of memory reading the file", path.string());
  }
  if (std::ferror(file.get())) {
    return make_error(StatusCode::kIoError, "{}: read error: {}", path.string(), errno_text(errno));
  }
  return bytes;
}

}  // namespace vn::io
