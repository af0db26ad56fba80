// SPDX-License-Identifier: Apache-2.0
// ConvTranspose-1/11/22 for 1-D, 2-D and 3-D inputs with groups, strides, dilations, pads,
// output_padding and output_shape.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/spatial.h"

namespace vn::ops {
namespace {

/// Output geometry of ConvTranspose along each spatial dim. Pads may come out negative when an
/// explicit output_shape exceeds the natural size: the extra positions receive only the bias.
struct TransposeGeometry {
  Shape in, kernel, strides, dilations, pads_begin, out;
};

/// floor(a / 2), as Python's `//` (the ONNX formulas use it and total padding may be negative).
int64_t floor_half(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

Result<TransposeGeometry> transpose_geometry(const KernelContext& ctx, const Shape& in, const Shape& kernel) {
  const size_t k = in.size();
  TransposeGeometry g;
  g.in = in;
  g.kernel = kernel;
  auto positive = [](const Shape& v) { return std::all_of(v.begin(), v.end(), [](int64_t d) { return d >= 1; }); };
  g.strides = ctx.attr_ints("strides", Shape(k, 1));
  g.dilations = ctx.attr_ints("dilations", Shape(k, 1));
  const Shape output_padding = ctx.attr_ints("output_padding", Shape(k, 0));
  if (g.strides.size() != k || !positive(g.strides) || g.dilations.size() != k || !positive(g.dilations)) {
    return ctx.fail(StatusCode::kInvalidModel, "strides and dilations must have {} positive entries", k);
  }
  if (output_padding.size() != k ||
      std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v < 0; })) {
    return ctx.fail(StatusCode::kInvalidModel, "output_padding must have {} non-negative entries", k);
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return ctx.fail(StatusCode::kInvalidModel, "auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                    auto_pad);
  }
  // The natural size with no padding: stride * (in - 1) + output_padding + dilated kernel.
  Shape full(k);
  for (size_t i = 0; i < k; ++i) {
    full[i] = g.strides[i] * (in[i] - 1) + output_padding[i] + (kernel[i] - 1) * g.dilations[i] + 1;
  }
  g.pads_begin.assign(k, 0);
  g.out.assign(k, 0);
  Shape target;
  if (ctx.has_attr("output_shape")) {
    target = ctx.attr_ints("output_shape");
    if (target.size() == k + 2) target.erase(target.begin(), target.begin() + 2);
    if (target.size() != k) {
      return ctx.fail(StatusCode::kInvalidModel, "output_shape has {} entries but X has {} spatial dims", target.size(),
                      k);
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < k; ++i) target.push_back(in[i] * g.strides[i]);
  }
  if (!target.empty()) {
    // ONNX ConvTranspose: total_padding = full - output_shape, split with the odd cell at the end
    // for SAME_UPPER and at the beginning otherwise.
    for (size_t i = 0; i < k; ++i) {
      const int64_t total = full[i] - target[i];
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? floor_half(total) : total - floor_half(total);
      g.out[i] = target[i];
    }
  } else {
    const Shape pads = auto_pad == "VALID" ? Shape(2 * k, 0) : ctx.attr_ints("pads", Shape(2 * k, 0));
    if (pads.size() != 2 * k || std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
      return ctx.fail(StatusCode::kInvalidModel, "pads must have {} non-negative entries (begins, then ends)", 2 * k);
    }
    for (size_t i = 0; i < k; ++i) {
      g.pads_begin[i] = pads[i];
      g.out[i] = full[i] - pads[i] - pads[k + i];
    }
  }
  for (size_t i = 0; i < k; ++i) {
    if (g.out[i] < 0) {
      return ctx.fail(StatusCode::kShapeMismatch, "spatial dim {} has a negative output size {}", i, g.out[i]);
    }
  }
  return g;
}

/// Scatters `cols` ((mg·K) × in_size, one row per (output channel, kernel offset)) into the
/// output planes y (mg × out_size): the col2im of a transposed convolution, 3-D geometry.
template <typename T>
void col2im_3d(const T* cols, int64_t channels, const TransposeGeometry& g, T* y) {
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
  for (int64_t oc = 0; oc < channels; ++oc) {
    T* yc = y + oc * out_size;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const T* row = cols;
          cols += in_size;
          for (int64_t id = 0; id < g.in[0]; ++id) {
            const int64_t od = id * g.strides[0] + kd * g.dilations[0] - g.pads_begin[0];
            if (od < 0 || od >= g.out[0]) continue;
            for (int64_t ih = 0; ih < g.in[1]; ++ih) {
              const int64_t oh = ih * g.strides[1] + kh * g.dilations[1] - g.pads_begin[1];
              if (oh < 0 || oh >= g.out[1]) continue;
              const T* src = row + (id * g.in[1] + ih) * g.in[2];
              T* dst = yc + (od * g.out[1] + oh) * g.out[2];
              for (int64_t iw = 0; iw < g.in[2]; ++iw) {
                const int64_t ow = iw * g.strides[2] + kw * g.dilations[2] - g.pads_begin[2];
                if (ow >= 0 && ow < g.out[2]) dst[ow] += src[iw];
              }
            }
          }
        }
      }
    }
  }
}

// ConvTranspose-1/11: the gradient of Conv. W is (C, M/group, k...). Each (image, group) is one
// GEMM, W_g^T (M/g·K × C/g) times X_g (C/g × input positions), followed by col2im.
Status conv_transpose(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (x.rank() < 3 || x.rank() > 5) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...) with 1 to 3 spatial dims, got {}",
                    shape_to_string(x.shape()));
  }
  if (w.rank() != x.rank()) {
    return ctx.fail(StatusCode::kShapeMismatch, "W {} must have the rank of X {}", shape_to_string(w.shape()),
                    shape_to_string(x.shape()));
  }
  if (w.dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "W ({}) must have the type of X ({})", dtype_name(w.dtype()),
                    dtype_name(x.dtype()));
  }
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t n = x.dim(0), c = x.dim(1);
  if (group < 1 || group > std::max<int64_t>(c, 1)) {
    return ctx.fail(StatusCode::kInvalidModel, "group {} must be in [1, C = {}]", group, c);
  }
  if (w.dim(0) != c || c % group != 0) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "X has {} input channels but W {} must be (C, M/group, k...) with C divisible by group={}", c,
                    shape_to_string(w.shape()), group);
  }
  const int64_t m = w.dim(1) * group;
  const Shape kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel) {
    return ctx.fail(StatusCode::kShapeMismatch, "kernel_shape attribute disagrees with W's spatial dims {}",
                    shape_to_string(kernel));
  }
  if (std::any_of(kernel.begin(), kernel.end(), [](int64_t d) { return d < 1; })) {
    return ctx.fail(StatusCode::kShapeMismatch, "W {} has an empty kernel", shape_to_string(w.shape()));
  }
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (bias && (bias->shape() != Shape{m} || bias->dtype() != x.dtype())) {
    return ctx.fail(StatusCode::kShapeMismatch, "B must be a 1-D {} tensor of {} elements, got {} {}",
                    dtype_name(x.dtype()), m, dtype_name(bias->dtype()), shape_to_string(bias->shape()));
  }
  const Shape in(x.shape().begin() + 2, x.shape().end());
  VN_ASSIGN_OR_RETURN(TransposeGeometry geo, transpose_geometry(ctx, in, kernel));
  Shape out_shape{n, m};
  out_shape.insert(out_shape.end(), geo.out.begin(), geo.out.end());
  // Lift to 3-D with leading unit dims, as the Conv loops do.
  TransposeGeometry g3 = geo;
  const size_t lead = 3 - in.size();
  for (Shape* v : {&g3.in, &g3.kernel, &g3.strides, &g3.dilations, &g3.out}) v->insert(v->begin(), lead, 1);
  g3.pads_begin.insert(g3.pads_begin.begin(), lead, 0);

  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    if (y->numel() == 0) return Status::OK();
    const int64_t cg = c / group, mg = m / group;
    const int64_t k_size = shape_numel(kernel);
    const int64_t in_size = shape_numel(in);
    const int64_t out_size = shape_numel(geo.out);
    std::vector<T> cols(static_cast<size_t>(mg * k_size * in_size));
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t img = 0; img < n; ++img) {
      for (int64_t gi = 0; gi < group; ++gi) {
        const ConstMatrixMap<T> wm(pw + gi * cg * mg * k_size, cg, mg * k_size);
        const ConstMatrixMap<T> xm(px + (img * c + gi * cg) * in_size, cg, in_size);
        MatrixMap<T> cm(cols.data(), mg * k_size, in_size);
        cm.noalias() = wm.transpose() * xm;
        col2im_3d(cols.data(), mg, g3, py + (img * m + gi * mg) * out_size);
      }
      if (bias) {
        const T* pb = bias->data<T>();
        for (int64_t oc = 0; oc < m; ++oc) ArrayMap<T>(py + (img * m + oc) * out_size, out_size) += pb[oc];
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_conv_transpose_ops(OpRegistry& registry) {
  for (int64_t v : {1, 11, 22}) registry.add("ConvTranspose", v, conv_transpose);
}

}  // namespace vn::ops
