// SPDX-License-Identifier: Apache-2.0
// NonMaxSuppression (opsets 10 and 11): per batch and class, greedily selects boxes in order of
// decreasing score (equal scores: lower box index first), skipping boxes whose IoU with an
// already selected box exceeds iou_threshold, until max_output_boxes_per_class are chosen. Only
// scores above score_threshold (when given) are candidates. Boxes are [y1, x1, y2, x2] with either
// diagonal (center_point_box = 0) or [x_center, y_center, width, height] (center_point_box = 1).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

struct Box {
  double y1, x1, y2, x2;  // normalized so that y1 <= y2 and x1 <= x2
};

Box read_box(const double* b, bool center) {
  if (center) {
    const double xc = b[0], yc = b[1], w = b[2], h = b[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

/// True when IoU(a, b) > threshold. Degenerate boxes (no area) never suppress (onnxruntime).
bool suppresses(const Box& a, const Box& b, double threshold) {
  const double area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
  const double area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return false;
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return false;
  const double inter = ih * iw;
  return inter / (area_a + area_b - inter) > threshold;
}

/// Reads optional scalar input i as a double; nullopt when omitted.
Result<std::optional<double>> optional_scalar(const KernelContext& ctx, size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return std::optional<double>();
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "{} must hold one value, got shape {}", what,
                    shape_to_string(t.shape()));
  }
  Result<std::vector<double>> v = tensor_to_doubles(t);
  if (!v.ok())
    return ctx.fail(StatusCode::kUnsupportedDType, "{} must be numeric, got {}", what, dtype_name(t.dtype()));
  return std::optional<double>((*v)[0]);
}

Status non_max_suppression(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& boxes_t = ctx.input(0);
  const Tensor& scores_t = ctx.input(1);
  if (boxes_t.rank() != 3 || boxes_t.dim(2) != 4) {
    return ctx.fail(StatusCode::kShapeMismatch, "boxes must be (num_batches, spatial_dimension, 4), got {}",
                    shape_to_string(boxes_t.shape()));
  }
  if (scores_t.rank() != 3 || scores_t.dim(0) != boxes_t.dim(0) || scores_t.dim(2) != boxes_t.dim(1)) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "scores {} must be (num_batches, num_classes, spatial_dimension) for boxes {}",
                    shape_to_string(scores_t.shape()), shape_to_string(boxes_t.shape()));
  }
  if (!dtype_is_float(boxes_t.dtype()) || !dtype_is_float(scores_t.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "boxes and scores must be float tensors, got {} and {}",
                    dtype_name(boxes_t.dtype()), dtype_name(scores_t.dtype()));
  }
  const int64_t center = ctx.attr_int("center_point_box", 0);
  if (center != 0 && center != 1) {
    return ctx.fail(StatusCode::kInvalidModel, "center_point_box must be 0 or 1, got {}", center);
  }
  VN_ASSIGN_OR_RETURN(std::optional<double> max_boxes, optional_scalar(ctx, 2, "max_output_boxes_per_class"));
  VN_ASSIGN_OR_RETURN(std::optional<double> iou_threshold, optional_scalar(ctx, 3, "iou_threshold"));
  VN_ASSIGN_OR_RETURN(std::optional<double> score_threshold, optional_scalar(ctx, 4, "score_threshold"));
  const double iou = iou_threshold.value_or(0.0);
  if (iou < 0 || iou > 1) return ctx.fail(StatusCode::kInvalidModel, "iou_threshold {} is outside [0, 1]", iou);
  // An omitted or non-positive max_output_boxes_per_class selects nothing (ONNX default 0).
  const double max_d = max_boxes.value_or(0.0);
  const int64_t limit = max_d > 0 ? static_cast<int64_t>(std::min(max_d, 9.0e18)) : 0;
  const int64_t batches = boxes_t.dim(0), classes = scores_t.dim(1), spatial = boxes_t.dim(1);
  VN_ASSIGN_OR_RETURN(std::vector<double> box_values, tensor_to_doubles(boxes_t));
  VN_ASSIGN_OR_RETURN(std::vector<double> score_values, tensor_to_doubles(scores_t));
  std::vector<int64_t> selected;  // triples (batch, class, box)
  std::vector<int64_t> order;
  std::vector<Box> chosen;
  for (int64_t b = 0; b < batches && limit > 0; ++b) {
    std::vector<Box> boxes(static_cast<size_t>(spatial));
    for (int64_t i = 0; i < spatial; ++i) {
      boxes[static_cast<size_t>(i)] = read_box(&box_values[static_cast<size_t>((b * spatial + i) * 4)], center == 1);
    }
    for (int64_t c = 0; c < classes; ++c) {
      const double* scores = &score_values[static_cast<size_t>((b * classes + c) * spatial)];
      order.clear();
      for (int64_t i = 0; i < spatial; ++i) {
        // NaN scores are never candidates (they have no rank).
        if (!std::isnan(scores[i]) && (!score_threshold || scores[i] > *score_threshold)) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return scores[l] > scores[r]; });
      chosen.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(chosen.size()) >= limit) break;
        const Box& box = boxes[static_cast<size_t>(i)];
        const bool suppressed =
            std::any_of(chosen.begin(), chosen.end(), [&](const Box& s) { return suppresses(s, box, iou); });
        if (suppressed) continue;
        chosen.push_back(box);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  const auto count = static_cast<int64_t>(selected.size() / 3);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {count, 3}));
  if (count > 0) std::copy(selected.begin(), selected.end(), y->mutable_data<int64_t>());
  return Status::OK();
}

}  // namespace

void register_non_max_suppression_ops(OpRegistry& registry) {
  for (int64_t v : {10, 11}) registry.add("NonMaxSuppression", v, non_max_suppression);
}

}  // namespace vn::ops
