// SPDX-License-Identifier: Apache-2.0
// GridSample (opset 16): samples a 4-D input (N, C, H, W) at the normalized [-1, 1] (x, y)
// locations of grid (N, H_out, W_out, 2) with bilinear, nearest or bicubic interpolation and
// zeros, border or reflection padding. Follows PyTorch's grid_sampler_2d, which ONNX's spec and
// test data were written against: nearest rounds half to even, and bicubic applies the padding
// mode to each of its 16 taps rather than to the sampling point.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

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

Status grid_sample(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  if (x.rank() != 4) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be 4-D (N, C, H, W), got shape {}", shape_to_string(x.shape()));
  }
  if (grid.rank() != 4 || grid.dim(0) != x.dim(0) || grid.dim(3) != 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "grid must be (N, H_out, W_out, 2) with N = {}, got shape {}", x.dim(0),
                    shape_to_string(grid.shape()));
  }
  if (!dtype_is_float(grid.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "grid must be a float tensor, got {}", dtype_name(grid.dtype()));
  }
  const std::string mode_name = ctx.attr_string("mode", "bilinear");
  Interp mode;
  if (mode_name == "bilinear") {
    mode = Interp::kBilinear;
  } else if (mode_name == "nearest") {
    mode = Interp::kNearest;
  } else if (mode_name == "bicubic") {
    mode = Interp::kBicubic;
  } else {
    return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not one of bilinear, nearest, bicubic", mode_name);
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
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t oh = grid.dim(1), ow = grid.dim(2);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {n, c, oh, ow}));
  if (y->numel() == 0) return Status::OK();
  if (h == 0 || w == 0) return ctx.fail(StatusCode::kShapeMismatch, "X has an empty spatial map");
  VN_ASSIGN_OR_RETURN(std::vector<double> g, tensor_to_doubles(grid));
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t i = 0; i < oh * ow; ++i) {
        const double gx = g[static_cast<size_t>(((b * oh * ow) + i) * 2)];
        const double gy = g[static_cast<size_t>(((b * oh * ow) + i) * 2 + 1)];
        double sx = unnormalize(gx, w, align), sy = unnormalize(gy, h, align);
        // Taps (row, column, weight); out-of-range taps read 0 (zeros padding, or a bilinear
        // neighbour past the clamped edge, whose weight is 0 then).
        int64_t rows[16], cols[16];
        double weights[16];
        int taps = 0;
        if (mode == Interp::kBicubic) {
          const double fx = std::floor(sx), fy = std::floor(sy);
          double cx[4], cy[4];
          cubic_coefficients(sx - fx, cx);
          cubic_coefficients(sy - fy, cy);
          for (int r = 0; r < 4; ++r) {
            for (int q = 0; q < 4; ++q) {
              rows[taps] = tap_index(pad_coordinate(fy - 1 + r, h, padding, align), h);
              cols[taps] = tap_index(pad_coordinate(fx - 1 + q, w, padding, align), w);
              weights[taps++] = cy[r] * cx[q];
            }
          }
        } else {
          // Beyond one pixel outside the map every tap reads 0, so clamping there keeps the
          // result and the integer conversions defined (NaN reads as outside too).
          sx = pad_coordinate(sx, w, padding, align);
          sy = pad_coordinate(sy, h, padding, align);
          sx = std::isnan(sx) ? -2.0 : std::clamp(sx, -2.0, static_cast<double>(w) + 1);
          sy = std::isnan(sy) ? -2.0 : std::clamp(sy, -2.0, static_cast<double>(h) + 1);
          if (mode == Interp::kNearest) {
            rows[0] = static_cast<int64_t>(std::nearbyint(sy));
            cols[0] = static_cast<int64_t>(std::nearbyint(sx));
            weights[0] = 1.0;
            taps = 1;
          } else {
            const double fx = std::floor(sx), fy = std::floor(sy);
            const double lx = sx - fx, ly = sy - fy;
            const auto x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
            const int64_t xs[2] = {x0, x0 + 1}, ys[2] = {y0, y0 + 1};
            const double wx[2] = {1 - lx, lx}, wy[2] = {1 - ly, ly};
            for (int r = 0; r < 2; ++r) {
              for (int q = 0; q < 2; ++q) {
                rows[taps] = ys[r];
                cols[taps] = xs[q];
                weights[taps++] = wy[r] * wx[q];
              }
            }
          }
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* plane = px + (b * c + ch) * h * w;
          double acc = 0.0;
          for (int t = 0; t < taps; ++t) {
            if (rows[t] < 0 || rows[t] >= h || cols[t] < 0 || cols[t] >= w) continue;
            acc += weights[t] * static_cast<double>(plane[rows[t] * w + cols[t]]);
          }
          py[(b * c + ch) * oh * ow + i] = static_cast<T>(acc);
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_grid_sample_ops(OpRegistry& registry) { registry.add("GridSample", 16, grid_sample); }

}  // namespace vn::ops
