// SPDX-License-Identifier: Apache-2.0
// GridSample: samples X (N, C, D1, ..., Dr) at the normalized [-1, 1] locations of grid
// (N, O1, ..., Or, r) with (bi)linear, nearest or (bi)cubic interpolation and zeros, border or
// reflection padding; version 16 is 2-D only, 20 and later any r. Follows PyTorch's grid samplers,
// which ONNX's spec and test data were written against: nearest rounds half to even (in 3-D too,
// as ONNX 1.23's expected values do, where PyTorch 1.13 rounded half away from zero), and cubic
// applies the padding mode to each of its taps rather than to the sampling point. AffineGrid makes such a grid from
// affine matrices.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

enum class Interp { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

/// Maps a normalized coordinate in [-1, 1] to pixel units.
double unnormalize(double n, int64_t size, bool align_corners) {
  const auto s = static_cast<double>(size);
  return align_corners ? (n + 1) / 2 * (s - 1) : ((n + 1) * s - 1) / 2;
}

/// Reflects x into [twice_low / 2, twice_high / 2] (PyTorch reflect_coordinates).
double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const bool even_flips = std::fmod(std::floor(x / span), 2.0) == 0.0;
  return even_flips ? extra + lo : span - extra + lo;
}

/// Applies border or reflection padding to a pixel coordinate (zeros leaves it as is).
double pad_coordinate(double x, int64_t size, Padding padding, bool align_corners) {
  const double hi = static_cast<double>(size - 1);
  if (padding == Padding::kBorder) return std::clamp(x, 0.0, hi);
  if (padding == Padding::kReflection) {
    x = align_corners ? reflect(x, 0, 2 * hi) : reflect(x, -1, 2 * static_cast<double>(size) - 1);
    return std::clamp(x, 0.0, hi);
  }
  return x;
}

/// A tap coordinate as an index, or -1 when it lies outside [0, size) or is not finite.
int64_t tap_index(double v, int64_t size) {
  if (!(v >= 0) || !(v < static_cast<double>(size))) return -1;
  return static_cast<int64_t>(v);
}

void cubic_coefficients(double t, double c[4]) {
  constexpr double A = -0.75;
  const double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
  c[0] = ((A * x0 - 5 * A) * x0 + 8 * A) * x0 - 4 * A;
  c[1] = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1;
  c[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;
  c[3] = ((A * x3 - 5 * A) * x3 + 8 * A) * x3 - 4 * A;
}

/// One spatial dimension's taps for a sampling coordinate: indices (-1 when outside) and weights.
struct AxisTaps {
  int64_t index[4];
  double weight[4];
  int count = 0;
};

/// The taps of unnormalized coordinate `v` along a dimension of `size` (PyTorch's grid sampler:
/// linear and nearest pad the coordinate, cubic pads each of its four taps).
AxisTaps axis_taps(double v, int64_t size, Interp mode, Padding padding, bool align) {
  AxisTaps t;
  if (mode == Interp::kBicubic) {
    const double f = std::floor(v);
    cubic_coefficients(v - f, t.weight);
    for (int q = 0; q < 4; ++q) t.index[q] = tap_index(pad_coordinate(f - 1 + q, size, padding, align), size);
    t.count = 4;
    return t;
  }
  // Beyond one pixel outside the map every tap reads 0, so clamping there keeps the result and
  // the integer conversions defined (NaN reads as outside too).
  v = pad_coordinate(v, size, padding, align);
  v = std::isnan(v) ? -2.0 : std::clamp(v, -2.0, static_cast<double>(size) + 1);
  if (mode == Interp::kNearest) {
    t.index[0] = static_cast<int64_t>(std::nearbyint(v));
    t.weight[0] = 1.0;
    t.count = 1;
  } else {
    const double f = std::floor(v);
    t.index[0] = static_cast<int64_t>(f);
    t.index[1] = t.index[0] + 1;
    t.weight[0] = 1 - (v - f);
    t.weight[1] = v - f;
    t.count = 2;
  }
  for (int q = 0; q < t.count; ++q) {
    if (t.index[q] < 0 || t.index[q] >= size) t.index[q] = -1;
  }
  return t;
}

/// GridSample over any number r of spatial dimensions: X (N, C, D1, ..., Dr) and grid
/// (N, O1, ..., Or, r) whose last axis lists the coordinates innermost dimension first (x, y, z).
/// `kVersion16` takes the 2-D-only version 16 with its mode names bilinear and bicubic; from
/// version 20 they are linear and cubic.
template <bool kVersion16>
Status grid_sample(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  if (kVersion16 ? x.rank() != 4 : x.rank() < 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be {}, got shape {}",
                    kVersion16 ? "4-D (N, C, H, W)" : "(N, C, D1, ..., Dr) with r >= 1", shape_to_string(x.shape()));
  }
  const int64_t r = x.rank() - 2;
  if (grid.rank() != x.rank() || grid.dim(0) != x.dim(0) || grid.dim(r + 1) != r) {
    return ctx.fail(StatusCode::kShapeMismatch, "grid must be (N, {}, {}) with N = {}, got shape {}",
                    r == 2 ? "H_out, W_out" : "D1_out, ..., Dr_out", r, x.dim(0), shape_to_string(grid.shape()));
  }
  if (!dtype_is_float(grid.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "grid must be a float tensor, got {}", dtype_name(grid.dtype()));
  }
  const std::string mode_name = ctx.attr_string("mode", kVersion16 ? "bilinear" : "linear");
  const char* linear_name = kVersion16 ? "bilinear" : "linear";
  const char* cubic_name = kVersion16 ? "bicubic" : "cubic";
  Interp mode;
  if (mode_name == linear_name) {
    mode = Interp::kBilinear;
  } else if (mode_name == "nearest") {
    mode = Interp::kNearest;
  } else if (mode_name == cubic_name) {
    mode = Interp::kBicubic;
  } else {
    return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not one of {}, nearest, {}", mode_name, linear_name,
                    cubic_name);
  }
  const std::string padding_name = ctx.attr_string("padding_mode", "zeros");
  Padding padding;
  if (padding_name == "zeros") {
    padding = Padding::kZeros;
  } else if (padding_name == "border") {
    padding = Padding::kBorder;
  } else if (padding_name == "reflection") {
    padding = Padding::kReflection;
  } else {
    return ctx.fail(StatusCode::kInvalidModel, "padding_mode '{}' is not one of zeros, border, reflection",
                    padding_name);
  }
  const bool align = ctx.attr_int("align_corners", 0) != 0;
  // Each output point reads 1, 2^r or 4^r taps; beyond 3-D (64 cubic taps) that grows past any
  // model's use, so a hostile rank cannot make the loops run for hours.
  if (r > 3 && (mode == Interp::kBicubic || r > 6)) {
    return ctx.fail(StatusCode::kUnsupportedAttr, "GridSample over {} spatial dimensions in {} mode is not implemented",
                    r, mode_name);
  }
  const int64_t n = x.dim(0), c = x.dim(1);
  const auto ur = static_cast<size_t>(r);
  const Shape dims(x.shape().begin() + 2, x.shape().end());
  Shape out_shape = {n, c};
  out_shape.insert(out_shape.end(), grid.shape().begin() + 1, grid.shape().end() - 1);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
  if (y->numel() == 0) return Status::OK();
  const int64_t plane_size = shape_product(dims, 0, ur);
  if (plane_size == 0) return ctx.fail(StatusCode::kShapeMismatch, "X has an empty spatial map");
  const int64_t points = shape_product(grid.shape(), 1, ur + 1);
  const Shape strides = contiguous_strides(dims);
  VN_ASSIGN_OR_RETURN(std::vector<double> g, tensor_to_doubles(grid));
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    std::vector<AxisTaps> axes(ur);
    std::vector<int64_t> offsets;
    std::vector<double> weights;
    std::vector<int> counter(ur);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t i = 0; i < points; ++i) {
        const double* gp = g.data() + static_cast<size_t>((b * points + i) * r);
        for (size_t j = 0; j < ur; ++j) {
          const double v = unnormalize(gp[ur - 1 - j], dims[j], align);
          axes[j] = axis_taps(v, dims[j], mode, padding, align);
        }
        // The taps are the product of the per-dimension ones; a tap with any index outside
        // reads 0 and is dropped.
        offsets.clear();
        weights.clear();
        std::fill(counter.begin(), counter.end(), 0);
        for (bool more = true; more;) {
          int64_t offset = 0;
          double weight = 1.0;
          for (size_t j = 0; j < ur && offset >= 0; ++j) {
            const int64_t idx = axes[j].index[counter[j]];
            offset = idx < 0 ? -1 : offset + idx * strides[j];
            weight *= axes[j].weight[counter[j]];
          }
          if (offset >= 0) {
            offsets.push_back(offset);
            weights.push_back(weight);
          }
          more = false;
          for (size_t j = ur; j-- > 0;) {
            if (++counter[j] < axes[j].count) {
              more = true;
              break;
            }
            counter[j] = 0;
          }
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* plane = px + (b * c + ch) * plane_size;
          double acc = 0.0;
          for (size_t t = 0; t < offsets.size(); ++t) acc += weights[t] * static_cast<double>(plane[offsets[t]]);
          py[(b * c + ch) * points + i] = static_cast<T>(acc);
        }
      }
    }
    return Status::OK();
  });
}

/// The base grid coordinate of index i along a dimension of `size`: pixel centres spread over
/// [-1, 1], or the corner pixels' centres on -1 and 1 with align_corners.
double base_coordinate(int64_t i, int64_t size, bool align) {
  if (align) return size == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(size - 1);
  const double step = 2.0 / static_cast<double>(size);
  return -1.0 + step / 2 + static_cast<double>(i) * step;
}

/// AffineGrid (opset 20): the GridSample grid of theta (N, 2, 3) applied to the base grid of size
/// (N, C, H, W), giving (N, H, W, 2), or of theta (N, 3, 4) and size (N, C, D, H, W), giving
/// (N, D, H, W, 3); each point is theta @ (x, y[, z], 1), x along the innermost dimension.
Status affine_grid(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& theta = ctx.input(0);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> size, input_int64s(ctx, 1, "size"));
  if (size.size() != 4 && size.size() != 5) {
    return ctx.fail(StatusCode::kInvalidModel, "size must be (N, C, H, W) or (N, C, D, H, W), got {} values",
                    size.size());
  }
  const int64_t r = static_cast<int64_t>(size.size()) - 2;
  if (theta.rank() != 3 || theta.dim(0) != size[0] || theta.dim(1) != r || theta.dim(2) != r + 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "theta must be ({}, {}, {}) for size of {} values, got {}", size[0], r,
                    r + 1, size.size(), shape_to_string(theta.shape()));
  }
  for (size_t i = 2; i < size.size(); ++i) {
    if (size[i] < 1) return ctx.fail(StatusCode::kInvalidModel, "size must be positive, got {}", size[i]);
  }
  const bool align = ctx.attr_int("align_corners", 0) != 0;
  Shape out_shape = {size[0]};
  out_shape.insert(out_shape.end(), size.begin() + 2, size.end());
  out_shape.push_back(r);
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
  return dispatch_types(Types{}, ctx, theta.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, theta.dtype(), out_shape));
    if (y->numel() == 0) return Status::OK();
    VN_ASSIGN_OR_RETURN(std::vector<double> th, tensor_to_doubles(theta));
    const int64_t points = y->numel() / (size[0] * r);
    const Shape dims(size.begin() + 2, size.end());
    T* py = y->mutable_data<T>();
    double base[4];
    for (int64_t p = 0; p < points; ++p) {
      // Homogeneous base point (x, y[, z], 1): x belongs to the innermost dimension.
      for (int64_t rem = p, j = r - 1; j >= 0; --j) {
        const int64_t extent = dims[static_cast<size_t>(j)];
        base[r - 1 - j] = base_coordinate(rem % extent, extent, align);
        rem /= extent;
      }
      base[r] = 1.0;
      for (int64_t b = 0; b < size[0]; ++b) {
        const double* m = th.data() + static_cast<size_t>(b * r * (r + 1));
        for (int64_t row = 0; row < r; ++row) {
          double v = 0.0;
          for (int64_t col = 0; col <= r; ++col) v += m[row * (r + 1) + col] * base[col];
          py[(b * points + p) * r + row] = static_cast<T>(v);
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_grid_sample_ops(OpRegistry& registry) {
  registry.add("GridSample", 16, grid_sample<true>);
  // Version 20 generalizes to N-D and renames the modes; 22 adds bfloat16, handled by both.
  for (int64_t v : {20, 22}) registry.add("GridSample", v, grid_sample<false>);
  registry.add("AffineGrid", 20, affine_grid);
}

}  // namespace vn::ops
