// SPDX-License-Identifier: Apache-2.0
// RoiAlign (opsets 10 and 16): each region of interest is split into output_height x
// output_width bins; each bin averages (or takes the max of) bilinear samples on a regular grid.
// Follows ONNX's reference implementation and onnxruntime, including their "max" mode, which
// takes the maximum over samples of the largest weighted corner term of each sample.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// One bilinear sample: four input offsets within a channel plane and their weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample bilinear_sample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  // Samples more than one pixel outside the map contribute 0 (Caffe2/ONNX RoiAlign).
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

Status roi_align_with(KernelContext& ctx, bool half_pixel) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& batch_indices = ctx.input(2);
  if (x.rank() != 4) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be 4-D (N, C, H, W), got shape {}", shape_to_string(x.shape()));
  }
  if (rois.rank() != 2 || rois.dim(1) != 4 || rois.dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kShapeMismatch, "rois must be a (num_rois, 4) {} tensor, got {} {}",
                    dtype_name(x.dtype()), dtype_name(rois.dtype()), shape_to_string(rois.shape()));
  }
  if (batch_indices.rank() != 1 || batch_indices.dim(0) != rois.dim(0) || !dtype_is_integer(batch_indices.dtype())) {
    return ctx.fail(StatusCode::kShapeMismatch, "batch_indices must be a 1-D integer tensor of {} elements, got {} {}",
                    rois.dim(0), dtype_name(batch_indices.dtype()), shape_to_string(batch_indices.shape()));
  }
  const std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not avg or max", mode);
  const bool avg = mode == "avg";
  const int64_t out_h = ctx.attr_int("output_height", 1);
  const int64_t out_w = ctx.attr_int("output_width", 1);
  const int64_t sampling_ratio = ctx.attr_int("sampling_ratio", 0);
  const double spatial_scale = ctx.attr_float("spatial_scale", 1.0f);
  if (out_h < 1 || out_w < 1 || sampling_ratio < 0) {
    return ctx.fail(StatusCode::kInvalidModel,
                    "output_height ({}) and output_width ({}) must be positive and sampling_ratio ({}) non-negative",
                    out_h, out_w, sampling_ratio);
  }
  const int64_t n = x.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t num_rois = rois.dim(0);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> batch, tensor_to_int64s(batch_indices));
  for (size_t r = 0; r < batch.size(); ++r) {
    if (batch[r] < 0 || batch[r] >= n) {
      return ctx.fail(StatusCode::kInvalidModel, "batch_indices[{}] = {} is outside [0, {})", r, batch[r], n);
    }
  }
  VN_ASSIGN_OR_RETURN(std::vector<double> boxes, tensor_to_doubles(rois));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {num_rois, channels, out_h, out_w}));
  if (y->numel() == 0) return Status::OK();
  if (height == 0 || width == 0) return ctx.fail(StatusCode::kShapeMismatch, "X has an empty spatial map");
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    std::vector<Sample> samples;
    for (int64_t r = 0; r < num_rois; ++r) {
      // "output_half_pixel" (and opset 10) does not shift by half a pixel but forces tiny ROIs to 1x1.
      const double offset = half_pixel ? 0.5 : 0.0;
      const double* box = boxes.data() + r * 4;
      const double start_w = box[0] * spatial_scale - offset, start_h = box[1] * spatial_scale - offset;
      const double end_w = box[2] * spatial_scale - offset, end_h = box[3] * spatial_scale - offset;
      double roi_w = end_w - start_w, roi_h = end_h - start_h;
      if (!half_pixel) {
        roi_w = std::max(roi_w, 1.0);
        roi_h = std::max(roi_h, 1.0);
      }
      const double bin_h = roi_h / static_cast<double>(out_h), bin_w = roi_w / static_cast<double>(out_w);
      const double grid_hd =
          sampling_ratio > 0 ? static_cast<double>(sampling_ratio) : std::ceil(roi_h / static_cast<double>(out_h));
      const double grid_wd =
          sampling_ratio > 0 ? static_cast<double>(sampling_ratio) : std::ceil(roi_w / static_cast<double>(out_w));
      if (!(grid_hd * grid_wd * static_cast<double>(out_h * out_w) <= 1e8)) {
        return ctx.fail(StatusCode::kInvalidModel,
                        "roi {} needs {} x {} samples in each of {} bins; set sampling_ratio to bound the work", r,
                        grid_hd, grid_wd, out_h * out_w);
      }
      const auto grid_h = static_cast<int64_t>(std::max(grid_hd, 0.0));
      const auto grid_w = static_cast<int64_t>(std::max(grid_wd, 0.0));
      const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
      samples.clear();
      for (int64_t ph = 0; ph < out_h; ++ph) {
        for (int64_t pw = 0; pw < out_w; ++pw) {
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            const double yy = start_h + static_cast<double>(ph) * bin_h +
                              (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              const double xx = start_w + static_cast<double>(pw) * bin_w +
                                (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
              samples.push_back(bilinear_sample(yy, xx, height, width));
            }
          }
        }
      }
      const int64_t per_bin = grid_h * grid_w;
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = px + (batch[static_cast<size_t>(r)] * channels + c) * height * width;
        T* out = py + (r * channels + c) * out_h * out_w;
        for (int64_t bin = 0; bin < out_h * out_w; ++bin) {
          double acc = 0.0;
          for (int64_t s = 0; s < per_bin; ++s) {
            const Sample& sm = samples[static_cast<size_t>(bin * per_bin + s)];
            if (avg) {
              for (int q = 0; q < 4; ++q) acc += sm.w[q] * static_cast<double>(plane[sm.pos[q]]);
            } else {
              double v = sm.w[0] * static_cast<double>(plane[sm.pos[0]]);
              for (int q = 1; q < 4; ++q) v = std::max(v, sm.w[q] * static_cast<double>(plane[sm.pos[q]]));
              acc = s == 0 ? v : std::max(acc, v);
            }
          }
          out[bin] = static_cast<T>(avg ? acc / count : acc);
        }
      }
    }
    return Status::OK();
  });
}

// RoiAlign-10 has no coordinate_transformation_mode: it behaves as "output_half_pixel".
Status roi_align_10(KernelContext& ctx) { return roi_align_with(ctx, false); }

Status roi_align_16(KernelContext& ctx) {
  const std::string mode = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  if (mode != "half_pixel" && mode != "output_half_pixel") {
    return ctx.fail(StatusCode::kInvalidModel,
                    "coordinate_transformation_mode '{}' is not half_pixel or output_half_pixel", mode);
  }
  return roi_align_with(ctx, mode == "half_pixel");
}

}  // namespace

void register_roi_align_ops(OpRegistry& registry) {
  registry.add("RoiAlign", 10, roi_align_10);
  // RoiAlign-22 only added bfloat16.
  for (int64_t v : {16, 22}) registry.add("RoiAlign", v, roi_align_16);
}

}  // namespace vn::ops
