// SPDX-License-Identifier: Apache-2.0
// Softmax layers: softmax__max_shifted and softmax__unshifted. Exponentials are rounded to the
// precision's compute format and summed in its accumulate format, so fp16_strict overflows where
// a float16 kernel would. exp is vector_math.h's (float32, correctly rounded in practice). With a
// float32 compute and accumulate format a row sums in 16 float lanes, as a GPU's tree reduction
// does, and divides in float; otherwise each exponential and partial sum rounds in order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/engine/kernels/kernels.h"
#include "core/ops/kernel_util.h"
#include "core/ops/vector_math.h"

namespace vn::engine::kernels {
namespace {

namespace vmath = ops::vmath;

/// Softmax of `rows` contiguous rows of n values in compute format C and accumulate format A, each
/// row then rounded to `storage` (kFloat32: not rounded) while in cache. With float32 for both, a
/// row's quotients are taken in the loop that exponentiates the next row.
template <typename C, typename A>
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, bool shifted, DType storage) {
  const auto round_row = [&](float* row) { round_in_place(std::span<float>(row, static_cast<size_t>(n)), storage); };
  constexpr bool kFp32 = std::is_same_v<C, AccumulateFp32> && std::is_same_v<A, AccumulateFp32>;
  float pending = 0.0f;  // fp32: the sum of the previous row, whose exponentials its output holds
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float shift = shifted ? vmath::max(xr, n) : 0.0f;
    if (kFp32 && r > 0) {
      vmath::exp_shifted_divide_float(xr, shift, yr, n, yr - n, pending, yr - n);
      round_row(yr - n);
    } else {
      vmath::exp_shifted(xr, shift, yr, n);
    }
    if constexpr (kFp32) {
      pending = lane_sum(yr, n);
    } else {
      float sum = 0.0f;
      for (int64_t k = 0; k < n; ++k) {
        yr[k] = C::round(yr[k]);
        sum = A::round(sum + yr[k]);
      }
      for (int64_t k = 0; k < n; ++k) yr[k] = C::round(yr[k] / sum);
      round_row(yr);
    }
  }
  if (kFp32 && rows > 0) {
    vmath::divide_float(y + (rows - 1) * n, pending, y + (rows - 1) * n, n);
    round_row(y + (rows - 1) * n);
  }
}

class SoftmaxKernel final : public LayerKernel {
 public:
  explicit SoftmaxKernel(const KernelArgs& args) : args_(args), precision_(precision_of(args.precision)) {
    const Node& n = anchor_node(args);
    opset_ = args.model->opset(n.domain);
    axis_ = opset_ >= 13 ? -1 : 1;
    if (const Attribute* a = n.attr("axis"); a && a->type == AttrType::kInt) axis_ = a->i;
    // Softmax has no int8 tactic: its storage formats are float ones.
    if (args.round_outputs && precision_.storage != DType::kInt8) round_ = precision_.storage;
  }

  bool rounds_outputs() const override { return round_ != DType::kFloat32; }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    return run_dying(inputs, {}, outputs);
  }

  Status run_dying(std::span<const Tensor* const> inputs, std::span<const char> dying,
                   std::span<Tensor> outputs) const override {
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
    // Every path reads a row of x before it writes that row, so y may take a dying x's buffer (a
    // fresh 54 MB output took 20-25 ms of the Whisper encoder's attention Softmax).
    const bool reuse = !dying.empty() && dying[0] && x.writable() && x.sole_owner();
    Tensor y = x;
    if (!reuse) {
      // Every element is written: no zero fill first.
      VN_ASSIGN_OR_RETURN(y, Tensor::create_for_overwrite(DType::kFloat32, s));
    }
    const bool shifted = args_.tactic == TacticId::kSoftmaxMaxShifted;
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    const int64_t rows = outer * inner;
    dispatch_accumulate(precision_.compute, [&]<typename C>() {
      dispatch_accumulate(precision_.accumulate, [&]<typename A>() {
        // Contiguous ranges of rows (parallel_chunks: up to four per thread); a row along an axis
        // other than the last is copied out and back.
        ops::parallel_chunks(
            args_.num_threads, rows,
            [&](int64_t lo, int64_t hi) {
              if (inner == 1) {
                softmax_rows<C, A>(px + lo * n, py + lo * n, hi - lo, n, shifted, round_);
              } else {
                std::vector<float> row(static_cast<size_t>(2 * n));
                for (int64_t r = lo; r < hi; ++r) {
                  const int64_t base = r / inner * n * inner + r % inner;
                  for (int64_t k = 0; k < n; ++k) row[static_cast<size_t>(k)] = px[base + k * inner];
                  softmax_rows<C, A>(row.data(), row.data() + n, 1, n, shifted, round_);
                  for (int64_t k = 0; k < n; ++k) py[base + k * inner] = row[static_cast<size_t>(n + k)];
                }
              }
            },
            int64_t{1});
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
  DType round_ = DType::kFloat32;  // the storage format the rows are rounded to (round_outputs)
};

}  // namespace

Result<std::unique_ptr<LayerKernel>> make_softmax_kernel(const KernelArgs& args) {
  return std::unique_ptr<LayerKernel>(std::make_unique<SoftmaxKernel>(args));
}

}  // namespace vn::engine::kernels
