// SPDX-License-Identifier: Apache-2.0
// Softmax layers: softmax__max_shifted and softmax__unshifted. Exponentials are rounded to the
// precision's compute format and summed in its accumulate format, so fp16_strict overflows where
// a float16 kernel would.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/common/threads.h"
#include "core/engine/kernels/kernels.h"

namespace vn::engine::kernels {
namespace {

class SoftmaxKernel final : public LayerKernel {
 public:
  explicit SoftmaxKernel(const KernelArgs& args) : args_(args), precision_(precision_of(args.precision)) {
    const Node& n = anchor_node(args);
    opset_ = args.model->opset(n.domain);
    axis_ = opset_ >= 13 ? -1 : 1;
    if (const Attribute* a = n.attr("axis"); a && a->type == AttrType::kInt) axis_ = a->i;
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    const Tensor& x = *inputs[0];
    const int64_t rank = x.rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) {
      return tagged(args_, make_error(StatusCode::kInvalidModel, "axis {} is out of range for rank {}", axis_, rank));
    }
    // Before opset 13 the input is flattened to 2-D at `axis` and normalized over the second dim.
    const Shape& s = x.shape();
    const int64_t outer = shape_numel(Shape(s.begin(), s.begin() + std::min(axis, rank)));
    const int64_t n = opset_ >= 13 ? (rank == 0 ? 1 : s[static_cast<size_t>(axis)])
                                   : shape_numel(Shape(s.begin() + std::min(axis, rank), s.end()));
    const int64_t inner = opset_ >= 13 && rank > 0 ? shape_numel(Shape(s.begin() + axis + 1, s.end())) : 1;
    Tensor y(DType::kFloat32, s);
    const bool shifted = args_.tactic == TacticId::kSoftmaxMaxShifted;
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    dispatch_accumulate(precision_.compute, [&]<typename C>() {
      dispatch_accumulate(precision_.accumulate, [&]<typename A>() {
#pragma omp parallel for num_threads(capped_threads(args_.num_threads)) schedule(static)
        for (int64_t row = 0; row < outer * inner; ++row) {
          const int64_t o = row / inner, i = row % inner;
          const float* xr = px + o * n * inner + i;
          float* yr = py + o * n * inner + i;
          float shift = 0.0f;
          if (shifted) {
            shift = -std::numeric_limits<float>::infinity();
            for (int64_t k = 0; k < n; ++k) shift = std::max(shift, xr[k * inner]);
          }
          float sum = 0.0f;
          for (int64_t k = 0; k < n; ++k) {
            const float e = C::round(std::exp(xr[k * inner] - shift));
            yr[k * inner] = e;
            sum = A::round(sum + e);
          }
          for (int64_t k = 0; k < n; ++k) yr[k * inner] = C::round(yr[k * inner] / sum);
        }
      });
    });
    outputs[0] = std::move(y);
    return Status::OK();
  }

 private:
  KernelArgs args_;
  Precision precision_;
  int64_t opset_ = 13;
  int64_t axis_ = -1;
};

}  // namespace

Result<std::unique_ptr<LayerKernel>> make_softmax_kernel(const KernelArgs& args) {
  return std::unique_ptr<LayerKernel>(std::make_unique<SoftmaxKernel>(args));
}

}  // namespace vn::engine::kernels
