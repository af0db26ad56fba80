// SPDX-License-Identifier: Apache-2.0
#include "core/io/polygraphy_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <utility>

#include "core/common/json_depth.h"
#include "core/io/base64.h"
#include "core/io/npy.h"
#include "core/ir/mapped_file.h"
#include "core/io/npz.h"

namespace vn::io {
namespace {

// LazyArray and FormattedArray wrap other arrays; real files nest at most two of them.
constexpr int kMaxArrayWrapping = 8;
constexpr size_t kMaxParseMessage = 200;
constexpr std::string_view kTypeMarker = "polygraphy_class";
constexpr std::string_view kLegacyPrefix = "__polygraphy_encoded_";
constexpr std::string_view kLegacyMarkerValue = "polygraphy_serialized_json_type";

// The classes Polygraphy's JSON decoder registers (polygraphy-notes §2), legacy aliases included. A tag
// outside this list is reported as unknown; one inside it but out of place is reported as misplaced.
constexpr std::string_view kKnownClasses[] = {
    "ndarray",          "Tensor",    "LazyArray",  "LazyNumpyArray",   "IterationResult", "RunResults",
    "TacticReplayData", "Algorithm", "TensorInfo", "IterationContext", "FormattedArray",
};

Status io_error(std::string message) { return Status(StatusCode::kIoError, std::move(message)); }

template <typename... Args>
Status io_error(fmt::format_string<Args...> format, Args&&... args) {
  return io_error(fmt::format(format, std::forward<Args>(args)...));
}

Result<nlohmann::ordered_json> parse_json(std::string_view text) {
  VN_RETURN_IF_ERROR(check_json_depth(text));
  try {
    return nlohmann::ordered_json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, ..." → "parse error at line 1, ..."
    if (const size_t close = what.find("] "); what.rfind("[json.exception.", 0) == 0 && close != std::string::npos) {
      what.erase(0, close + 2);
    }
    // The "last read" token can be a whole truncated base64 string.
    if (what.size() > kMaxParseMessage) what = what.substr(0, kMaxParseMessage) + "...";
    return io_error("invalid JSON: {}", what);
  }
}

template <typename J>
std::string_view json_kind(const J& value) {
  return value.is_object()    ? "an object"
         : value.is_array()   ? "a list"
         : value.is_string()  ? "a string"
         : value.is_boolean() ? "a bool"
         : value.is_number()  ? "a number"
         : value.is_null()    ? "null"
                              : "an unknown JSON value";
}

bool is_known_class(std::string_view name) {
  for (std::string_view known : kKnownClasses) {
    if (known == name) return true;
  }
  return false;
}

/// The Polygraphy class an object is tagged with, in either marker style; nullopt when untagged.
template <typename J>
Result<std::optional<std::string>> class_of(const J& object) {
  if (auto it = object.find(kTypeMarker); it != object.end()) {
    if (!it->is_string()) return io_error("\"polygraphy_class\" must be a string, got {}", json_kind(*it));
    return std::optional<std::string>(it->template get_ref<const std::string&>());
  }
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (key.size() > kLegacyPrefix.size() && key.compare(0, kLegacyPrefix.size(), kLegacyPrefix) == 0 &&
        it->is_string() && it->template get_ref<const std::string&>() == kLegacyMarkerValue) {
      return std::optional<std::string>(key.substr(kLegacyPrefix.size()));
    }
  }
  return std::optional<std::string>();
}

/// Latin-1 bytes of a string whose code points are all below 256 (Python's str.encode("latin-1")).
Result<std::string> latin1_bytes(const std::string& utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if ((c == 0xc2 || c == 0xc3) && i + 1 < utf8.size()) {
      out += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(utf8[i + 1]) & 0x3f));
      ++i;
    } else {
      return io_error("legacy latin-1 array text holds a character above U+00FF at byte {}", i);
    }
  }
  return out;
}

Result<Tensor> decode_array_bytes(std::string_view bytes) {
  if (bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
      bytes.substr(0, 4) == std::string_view("PK\x05\x06", 4)) {
    // Very old Polygraphy files stored an .npz whose first member is the array.
    VN_ASSIGN_OR_RETURN(TensorMap members, npz_decode(bytes));
    if (members.empty()) return io_error("legacy .npz array payload has no members");
    return members[0].tensor;
  }
  return npy_decode(bytes);
}

Result<Tensor> decode_ndarray_payload(const std::string& text) {
  // Legacy files hold the raw bytes as latin-1 text. Such text starts with "\x93NUMPY" or "PK\x03\x04",
  // neither of which is valid base64, so the prefix tells the two apart without trial decoding.
  static const std::string kLatin1Npy = "\xc2\x93NUMPY";
  static const std::string kLatin1Zip = std::string("PK\x03\x04", 4);
  if (text.rfind(kLatin1Npy, 0) == 0 || text.rfind(kLatin1Zip, 0) == 0) {
    VN_ASSIGN_OR_RETURN(std::string bytes, latin1_bytes(text));
    return decode_array_bytes(bytes);
  }
  Result<std::string> bytes = base64_decode(text);
  if (!bytes.ok()) return bytes.status().with_context("\"array\"");
  return decode_array_bytes(*bytes);
}

template <typename J>
Result<Tensor> decode_array_impl(const J& value, int wrapping) {
  if (wrapping > kMaxArrayWrapping) return io_error("arrays wrapped more than {} levels deep", kMaxArrayWrapping);
  if (!value.is_object()) return io_error("expected an encoded array object, got {}", json_kind(value));
  VN_ASSIGN_OR_RETURN(std::optional<std::string> cls, class_of(value));
  if (!cls) return io_error("object has no polygraphy_class marker, so it is not an encoded array");
  if (*cls == "ndarray") {
    auto it = value.find("array");
    if (it == value.end()) return io_error("ndarray object lacks the \"array\" key");
    if (!it->is_string()) return io_error("ndarray \"array\" must be a string, got {}", json_kind(*it));
    return decode_ndarray_payload(it->template get_ref<const std::string&>());
  }
  if (*cls == "LazyArray" || *cls == "LazyNumpyArray") {
    auto it = value.find("values");
    if (it == value.end()) return io_error("{} object lacks the \"values\" key", *cls);
    return decode_array_impl(*it, wrapping + 1);
  }
  if (*cls == "FormattedArray") {
    auto it = value.find("array");
    if (it == value.end()) return io_error("FormattedArray object lacks the \"array\" key");
    VN_ASSIGN_OR_RETURN(Tensor tensor, decode_array_impl(*it, wrapping + 1));
    auto shape_it = value.find("shape");
    if (shape_it == value.end() || shape_it->is_null()) return tensor;
    if (!shape_it->is_array()) return io_error("FormattedArray \"shape\" must be a list, got {}", json_kind(*shape_it));
    Shape shape;
    for (const auto& d : *shape_it) {
      if (!d.is_number_integer() || d.template get<int64_t>() < 0) {
        return io_error("FormattedArray \"shape\" must hold non-negative integers");
      }
      shape.push_back(d.template get<int64_t>());
    }
    Result<int64_t> numel = shape_numel_checked(shape, tensor.dtype());
    if (!numel.ok() || *numel != tensor.numel()) {
      return io_error(
          "FormattedArray of semantic shape {} holds {} elements in a vectorized TensorRT layout; "
          "save the output unformatted",
          shape_to_string(shape), tensor.numel());
    }
    return tensor.reshaped(std::move(shape));
  }
  if (*cls == "Tensor") {
    return io_error("value is a torch tensor; re-save it with numpy arrays");
  }
  if (is_known_class(*cls)) return io_error("expected an array, got a Polygraphy '{}' object", *cls);
  return io_error("unknown polygraphy_class '{}'", *cls);
}

/// Runs `f` and turns any exception into a Status, so that nothing escapes the public functions.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return io_error("out of memory");
  } catch (const nlohmann::json::exception& e) {
    return io_error("invalid JSON structure: {}", e.what());
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, fmt::format("unexpected exception: {}", e.what()));
  }
}

template <typename J>
Result<TensorMap> decode_tensor_dict(const J& object, std::string_view what) {
  TensorMap tensors;
  for (auto it = object.begin(); it != object.end(); ++it) {
    Result<Tensor> tensor = decode_array_impl(*it, 0);
    if (!tensor.ok()) return tensor.status().with_context(fmt::format("{} '{}'", what, it.key()));
    tensors.set(it.key(), std::move(tensor).value());
  }
  return tensors;
}

Result<IterationResult> decode_iteration(const nlohmann::ordered_json& value, const std::string& runner_name) {
  if (!value.is_object()) return io_error("expected an IterationResult object, got {}", json_kind(value));
  VN_ASSIGN_OR_RETURN(std::optional<std::string> cls, class_of(value));
  if (!cls) return io_error("object has no polygraphy_class marker; expected an IterationResult");
  if (*cls != "IterationResult") {
    if (!is_known_class(*cls)) return io_error("unknown polygraphy_class '{}'", *cls);
    return io_error("expected an IterationResult, got a Polygraphy '{}' object", *cls);
  }
  IterationResult result;
  auto outputs = value.find("outputs");
  if (outputs == value.end()) return io_error("IterationResult lacks the \"outputs\" key");
  if (!outputs->is_object())
    return io_error("IterationResult \"outputs\" must be an object, got {}", json_kind(*outputs));
  VN_ASSIGN_OR_RETURN(result.outputs, decode_tensor_dict(*outputs, "output"));
  if (auto runtime = value.find("runtime"); runtime != value.end() && !runtime->is_null()) {
    if (!runtime->is_number())
      return io_error("IterationResult \"runtime\" must be a number, got {}", json_kind(*runtime));
    result.runtime = runtime->get<double>();
  }
  result.runner_name = runner_name;
  if (auto name = value.find("runner_name"); name != value.end()) {
    if (!name->is_string()) {
      return io_error("IterationResult \"runner_name\" must be a string, got {}", json_kind(*name));
    }
    result.runner_name = name->get<std::string>();
  }
  return result;
}

Result<RunResults> decode_run_results(const nlohmann::ordered_json& doc) {
  if (doc.is_array()) {
    return io_error("expected a RunResults object, got a JSON list (a feed list from --save-inputs?)");
  }
  if (!doc.is_object()) return io_error("expected a RunResults object, got {}", json_kind(doc));
  VN_ASSIGN_OR_RETURN(std::optional<std::string> cls, class_of(doc));
  if (!cls) return io_error("top-level object has no polygraphy_class marker; expected RunResults");
  if (*cls != "RunResults") {
    if (!is_known_class(*cls)) return io_error("unknown polygraphy_class '{}'", *cls);
    return io_error("expected RunResults, got a Polygraphy '{}' object", *cls);
  }
  auto lst = doc.find("lst");
  if (lst == doc.end()) return io_error("RunResults lacks the \"lst\" key");
  if (!lst->is_array()) return io_error("RunResults \"lst\" must be a list, got {}", json_kind(*lst));
  RunResults results;
  results.reserve(lst->size());
  for (size_t r = 0; r < lst->size(); ++r) {
    const auto& pair = (*lst)[r];
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_array()) {
      return io_error("RunResults entry {} must be a [runner_name, [IterationResult, ...]] pair", r);
    }
    RunnerResults runner;
    runner.runner_name = pair[0].get<std::string>();
    for (size_t i = 0; i < pair[1].size(); ++i) {
      Result<IterationResult> iteration = decode_iteration(pair[1][i], runner.runner_name);
      if (!iteration.ok()) {
        return iteration.status()
            .with_context(fmt::format("iteration {}", i))
            .with_context(fmt::format("runner {} '{}'", r, runner.runner_name));
      }
      runner.iterations.push_back(std::move(iteration).value());
    }
    results.push_back(std::move(runner));
  }
  return results;
}

Result<std::vector<TensorMap>> decode_feed_list(const nlohmann::ordered_json& doc) {
  if (!doc.is_array()) {
    if (doc.is_object()) {
      VN_ASSIGN_OR_RETURN(std::optional<std::string> cls, class_of(doc));
      if (cls)
        return io_error("expected a feed list (a JSON list of name -> array objects), got a Polygraphy '{}' object",
                        *cls);
    }
    return io_error("expected a feed list (a JSON list of name -> array objects), got {}", json_kind(doc));
  }
  std::vector<TensorMap> feeds;
  feeds.reserve(doc.size());
  for (size_t i = 0; i < doc.size(); ++i) {
    const auto& feed = doc[i];
    if (!feed.is_object()) return io_error("feed {}: expected an object of name -> array, got {}", i, json_kind(feed));
    Result<std::optional<std::string>> cls = class_of(feed);
    if (!cls.ok()) return cls.status().with_context(fmt::format("feed {}", i));
    if (*cls)
      return io_error("feed {}: expected a plain object of name -> array, got a Polygraphy '{}' object", i, **cls);
    Result<TensorMap> tensors = decode_tensor_dict(feed, "input");
    if (!tensors.ok()) return tensors.status().with_context(fmt::format("feed {}", i));
    feeds.push_back(std::move(tensors).value());
  }
  return feeds;
}

/// Python's repr() of a float: the shortest round-tripping digits, positional when the decimal point
/// position is within (-4, 16], exponent form otherwise ("1e-05", "2.5e+16"), ".0" on integral values.
std::string python_float_repr(double v) {
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  std::string out;
  size_t pos = 0;
  if (sci[0] == '-') {
    out += '-';
    pos = 1;
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = pos; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  int exponent = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  const int decpt = exponent + 1;  // digits are 0.d1d2... * 10^decpt
  const int n = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-decpt), '0');
      out += digits;
    } else if (decpt >= n) {
      out += digits;
      out.append(static_cast<size_t>(decpt - n), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(decpt));
      out += '.';
      out += digits.substr(static_cast<size_t>(decpt));
    }
  } else {
    out += digits[0];
    if (n > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  return out;
}

/// Emits JSON exactly as Python's json.dumps(obj, indent=4) (ensure_ascii on) lays it out.
class PyJsonWriter {
 public:
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  Status key(std::string_view k) {
    item_prefix();
    VN_RETURN_IF_ERROR(write_string(k));
    out_ += ": ";
    after_key_ = true;
    return Status::OK();
  }
  Status string_value(std::string_view s) {
    value_prefix();
    return write_string(s);
  }
  void raw_value(std::string_view text) {
    value_prefix();
    out_ += text;
  }

  std::string take() { return std::move(out_); }

 private:
  void open(char c) {
    value_prefix();
    out_ += c;
    counts_.push_back(0);
  }
  void close(char c) {
    const size_t n = counts_.back();
    counts_.pop_back();
    if (n > 0) {
      out_ += '\n';
      out_.append(4 * counts_.size(), ' ');
    }
    out_ += c;
  }
  void value_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    item_prefix();
  }
  void item_prefix() {
    if (counts_.empty()) return;
    out_ += counts_.back()++ == 0 ? "\n" : ",\n";
    out_.append(4 * counts_.size(), ' ');
  }

  void escape_code_unit(uint32_t unit) { out_ += fmt::format("\\u{:04x}", unit); }

  Status write_string(std::string_view s) {
    out_ += '"';
    size_t run = 0;  // start of the pending run of characters that need no escaping
    for (size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        ++i;
        continue;
      }
      out_.append(s.data() + run, i - run);
      switch (c) {
        case '"':
          out_ += "\\\"";
          ++i;
          break;
        case '\\':
          out_ += "\\\\";
          ++i;
          break;
        case '\n':
          out_ += "\\n";
          ++i;
          break;
        case '\r':
          out_ += "\\r";
          ++i;
          break;
        case '\t':
          out_ += "\\t";
          ++i;
          break;
        case '\b':
          out_ += "\\b";
          ++i;
          break;
        case '\f':
          out_ += "\\f";
          ++i;
          break;
        default:
          if (c < 0x80) {
            escape_code_unit(c);
            ++i;
          } else {
            VN_ASSIGN_OR_RETURN(uint32_t cp, decode_utf8(s, i));
            if (cp >= 0x10000) {
              escape_code_unit(0xd800 + ((cp - 0x10000) >> 10));
              escape_code_unit(0xdc00 + ((cp - 0x10000) & 0x3ff));
            } else {
              escape_code_unit(cp);
            }
          }
      }
      run = i;
    }
    out_.append(s.data() + run, s.size() - run);
    out_ += '"';
    return Status::OK();
  }

  // Decodes the UTF-8 sequence at s[i] and advances i past it.
  static Result<uint32_t> decode_utf8(std::string_view s, size_t& i) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = 0;
    uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return io_error("text is not valid UTF-8 (byte 0x{:02x} at offset {})", c, i);
    }
    if (i + static_cast<size_t>(len) > s.size()) return io_error("text is not valid UTF-8 (truncated at offset {})", i);
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((cc & 0xc0) != 0x80) return io_error("text is not valid UTF-8 (byte 0x{:02x} at offset {})", cc, i + k);
      cp = (cp << 6) | (cc & 0x3f);
    }
    const uint32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min_cp || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return io_error("text is not valid UTF-8 (bad sequence at offset {})", i);
    }
    i += static_cast<size_t>(len);
    return cp;
  }

  std::string out_;
  std::vector<size_t> counts_;  // items written so far in each open container
  bool after_key_ = false;
};

Status write_ndarray(PyJsonWriter& w, const Tensor& tensor) {
  VN_ASSIGN_OR_RETURN(std::string npy, npy_encode(tensor));
  w.begin_object();
  VN_RETURN_IF_ERROR(w.key("array"));
  VN_RETURN_IF_ERROR(w.string_value(base64_encode(npy)));
  VN_RETURN_IF_ERROR(w.key(kTypeMarker));
  VN_RETURN_IF_ERROR(w.string_value("ndarray"));
  w.end_object();
  return Status::OK();
}

Result<std::string> encode_run_results(const RunResults& results) {
  PyJsonWriter w;
  w.begin_object();
  VN_RETURN_IF_ERROR(w.key("lst"));
  w.begin_array();
  for (const RunnerResults& runner : results) {
    w.begin_array();
    Status name_status = w.string_value(runner.runner_name);
    if (!name_status.ok()) return name_status.with_context("runner name");
    w.begin_array();
    for (size_t i = 0; i < runner.iterations.size(); ++i) {
      const IterationResult& it = runner.iterations[i];
      auto context = [&](const Status& s) {
        return s.with_context(fmt::format("iteration {}", i))
            .with_context(fmt::format("runner '{}'", runner.runner_name));
      };
      w.begin_object();
      VN_RETURN_IF_ERROR(w.key("outputs"));
      w.begin_object();
      for (const NamedTensor& out : it.outputs) {
        Status s = w.key(out.name);
        if (s.ok()) {
          w.begin_object();
          s = w.key("values");
        }
        if (s.ok()) s = write_ndarray(w, out.tensor);
        if (!s.ok()) return context(s.with_context(fmt::format("output '{}'", out.name)));
        VN_RETURN_IF_ERROR(w.key(kTypeMarker));
        VN_RETURN_IF_ERROR(w.string_value("LazyArray"));
        w.end_object();
      }
      w.end_object();
      VN_RETURN_IF_ERROR(w.key("runtime"));
      w.raw_value(it.runtime && std::isfinite(*it.runtime) ? python_float_repr(*it.runtime) : "null");
      VN_RETURN_IF_ERROR(w.key("runner_name"));
      Status s = w.string_value(it.runner_name);
      if (!s.ok()) return context(s.with_context("runner_name"));
      VN_RETURN_IF_ERROR(w.key(kTypeMarker));
      VN_RETURN_IF_ERROR(w.string_value("IterationResult"));
      w.end_object();
    }
    w.end_array();
    w.end_array();
  }
  w.end_array();
  VN_RETURN_IF_ERROR(w.key(kTypeMarker));
  VN_RETURN_IF_ERROR(w.string_value("RunResults"));
  w.end_object();
  return w.take();
}

Result<std::string> encode_feed_list(const std::vector<TensorMap>& feeds) {
  PyJsonWriter w;
  w.begin_array();
  for (size_t i = 0; i < feeds.size(); ++i) {
    w.begin_object();
    for (const NamedTensor& input : feeds[i]) {
      Status s = w.key(input.name);
      if (s.ok()) s = write_ndarray(w, input.tensor);
      if (!s.ok()) return s.with_context(fmt::format("input '{}'", input.name)).with_context(fmt::format("feed {}", i));
    }
    w.end_object();
  }
  w.end_array();
  return w.take();
}

}  // namespace

Result<Tensor> decode_polygraphy_array(const nlohmann::json& value) {
  return guarded([&]() -> Result<Tensor> { return decode_array_impl(value, 0); });
}

Result<Tensor> decode_polygraphy_array(const nlohmann::ordered_json& value) {
  return guarded([&]() -> Result<Tensor> { return decode_array_impl(value, 0); });
}

Result<RunResults> run_results_from_json(std::string_view text) {
  return guarded([&]() -> Result<RunResults> {
    VN_ASSIGN_OR_RETURN(nlohmann::ordered_json doc, parse_json(text));
    return decode_run_results(doc);
  });
}

Result<RunResults> load_run_results(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(std::string text, read_file_bytes(path));
  Result<RunResults> results = run_results_from_json(text);
  if (!results.ok()) return results.status().with_context(path.string());
  return results;
}

Result<std::string> run_results_to_json(const RunResults& results) {
  return guarded([&]() -> Result<std::string> { return encode_run_results(results); });
}

Status save_run_results(const RunResults& results, const std::filesystem::path& path) {
  Result<std::string> text = run_results_to_json(results);
  if (!text.ok()) return text.status().with_context(path.string());
  return file_write_atomic(path, *text);
}

Result<std::vector<TensorMap>> feed_list_from_json(std::string_view text) {
  return guarded([&]() -> Result<std::vector<TensorMap>> {
    VN_ASSIGN_OR_RETURN(nlohmann::ordered_json doc, parse_json(text));
    return decode_feed_list(doc);
  });
}

Result<std::vector<TensorMap>> load_feed_list(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(std::string text, read_file_bytes(path));
  Result<std::vector<TensorMap>> feeds = feed_list_from_json(text);
  if (!feeds.ok()) return feeds.status().with_context(path.string());
  return feeds;
}

Result<std::string> feed_list_to_json(const std::vector<TensorMap>& feeds) {
  return guarded([&]() -> Result<std::string> { return encode_feed_list(feeds); });
}

Status save_feed_list(const std::vector<TensorMap>& feeds, const std::filesystem::path& path) {
  Result<std::string> text = feed_list_to_json(feeds);
  if (!text.ok()) return text.status().with_context(path.string());
  return file_write_atomic(path, *text);
}

}  // namespace vn::io
