// SPDX-License-Identifier: Apache-2.0
// LayerNorm layers: layernorm__two_pass, layernorm__welford and layernorm__one_pass. Running sums
// are rounded to the precision's accumulate format after every addition and the statistics to its
// compute format, so fp16_strict shows what a float16 kernel loses.
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
    Tensor y(DType::kFloat32, s);
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    const float epsilon = args_.spec->norm.epsilon;
    const TacticId tactic = args_.tactic;
    dispatch_accumulate(precision_.compute, [&]<typename C>() {
      dispatch_accumulate(precision_.accumulate, [&]<typename A>() {
        const int threads = threads_for_work(args_.num_threads, rows * d, ops::kMemoryBoundGrain);
        parallel_for(threads, rows, [&](int64_t r) {
          const float* xr = px + r * d;
          float* yr = py + r * d;
          const float count = static_cast<float>(d);
          float mean = 0.0f, var = 0.0f;
          if (tactic == TacticId::kLayerNormWelford) {
            float m2 = 0.0f;
            for (int64_t i = 0; i < d; ++i) {
              const float delta = xr[i] - mean;
              mean = A::round(mean + delta / static_cast<float>(i + 1));
              m2 = A::round(m2 + delta * (xr[i] - mean));
            }
            var = C::round(m2 / count);
          } else if (tactic == TacticId::kLayerNormOnePass) {
            // E[x^2] - E[x]^2, unclamped as naive kernels compute it: cancellation can even make
            // the variance negative.
            float s1 = 0.0f, s2 = 0.0f;
            for (int64_t i = 0; i < d; ++i) {
              s1 = A::round(s1 + xr[i]);
              s2 = A::round(s2 + C::round(xr[i] * xr[i]));
            }
            mean = C::round(s1 / count);
            var = C::round(C::round(s2 / count) - C::round(mean * mean));
          } else {
            float s1 = 0.0f;
            for (int64_t i = 0; i < d; ++i) s1 = A::round(s1 + xr[i]);
            mean = C::round(s1 / count);
            float s2 = 0.0f;
            for (int64_t i = 0; i < d; ++i) {
              const float dev = C::round(xr[i] - mean);
              s2 = A::round(s2 + C::round(dev * dev));
            }
            var = C::round(s2 / count);
          }
          const float inv_std = C::round(1.0f / std::sqrt(var + epsilon));
          for (int64_t i = 0; i < d; ++i) {
            float v = (xr[i] - mean) * inv_std;
            if (!scale_.empty()) v *= scale_[scale_.size() == 1 ? 0 : static_cast<size_t>(i)];
            if (!bias_.empty()) v += bias_[bias_.size() == 1 ? 0 : static_cast<size_t>(i)];
            yr[i] = v;
          }
        });
      });
    });
    outputs[0] = std::move(y);
    return Status::OK();
  }

 private:
  KernelArgs args_;
  Precision precision_;
  std::vector<float> scale_, bias_;
};

}  // namespace

Result<std::unique_ptr<LayerKernel>> make_layernorm_kernel(const KernelArgs& args) {
  auto kernel = std::make_unique<LayerNormKernel>(args);
  VN_RETURN_IF_ERROR(kernel->prepare());
  return std::unique_ptr<LayerKernel>(std::move(kernel));
}

}  // namespace vn::engine::kernels
