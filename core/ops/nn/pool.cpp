// SPDX-License-Identifier: Apache-2.0
// Pooling: MaxPool (with the optional Indices output), AveragePool, GlobalAveragePool and
// GlobalMaxPool over 1-D to 3-D spatial dims.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

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

Status max_pool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(PoolSetup s, pool_setup(ctx, true));
  const bool want_indices = output_requested(ctx, 1);
  const bool column_major = ctx.attr_int("storage_order", 0) != 0;
  using Types = TypeList<float, double, int8_t, uint8_t>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), s.out_shape));
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
    int64_t o = 0;
    for (int64_t p = 0; p < s.planes; ++p) {
      const T* xp = px + p * in_size;
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
    }
    return Status::OK();
  });
}

Status average_pool(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  // AveragePool has no dilations before opset 19.
  VN_ASSIGN_OR_RETURN(PoolSetup s, pool_setup(ctx, false));
  const bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), s.out_shape));
    if (y->numel() == 0) return Status::OK();
    const WindowGeometry& g = s.g3;
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    int64_t o = 0;
    for (int64_t p = 0; p < s.planes; ++p) {
      const T* xp = px + p * in_size;
      for_each_window(g, [&](const int64_t* start) {
        int64_t lo[3], hi[3];
        int64_t count = 1;
        for (int i = 0; i < 3; ++i) {
          lo[i] = std::max<int64_t>(start[i], 0);
          hi[i] = std::min<int64_t>(start[i] + g.kernel[i], g.in[i]);
          // count_include_pad counts the padded cells but not the part of a ceil_mode window that
          // hangs past the end padding (PyTorch and the ONNX reference agree on this).
          count *= include_pad ? std::min<int64_t>(start[i] + g.kernel[i], g.in[i] + g.pads_end[i]) - start[i]
                               : std::max<int64_t>(hi[i] - lo[i], 0);
        }
        double sum = 0.0;
        for (int64_t id = lo[0]; id < hi[0]; ++id) {
          for (int64_t ih = lo[1]; ih < hi[1]; ++ih) {
            const T* row = xp + (id * g.in[1] + ih) * g.in[2];
            for (int64_t iw = lo[2]; iw < hi[2]; ++iw) sum += static_cast<double>(row[iw]);
          }
        }
        py[o++] = static_cast<T>(sum / static_cast<double>(count));
      });
    }
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
    for (int64_t p = 0; p < planes; ++p) {
      const T* xp = px + p * size;
      if constexpr (kMax) {
        T best = xp[0];
        for (int64_t i = 1; i < size && !std::isnan(best); ++i)
          best = (xp[i] > best || std::isnan(xp[i])) ? xp[i] : best;
        py[p] = best;
      } else {
        double sum = 0.0;
        for (int64_t i = 0; i < size; ++i) sum += static_cast<double>(xp[i]);
        py[p] = static_cast<T>(sum / static_cast<double>(size));
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_pool_ops(OpRegistry& registry) {
  for (int64_t v : {1, 8, 10, 11, 12}) registry.add("MaxPool", v, max_pool);
  for (int64_t v : {1, 7, 10, 11}) registry.add("AveragePool", v, average_pool);
  registry.add("GlobalAveragePool", 1, global_pool<false>);
  registry.add("GlobalMaxPool", 1, global_pool<true>);
}

}  // namespace vn::ops
