// SPDX-License-Identifier: Apache-2.0
// LayerNorm layers: layernorm__two_pass, layernorm__welford and layernorm__one_pass. Running sums
// are rounded to the precision's accumulate format after every addition and the statistics to its
// compute format, so fp16_strict shows what a float16 kernel loses.
#include <algorithm>
#include <cmath>

#include "core/common/parallel.h"
#include "core/common/threads.h"
#include "core/engine/kernels/kernels.h"
#include "core/ops/kernel_util.h"

namespace vn::engine::kernels {
namespace {

class LayerNormKernel final : public LayerKernel {
 public:
  explicit LayerNormKernel(const KernelArgs& args) : args_(args), precision_(precision_of(args.precision)) {}

  Status prepare() {
    const NormSpec& norm = args_.spec->norm;
    if (!norm.scale.empty()) {
      VN_ASSIGN_OR_RETURN(scale_, constant_floats(args_, norm.scale, float_storage(precision_)));
    }
    if (!norm.bias.empty() && !args_.drop_bias) {
      VN_ASSIGN_OR_RETURN(bias_, constant_floats(args_, norm.bias, float_storage(precision_)));
    }
    return Status::OK();
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    const Tensor& x = *inputs[0];
    const int64_t rank = x.rank();
    const int64_t axis = args_.spec->norm.axis < 0 ? args_.spec->norm.axis + rank : args_.spec->norm.axis;
    if (axis < 0 || axis >= rank) {
      return tagged(args_, make_error(StatusCode::kInvalidModel, "axis {} is out of range for rank {}",
                                      args_.spec->norm.axis, rank));
    }
    const Shape& s = x.shape();
    const int64_t d = shape_numel(Shape(s.begin() + axis, s.end()));
    const int64_t rows = d == 0 ? 0 : x.numel() / d;
    auto fits = [&](const std::vector<float>& v) {
      return v.empty() || v.size() == 1 || static_cast<int64_t>(v.size()) == d;
    };
    if (!fits(scale_) || !fits(bias_)) {
      return tagged(args_, make_error(StatusCode::kShapeMismatch,
                                      "scale ({} values) and bias ({} values) must have one value per normalized "
                                      "element ({})",
                                      scale_.size(), bias_.size(), d));
    }
    // Every element is written: no zero fill first.
    VN_ASSIGN_OR_RETURN(Tensor y, Tensor::create_for_overwrite(DType::kFloat32, s));
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    const float epsilon = args_.spec->norm.epsilon;
    const TacticId tactic = args_.tactic;
    dispatch_accumulate(precision_.compute, [&]<typename C>() {
      dispatch_accumulate(precision_.accumulate, [&]<typename A>() {
        // Rows four at a time: each row's running sums are one chain of additions in its own
        // order, and four chains side by side do not wait on each other's latency.
        constexpr int64_t kRows = 4;
        const int threads = threads_for_work(args_.num_threads, rows * d, ops::kMemoryBoundGrain);
        parallel_for(threads, (rows + kRows - 1) / kRows, [&](int64_t block) {
          const int64_t r0 = block * kRows, n = std::min(kRows, rows - r0);
          const float* xr[kRows];
          for (int64_t k = 0; k < kRows; ++k) xr[k] = px + (r0 + std::min(k, n - 1)) * d;
          const float count = static_cast<float>(d);
          float mean[kRows] = {}, var[kRows] = {};
          if (tactic == TacticId::kLayerNormWelford) {
            float m2[kRows] = {};
            for (int64_t i = 0; i < d; ++i) {
              for (int64_t k = 0; k < kRows; ++k) {
                const float delta = xr[k][i] - mean[k];
                mean[k] = A::round(mean[k] + delta / static_cast<float>(i + 1));
                m2[k] = A::round(m2[k] + delta * (xr[k][i] - mean[k]));
              }
            }
            for (int64_t k = 0; k < kRows; ++k) var[k] = C::round(m2[k] / count);
          } else if (tactic == TacticId::kLayerNormOnePass) {
            // E[x^2] - E[x]^2, unclamped as naive kernels compute it: cancellation can even make
            // the variance negative.
            float s1[kRows] = {}, s2[kRows] = {};
            for (int64_t i = 0; i < d; ++i) {
              for (int64_t k = 0; k < kRows; ++k) {
                s1[k] = A::round(s1[k] + xr[k][i]);
                s2[k] = A::round(s2[k] + C::round(xr[k][i] * xr[k][i]));
              }
            }
            for (int64_t k = 0; k < kRows; ++k) {
              mean[k] = C::round(s1[k] / count);
              var[k] = C::round(C::round(s2[k] / count) - C::round(mean[k] * mean[k]));
            }
          } else {
            float s1[kRows] = {};
            for (int64_t i = 0; i < d; ++i) {
              for (int64_t k = 0; k < kRows; ++k) s1[k] = A::round(s1[k] + xr[k][i]);
            }
            for (int64_t k = 0; k < kRows; ++k) mean[k] = C::round(s1[k] / count);
            float s2[kRows] = {};
            for (int64_t i = 0; i < d; ++i) {
              for (int64_t k = 0; k < kRows; ++k) {
                const float dev = C::round(xr[k][i] - mean[k]);
                s2[k] = A::round(s2[k] + C::round(dev * dev));
              }
            }
            for (int64_t k = 0; k < kRows; ++k) var[k] = C::round(s2[k] / count);
          }
          for (int64_t k = 0; k < n; ++k) {
            const float inv_std = C::round(1.0f / std::sqrt(var[k] + epsilon));
            float* yr = py + (r0 + k) * d;
            for (int64_t i = 0; i < d; ++i) {
              float v = (xr[k][i] - mean[k]) * inv_std;
              if (!scale_.empty()) v *= scale_[scale_.size() == 1 ? 0 : static_cast<size_t>(i)];
              if (!bias_.empty()) v += bias_[bias_.size() == 1 ? 0 : static_cast<size_t>(i)];
              yr[i] = v;
            }
            round_in_place(std::span<float>(yr, static_cast<size_t>(d)), round_);
          }
        });
      });
    });
    outputs[0] = std::move(y);
    return Status::OK();
  }

  bool rounds_outputs() const override { return round_ != DType::kFloat32; }

 private:
  KernelArgs args_;
  Precision precision_;
  std::vector<float> scale_, bias_;
  // The storage format each row is rounded to while in cache (KernelArgs::round_outputs;
  // LayerNorm has no int8 tactic).
  DType round_ = args_.round_outputs && precision_.storage != DType::kInt8 ? precision_.storage : DType::kFloat32;
};

}  // namespace

Result<std::unique_ptr<LayerKernel>> make_layernorm_kernel(const KernelArgs& args) {
  auto kernel = std::make_unique<LayerNormKernel>(args);
  VN_RETURN_IF_ERROR(kernel->prepare());
  return std::unique_ptr<LayerKernel>(std::move(kernel));
}

}  // namespace vn::engine::kernels
