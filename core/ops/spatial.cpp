// SPDX-License-Identifier: Apache-2.0
#include "core/ops/spatial.h"

#include <algorithm>
#include <string>

namespace vn::ops {
namespace {

std::string list_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

Result<WindowGeometry> window_geometry(const KernelContext& ctx, const Shape& in, const Shape& kernel, bool ceil_mode,
                                       bool use_dilations) {
  const size_t k = in.size();
  WindowGeometry g;
  g.in = in;
  g.kernel = kernel;
  if (kernel.size() != k) {
    return ctx.fail(StatusCode::kInvalidModel, "kernel_shape {} has {} dims but the input has {} spatial dims",
                    list_to_string(kernel), kernel.size(), k);
  }
  for (int64_t d : kernel) {
    if (d < 1) return ctx.fail(StatusCode::kInvalidModel, "kernel_shape {} must be positive", list_to_string(kernel));
  }
  g.strides = ctx.attr_ints("strides", Shape(k, 1));
  if (g.strides.size() != k || std::any_of(g.strides.begin(), g.strides.end(), [](int64_t s) { return s < 1; })) {
    return ctx.fail(StatusCode::kInvalidModel, "strides {} must have {} positive entries", list_to_string(g.strides),
                    k);
  }
  g.dilations = use_dilations ? ctx.attr_ints("dilations", Shape(k, 1)) : Shape(k, 1);
  if (g.dilations.size() != k || std::any_of(g.dilations.begin(), g.dilations.end(), [](int64_t d) { return d < 1; })) {
    return ctx.fail(StatusCode::kInvalidModel, "dilations {} must have {} positive entries",
                    list_to_string(g.dilations), k);
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  const Shape pads = ctx.attr_ints("pads", Shape(2 * k, 0));
  if (auto_pad != "NOTSET" && std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
    return ctx.fail(StatusCode::kInvalidModel, "pads {} cannot be used with auto_pad '{}'", list_to_string(pads),
                    auto_pad);
  }
  g.pads_begin.assign(k, 0);
  g.pads_end.assign(k, 0);
  g.out.assign(k, 0);
  if (auto_pad == "NOTSET" || auto_pad == "VALID") {
    if (auto_pad == "NOTSET") {
      if (pads.size() != 2 * k || std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
        return ctx.fail(StatusCode::kInvalidModel, "pads {} must have {} non-negative entries (begins, then ends)",
                        list_to_string(pads), 2 * k);
      }
      for (size_t i = 0; i < k; ++i) {
        g.pads_begin[i] = pads[i];
        g.pads_end[i] = pads[k + i];
      }
    }
    for (size_t i = 0; i < k; ++i) {
      const int64_t padded = in[i] + g.pads_begin[i] + g.pads_end[i];
      const int64_t span = padded - g.effective_kernel(i);
      if (span < 0) {
        return ctx.fail(StatusCode::kShapeMismatch,
                        "spatial dim {} has size {} ({} with padding), smaller than the dilated kernel size {}", i,
                        in[i], padded, g.effective_kernel(i));
      }
      int64_t out = (ceil_mode ? (span + g.strides[i] - 1) / g.strides[i] : span / g.strides[i]) + 1;
      if (ceil_mode && (out - 1) * g.strides[i] >= in[i] + g.pads_begin[i]) --out;
      g.out[i] = out;
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < k; ++i) {
      const int64_t out = (in[i] + g.strides[i] - 1) / g.strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * g.strides[i] + g.effective_kernel(i) - in[i]);
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pads_end[i] = total - g.pads_begin[i];
      g.out[i] = out;
    }
  } else {
    return ctx.fail(StatusCode::kInvalidModel, "auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                    auto_pad);
  }
  return g;
}

WindowGeometry lift_to_3d(const WindowGeometry& g) {
  VN_CHECK(g.rank() <= 3, "lift_to_3d of a {}-D window", g.rank());
  WindowGeometry l = g;
  const size_t lead = 3 - g.rank();
  auto lift = [lead](Shape& v, int64_t fill) { v.insert(v.begin(), lead, fill); };
  lift(l.in, 1);
  lift(l.kernel, 1);
  lift(l.strides, 1);
  lift(l.dilations, 1);
  lift(l.pads_begin, 0);
  lift(l.pads_end, 0);
  lift(l.out, 1);
  return l;
}

}  // namespace vn::ops
