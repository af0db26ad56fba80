// SPDX-License-Identifier: Apache-2.0
// ReduceSum and ReduceMean layers: reduce__sequential and reduce__pairwise, summing in the
// precision's accumulate format.
#include <algorithm>

#include "core/engine/kernels/kernels.h"
#include "core/ops/kernel_util.h"

namespace vn::engine::kernels {
namespace {

// Pairwise summation bottoms out in short sequential runs, as numpy's does.
constexpr int64_t kPairwiseBlock = 8;

template <typename A>
float pairwise_sum(const float* v, int64_t n) {
  if (n <= kPairwiseBlock) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s = A::round(s + v[i]);
    return s;
  }
  const int64_t half = n / 2;
  return A::round(pairwise_sum<A>(v, half) + pairwise_sum<A>(v + half, n - half));
}

class ReduceKernel final : public LayerKernel {
 public:
  explicit ReduceKernel(const KernelArgs& args) : args_(args), precision_(precision_of(args.precision)) {
    const Node& n = anchor_node(args);
    mean_ = n.op_type == "ReduceMean";
    for (const Attribute& a : n.attributes) {
      if (a.name == "keepdims" && a.type == AttrType::kInt) keepdims_ = a.i != 0;
      if (a.name == "noop_with_empty_axes" && a.type == AttrType::kInt) noop_ = a.i != 0;
      if (a.name == "axes" && a.type == AttrType::kInts) axes_ = a.ints;
    }
    axes_input_ = n.inputs.size() > 1 ? n.inputs[1] : "";
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    const Tensor& x = *inputs[0];
    std::vector<int64_t> axes = axes_;
    if (!axes_input_.empty()) {
      const int k = input_index(*args_.spec, axes_input_);
      const Tensor* t = k >= 0 ? inputs[static_cast<size_t>(k)] : &args_.constants->at(axes_input_);
      Result<std::vector<int64_t>> v = tensor_to_int64s(*t);
      if (!v.ok()) return tagged(args_, v.status());
      axes = *v;
    }
    const int64_t rank = x.rank();
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop_);
    for (int64_t a : axes) {
      const int64_t norm = a < 0 ? a + rank : a;
      if (norm < 0 || norm >= rank) {
        return tagged(args_, make_error(StatusCode::kInvalidModel, "axis {} is out of range for rank {}", a, rank));
      }
      reduced[static_cast<size_t>(norm)] = true;
    }
    // Element offsets of the kept positions and of the reduced elements, both in row-major order
    // (each new, outer dimension varies slowest), so x[kept[o] + red[r]] walks the input.
    const Shape& s = x.shape();
    Shape out_shape;
    std::vector<int64_t> kept{0}, red{0};
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t dim = s[static_cast<size_t>(d)];
      std::vector<int64_t>& list = reduced[static_cast<size_t>(d)] ? red : kept;
      std::vector<int64_t> grown;
      grown.reserve(list.size() * static_cast<size_t>(dim));
      for (int64_t i = 0; i < dim; ++i) {
        for (int64_t off : list) grown.push_back(i * stride + off);
      }
      list = std::move(grown);
      stride *= dim;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[static_cast<size_t>(d)]) {
        out_shape.push_back(s[static_cast<size_t>(d)]);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    Tensor y(DType::kFloat32, out_shape);
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    const int64_t count = static_cast<int64_t>(red.size());
    const bool pairwise = args_.tactic == TacticId::kReducePairwise;
    // The innermost dimensions reduced (a global pooling's H x W): each output's elements lie
    // one after another and are summed where they lie, else gathered first.
    bool consecutive = true;
    for (int64_t r = 0; r < count && consecutive; ++r) consecutive = red[static_cast<size_t>(r)] == r;
    dispatch_accumulate(precision_.accumulate, [&]<typename A>() {
      const auto outs = static_cast<int64_t>(kept.size());
      // Threads from about 32K values summed each.
      const int64_t grain = std::max<int64_t>(ops::kMemoryBoundGrain / std::max<int64_t>(count, 1), 1);
      ops::parallel_chunks(
          args_.num_threads, outs,
          [&](int64_t o0, int64_t o1) {
            std::vector<float> gathered(consecutive ? 0 : static_cast<size_t>(count));
            for (int64_t o = o0; o < o1; ++o) {
              const float* values = px + kept[static_cast<size_t>(o)];
              if (!consecutive) {
                for (int64_t r = 0; r < count; ++r)
                  gathered[static_cast<size_t>(r)] = values[red[static_cast<size_t>(r)]];
                values = gathered.data();
              }
              float sum = 0.0f;
              if (pairwise) {
                sum = pairwise_sum<A>(values, count);
              } else {
                for (int64_t r = 0; r < count; ++r) sum = A::round(sum + values[r]);
              }
              py[o] = mean_ ? sum / static_cast<float>(count) : sum;
            }
          },
          grain);
    });
    outputs[0] = std::move(y);
    return Status::OK();
  }

 private:
  KernelArgs args_;
  Precision precision_;
  bool mean_ = false;
  bool keepdims_ = true;
  bool noop_ = false;
  std::vector<int64_t> axes_;
  std::string axes_input_;
};

}  // namespace

Result<std::unique_ptr<LayerKernel>> make_reduce_kernel(const KernelArgs& args) {
  return std::unique_ptr<LayerKernel>(std::make_unique<ReduceKernel>(args));
}

}  // namespace vn::engine::kernels
