// SPDX-License-Identifier: Apache-2.0
// Cast and CastLike between numeric, bool and string types with numpy astype semantics (float to
// int truncates toward zero, NaN and out-of-range values saturate, anything to bool is "non-zero");
// float8, float4e2m1, int4/uint4 and int2/uint2 targets follow core/ir/narrow_types.h, with the
// node's saturate and round_mode.
// Floats narrow to float16/bfloat16 with one round-to-nearest-even step; numbers print as numpy's
// str() does and strings parse as decimal or scientific literals, INF and NaN included.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

// ---------------------------------------------------------------------------------------------
// Narrowing to float16/bfloat16 without double rounding.

/// `d` rounded to float with round-to-odd: an inexact result gets its last mantissa bit set, so
/// that a second rounding to a type with at least two fewer mantissa bits (float16, bfloat16)
/// equals a single correct rounding of `d`.
float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (!std::isfinite(f) || static_cast<double>(f) == d) return f;
  if (std::abs(static_cast<double>(f)) > std::abs(d)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits |= 1u;
  std::memcpy(&f, &bits, sizeof bits);
  return f;
}

template <typename To, typename From>
To narrow_float(From v) {
  return To(round_to_odd_float(static_cast<double>(v)));
}

/// True for casts that tensor_cast would round twice (through float) into float16/bfloat16.
bool needs_direct_narrowing(DType from, DType to) {
  if (to != DType::kFloat16 && to != DType::kBFloat16) return false;
  return from == DType::kFloat64 || from == DType::kInt32 || from == DType::kInt64 || from == DType::kUInt32 ||
         from == DType::kUInt64;
}

// ---------------------------------------------------------------------------------------------
// Numbers to strings, as numpy's str() of one element.

/// Shortest scientific digits of v that read back to the same T: {"47892547", -1} for 0.47892547.
template <typename T>
std::pair<std::string, int> shortest_digits(T v) {
  char buf[64];
  std::string s;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    s.assign(buf, r.ptr);
  } else {
    // float16/bfloat16: the fewest significant digits that round-trip through the type.
    const float f = static_cast<float>(v);
    for (int precision = 0; precision < 9; ++precision) {
      const auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific, precision);
      s.assign(buf, r.ptr);
      if (static_cast<float>(T(std::strtof(s.c_str(), nullptr))) == f) break;
    }
  }
  const size_t e = s.find('e');
  const int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (s[i] >= '0' && s[i] <= '9') digits += s[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  return {digits, exponent};
}

// numpy prints floats positionally for 1e-4 <= |v| < 1e16 (with at least one decimal, "100.0")
// and in scientific notation otherwise ("1e-05", "1.5e+16").
template <typename T>
std::string float_to_string(T value) {
  const auto v = static_cast<double>(value);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string out = std::signbit(v) ? "-" : "";
  if (v == 0.0) return out + "0.0";
  const auto [digits, exponent] = shortest_digits(value);
  const double magnitude = std::abs(v);
  if (magnitude >= 1e16 || magnitude < 1e-4) {
    out.append(digits, 0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1, std::string::npos);
    out.append(exponent < 0 ? "e-" : "e+");
    const int e = std::abs(exponent);
    if (e < 10) out.push_back('0');
    return out.append(std::to_string(e));
  }
  const auto n = static_cast<int>(digits.size());
  if (exponent < 0) {
    out.append("0.").append(static_cast<size_t>(-exponent - 1), '0').append(digits);
  } else if (exponent + 1 >= n) {
    out.append(digits).append(static_cast<size_t>(exponent + 1 - n), '0').append(".0");
  } else {
    const auto point = static_cast<size_t>(exponent + 1);
    out.append(digits, 0, point).append(".").append(digits, point, std::string::npos);
  }
  return out;
}

template <typename T>
std::string to_string_element(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    return float_to_string(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Strings to numbers.

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

/// Parses a decimal/scientific literal, "INF"/"+INF"/"-INF"/"NaN" in any case; nullopt otherwise.
std::optional<double> parse_double(std::string_view text) {
  const std::string s(trim(text));
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

template <typename T>
std::optional<T> from_string_element(const std::string& s) {
  if constexpr (std::is_same_v<T, float>) {
    const std::string t(trim(s));
    char* end = nullptr;
    const float v = std::strtof(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size()) return std::nullopt;
    return v;
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Integer literals parse exactly; "100.5" follows the float path and truncates (numpy).
    const std::string_view t = trim(s);
    T v{};
    const char* first = t.data() + (!t.empty() && t[0] == '+' ? 1 : 0);
    const auto r = std::from_chars(first, t.data() + t.size(), v);
    if (r.ec == std::errc() && r.ptr == t.data() + t.size()) return v;
    const std::optional<double> d = parse_double(s);
    if (!d) return std::nullopt;
    return saturate_cast<T>(*d);
  } else {
    const std::optional<double> d = parse_double(s);
    if (!d) return std::nullopt;
    if constexpr (std::is_same_v<T, bool>) {
      return *d != 0.0;
    } else if constexpr (std::is_same_v<T, double>) {
      return *d;
    } else {
      return narrow_float<T>(*d);
    }
  }
}

// ---------------------------------------------------------------------------------------------

/// Casts into a narrow type with `options` (saturate, round_mode): integers exactly (wrapping into
/// int4/int2), everything else through its exact double value. Strings parse as for other targets.
Status cast_to_narrow(KernelContext& ctx, const Tensor& x, DType to, const NarrowCastOptions& options) {
  const NarrowFormat format = *dtype_narrow_format(to);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.shape()));
  auto* out = static_cast<uint8_t*>(y->mutable_raw());
  const int64_t n = x.numel();
  if (x.dtype() == DType::kString) {
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      const std::optional<double> v = parse_double(in[i]);
      if (!v) {
        return ctx.fail(StatusCode::kInvalidArgument,
                        "string '{}' at flat position {} is not a number (expected e.g. 3.14, 1e-5, INF or NaN)", in[i],
                        i);
      }
      out[i] = narrow_encode(format, *v, options);
    }
    return Status::OK();
  }
  if (dtype_is_integer(x.dtype()) || x.dtype() == DType::kBool) {
    // int64 and uint64 alike: the modular conversion keeps the low bits that wrapping reads, and
    // for the float targets every value beyond 2^53 saturates (e8m0 aside, whose rounding of such
    // values goes through the nearest double).
    if (x.dtype() == DType::kUInt64 && !narrow_is_integer(format)) {
      const uint64_t* in = x.data<uint64_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = narrow_encode(format, static_cast<double>(in[i]), options);
      return Status::OK();
    }
    VN_ASSIGN_OR_RETURN(std::vector<int64_t> values, tensor_to_int64s(x.dtype() == DType::kBool
                                                                          ? tensor_cast(x, DType::kUInt8).value()
                                                                          : x));
    for (int64_t i = 0; i < n; ++i) out[i] = narrow_encode_int(format, values[static_cast<size_t>(i)], options);
    return Status::OK();
  }
  VN_ASSIGN_OR_RETURN(std::vector<double> values, tensor_to_doubles(x));
  for (int64_t i = 0; i < n; ++i) out[i] = narrow_encode(format, values[static_cast<size_t>(i)], options);
  return Status::OK();
}

Status cast_to(KernelContext& ctx, const Tensor& x, DType to, const NarrowCastOptions& options = {}) {
  const DType from = x.dtype();
  if (from == to) {
    ctx.set_output(0, x);
    return Status::OK();
  }
  if (dtype_is_narrow(to)) return cast_to_narrow(ctx, x, to, options);
  if (dtype_is_narrow(from) && to == DType::kString) {
    return ctx.fail(StatusCode::kUnsupportedDType, "cast from {} to string is not supported", dtype_name(from));
  }
  if (from != DType::kString && to != DType::kString && !needs_direct_narrowing(from, to)) {
    Result<Tensor> y = tensor_cast(x, to);
    if (!y.ok()) return y.status().with_node(ctx.node().ref(ctx.node_index()));
    ctx.set_output(0, std::move(y).value());
    return Status::OK();
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.shape()));
  const int64_t n = x.numel();
  if (to == DType::kString) {
    std::string* out = y->mutable_data<std::string>();
    using Sources = TypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                             uint16_t, uint32_t, uint64_t, bool>;
    return dispatch_types(Sources{}, ctx, from, [&]<typename T>() {
      const T* in = x.data<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = to_string_element(in[i]);
      return Status::OK();
    });
  }
  using Targets = TypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                           uint16_t, uint32_t, uint64_t, bool>;
  if (from == DType::kString) {
    const std::string* in = x.data<std::string>();
    return dispatch_types(Targets{}, ctx, to, [&]<typename T>() {
      T* out = y->mutable_data<T>();
      for (int64_t i = 0; i < n; ++i) {
        const std::optional<T> v = from_string_element<T>(in[i]);
        if (!v) {
          return ctx.fail(StatusCode::kInvalidArgument,
                          "string '{}' at flat position {} is not a number (expected e.g. 3.14, 1e-5, INF or NaN)",
                          in[i], i);
        }
        out[i] = *v;
      }
      return Status::OK();
    });
  }
  using Sources = TypeList<double, int32_t, int64_t, uint32_t, uint64_t>;
  return dispatch_types(Sources{}, ctx, from, [&]<typename From>() {
    const From* in = x.data<From>();
    if (to == DType::kFloat16) {
      Eigen::half* out = y->mutable_data<Eigen::half>();
      for (int64_t i = 0; i < n; ++i) out[i] = narrow_float<Eigen::half>(in[i]);
    } else {
      Eigen::bfloat16* out = y->mutable_data<Eigen::bfloat16>();
      for (int64_t i = 0; i < n; ++i) out[i] = narrow_float<Eigen::bfloat16>(in[i]);
    }
    return Status::OK();
  });
}

// Cast-1: `to` is the TensorProto data type name as a string.
Status cast_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  static constexpr std::pair<std::string_view, DType> kNames[] = {
      {"FLOAT", DType::kFloat32},   {"UINT8", DType::kUInt8},      {"INT8", DType::kInt8},
      {"UINT16", DType::kUInt16},   {"INT16", DType::kInt16},      {"INT32", DType::kInt32},
      {"INT64", DType::kInt64},     {"STRING", DType::kString},    {"BOOL", DType::kBool},
      {"FLOAT16", DType::kFloat16}, {"DOUBLE", DType::kFloat64},   {"UINT32", DType::kUInt32},
      {"UINT64", DType::kUInt64},   {"BFLOAT16", DType::kBFloat16}};
  const std::string to = ctx.attr_string("to", "");
  for (const auto& [name, dtype] : kNames) {
    if (name == to) return cast_to(ctx, ctx.input(0), dtype);
  }
  return ctx.fail(StatusCode::kInvalidModel, "attribute to='{}' is not a known data type name", to);
}

// Cast-6+: `to` is the TensorProto data type number.
Status cast_6(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (!ctx.has_attr("to")) return ctx.fail(StatusCode::kInvalidModel, "attribute to is required");
  const int64_t to = ctx.attr_int("to", 0);
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int32_t>(to));
  if (!dtype) return ctx.fail(StatusCode::kUnsupportedDType, "cast to ONNX data type {} is not supported", to);
  return cast_to(ctx, ctx.input(0), *dtype);
}

// Cast-19 and later: saturate (19) decides how float8 targets treat values beyond their range and
// round_mode (24) how float8e8m0 targets round (core/ir/narrow_types.h); for other targets neither
// changes the result.
Result<NarrowCastOptions> narrow_options(const KernelContext& ctx, bool has_round_mode) {
  NarrowCastOptions o;
  o.saturate = ctx.attr_int("saturate", 1) != 0;
  if (!has_round_mode) return o;
  const std::string mode = ctx.attr_string("round_mode", "up");
  if (mode == "up") {
    o.rounding = E8M0Rounding::kUp;
  } else if (mode == "down") {
    o.rounding = E8M0Rounding::kDown;
  } else if (mode == "nearest") {
    o.rounding = E8M0Rounding::kNearest;
  } else {
    return ctx.fail(StatusCode::kInvalidModel, "round_mode '{}' is not one of up, down, nearest", mode);
  }
  return o;
}

Status cast_19(KernelContext& ctx, bool has_round_mode) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (!ctx.has_attr("to")) return ctx.fail(StatusCode::kInvalidModel, "attribute to is required");
  VN_ASSIGN_OR_RETURN(NarrowCastOptions options, narrow_options(ctx, has_round_mode));
  const int64_t to = ctx.attr_int("to", 0);
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int32_t>(to));
  if (!dtype) return ctx.fail(StatusCode::kUnsupportedDType, "cast to ONNX data type {} is not supported", to);
  return cast_to(ctx, ctx.input(0), *dtype, options);
}

// CastLike-15: the target type is that of input 1, whose values are not read. From 19 on, as
// cast_19 for saturate and (24) round_mode.
Status cast_like(KernelContext& ctx, bool has_saturate, bool has_round_mode) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  NarrowCastOptions options;
  if (has_saturate) {
    VN_ASSIGN_OR_RETURN(options, narrow_options(ctx, has_round_mode));
  }
  return cast_to(ctx, ctx.input(0), ctx.input(1).dtype(), options);
}

}  // namespace

void register_cast_ops(OpRegistry& registry) {
  registry.add("Cast", 1, cast_1);
  for (int64_t v : {6, 9, 13}) registry.add("Cast", v, cast_6);
  // 19 added float8 and saturate, 21 int4/uint4, 23 float4e2m1, 24 float8e8m0 and round_mode, 25
  // int2/uint2; 28's cases in ONNX 1.23's suite (int4 and int2 targets wrap) are what cast_to computes.
  for (int64_t v : {19, 21, 23}) registry.add("Cast", v, [](KernelContext& ctx) { return cast_19(ctx, false); });
  for (int64_t v : {24, 25, 28}) registry.add("Cast", v, [](KernelContext& ctx) { return cast_19(ctx, true); });
  registry.add("CastLike", 15, [](KernelContext& ctx) { return cast_like(ctx, false, false); });
  for (int64_t v : {19, 21, 23}) {
    registry.add("CastLike", v, [](KernelContext& ctx) { return cast_like(ctx, true, false); });
  }
  for (int64_t v : {24, 25}) registry.add("CastLike", v, [](KernelContext& ctx) { return cast_like(ctx, true, true); });
}

}  // namespace vn::ops
