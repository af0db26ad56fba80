// SPDX-License-Identifier: Apache-2.0
// Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample (7, 9) on N-D tensors. Resize-18
// adds the axes, keep_aspect_ratio_policy and antialias attributes, Resize-19 the
// half_pixel_symmetric transform.
//
// Every axis maps each output index to a set of input taps with weights (one tap for nearest, two
// for linear, four for cubic), following the ONNX reference implementation (onnx/backend/test/
// case/node/resize.py): the coordinate transform gives x_original, neighbours outside the input
// repeat the edge (or get weight 0 with exclude_outside), and tf_crop_and_resize samples outside
// [0, length - 1] take extrapolation_value. Nearest mode copies elements of any type; linear and
// cubic interpolate one axis at a time in double precision, innermost axis first as the reference
// does, skipping axes whose mapping is the identity.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct Params {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;
};

/// The resampling of one axis: for output index j, taps [begin[j], begin[j + 1]) of index/weight,
/// or the extrapolation value when outside[j].
struct AxisMap {
  std::vector<int64_t> begin;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
  bool identity = false;
};

/// One axis of the resize: input and output lengths, the scale and roi used by the transform.
struct AxisSpec {
  int64_t in = 0;
  int64_t out = 0;
  double scale = 1.0;
  double length_resized = 0.0;  // in * scale (the reference's output_width), or `out` given sizes
  double roi_start = 0.0;
  double roi_end = 1.0;
};

double original_coordinate(const Params& p, const AxisSpec& a, int64_t j) {
  const auto x = static_cast<double>(j);
  const auto in = static_cast<double>(a.in);
  switch (p.coord) {
    case Coord::kHalfPixel:
      return (x + 0.5) / a.scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      // Centres the sampled span when the output length was rounded from in * scale.
      const double adjustment = static_cast<double>(a.out) / a.length_resized;
      return in / 2 * (1 - adjustment) + (x + 0.5) / a.scale - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      return a.length_resized > 1 ? (x + 0.5) / a.scale - 0.5 : 0.0;
    case Coord::kAlignCorners:
      return a.length_resized == 1 ? 0.0 : x * (in - 1) / (a.length_resized - 1);
    case Coord::kAsymmetric:
      return x / a.scale;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5) / a.scale;
    case Coord::kTfCropAndResize:
      return a.length_resized > 1
                 ? a.roi_start * (in - 1) + x * (a.roi_end - a.roi_start) * (in - 1) / (a.length_resized - 1)
                 : 0.5 * (a.roi_start + a.roi_end) * (in - 1);
  }
  return 0.0;
}

/// Keys' cubic convolution weights for the four taps floor(x) - 1 .. floor(x) + 2 at fraction r.
void cubic_weights(double r, double A, double w[4]) {
  const double s0 = r + 1, s1 = r, s2 = 1 - r, s3 = 2 - r;
  w[0] = ((A * s0 - 5 * A) * s0 + 8 * A) * s0 - 4 * A;
  w[1] = ((A + 2) * s1 - (A + 3)) * s1 * s1 + 1;
  w[2] = ((A + 2) * s2 - (A + 3)) * s2 * s2 + 1;
  w[3] = ((A * s3 - 5 * A) * s3 + 8 * A) * s3 - 4 * A;
}

AxisMap build_axis_map(const Params& p, const AxisSpec& a) {
  AxisMap m;
  m.begin.reserve(static_cast<size_t>(a.out) + 1);
  m.outside.assign(static_cast<size_t>(a.out), 0);
  m.identity = a.in == a.out;
  const int64_t last = a.in - 1;
  for (int64_t j = 0; j < a.out; ++j) {
    m.begin.push_back(static_cast<int64_t>(m.index.size()));
    const double x = original_coordinate(p, a, j);
    if (p.coord == Coord::kTfCropAndResize && (x < 0 || x > static_cast<double>(last))) {
      m.outside[static_cast<size_t>(j)] = 1;
      m.identity = false;
      continue;
    }
    const double fl = std::floor(x);
    double r = x - fl;
    auto base = static_cast<int64_t>(fl);
    if (p.mode == Mode::kNearest) {
      int64_t idx = base;
      if (r > 0) {
        switch (p.nearest) {
          case Nearest::kRoundPreferFloor:
            idx = r <= 0.5 ? base : base + 1;
            break;
          case Nearest::kRoundPreferCeil:
            idx = r < 0.5 ? base : base + 1;
            break;
          case Nearest::kFloor:
            break;
          case Nearest::kCeil:
            idx = base + 1;
            break;
        }
      }
      idx = std::clamp<int64_t>(idx, 0, last);
      m.index.push_back(idx);
      m.weight.push_back(1.0);
      m.identity = m.identity && idx == j;
      continue;
    }
    // The reference picks the neighbours below x first: an integral x uses fraction 1 from x - 1.
    if (r == 0) {
      r = 1;
      --base;
    }
    // Antialiasing stretches the filter by 1 / scale when downsampling; its taps run from
    // offset `first` (relative to base) over as many neighbours as the stretched support covers,
    // weights normalized to sum 1 (the reference's _linear/_cubic_coeffs_antialias).
    std::vector<double> w(4);
    int64_t first = 0;
    int taps = 0;
    if (p.antialias) {
      const double sc = std::min(a.scale, 1.0);
      const double support = p.mode == Mode::kLinear ? 1.0 : 2.0;
      const auto start = static_cast<int64_t>(std::floor(-support / sc) + 1);
      taps = static_cast<int>(2 - 2 * start);
      w.assign(static_cast<size_t>(taps), 0.0);
      double sum = 0;
      for (int t = 0; t < taps; ++t) {
        const double d = std::fabs(sc * (static_cast<double>(start + t) - r));
        if (p.mode == Mode::kLinear) {
          w[static_cast<size_t>(t)] = std::max(0.0, 1 - d);
        } else {
          const double A = p.cubic_a;
          w[static_cast<size_t>(t)] = d <= 1  ? ((A + 2) * d - (A + 3)) * d * d + 1
                                      : d < 2 ? ((A * d - 5 * A) * d + 8 * A) * d - 4 * A
                                              : 0.0;
        }
        sum += w[static_cast<size_t>(t)];
      }
      for (double& v : w) v /= sum;
      first = base + start;
    } else if (p.mode == Mode::kLinear) {
      w[0] = 1 - r;
      w[1] = r;
      first = base;
      taps = 2;
    } else {
      cubic_weights(r, p.cubic_a, w.data());
      first = base - 1;
      taps = 4;
    }
    if (p.exclude_outside) {
      double sum = 0;
      for (int t = 0; t < taps; ++t) {
        if (first + t < 0 || first + t > last) w[static_cast<size_t>(t)] = 0;
        sum += w[static_cast<size_t>(t)];
      }
      for (int t = 0; t < taps; ++t) w[static_cast<size_t>(t)] /= sum;
    }
    const size_t start = m.index.size();
    for (int t = 0; t < taps; ++t) {
      const double wt = w[static_cast<size_t>(t)];
      if (wt == 0) continue;  // weight-0 taps do not contribute; the edge repeats beyond the input
      m.index.push_back(std::clamp<int64_t>(first + t, 0, last));
      m.weight.push_back(wt);
    }
    m.identity = m.identity && m.index.size() == start + 1 && m.index[start] == j && m.weight[start] == 1.0;
  }
  m.begin.push_back(static_cast<int64_t>(m.index.size()));
  return m;
}

/// Nearest resize: a gather of whole elements, any dtype.
Status resize_nearest(KernelContext& ctx, const Tensor& x, const std::vector<AxisMap>& maps, const Shape& out_shape,
                      const Params& p, Tensor* y) {
  Tensor fill;
  if (x.dtype() == DType::kString) {
    fill = Tensor::scalar<std::string>("");
  } else {
    Result<Tensor> f = tensor_cast(Tensor::scalar<double>(p.extrapolation), x.dtype());
    if (!f.ok()) return ctx.fail(StatusCode::kUnsupportedDType, "cannot resize {} data", dtype_name(x.dtype()));
    fill = std::move(f).value();
  }
  const auto rank = static_cast<size_t>(x.rank());
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * x.shape()[d];
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    const U extra = raw_data<U>(fill)[0];
    if (rank == 0) {
      py[0] = px[0];
      return Status::OK();
    }
    // The innermost axis's source offsets (-1: outside) once; then each output row is a gather
    // from one input row, whose offset the outer axes give.
    const AxisMap& last = maps[rank - 1];
    const int64_t row_len = out_shape[rank - 1];
    std::vector<int64_t> inner(static_cast<size_t>(row_len));
    for (size_t j = 0; j < inner.size(); ++j) inner[j] = last.outside[j] ? -1 : last.index[static_cast<size_t>(last.begin[j])];
    const bool inner_outside = std::any_of(inner.begin(), inner.end(), [](int64_t k) { return k < 0; });
    const int64_t rows = y->numel() / row_len;
    std::vector<int64_t> pos(rank - 1, 0);
    int64_t prev_base = 0;
    bool prev_outside = false;
    for (int64_t row = 0; row < rows; ++row) {
      int64_t base = 0;
      bool outside = false;
      for (size_t d = 0; d + 1 < rank; ++d) {
        const AxisMap& m = maps[d];
        const auto j = static_cast<size_t>(pos[d]);
        outside = outside || m.outside[j];
        if (!outside) base += m.index[static_cast<size_t>(m.begin[j])] * in_strides[d];
      }
      U* dst = py + row * row_len;
      // A row reads one input row through the same inner offsets: a row with the source of the
      // one before (every row of an upsampling but the first of each run) is a copy of it.
      if (row > 0 && outside == prev_outside && (outside || base == prev_base)) {
        std::copy_n(dst - row_len, row_len, dst);
      } else if (outside) {
        std::fill_n(dst, row_len, extra);
      } else if (!inner_outside) {
        const U* src = px + base;
        for (int64_t j = 0; j < row_len; ++j) dst[j] = src[inner[static_cast<size_t>(j)]];
      } else {
        for (int64_t j = 0; j < row_len; ++j) {
          const int64_t k = inner[static_cast<size_t>(j)];
          dst[j] = k < 0 ? extra : px[base + k];
        }
      }
      prev_base = base;
      prev_outside = outside;
      for (size_t d = rank - 1; d-- > 0;) {
        if (++pos[d] < out_shape[d]) break;
        pos[d] = 0;
      }
    }
    return Status::OK();
  });
}

/// Linear/cubic resize: separable passes over a double buffer, innermost axis first. The last pass
/// sums each output row in a row of doubles and stores it into y converted, rather than through a
/// double buffer of the whole output (DeepLabV3's 21 x 320 x 320 upsampling: 12.4 -> 4.3 ms at 1 thread).
Status resize_interpolate(KernelContext& ctx, const Tensor& x, const std::vector<AxisMap>& maps, const Shape& out_shape,
                          const Params& p, Tensor* y) {
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, uint8_t, int32_t, int64_t>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() {
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    const auto store = [](const double* src, int64_t n, T* dst) {
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_integral_v<T>) {
          dst[i] = saturate_cast<T>(src[i]);  // truncates toward zero, as numpy's astype
        } else {
          dst[i] = static_cast<T>(src[i]);
        }
      }
    };
    std::vector<double> cur(static_cast<size_t>(x.numel()));
    const T* px = x.data<T>();
    for (size_t i = 0; i < cur.size(); ++i) cur[i] = static_cast<double>(px[i]);
    size_t last = maps.size();  // the axis of the last pass
    for (size_t d = 0; d < maps.size() && last == maps.size(); ++d) {
      if (!maps[d].identity) last = d;
    }
    Shape shape = x.shape();
    for (size_t d = shape.size(); d-- > 0;) {
      const AxisMap& m = maps[d];
      if (m.identity) continue;
      const int64_t outer = shape_product(shape, 0, d);
      const int64_t inner = shape_product(shape, d + 1, shape.size());
      const int64_t n_in = shape[d];
      const int64_t n_out = out_shape[d];
      const bool to_y = d == last;
      std::vector<double> next(to_y ? 0 : static_cast<size_t>(outer * n_out * inner));
      // Outer slices are independent: shared among the threads, each element summed as on one.
      parallel_chunks(
          ctx.num_threads(), outer,
          [&](int64_t o0, int64_t o1) {
            std::vector<double> row(to_y ? static_cast<size_t>(inner) : 0);
            for (int64_t o = o0; o < o1; ++o) {
              for (int64_t j = 0; j < n_out; ++j) {
                double* dst = to_y ? row.data() : next.data() + (o * n_out + j) * inner;
                if (m.outside[static_cast<size_t>(j)]) {
                  std::fill_n(dst, inner, p.extrapolation);
                } else {
                  std::fill_n(dst, inner, 0.0);
                  for (int64_t t = m.begin[static_cast<size_t>(j)]; t < m.begin[static_cast<size_t>(j) + 1]; ++t) {
                    const double w = m.weight[static_cast<size_t>(t)];
                    const double* src = cur.data() + (o * n_in + m.index[static_cast<size_t>(t)]) * inner;
                    for (int64_t i = 0; i < inner; ++i) dst[i] += w * src[i];
                  }
                }
                if (to_y) store(dst, inner, py + (o * n_out + j) * inner);
              }
            }
          },
          std::max<int64_t>(1, kComputeBoundGrain / std::max<int64_t>(n_out * inner, 1)));
      if (!to_y) cur = std::move(next);
      shape[d] = n_out;
    }
    if (last == maps.size()) store(cur.data(), static_cast<int64_t>(cur.size()), py);
    return Status::OK();
  });
}

/// Runs a resize of input 0 given per-axis scales or output sizes. Given both (Resize-18's
/// keep_aspect_ratio_policy), the sizes are the output and the scales drive the transform.
Status resize_with(KernelContext& ctx, const Params& p, const std::optional<std::vector<double>>& scales,
                   const std::optional<std::vector<int64_t>>& sizes, const std::vector<double>& roi) {
  const Tensor& x = ctx.input(0);
  const auto rank = static_cast<size_t>(x.rank());
  if (rank == 0) return ctx.fail(StatusCode::kShapeMismatch, "input must have rank >= 1, got a scalar");
  if (scales && scales->size() != rank) {
    return ctx.fail(StatusCode::kShapeMismatch, "scales has {} entries but the input {} has rank {}", scales->size(),
                    shape_to_string(x.shape()), rank);
  }
  if (sizes && sizes->size() != rank) {
    return ctx.fail(StatusCode::kShapeMismatch, "sizes has {} entries but the input {} has rank {}", sizes->size(),
                    shape_to_string(x.shape()), rank);
  }
  const bool use_roi = p.coord == Coord::kTfCropAndResize && !roi.empty();
  if (use_roi && roi.size() != 2 * rank) {
    return ctx.fail(StatusCode::kShapeMismatch, "roi has {} entries but the input needs 2 * rank = {}", roi.size(),
                    2 * rank);
  }
  std::vector<AxisSpec> axes(rank);
  Shape out_shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    AxisSpec& a = axes[d];
    a.in = x.shape()[d];
    if (use_roi) {
      a.roi_start = roi[d];
      a.roi_end = roi[rank + d];
    }
    if (sizes) {
      a.out = (*sizes)[d];
      if (a.out < 0) return ctx.fail(StatusCode::kInvalidModel, "sizes[{}] is negative ({})", d, a.out);
      if (a.out > 0 && a.in == 0) {
        return ctx.fail(StatusCode::kShapeMismatch, "axis {} is empty and cannot be resized to {}", d, a.out);
      }
      a.scale = a.in == 0 ? 1.0 : static_cast<double>(a.out) / static_cast<double>(a.in);
      a.length_resized = static_cast<double>(a.out);
      if (scales) {
        a.scale = (*scales)[d];
        a.length_resized = static_cast<double>(a.in) * a.scale;
      }
    } else {
      a.scale = (*scales)[d];
      if (!(a.scale > 0) || !std::isfinite(a.scale)) {
        return ctx.fail(StatusCode::kInvalidModel, "scales[{}] must be positive and finite, got {}", d, a.scale);
      }
      // ONNX Resize: output_dimension = floor(input_dimension * (roi_end - roi_start) * scale). The
      // roi span matters only for tf_crop_and_resize; onnxruntime and onnx.reference leave it out.
      a.length_resized = static_cast<double>(a.in) * (a.roi_end - a.roi_start) * a.scale;
      if (!(a.length_resized >= 0) || a.length_resized > static_cast<double>(kMaxTensorBytes)) {
        return ctx.fail(StatusCode::kShapeMismatch, "axis {} of size {} resized by {} is out of range", d, a.in,
                        a.scale);
      }
      a.out = static_cast<int64_t>(std::floor(a.length_resized));
    }
    out_shape[d] = a.out;
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), out_shape));
  if (y->numel() == 0) return Status::OK();
  std::vector<AxisMap> maps(rank);
  for (size_t d = 0; d < rank; ++d) maps[d] = build_axis_map(p, axes[d]);
  if (p.mode == Mode::kNearest) return resize_nearest(ctx, x, maps, out_shape, p, y);
  return resize_interpolate(ctx, x, maps, out_shape, p, y);
}

Result<Mode> read_mode(const KernelContext& ctx, bool allow_cubic) {
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "nearest") return Mode::kNearest;
  if (mode == "linear") return Mode::kLinear;
  if (mode == "cubic" && allow_cubic) return Mode::kCubic;
  return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not one of nearest, linear{}", mode,
                  allow_cubic ? ", cubic" : "");
}

/// Reads a float tensor input (scales, roi) as doubles; empty when omitted.
Result<std::vector<double>> float_input(const KernelContext& ctx, size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return std::vector<double>{};
  const Tensor& t = ctx.input(i);
  if (!dtype_is_float(t.dtype()) || t.rank() > 1) {
    return ctx.fail(StatusCode::kInvalidModel, "{} must be a 1-D float tensor, got {} {}", what, dtype_name(t.dtype()),
                    shape_to_string(t.shape()));
  }
  return tensor_to_doubles(t);
}

// Opset-10 Resize and Upsample are Resize-11 with coordinate_transformation_mode "asymmetric" and
// nearest_mode "floor" (the semantics ONNX's 10 -> 11 version converter preserves).
Params legacy_params(Mode mode) {
  Params p;
  p.mode = mode;
  p.coord = Coord::kAsymmetric;
  p.nearest = Nearest::kFloor;
  return p;
}

Status upsample_with_scales(KernelContext& ctx, const std::vector<double>& scales) {
  VN_ASSIGN_OR_RETURN(Mode mode, read_mode(ctx, false));
  for (size_t d = 0; d < scales.size(); ++d) {
    if (!(scales[d] >= 1)) return ctx.fail(StatusCode::kInvalidModel, "scales[{}] = {} is below 1", d, scales[d]);
  }
  return resize_with(ctx, legacy_params(mode), scales, std::nullopt, {});
}

// Upsample-7: scales is an attribute.
Status upsample_7(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (!ctx.has_attr("scales")) return ctx.fail(StatusCode::kInvalidModel, "attribute scales is required");
  const std::vector<float> s = ctx.attr_floats("scales");
  return upsample_with_scales(ctx, std::vector<double>(s.begin(), s.end()));
}

// Upsample-9 and Resize-10: scales is input 1.
Status upsample_9(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  VN_ASSIGN_OR_RETURN(std::vector<double> scales, float_input(ctx, 1, "scales"));
  return upsample_with_scales(ctx, scales);
}

Status resize_10(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  VN_ASSIGN_OR_RETURN(Mode mode, read_mode(ctx, false));
  VN_ASSIGN_OR_RETURN(std::vector<double> scales, float_input(ctx, 1, "scales"));
  return resize_with(ctx, legacy_params(mode), scales, std::nullopt, {});
}

/// Resize-18's scales, sizes and roi given for the axes of the `axes` attribute only, spread over
/// every axis: scale 1, the input's size and the whole extent [0, 1] elsewhere.
Status spread_over_axes(const KernelContext& ctx, const std::vector<int64_t>& axes, const Tensor& x,
                        std::vector<double>& scales, std::optional<std::vector<int64_t>>& sizes,
                        std::vector<double>& roi) {
  const int64_t rank = x.rank();
  const size_t n = axes.size();
  if ((!scales.empty() && scales.size() != n) || (sizes && sizes->size() != n) || (!roi.empty() && roi.size() != 2 * n)) {
    return ctx.fail(StatusCode::kShapeMismatch, "scales, sizes and roi must give one value (roi: two) per axis of "
                                                "axes {}",
                    shape_to_string(axes));
  }
  std::vector<double> full_scales(static_cast<size_t>(rank), 1.0);
  std::vector<int64_t> full_sizes(x.shape().begin(), x.shape().end());
  std::vector<double> full_roi(static_cast<size_t>(2 * rank), 0.0);
  for (int64_t d = 0; d < rank; ++d) full_roi[static_cast<size_t>(rank + d)] = 1.0;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < n; ++i) {
    VN_ASSIGN_OR_RETURN(const int64_t a, normalize_axis(ctx, axes[i], rank));
    if (seen[static_cast<size_t>(a)]) return ctx.fail(StatusCode::kInvalidModel, "axes names axis {} twice", a);
    seen[static_cast<size_t>(a)] = true;
    if (!scales.empty()) full_scales[static_cast<size_t>(a)] = scales[i];
    if (sizes) full_sizes[static_cast<size_t>(a)] = (*sizes)[i];
    if (!roi.empty()) {
      full_roi[static_cast<size_t>(a)] = roi[i];
      full_roi[static_cast<size_t>(rank + a)] = roi[n + i];
    }
  }
  if (!scales.empty()) scales = std::move(full_scales);
  if (sizes) sizes = std::move(full_sizes);
  if (!roi.empty()) roi = std::move(full_roi);
  return Status::OK();
}

// Resize-11 and 13: roi, scales and sizes inputs; scales and sizes are exclusive (an empty
// scales tensor counts as absent). Opset 13 made roi and scales optional and dropped
// tf_half_pixel_for_nn, which this kernel still accepts. From 18 (kVersion), axes,
// keep_aspect_ratio_policy and antialias (linear and cubic only); from 19, half_pixel_symmetric.
template <int kVersion>
Status resize_11(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  Params p;
  VN_ASSIGN_OR_RETURN(p.mode, read_mode(ctx, true));
  const std::string coord = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  static constexpr std::pair<std::string_view, Coord> kCoords[] = {
      {"half_pixel", Coord::kHalfPixel},       {"pytorch_half_pixel", Coord::kPytorchHalfPixel},
      {"align_corners", Coord::kAlignCorners}, {"asymmetric", Coord::kAsymmetric},
      {"tf_half_pixel_for_nn", Coord::kTfHalfPixelForNn}, {"tf_crop_and_resize", Coord::kTfCropAndResize},
      {"half_pixel_symmetric", Coord::kHalfPixelSymmetric}};
  bool found = false;
  for (const auto& [name, value] : kCoords) {
    if (name == coord && (value != Coord::kHalfPixelSymmetric || kVersion >= 19)) {
      p.coord = value;
      found = true;
    }
  }
  if (!found) return ctx.fail(StatusCode::kInvalidModel, "coordinate_transformation_mode '{}' is not supported", coord);
  const std::string nearest = ctx.attr_string("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor") {
    p.nearest = Nearest::kRoundPreferFloor;
  } else if (nearest == "round_prefer_ceil") {
    p.nearest = Nearest::kRoundPreferCeil;
  } else if (nearest == "floor") {
    p.nearest = Nearest::kFloor;
  } else if (nearest == "ceil") {
    p.nearest = Nearest::kCeil;
  } else {
    return ctx.fail(StatusCode::kInvalidModel,
                    "nearest_mode '{}' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil", nearest);
  }
  p.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75f);
  p.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
  p.extrapolation = ctx.attr_float("extrapolation_value", 0.0f);
  VN_ASSIGN_OR_RETURN(std::vector<double> roi, float_input(ctx, 1, "roi"));
  VN_ASSIGN_OR_RETURN(std::vector<double> scales, float_input(ctx, 2, "scales"));
  VN_ASSIGN_OR_RETURN(auto sizes, optional_input_int64s(ctx, 3, "sizes"));
  if (sizes && sizes->empty()) sizes.reset();
  if (!scales.empty() && sizes) return ctx.fail(StatusCode::kInvalidModel, "only one of scales and sizes may be given");
  if (scales.empty() && !sizes) return ctx.fail(StatusCode::kInvalidModel, "one of scales and sizes must be given");
  std::optional<std::vector<double>> s;
  if constexpr (kVersion >= 18) {
    p.antialias = ctx.attr_int("antialias", 0) != 0;
    if (p.antialias && p.mode == Mode::kNearest) {
      return ctx.fail(StatusCode::kUnsupportedAttr, "antialias=1 is defined for linear and cubic modes, not nearest");
    }
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);
    if (ctx.has_attr("axes")) {
      axes = ctx.attr_ints("axes");
      VN_RETURN_IF_ERROR(spread_over_axes(ctx, axes, x, scales, sizes, roi));
    }
    const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
      return ctx.fail(StatusCode::kInvalidModel,
                      "keep_aspect_ratio_policy '{}' is not one of stretch, not_larger, not_smaller", policy);
    }
    if (sizes && policy != "stretch") {
      // One scale for the named axes, the smallest (not_larger) or largest (not_smaller) of their
      // size ratios; their sizes are then rounded half up from it.
      double common = policy == "not_larger" ? INFINITY : 0.0;
      for (int64_t a : axes) {
        const int64_t d = a < 0 ? a + x.rank() : a;
        const double ratio = static_cast<double>((*sizes)[d]) / static_cast<double>(x.dim(d));
        common = policy == "not_larger" ? std::min(common, ratio) : std::max(common, ratio);
      }
      s = std::vector<double>(static_cast<size_t>(x.rank()), 1.0);
      for (int64_t a : axes) {
        const int64_t d = a < 0 ? a + x.rank() : a;
        (*s)[d] = common;
        (*sizes)[d] = static_cast<int64_t>(std::floor(common * static_cast<double>(x.dim(d)) + 0.5));
      }
    }
  }
  if (!scales.empty()) s = scales;
  return resize_with(ctx, p, s, sizes, roi);
}

}  // namespace

void register_resize_ops(OpRegistry& registry) {
  registry.add("Resize", 10, resize_10);
  for (int64_t v : {11, 13}) registry.add("Resize", v, resize_11<11>);
  registry.add("Resize", 18, resize_11<18>);
  registry.add("Resize", 19, resize_11<19>);
  registry.add("Upsample", 7, upsample_7);
  registry.add("Upsample", 9, upsample_9);
}

}  // namespace vn::ops
