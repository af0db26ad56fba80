// SPDX-License-Identifier: Apache-2.0
// Pooling: MaxPool (with the optional Indices output), AveragePool, LpPool, GlobalAveragePool,
// GlobalMaxPool and GlobalLpPool over 1-D to 3-D spatial dims, MaxUnpool and MaxRoiPool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/spatial.h"

namespace vn::ops {
namespace {

struct PoolSetup {
  WindowGeometry geo;  // as given, for the output shape
  WindowGeometry g3;   // lifted to 3-D for the loops
  Shape out_shape;
  int64_t planes = 0;  // N * C
};

Result<PoolSetup> pool_setup(const KernelContext& ctx, bool use_dilations) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...) with at least one spatial dim, got {}",
                    shape_to_string(x.shape()));
  }
  if (x.rank() > 5) {
    return ctx.fail(StatusCode::kUnsupportedAttr, "{}-D pooling is not supported (1-D to 3-D are)", x.rank() - 2);
  }
  if (!ctx.has_attr("kernel_shape")) return ctx.fail(StatusCode::kInvalidModel, "attribute kernel_shape is required");
  const Shape in(x.shape().begin() + 2, x.shape().end());
  const bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  PoolSetup s;
  VN_ASSIGN_OR_RETURN(s.geo, window_geometry(ctx, in, ctx.attr_ints("kernel_shape"), ceil_mode, use_dilations));
  s.g3 = lift_to_3d(s.geo);
  s.out_shape = {x.dim(0), x.dim(1)};
  s.out_shape.insert(s.out_shape.end(), s.geo.out.begin(), s.geo.out.end());
  s.planes = x.dim(0) * x.dim(1);
  return s;
}

/// Calls f(od, oh, ow, start) for each output position of a 3-D geometry, where start[i] is the
/// window's first (possibly padded, negative) input coordinate.
template <typename F>
void for_each_window(const WindowGeometry& g, F&& f) {
  for (int64_t od = 0; od < g.out[0]; ++od) {
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        const int64_t start[3] = {od * g.strides[0] - g.pads_begin[0], oh * g.strides[1] - g.pads_begin[1],
                                  ow * g.strides[2] - g.pads_begin[2]};
        f(start);
      }
    }
  }
}

/// The taps of a window along one axis that fall inside the input: the first one's position, the
/// step between them (the dilation) and how many there are.
struct Taps {
  int64_t first = 0;
  int64_t step = 1;
  int64_t count = 0;
};

/// The taps k in [0, kernel) at start + k * dilation that lie in [0, in) along axis i.
Taps taps_inside(const WindowGeometry& g, int i, int64_t start) {
  const int64_t d = g.dilations[i];
  const int64_t k0 = start >= 0 ? 0 : (-start + d - 1) / d;
  const int64_t k1 = std::min(g.kernel[i], start >= g.in[i] ? 0 : (g.in[i] - start + d - 1) / d);
  return {start + k0 * d, d, std::max<int64_t>(k1 - k0, 0)};
}

/// The taps along axis i that lie in the padded extent [-pads_begin, in + pads_end): what
/// count_include_pad counts. A ceil_mode window's taps past the end padding are not counted
/// (PyTorch and the ONNX reference agree on this).
int64_t taps_in_padding(const WindowGeometry& g, int i, int64_t start) {
  const int64_t limit = g.in[i] + g.pads_end[i];
  if (start >= limit) return 0;
  return std::min(g.kernel[i], (limit - start + g.dilations[i] - 1) / g.dilations[i]);
}

/// Calls f(value) for every tap of the window at `start` that lies inside plane `xp` of a 3-D
/// geometry; returns how many there were.
template <typename T, typename F>
int64_t for_each_tap(const T* xp, const WindowGeometry& g, const int64_t* start, F&& f) {
  const Taps t[3] = {taps_inside(g, 0, start[0]), taps_inside(g, 1, start[1]), taps_inside(g, 2, start[2])};
  for (int64_t a = 0; a < t[0].count; ++a) {
    for (int64_t b = 0; b < t[1].count; ++b) {
      const T* row = xp + ((t[0].first + a * t[0].step) * g.in[1] + t[1].first + b * t[1].step) * g.in[2];
      for (int64_t c = 0; c < t[2].count; ++c) f(static_cast<double>(row[t[2].first + c * t[2].step]));
    }
  }
  return t[0].count * t[1].count * t[2].count;
}

/// The larger of `best` and `v`, NaN once either is NaN (NaN wins and stays, as in PyTorch).
template <typename T>
inline T nan_max(T best, T v) {
  return v > best || v != v ? v : best;
}

/// The sum of x[0, n) in double, in eight interleaved partial sums (a vector's worth of
/// independent additions rather than one chain); exact unless the floats' exponents lie ~29 bits
/// apart, whatever the order.
template <typename T>
double sum_as_double(const T* x, int64_t n) {
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(x[i + j]);
  }
  double tail = 0.0;
  for (; i < n; ++i) tail += static_cast<double>(x[i]);
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7])) + tail;
}

/// max_pool without indices over one plane `xp` of a 3-D geometry into `y`: each window's largest
/// cell, NaN when any cell is NaN, the type's lowest value when the window lies entirely in the
/// padding. Separable: for each output row the window's input rows are first reduced to one row
/// (a vectorizable pass over whole rows), whose windows along the width then give the outputs
/// (a vectorizable pass per tap); the bounds are clipped once per row and per tap, not tested per
/// cell.
template <typename T>
void max_pool_plane(const T* xp, const WindowGeometry& g, T* y) {
  const auto clip = [&](int i, int64_t o, int64_t& lo, int64_t& step, int64_t& count) {
    const Taps t = taps_inside(g, i, o * g.strides[i] - g.pads_begin[i]);
    lo = t.first;
    step = t.step;
    count = t.count;
  };
  const int64_t in_w = g.in[2];
  std::vector<T> rows(static_cast<size_t>(in_w));
  // The windows along the width that have no tap inside the input.
  std::vector<int64_t> empty;
  for (int64_t ow = 0; ow < g.out[2]; ++ow) {
    if (taps_inside(g, 2, ow * g.strides[2] - g.pads_begin[2]).count == 0) empty.push_back(ow);
  }
  for (int64_t od = 0; od < g.out[0]; ++od) {
    int64_t d0, ds, dn;
    clip(0, od, d0, ds, dn);
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      int64_t h0, hs, hn;
      clip(1, oh, h0, hs, hn);
      if (dn * hn == 0) {
        std::fill_n(y, g.out[2], std::numeric_limits<T>::lowest());
        y += g.out[2];
        continue;
      }
      T* r = rows.data();
      for (int64_t a = 0; a < dn; ++a) {
        for (int64_t b = 0; b < hn; ++b) {
          const T* row = xp + ((d0 + a * ds) * g.in[1] + h0 + b * hs) * in_w;
          if (a == 0 && b == 0) {
            std::copy_n(row, in_w, r);
          } else {
            for (int64_t i = 0; i < in_w; ++i) r[i] = nan_max(r[i], row[i]);
          }
        }
      }
      // Along the width, one pass per tap over the outputs it reaches (vectorizable): from -inf,
      // which any value (-inf too) replaces; a window with no tap inside gets the lowest value.
      std::fill_n(y, g.out[2], -std::numeric_limits<T>::infinity());
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const int64_t off = kw * g.dilations[2] - g.pads_begin[2];
        const auto [lo, hi] = outputs_inside(off, g.strides[2], in_w, g.out[2]);
        if (g.strides[2] == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) y[ow] = nan_max(y[ow], r[ow + off]);
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) y[ow] = nan_max(y[ow], r[ow * g.strides[2] + off]);
        }
      }
      for (const int64_t ow : empty) y[ow] = std::numeric_limits<T>::lowest();
      y += g.out[2];
    }
  }
}

Status max_pool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(PoolSetup s, pool_setup(ctx, true));
  const bool want_indices = output_requested(ctx, 1);
  const bool column_major = ctx.attr_int("storage_order", 0) != 0;
  using Types = TypeList<float, double, int8_t, uint8_t>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), s.out_shape));
    int64_t* pi = nullptr;
    if (want_indices) {
      VN_ASSIGN_OR_RETURN(Tensor * ind, ctx.allocate_output(1, DType::kInt64, s.out_shape));
      pi = ind->numel() > 0 ? ind->mutable_data<int64_t>() : nullptr;
    }
    if (y->numel() == 0) return Status::OK();
    const WindowGeometry& g = s.g3;
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
    const int threads =
        threads_for_work(ctx.num_threads(), s.planes * out_plane * shape_numel(g.kernel), kMemoryBoundGrain);
    parallel_for(threads, s.planes, [&](int64_t p) {
      const T* xp = px + p * in_size;
      int64_t o = p * out_plane;
      if constexpr (std::is_floating_point_v<T>) {
        if (!pi) {
          max_pool_plane(xp, g, py + o);
          return;
        }
      }
      for_each_window(g, [&](const int64_t* start) {
        T best{};
        int64_t best_at = -1;
        for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
          const int64_t id = start[0] + kd * g.dilations[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
            const int64_t ih = start[1] + kh * g.dilations[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
              const int64_t iw = start[2] + kw * g.dilations[2];
              if (iw < 0 || iw >= g.in[2]) continue;
              const int64_t at = (id * g.in[1] + ih) * g.in[2] + iw;
              const T v = xp[at];
              bool take = best_at < 0 || v > best;
              if constexpr (std::is_floating_point_v<T>) {
                // NaN wins and stays, as in PyTorch; a plain '>' would skip it.
                take = take || (std::isnan(v) && !std::isnan(best));
                take = take && !(best_at >= 0 && std::isnan(best));
              }
              if (take) {
                best = v;
                best_at = column_major ? id + ih * g.in[0] + iw * g.in[0] * g.in[1] : at;
              }
            }
          }
        }
        // A window entirely inside the padding (possible only when a pad reaches the dilated
        // kernel size) has no input element: it yields the type's lowest value and index -1.
        py[o] = best_at < 0 ? std::numeric_limits<T>::lowest() : best;
        if (pi) pi[o] = best_at < 0 ? -1 : p * in_size + best_at;
        ++o;
      });
    });
    return Status::OK();
  });
}

/// One plane of AveragePool: each output is the double sum of the window's taps inside the input,
/// in (depth, row, column) order, divided by their count (or by the taps inside the padded extent
/// when `include_pad`) and rounded once. A row of outputs is summed together, tap by tap, each
/// tap added to the outputs whose window has it inside the input: the same sums in the same
/// order as window by window, but in loops over contiguous outputs that vectorize.
template <typename T>
void average_pool_plane(const T* xp, const WindowGeometry& g, bool include_pad, T* y) {
  const int64_t in_w = g.in[2], out_w = g.out[2], sw = g.strides[2], dw = g.dilations[2];
  // Separable, as max_pool_plane: the window's input rows are summed into one row of doubles,
  // whose windows along the width then give the sums. Sums of a few floats in double are exact
  // whatever their order unless their exponents lie ~29 bits apart.
  std::vector<double> rows(static_cast<size_t>(in_w)), sum(static_cast<size_t>(out_w));
  std::vector<double> cols(static_cast<size_t>(out_w));  // taps counted along W
  for (int64_t ow = 0; ow < out_w; ++ow) {
    const int64_t start = ow * sw - g.pads_begin[2];
    cols[static_cast<size_t>(ow)] =
        static_cast<double>(include_pad ? taps_in_padding(g, 2, start) : taps_inside(g, 2, start).count);
  }
  for (int64_t od = 0; od < g.out[0]; ++od) {
    const int64_t sd = od * g.strides[0] - g.pads_begin[0];
    const Taps td = taps_inside(g, 0, sd);
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const int64_t sh = oh * g.strides[1] - g.pads_begin[1];
      const Taps th = taps_inside(g, 1, sh);
      double* r = rows.data();
      std::fill(rows.begin(), rows.end(), 0.0);
      for (int64_t a = 0; a < td.count; ++a) {
        for (int64_t b = 0; b < th.count; ++b) {
          const T* row = xp + ((td.first + a * td.step) * g.in[1] + th.first + b * th.step) * in_w;
          for (int64_t i = 0; i < in_w; ++i) r[i] += static_cast<double>(row[i]);
        }
      }
      double* acc = sum.data();
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const int64_t off = kw * dw - g.pads_begin[2];
        const auto [lo, hi] = outputs_inside(off, sw, in_w, out_w);
        if (sw == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) acc[ow] += r[ow + off];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) acc[ow] += r[ow * sw + off];
        }
      }
      // Counts are small integers: their product in double is exact, as the integer product was.
      const double rows_counted = static_cast<double>(
          include_pad ? taps_in_padding(g, 0, sd) * taps_in_padding(g, 1, sh) : td.count * th.count);
      T* yr = y + (od * g.out[1] + oh) * out_w;
      const double* c = cols.data();
      for (int64_t ow = 0; ow < out_w; ++ow) yr[ow] = static_cast<T>(acc[ow] / (rows_counted * c[ow]));
    }
  }
}

// AveragePool-1 to 11; from 19 (kDilations) with dilations.
template <bool kDilations>
Status average_pool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(PoolSetup s, pool_setup(ctx, kDilations));
  const bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    // average_pool_plane writes every output of its plane.
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), s.out_shape));
    if (y->numel() == 0) return Status::OK();
    const WindowGeometry& g = s.g3;
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
    const int threads =
        threads_for_work(ctx.num_threads(), s.planes * out_plane * shape_numel(g.kernel), kMemoryBoundGrain);
    parallel_for(threads, s.planes,
                 [&](int64_t p) { average_pool_plane(px + p * in_size, g, include_pad, py + p * out_plane); });
    return Status::OK();
  });
}

template <bool kMax>
Status global_pool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...), got {}", shape_to_string(x.shape()));
  }
  Shape out_shape = x.shape();
  std::fill(out_shape.begin() + 2, out_shape.end(), 1);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t size = shape_product(x.shape(), 2, x.shape().size());
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    if (size == 0 && planes > 0) {
      return ctx.fail(StatusCode::kShapeMismatch, "cannot pool over empty spatial dims of {}",
                      shape_to_string(x.shape()));
    }
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    const T* px = x.data<T>();
    T* py = planes > 0 ? y->mutable_data<T>() : nullptr;
    const int threads = threads_for_work(ctx.num_threads(), planes * size, kMemoryBoundGrain);
    parallel_for(threads, planes, [&](int64_t p) {
      const T* xp = px + p * size;
      if constexpr (kMax) {
        T best = xp[0];
        for (int64_t i = 1; i < size && !std::isnan(best); ++i)
          best = (xp[i] > best || std::isnan(xp[i])) ? xp[i] : best;
        py[p] = best;
      } else {
        py[p] = static_cast<T>(sum_as_double(xp, size) / static_cast<double>(size));
      }
    });
    return Status::OK();
  });
}

// ---- LpPool ------------------------------------------------------------------------------------

/// The p attribute: a float in LpPool-1/GlobalLpPool-1, an int from version 2.
template <bool kFloatP>
Result<double> read_p(const KernelContext& ctx) {
  const double p = kFloatP ? static_cast<double>(ctx.attr_float("p", 2.0f)) : static_cast<double>(ctx.attr_int("p", 2));
  if (!(p > 0.0) || std::isinf(p))
    return ctx.fail(StatusCode::kInvalidModel, "p must be positive and finite, got {}", p);
  return p;
}

/// (sum |x|^p)^(1/p) accumulated in double; p = 1 and 2 avoid pow.
struct LpAccumulator {
  double p;
  double sum = 0.0;
  void add(double v) {
    const double a = std::abs(v);
    sum += p == 1.0 ? a : (p == 2.0 ? a * a : std::pow(a, p));
  }
  double result() const { return p == 1.0 ? sum : (p == 2.0 ? std::sqrt(sum) : std::pow(sum, 1.0 / p)); }
};

// LpPool-1/2/11: padded cells count as 0 and add nothing. LpPool-18 (kDilations) added dilations
// and ceil_mode (which pool_setup reads at every version; it is absent before 18).
template <bool kFloatP, bool kDilations>
Status lp_pool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(const double p, read_p<kFloatP>(ctx));
  VN_ASSIGN_OR_RETURN(PoolSetup s, pool_setup(ctx, kDilations));
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), s.out_shape));
    if (y->numel() == 0) return Status::OK();
    const WindowGeometry& g = s.g3;
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    int64_t o = 0;
    for (int64_t plane = 0; plane < s.planes; ++plane) {
      const T* xp = px + plane * in_size;
      for_each_window(g, [&](const int64_t* start) {
        LpAccumulator acc{p};
        for_each_tap(xp, g, start, [&](double v) { acc.add(v); });
        py[o++] = static_cast<T>(acc.result());
      });
    }
    return Status::OK();
  });
}

template <bool kFloatP>
Status global_lp_pool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(const double p, read_p<kFloatP>(ctx));
  if (x.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...), got {}", shape_to_string(x.shape()));
  }
  Shape out_shape = x.shape();
  std::fill(out_shape.begin() + 2, out_shape.end(), 1);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t size = shape_product(x.shape(), 2, x.shape().size());
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    const T* px = x.data<T>();
    T* py = planes > 0 ? y->mutable_data<T>() : nullptr;
    for (int64_t plane = 0; plane < planes; ++plane) {
      LpAccumulator acc{p};
      for (int64_t i = 0; i < size; ++i) acc.add(static_cast<double>(px[plane * size + i]));
      py[plane] = static_cast<T>(acc.result());
    }
    return Status::OK();
  });
}

// ---- MaxUnpool ---------------------------------------------------------------------------------

// MaxUnpool-9/11: scatters X into a zero tensor at the flat positions in I (MaxPool's Indices,
// which count over the whole tensor, N and C included). The positions refer to the inferred shape,
// (in - 1) * stride + kernel - pad_begin - pad_end per dim. An optional output_shape input (no
// smaller than the inferred shape, which is then computed without pads) pads that result with
// zeros at the end of each spatial dim, as the ONNX reference implementation does.
Status max_unpool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (x.rank() < 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...) with at least one spatial dim, got {}",
                    shape_to_string(x.shape()));
  }
  if (indices.dtype() != DType::kInt64 || indices.shape() != x.shape()) {
    return ctx.fail(StatusCode::kShapeMismatch, "I must be an int64 tensor of X's shape {}, got {} {}",
                    shape_to_string(x.shape()), dtype_name(indices.dtype()), shape_to_string(indices.shape()));
  }
  if (!ctx.has_attr("kernel_shape")) return ctx.fail(StatusCode::kInvalidModel, "attribute kernel_shape is required");
  const size_t k = static_cast<size_t>(x.rank() - 2);
  const Shape kernel = ctx.attr_ints("kernel_shape");
  const Shape strides = ctx.attr_ints("strides", Shape(k, 1));
  const bool has_output_shape = ctx.input_count() > 2 && ctx.has_input(2);
  const Shape pads = has_output_shape ? Shape(2 * k, 0) : ctx.attr_ints("pads", Shape(2 * k, 0));
  if (kernel.size() != k || strides.size() != k || pads.size() != 2 * k) {
    return ctx.fail(StatusCode::kInvalidModel,
                    "kernel_shape ({} values), strides ({}) and pads ({}) must match X's {} spatial dims",
                    kernel.size(), strides.size(), pads.size(), k);
  }
  Shape inferred = {x.dim(0), x.dim(1)};
  for (size_t i = 0; i < k; ++i) {
    const int64_t d = (x.dim(static_cast<int64_t>(i + 2)) - 1) * strides[i] + kernel[i] - pads[i] - pads[k + i];
    if (kernel[i] < 1 || strides[i] < 1 || d < 0) {
      return ctx.fail(StatusCode::kInvalidModel,
                      "spatial dim {}: kernel {}, stride {} and pads ({}, {}) give no valid output size", i, kernel[i],
                      strides[i], pads[i], pads[k + i]);
    }
    inferred.push_back(d);
  }
  Shape out_shape = inferred;
  if (has_output_shape) {
    VN_ASSIGN_OR_RETURN(out_shape, input_int64s(ctx, 2, "output_shape"));
    bool fits = out_shape.size() == inferred.size() && out_shape[0] == x.dim(0) && out_shape[1] == x.dim(1);
    for (size_t i = 2; fits && i < out_shape.size(); ++i) fits = out_shape[i] >= inferred[i];
    if (!fits) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "output_shape {} must have X's rank, N and C, and be no smaller than the inferred shape {}",
                      shape_to_string(out_shape), shape_to_string(inferred));
    }
  }
  const int64_t inferred_numel = shape_numel(inferred);
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    const T* px = x.data<T>();
    const int64_t* pi = indices.data<int64_t>();
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (pi[i] < 0 || pi[i] >= inferred_numel) {
        return ctx.fail(StatusCode::kInvalidModel, "index I[{}] = {} is outside the unpooled shape {} of {} elements",
                        i, pi[i], shape_to_string(inferred), inferred_numel);
      }
      // Re-linearize the index from the inferred shape into the (possibly larger) output shape.
      int64_t rem = pi[i], flat = 0, scale = 1;
      for (size_t d = inferred.size(); d-- > 0;) {
        flat += (rem % inferred[d]) * scale;
        rem /= inferred[d];
        scale *= out_shape[d];
      }
      py[flat] = px[i];
    }
    return Status::OK();
  });
}

// ---- MaxRoiPool --------------------------------------------------------------------------------

// MaxRoiPool-1 (Fast R-CNN RoI pooling, as in Caffe and ONNX Runtime): each RoI row
// [batch, x1, y1, x2, y2] is scaled by spatial_scale and rounded half away from zero, forced to at
// least 1x1, and split into pooled_shape bins [floor(i * size / pooled), ceil((i + 1) * size /
// pooled)) clipped to the image; each bin yields its maximum, or 0 when empty. Bin bounds are
// computed in float like those implementations, so the same cells are selected. Unlike ONNX
// Runtime, whose running maximum starts at FLT_MIN (the smallest positive float), a bin of negative
// values yields its true maximum.
Status max_roi_pool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  if (x.rank() != 4) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, H, W), got {}", shape_to_string(x.shape()));
  }
  if (rois.rank() != 2 || rois.dim(1) != 5 || rois.dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kShapeMismatch, "rois must be a (num_rois, 5) {} tensor, got {} {}",
                    dtype_name(x.dtype()), dtype_name(rois.dtype()), shape_to_string(rois.shape()));
  }
  const Shape pooled = ctx.attr_ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1) {
    return ctx.fail(StatusCode::kInvalidModel, "attribute pooled_shape must be two positive values (height, width)");
  }
  const float scale = ctx.attr_float("spatial_scale", 1.0f);
  const int64_t batch = x.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t num_rois = rois.dim(0);
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {num_rois, channels, pooled[0], pooled[1]}));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    const T* pr = rois.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t r = 0; r < num_rois; ++r) {
      const T* roi = pr + r * 5;
      const double b = static_cast<double>(roi[0]);
      if (!(b >= 0 && b < static_cast<double>(batch))) {
        return ctx.fail(StatusCode::kInvalidModel, "RoI {} has batch index {}, outside [0, {})", r, b, batch);
      }
      const auto coord = [&](int i) { return static_cast<int64_t>(std::round(static_cast<float>(roi[i]) * scale)); };
      const int64_t x1 = coord(1), y1 = coord(2), x2 = coord(3), y2 = coord(4);
      const auto bin_h = static_cast<float>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<float>(pooled[0]);
      const auto bin_w = static_cast<float>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<float>(pooled[1]);
      const T* image = px + static_cast<int64_t>(b) * channels * height * width;
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = image + c * height * width;
        for (int64_t ph = 0; ph < pooled[0]; ++ph) {
          const int64_t h0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(ph * bin_h)) + y1, 0, height);
          const int64_t h1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + y1, 0, height);
          for (int64_t pw = 0; pw < pooled[1]; ++pw) {
            const int64_t w0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(pw * bin_w)) + x1, 0, width);
            const int64_t w1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + x1, 0, width);
            T best = T(0);
            bool any = false;
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) {
                const T v = plane[h * width + w];
                if (!any || v > best || std::isnan(v)) best = v;
                any = true;
                if (std::isnan(best)) break;
              }
            }
            *py++ = best;
          }
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_pool_ops(OpRegistry& registry) {
  // Version 22 of every pooling op only added bfloat16, which the float dispatch refuses.
  for (int64_t v : {1, 8, 10, 11, 12, 22}) registry.add("MaxPool", v, max_pool);
  for (int64_t v : {1, 7, 10, 11}) registry.add("AveragePool", v, average_pool<false>);
  for (int64_t v : {19, 22}) registry.add("AveragePool", v, average_pool<true>);
  for (int64_t v : {1, 22}) {
    registry.add("GlobalAveragePool", v, global_pool<false>);
    registry.add("GlobalMaxPool", v, global_pool<true>);
  }
  registry.add("LpPool", 1, lp_pool<true, false>);
  for (int64_t v : {2, 11}) registry.add("LpPool", v, lp_pool<false, false>);
  for (int64_t v : {18, 22}) registry.add("LpPool", v, lp_pool<false, true>);
  registry.add("GlobalLpPool", 1, global_lp_pool<true>);
  for (int64_t v : {2, 22}) registry.add("GlobalLpPool", v, global_lp_pool<false>);
  for (int64_t v : {9, 11, 22}) registry.add("MaxUnpool", v, max_unpool);
  for (int64_t v : {1, 22}) registry.add("MaxRoiPool", v, max_roi_pool);
}

}  // namespace vn::ops
