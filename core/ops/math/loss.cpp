// SPDX-License-Identifier: Apache-2.0
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as a forward computation (the loss value a
// model outputs; ONNX defines no gradient here). Scores are (N, C, d1, ..., dk), labels
// (N, d1, ..., dk) of int32 or int64, class weights (C) optional:
//   loss[n, d] = -log_prob[n, label, d] * weight[label], and 0 where label == ignore_index;
//   reduction none keeps that shape, sum adds it up, mean divides the sum by the summed weights of
//   the labels not ignored (their count without weights).
// SoftmaxCrossEntropyLoss takes log_prob = LogSoftmax(scores) over the class axis and can output
// it. Everything is computed in double and rounded once to the scores' type. A label outside
// [0, C) that is not ignore_index is an error, not a read out of bounds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

enum class Reduction { kNone, kSum, kMean };

/// The scores seen as (N, C, D) with their labels, class weights and attributes.
struct LossInputs {
  int64_t n = 0, c = 0, d = 1;
  Shape label_shape;
  std::vector<int64_t> labels;  // N * D
  std::vector<double> weights;  // C, empty when not given
  std::optional<int64_t> ignore_index;
  Reduction reduction = Reduction::kMean;
};

Result<LossInputs> read_loss_inputs(const KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& t = ctx.input(1);
  LossInputs in;
  if (x.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "scores must be (N, C, d1, ..., dk), got shape {}",
                    shape_to_string(x.shape()));
  }
  in.n = x.dim(0);
  in.c = x.dim(1);
  in.d = shape_product(x.shape(), 2, x.shape().size());
  in.label_shape = x.shape();
  in.label_shape.erase(in.label_shape.begin() + 1);
  if (t.shape() != in.label_shape) {
    return ctx.fail(StatusCode::kShapeMismatch, "labels must have shape {} (the scores' without C), got {}",
                    shape_to_string(in.label_shape), shape_to_string(t.shape()));
  }
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64) {
    return unsupported_dtype(ctx, t.dtype(), {DType::kInt32, DType::kInt64});
  }
  VN_ASSIGN_OR_RETURN(in.labels, tensor_to_int64s(t));
  if (ctx.has_input(2)) {
    const Tensor& w = ctx.input(2);
    if (w.dtype() != x.dtype() || w.shape() != Shape{in.c}) {
      return ctx.fail(StatusCode::kInvalidModel, "weights must be {} of shape [{}], got {} {}", dtype_name(x.dtype()),
                      in.c, dtype_name(w.dtype()), shape_to_string(w.shape()));
    }
    VN_ASSIGN_OR_RETURN(in.weights, tensor_to_doubles(w));
  }
  if (ctx.has_attr("ignore_index")) in.ignore_index = ctx.attr_int("ignore_index", 0);
  const std::string reduction = ctx.attr_string("reduction", "mean");
  if (reduction == "none") {
    in.reduction = Reduction::kNone;
  } else if (reduction == "sum") {
    in.reduction = Reduction::kSum;
  } else if (reduction != "mean") {
    return ctx.fail(StatusCode::kInvalidModel, "reduction '{}' is not one of none, sum, mean", reduction);
  }
  for (size_t i = 0; i < in.labels.size(); ++i) {
    const int64_t label = in.labels[i];
    if (in.ignore_index && label == *in.ignore_index) continue;
    if (label < 0 || label >= in.c) {
      return ctx.fail(StatusCode::kInvalidArgument,
                      "label {} at flat index {} is outside [0, {}) and is not ignore_index", label, i, in.c);
    }
  }
  return in;
}

/// Writes output 0, the loss of `log_prob` ((N, C, D) in double) under `in`.
template <typename T>
Status write_loss(KernelContext& ctx, const LossInputs& in, const std::vector<double>& log_prob) {
  std::vector<double> loss(in.labels.size());
  double loss_sum = 0.0, weight_sum = 0.0;
  for (int64_t n = 0; n < in.n; ++n) {
    for (int64_t k = 0; k < in.d; ++k) {
      const auto at = static_cast<size_t>(n * in.d + k);
      const int64_t label = in.labels[at];
      if (in.ignore_index && label == *in.ignore_index) continue;
      const double w = in.weights.empty() ? 1.0 : in.weights[static_cast<size_t>(label)];
      loss[at] = -log_prob[static_cast<size_t>((n * in.c + label) * in.d + k)] * w;
      loss_sum += loss[at];
      weight_sum += w;
    }
  }
  if (in.reduction == Reduction::kNone) {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, dtype_of<T>, in.label_shape));
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    for (size_t i = 0; i < loss.size(); ++i) py[i] = static_cast<T>(loss[i]);
    return Status::OK();
  }
  // A mean over no counted label is 0 / 0, NaN, as numpy's mean of nothing.
  const double value = in.reduction == Reduction::kSum ? loss_sum : loss_sum / weight_sum;
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, dtype_of<T>, {}));
  y->mutable_data<T>()[0] = static_cast<T>(value);
  return Status::OK();
}

template <typename Types>
Status negative_log_likelihood_loss(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(LossInputs in, read_loss_inputs(ctx));
  const Tensor& x = ctx.input(0);
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(std::vector<double> log_prob, tensor_to_doubles(x));
    return write_loss<T>(ctx, in, log_prob);
  });
}

template <typename Types>
Status softmax_cross_entropy_loss(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(LossInputs in, read_loss_inputs(ctx));
  const Tensor& x = ctx.input(0);
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(std::vector<double> lp, tensor_to_doubles(x));
    // LogSoftmax over C for each (n, d): x - max - log(sum(exp(x - max))).
    for (int64_t n = 0; n < in.n; ++n) {
      for (int64_t k = 0; k < in.d; ++k) {
        const auto at = [&](int64_t c) { return static_cast<size_t>((n * in.c + c) * in.d + k); };
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < in.c; ++c) mx = std::max(mx, lp[at(c)]);
        double sum = 0.0;
        for (int64_t c = 0; c < in.c; ++c) sum += std::exp(lp[at(c)] - mx);
        const double log_sum = std::log(sum);
        for (int64_t c = 0; c < in.c; ++c) lp[at(c)] = lp[at(c)] - mx - log_sum;
      }
    }
    VN_RETURN_IF_ERROR(write_loss<T>(ctx, in, lp));
    if (output_requested(ctx, 1)) {
      VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(1, x.dtype(), x.shape()));
      T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
      for (size_t i = 0; i < lp.size(); ++i) py[i] = static_cast<T>(lp[i]);
    }
    return Status::OK();
  });
}

using LossTypes = TypeList<float, double, Eigen::half>;
using LossTypesBf16 = TypeList<float, double, Eigen::half, Eigen::bfloat16>;

}  // namespace

void register_loss_ops(OpRegistry& registry) {
  // bfloat16 scores come with NegativeLogLikelihoodLoss-22.
  for (int64_t v : {12, 13}) {
    registry.add("NegativeLogLikelihoodLoss", v, negative_log_likelihood_loss<LossTypes>);
    registry.add("SoftmaxCrossEntropyLoss", v, softmax_cross_entropy_loss<LossTypes>);
  }
  registry.add("NegativeLogLikelihoodLoss", 22, negative_log_likelihood_loss<LossTypesBf16>);
}

}  // namespace vn::ops
