// SPDX-License-Identifier: Apache-2.0
#include "core/data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Core>

#include "core/common/logging.h"
#include "core/data/numpy_random.h"

namespace vn::data {
namespace {

ValRange range_for(const std::string& name, DType dtype, const SyntheticOptions& options) {
  ValRange r;
  if (auto it = options.val_ranges.find(name); it != options.val_ranges.end()) {
    r = it->second;
  } else if (auto def = options.val_ranges.find(""); def != options.val_ranges.end()) {
    r = def->second;
  }
  if (dtype_is_float(dtype)) {
    if (options.float_min) r.min = *options.float_min;
    if (options.float_max) r.max = *options.float_max;
  } else {
    if (options.int_min) r.min = static_cast<double>(*options.int_min);
    if (options.int_max) r.max = static_cast<double>(*options.int_max);
  }
  return r;
}

// Rounds a double to the nearest value (ties to even) of a binary format with `mantissa_bits`
// explicit bits and minimum normal exponent `min_exp`, returned as a float that holds it exactly.
// numpy casts float64 straight to float16; going through float first would round twice and can
// differ in the last bit.
float round_to_float_grid(double v, int mantissa_bits, int min_exp) {
  if (!std::isfinite(v) || v == 0.0) return static_cast<float>(v);
  const int e = std::max(std::ilogb(v), min_exp);
  const double ulp = std::ldexp(1.0, e - mantissa_bits);
  return static_cast<float>(std::nearbyint(v / ulp) * ulp);
}

template <typename T, typename U>
Status fill_bounded(Tensor& t, const std::string& name, ValRange range, NumpyRandomState& rng) {
  // numpy draws an unsigned offset into [low, high] and adds it to low in the unsigned domain.
  const double lo_d = std::ceil(range.min);
  const double hi_d = std::floor(range.max);
  const double tmin = static_cast<double>(std::numeric_limits<T>::lowest());
  const double tmax = static_cast<double>(std::numeric_limits<T>::max());
  if (lo_d > hi_d || lo_d < tmin || hi_d > tmax) {
    return make_error(StatusCode::kInvalidArgument, "value range [{}, {}] of input '{}' does not fit {}", range.min,
                      range.max, name, dtype_name(t.dtype()));
  }
  const auto lo = static_cast<T>(lo_d);
  const auto hi = static_cast<T>(hi_d);
  const U span = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  T* out = t.mutable_data<T>();
  NumpyRandomState::BitBuffer buffer;
  for (int64_t i = 0; i < t.numel(); ++i) {
    U v;
    if constexpr (sizeof(U) == 1) {
      v = rng.bounded_uint8(span, buffer);
    } else if constexpr (sizeof(U) == 2) {
      v = rng.bounded_uint16(span, buffer);
    } else if constexpr (sizeof(U) == 4) {
      v = rng.bounded_uint32(span);
    } else {
      v = rng.bounded_uint64(span);
    }
    out[i] = static_cast<T>(static_cast<U>(static_cast<U>(lo) + v));
  }
  return Status::OK();
}

Status fill(Tensor& t, const std::string& name, ValRange range, NumpyRandomState& rng) {
  switch (t.dtype()) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kFloat16:
    case DType::kBFloat16: {
      if (!(range.max >= range.min) || !std::isfinite(range.max - range.min)) {
        return make_error(StatusCode::kInvalidArgument, "value range [{}, {}] of input '{}' is not a finite interval",
                          range.min, range.max, name);
      }
      const double scale = range.max - range.min;
      dispatch_dtype(t.dtype(), [&]<typename T>() {
        if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Eigen::half> ||
                      std::is_same_v<T, Eigen::bfloat16>) {
          T* out = t.mutable_data<T>();
          for (int64_t i = 0; i < t.numel(); ++i) {
            const double v = rng.random_sample() * scale + range.min;
            if constexpr (std::is_floating_point_v<T>) {
              out[i] = static_cast<T>(v);
            } else if constexpr (std::is_same_v<T, Eigen::half>) {
              out[i] = T(round_to_float_grid(v, 10, -14));
            } else {
              out[i] = T(round_to_float_grid(v, 7, -126));
            }
          }
        }
      });
      return Status::OK();
    }
    case DType::kBool: {
      NumpyRandomState::BitBuffer buffer;
      const bool lo = range.min > 0.0;
      const bool hi = range.max >= 1.0;
      bool* out = t.mutable_data<bool>();
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = lo == hi ? lo : rng.random_bool(buffer);
      return Status::OK();
    }
    case DType::kInt8: return fill_bounded<int8_t, uint8_t>(t, name, range, rng);
    case DType::kUInt8: return fill_bounded<uint8_t, uint8_t>(t, name, range, rng);
    case DType::kInt16: return fill_bounded<int16_t, uint16_t>(t, name, range, rng);
    case DType::kUInt16: return fill_bounded<uint16_t, uint16_t>(t, name, range, rng);
    case DType::kInt32: return fill_bounded<int32_t, uint32_t>(t, name, range, rng);
    case DType::kUInt32: return fill_bounded<uint32_t, uint32_t>(t, name, range, rng);
    case DType::kInt64: return fill_bounded<int64_t, uint64_t>(t, name, range, rng);
    case DType::kUInt64: return fill_bounded<uint64_t, uint64_t>(t, name, range, rng);
    case DType::kString:
      return make_error(StatusCode::kUnsupportedDType,
                        "input '{}' is a string tensor: synthetic data cannot be generated; use --load-inputs", name);
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
    case DType::kFloat4E2M1:
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kInt2:
    case DType::kUInt2:
      // Polygraphy's generator has no such types to follow: the values it would draw are unknown.
      return make_error(StatusCode::kUnsupportedDType,
                        "input '{}' is a {} tensor: synthetic data is not generated for it; use --load-inputs", name,
                        dtype_name(t.dtype()));
  }
  return make_error(StatusCode::kInternal, "unhandled dtype");
}

}  // namespace

Result<Shape> resolve_input_shape(const ValueInfo& input, const std::map<std::string, Shape>& input_shapes) {
  if (auto it = input_shapes.find(input.name); it != input_shapes.end()) {
    const Shape& given = it->second;
    if (input.shape) {
      const auto& dims = *input.shape;
      bool ok = dims.size() == given.size();
      for (size_t i = 0; ok && i < dims.size(); ++i) {
        if (dims[i].known() && dims[i].value != given[i]) ok = false;
      }
      if (!ok) {
        return make_error(StatusCode::kShapeMismatch, "--input-shapes gives {} for '{}', but the model declares {}",
                          shape_to_string(given), input.name, input.type_string());
      }
    }
    for (int64_t d : given) {
      if (d < 0) return make_error(StatusCode::kInvalidArgument, "--input-shapes for '{}' has a negative dim", input.name);
    }
    return given;
  }
  if (!input.shape) {
    return make_error(StatusCode::kInvalidArgument, "input '{}' has no declared shape; give one with --input-shapes {}:[...]",
                      input.name, input.name);
  }
  Shape s;
  bool dynamic = false;
  for (const Dim& d : *input.shape) {
    if (d.known()) {
      s.push_back(d.value);
    } else {
      dynamic = true;
      s.push_back(1);
    }
  }
  if (dynamic) {
    VN_LOG_WARNING("input '{}' has dynamic shape {}; using {} (set it with --input-shapes)", input.name,
                   input.type_string(), shape_to_string(s));
  }
  return s;
}

Result<std::vector<TensorMap>> generate_feeds(const Graph& graph, const SyntheticOptions& options) {
  std::vector<const ValueInfo*> inputs = graph.runtime_inputs();
  std::vector<Shape> shapes;
  for (const ValueInfo* in : inputs) {
    if (!in->dtype) {
      return make_error(StatusCode::kInvalidModel, "input '{}' has no declared element type", in->name);
    }
    VN_ASSIGN_OR_RETURN(Shape s, resolve_input_shape(*in, options.input_shapes));
    shapes.push_back(std::move(s));
  }
  // Every size is checked before the first allocation, and the error names the input.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Result<int64_t> numel = shape_numel_checked(shapes[i], *inputs[i]->dtype);
    if (!numel.ok()) return numel.status().with_context(fmt::format("input '{}'", inputs[i]->name));
  }
  std::vector<TensorMap> feeds;
  for (int it = 0; it < options.iterations; ++it) {
    NumpyRandomState rng(options.seed + static_cast<uint32_t>(it));
    TensorMap feed;
    for (size_t i = 0; i < inputs.size(); ++i) {
      VN_ASSIGN_OR_RETURN(Tensor t, Tensor::create(*inputs[i]->dtype, shapes[i]));
      VN_RETURN_IF_ERROR(fill(t, inputs[i]->name, range_for(inputs[i]->name, *inputs[i]->dtype, options), rng));
      feed.set(inputs[i]->name, std::move(t));
    }
    feeds.push_back(std::move(feed));
  }
  return feeds;
}

}  // namespace vn::data
