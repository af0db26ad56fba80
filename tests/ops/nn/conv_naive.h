// SPDX-License-Identifier: Apache-2.0
// A naive direct convolution written independently of the Conv kernels (its own padding and
// output-size arithmetic, sums in double), and the check of Conv against it, shared by the Conv
// tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {

struct ConvConfig {
  Shape x = {};  // N, C, spatial...
  int64_t m = 1;
  int64_t group = 1;
  Shape kernel = {};
  Shape strides = {};    // empty: all 1
  Shape dilations = {};  // empty: all 1
  Shape pads = {};       // empty: all 0 (begins then ends)
  std::string auto_pad = "NOTSET";
  bool bias = true;
  int threads = 1;
};

/// Advances a row-major multi-index over `dims`; returns false after the last one.
inline bool next_index(std::vector<int64_t>& idx, const Shape& dims) {
  for (size_t i = dims.size(); i-- > 0;) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

inline std::vector<float> naive_conv(const ConvConfig& c, const std::vector<float>& x, const std::vector<float>& w,
                                     const std::vector<float>& b, Shape& out_shape) {
  const size_t k = c.kernel.size();
  const int64_t n = c.x[0], ch = c.x[1];
  const Shape in(c.x.begin() + 2, c.x.end());
  const Shape strides = c.strides.empty() ? Shape(k, 1) : c.strides;
  const Shape dil = c.dilations.empty() ? Shape(k, 1) : c.dilations;
  Shape pb(k, 0), pe(k, 0), out(k, 0);
  for (size_t i = 0; i < k; ++i) {
    const int64_t ek = (c.kernel[i] - 1) * dil[i] + 1;
    if (c.auto_pad == "NOTSET") {
      if (!c.pads.empty()) {
        pb[i] = c.pads[i];
        pe[i] = c.pads[k + i];
      }
      out[i] = (in[i] + pb[i] + pe[i] - ek) / strides[i] + 1;
    } else if (c.auto_pad == "VALID") {
      out[i] = (in[i] - ek) / strides[i] + 1;
    } else {
      out[i] = (in[i] + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * strides[i] + ek - in[i]);
      pb[i] = c.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
    }
  }
  out_shape = {n, c.m};
  out_shape.insert(out_shape.end(), out.begin(), out.end());
  const int64_t cg = ch / c.group, mg = c.m / c.group;
  const Shape in_strides = [&] {
    Shape s(k, 1);
    for (size_t i = k - 1; i-- > 0;) s[i] = s[i + 1] * in[i + 1];
    return s;
  }();
  const int64_t in_size = shape_numel(in), k_size = shape_numel(c.kernel);
  std::vector<float> y;
  for (int64_t img = 0; img < n; ++img) {
    for (int64_t oc = 0; oc < c.m; ++oc) {
      const int64_t g = oc / mg;
      std::vector<int64_t> o(k, 0);
      do {
        double acc = c.bias ? b[oc] : 0.0;
        for (int64_t icg = 0; icg < cg; ++icg) {
          const int64_t ic = g * cg + icg;
          std::vector<int64_t> kk(k, 0);
          int64_t kflat = 0;
          do {
            int64_t off = 0;
            bool inside = true;
            for (size_t i = 0; i < k; ++i) {
              const int64_t pos = o[i] * strides[i] - pb[i] + kk[i] * dil[i];
              inside = inside && pos >= 0 && pos < in[i];
              off += pos * in_strides[i];
            }
            if (inside) {
              acc += double(x[(img * ch + ic) * in_size + off]) * double(w[(oc * cg + icg) * k_size + kflat]);
            }
            ++kflat;
          } while (next_index(kk, c.kernel));
        }
        y.push_back(static_cast<float>(acc));
      } while (next_index(o, out));
    }
  }
  return y;
}

/// Runs Conv (opsets 1 and 11) on seeded random data as `c` says and checks it against naive_conv;
/// returns the outputs of the opset-11 run.
inline std::vector<Tensor> check_conv(const ConvConfig& c, uint32_t seed) {
  Shape w_shape = {c.m, c.x[1] / c.group};
  w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
  const std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(c.x)), seed);
  const std::vector<float> w = random_floats(static_cast<size_t>(shape_numel(w_shape)), seed + 1);
  const std::vector<float> b = random_floats(static_cast<size_t>(c.m), seed + 2);
  Shape out_shape;
  const std::vector<float> y = naive_conv(c, x, w, b, out_shape);
  std::vector<Tensor> outputs;
  for (int64_t opset : {1, 11}) {
    OpTester t("Conv", opset);
    if (c.group != 1) t.attr("group", c.group);
    if (!c.strides.empty()) t.attr("strides", c.strides);
    if (!c.dilations.empty()) t.attr("dilations", c.dilations);
    if (!c.pads.empty()) t.attr("pads", c.pads);
    if (c.auto_pad != "NOTSET") t.attr("auto_pad", c.auto_pad);
    t.attr("kernel_shape", c.kernel);
    t.input<float>(c.x, x).input<float>(w_shape, w);
    if (c.bias) t.input<float>({c.m}, b);
    t.output<float>(out_shape, y);
    t.tolerance(1e-5, 1e-4);
    t.threads(c.threads);
    SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset));
    outputs = t.run();
  }
  return outputs;
}

}  // namespace vn::ops::testing
