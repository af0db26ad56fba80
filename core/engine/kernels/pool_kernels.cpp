// SPDX-License-Identifier: Apache-2.0
// AveragePool and GlobalAveragePool layers: pool__f32acc and pool__f16acc, summing each window in
// the precision's accumulate format.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/common/parallel.h"
#include "core/common/threads.h"
#include "core/engine/kernels/kernels.h"
#include "core/ops/kernel_context.h"
#include "core/ops/kernel_util.h"
#include "core/ops/spatial.h"

namespace vn::engine::kernels {
namespace {

class PoolKernel final : public LayerKernel {
 public:
  explicit PoolKernel(const KernelArgs& args) : args_(args), precision_(precision_of(args.precision)) {
    const Node& n = anchor_node(args);
    global_ = n.op_type == "GlobalAveragePool";
    for (const Attribute& a : n.attributes) {
      if (a.name == "count_include_pad" && a.type == AttrType::kInt) include_pad_ = a.i != 0;
      if (a.name == "ceil_mode" && a.type == AttrType::kInt) ceil_mode_ = a.i != 0;
      if (a.name == "kernel_shape" && a.type == AttrType::kInts) kernel_ = a.ints;
    }
  }

  bool rounds_outputs() const override { return round_ != DType::kFloat32; }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    const Tensor& x = *inputs[0];
    if (x.rank() < 3 || x.rank() > 5) {
      return tagged(args_, make_error(StatusCode::kShapeMismatch,
                                      "X must be (N, C, D1, ...) with 1 to 3 spatial dims, "
                                      "got {}",
                                      shape_to_string(x.shape())));
    }
    const Shape in(x.shape().begin() + 2, x.shape().end());
    ops::WindowGeometry geo;
    if (global_) {
      geo.in = in;
      geo.kernel = in;
      geo.strides = geo.dilations = Shape(in.size(), 1);
      geo.pads_begin = geo.pads_end = Shape(in.size(), 0);
      geo.out = Shape(in.size(), 1);
    } else {
      if (kernel_.size() != in.size()) {
        return tagged(args_, make_error(StatusCode::kInvalidModel, "kernel_shape must have {} entries", in.size()));
      }
      const Node& n = anchor_node(args_);
      ops::KernelContext ctx(n, args_.spec->nodes.front(), args_.model->opset(n.domain), {}, {}, 1);
      VN_ASSIGN_OR_RETURN(geo, ops::window_geometry(ctx, in, kernel_, ceil_mode_, false));
      VN_RETURN_IF_ERROR(ctx.attr_error());
    }
    Shape out_shape{x.dim(0), x.dim(1)};
    out_shape.insert(out_shape.end(), geo.out.begin(), geo.out.end());
    // Every output is written: no zero fill.
    Result<Tensor> created = Tensor::create_for_overwrite(DType::kFloat32, out_shape);
    if (!created.ok()) return tagged(args_, created.status());
    Tensor y = std::move(*created);
    const ops::WindowGeometry g = ops::lift_to_3d(geo);
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
    const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    const bool include_pad = include_pad_;
    dispatch_accumulate(precision_.accumulate, [&]<typename A>() {
      const int threads = threads_for_work(args_.num_threads, planes * in_size, ops::kMemoryBoundGrain);
      if (global_ && std::is_same_v<A, AccumulateFp32>) {
        // In float32 a plane sums in 16 lanes (lane_sum): vectors rather than one chain of scalar
        // additions (EfficientNetV2-S's
        // 31 means: 1.0 ms against the reference's 0.6).
        parallel_for(threads, planes,
                     [&](int64_t p) { py[p] = lane_sum(px + p * in_size, in_size) / static_cast<float>(in_size); });
        round_in_place(std::span<float>(py, static_cast<size_t>(planes)), round_);
        return;
      }
      if (global_) {
        // Each plane's sum is one chain of additions in its order; eight planes at a time, so
        // that eight chains advance together rather than one waiting on each addition's latency
        // (MobileNetV3's squeeze-and-excitation means: 0.44 -> 0.22 ms).
        constexpr int64_t kPlanes = 8;
        parallel_for(threads, (planes + kPlanes - 1) / kPlanes, [&](int64_t group) {
          const int64_t p0 = group * kPlanes;
          const int64_t count = std::min(kPlanes, planes - p0);
          float sum[kPlanes] = {};
          const float* xp = px + p0 * in_size;
          if (count == kPlanes) {
            for (int64_t i = 0; i < in_size; ++i) {
              for (int64_t j = 0; j < kPlanes; ++j) sum[j] = A::round(sum[j] + xp[j * in_size + i]);
            }
          } else {
            for (int64_t j = 0; j < count; ++j) {
              for (int64_t i = 0; i < in_size; ++i) sum[j] = A::round(sum[j] + xp[j * in_size + i]);
            }
          }
          for (int64_t j = 0; j < count; ++j) py[p0 + j] = sum[j] / static_cast<float>(in_size);
          round_in_place(std::span<float>(py + p0, static_cast<size_t>(count)), round_);
        });
        return;
      }
      const std::vector<int64_t> cols = column_taps(g, include_pad);
      parallel_for(threads, planes, [&](int64_t p) {
        windows<A>(px + p * in_size, g, include_pad, cols, py + p * out_size);
        round_in_place(std::span<float>(py + p * out_size, static_cast<size_t>(out_size)), round_);
      });
    });
    outputs[0] = std::move(y);
    return Status::OK();
  }

 private:
  /// Taps along axis i of a window starting at `start`: inside the input, or (count_include_pad)
  /// inside the padded extent but not past the end padding of a ceil_mode window (as the
  /// reference).
  static int64_t taps(const ops::WindowGeometry& g, bool include_pad, int i, int64_t start) {
    const int64_t lo = std::max<int64_t>(start, 0), hi = std::min<int64_t>(start + g.kernel[i], g.in[i]);
    return include_pad ? std::min<int64_t>(start + g.kernel[i], g.in[i] + g.pads_end[i]) - start
                       : std::max<int64_t>(hi - lo, 0);
  }

  /// The taps along the width of each output column's window, the same for every plane.
  static std::vector<int64_t> column_taps(const ops::WindowGeometry& g, bool include_pad) {
    std::vector<int64_t> cols(static_cast<size_t>(g.out[2]));
    for (int64_t ow = 0; ow < g.out[2]; ++ow) {
      cols[static_cast<size_t>(ow)] = taps(g, include_pad, 2, ow * g.strides[2] - g.pads_begin[2]);
    }
    return cols;
  }

  /// One plane's windows: each output sums its taps inside the input in (depth, row, column)
  /// order in the accumulate format A, then divides by the count. A row of outputs is summed
  /// together, tap by tap, each tap added to the outputs whose window has it inside: the sums of
  /// window by window, in the same order, in loops over contiguous outputs.
  template <typename A>
  static void windows(const float* xp, const ops::WindowGeometry& g, bool include_pad, const std::vector<int64_t>& cols,
                      float* y) {
    const int64_t out_w = g.out[2], sw = g.strides[2];
    std::vector<float> sum(static_cast<size_t>(out_w));
    for (int64_t od = 0; od < g.out[0]; ++od) {
      const int64_t sd = od * g.strides[0] - g.pads_begin[0];
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const int64_t sh = oh * g.strides[1] - g.pads_begin[1];
        std::fill(sum.begin(), sum.end(), 0.0f);
        for (int64_t d = std::max<int64_t>(sd, 0); d < std::min(sd + g.kernel[0], g.in[0]); ++d) {
          for (int64_t h = std::max<int64_t>(sh, 0); h < std::min(sh + g.kernel[1], g.in[1]); ++h) {
            const float* row = xp + (d * g.in[1] + h) * g.in[2];
            for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
              const int64_t off = kw - g.pads_begin[2];
              const auto [lo, hi] = ops::outputs_inside(off, sw, g.in[2], out_w);
              float* acc = sum.data();
              // Unit stride spelled out, so that the loop runs on vectors.
              if (sw == 1) {
                for (int64_t ow = lo; ow < hi; ++ow) acc[ow] = A::round(acc[ow] + row[ow + off]);
              } else {
                for (int64_t ow = lo; ow < hi; ++ow) acc[ow] = A::round(acc[ow] + row[ow * sw + off]);
              }
            }
          }
        }
        const int64_t rows = taps(g, include_pad, 0, sd) * taps(g, include_pad, 1, sh);
        float* yr = y + (od * g.out[1] + oh) * out_w;
        for (int64_t ow = 0; ow < out_w; ++ow) {
          yr[ow] = sum[static_cast<size_t>(ow)] / static_cast<float>(rows * cols[static_cast<size_t>(ow)]);
        }
      }
    }
  }

  KernelArgs args_;
  Precision precision_;
  // The storage format each plane is rounded to while in cache (KernelArgs::round_outputs; pools
  // have no int8 tactic).
  DType round_ = args_.round_outputs && precision_.storage != DType::kInt8 ? precision_.storage : DType::kFloat32;
  bool global_ = false;
  bool include_pad_ = false;
  bool ceil_mode_ = false;
  Shape kernel_;
};

}  // namespace

Result<std::unique_ptr<LayerKernel>> make_pool_kernel(const KernelArgs& args) {
  return std::unique_ptr<LayerKernel>(std::make_unique<PoolKernel>(args));
}

}  // namespace vn::engine::kernels
