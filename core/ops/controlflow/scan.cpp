// SPDX-License-Identifier: Apache-2.0
// Scan: runs its body once per element along the scan axis of the scan inputs, threading state
// variables through and stacking each scan output.
// - Scan-8 has a batch axis 0 and a scan axis 1 on every scan input, batches each state variable on
//   axis 0, takes optional per-batch sequence lengths as input 0 and an input `directions` list.
//   A reverse input starts at the last element inside its batch's sequence length, and scan
//   outputs past a batch's length are zero (ONNX leaves them undefined; ONNX Runtime zeroes them).
// - Scan-9 drops batching and adds scan_input_axes/directions and scan_output_axes/directions;
//   11 allows negative axes and 16 bfloat16. One kernel serves 9, 11 and 16.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ops/controlflow/iteration.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// A per-scan-input or per-scan-output list attribute, defaulting to zeros; kInvalidModel when
/// its length is not `count` or (for directions) an entry is not 0 or 1.
Result<std::vector<int64_t>> list_attr(const KernelContext& ctx, const char* name, size_t count, bool direction) {
  std::vector<int64_t> values = ctx.attr_ints(name, std::vector<int64_t>(count, 0));
  if (values.size() != count) {
    return ctx.fail(StatusCode::kInvalidModel, "attribute {} has {} entries, expected {}", name, values.size(), count);
  }
  if (direction) {
    for (int64_t v : values) {
      if (v != 0 && v != 1)
        return ctx.fail(StatusCode::kInvalidModel, "attribute {} has entry {}, expected 0 or 1", name, v);
    }
  }
  return values;
}

/// The number of scan inputs M from `num_scan_inputs`, checked against the `available` inputs.
Result<size_t> scan_input_count(const KernelContext& ctx, size_t available) {
  if (!ctx.has_attr("num_scan_inputs"))
    return ctx.fail(StatusCode::kInvalidModel, "attribute num_scan_inputs is required");
  const int64_t m = ctx.attr_int("num_scan_inputs", 0);
  if (m < 1 || static_cast<uint64_t>(m) > available) {
    return ctx.fail(StatusCode::kInvalidModel, "num_scan_inputs is {} but the node has {} state and scan inputs", m,
                    available);
  }
  return static_cast<size_t>(m);
}

Status check_inputs_present(const KernelContext& ctx, size_t begin) {
  for (size_t i = begin; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) return ctx.fail(StatusCode::kInvalidModel, "input {} is missing", i);
  }
  return Status::OK();
}

/// One Stacker per body output in [first, first + count); `kind` names them in errors.
std::vector<Stacker> make_stackers(const Graph& body, size_t first, size_t count, const char* kind) {
  std::vector<Stacker> stackers;
  for (size_t k = 0; k < count; ++k) stackers.emplace_back(fmt::format("{} '{}'", kind, body.outputs[first + k].name));
  return stackers;
}

Status scan_9(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(const Graph* body, required_body(ctx, "body"));
  VN_ASSIGN_OR_RETURN(const size_t m, scan_input_count(ctx, ctx.input_count()));
  VN_RETURN_IF_ERROR(check_inputs_present(ctx, 0));
  const size_t n = ctx.input_count() - m;
  if (ctx.output_count() < n) {
    return ctx.fail(StatusCode::kInvalidModel, "has {} state variables but {} outputs", n, ctx.output_count());
  }
  const size_t k = ctx.output_count() - n;
  VN_RETURN_IF_ERROR(check_body_signature(ctx, *body, "body", n + m, n + k));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> in_axes, list_attr(ctx, "scan_input_axes", m, false));
  VN_ASSIGN_OR_RETURN(const std::vector<int64_t> in_dirs, list_attr(ctx, "scan_input_directions", m, true));
  VN_ASSIGN_OR_RETURN(const std::vector<int64_t> out_axes, list_attr(ctx, "scan_output_axes", k, false));
  VN_ASSIGN_OR_RETURN(const std::vector<int64_t> out_dirs, list_attr(ctx, "scan_output_directions", k, true));

  int64_t length = -1;
  for (size_t j = 0; j < m; ++j) {
    const Tensor& x = ctx.input(n + j);
    if (x.rank() < 1) return ctx.fail(StatusCode::kShapeMismatch, "scan input {} is a scalar", j);
    VN_ASSIGN_OR_RETURN(in_axes[j], normalize_axis(ctx, in_axes[j], x.rank()));
    const int64_t len = x.dim(in_axes[j]);
    if (length >= 0 && len != length) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "scan input {} has {} elements along its scan axis, but input 0 has {}", j, len, length);
    }
    length = len;
  }

  std::vector<Tensor> args(n + m);
  for (size_t i = 0; i < n; ++i) args[i] = ctx.input(i);
  std::vector<Stacker> stacked = make_stackers(*body, n, k, "scan output");
  for (int64_t t = 0; t < length; ++t) {
    VN_RETURN_IF_ERROR(ctx.poll_cancel());
    for (size_t j = 0; j < m; ++j) {
      args[n + j] = slice_along(ctx.input(n + j), in_axes[j], in_dirs[j] ? length - 1 - t : t);
    }
    VN_ASSIGN_OR_RETURN(std::vector<Tensor> out, ctx.run_subgraph(*body, args));
    for (size_t i = 0; i < n; ++i) args[i] = std::move(out[i]);
    for (size_t j = 0; j < k; ++j) VN_RETURN_IF_ERROR(stacked[j].append(ctx, out[n + j]));
  }

  for (size_t i = 0; i < n; ++i) ctx.set_output(i, std::move(args[i]));
  for (size_t j = 0; j < k; ++j) {
    const ValueInfo& declared = body->outputs[n + j];
    const int64_t element_rank = stacked[j].count() > 0 ? static_cast<int64_t>(stacked[j].element_shape().size())
                                 : declared.shape       ? static_cast<int64_t>(declared.shape->size())
                                                        : 0;
    VN_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, out_axes[j], element_rank + 1));
    VN_ASSIGN_OR_RETURN(Tensor y, stacked[j].stack(ctx, axis, out_dirs[j] != 0, declared));
    ctx.set_output(n + j, std::move(y));
  }
  return Status::OK();
}

/// Copies `block` (a batch's stacked scan output, [len, element...]) into row `b` of `out`
/// ([batch, max_len, element...]); the rest of the row stays zero.
void copy_batch_row(const Tensor& block, Tensor& out, int64_t b) {
  const int64_t row = out.numel() / out.dim(0);
  (void)dispatch_by_size(out.dtype(), [&]<typename U>() {
    std::copy_n(raw_data<U>(block), block.numel(), raw_mutable_data<U>(out) + b * row);
    return Status::OK();
  });
}

Status scan_8(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(const Graph* body, required_body(ctx, "body"));
  if (ctx.input_count() < 2) {
    return ctx.fail(StatusCode::kInvalidModel, "expects sequence_lens (may be empty) and at least one scan input");
  }
  VN_ASSIGN_OR_RETURN(const size_t m, scan_input_count(ctx, ctx.input_count() - 1));
  VN_RETURN_IF_ERROR(check_inputs_present(ctx, 1));
  const size_t n = ctx.input_count() - 1 - m;
  if (ctx.output_count() < n) {
    return ctx.fail(StatusCode::kInvalidModel, "has {} state variables but {} outputs", n, ctx.output_count());
  }
  const size_t k = ctx.output_count() - n;
  VN_RETURN_IF_ERROR(check_body_signature(ctx, *body, "body", n + m, n + k));
  VN_ASSIGN_OR_RETURN(const std::vector<int64_t> dirs, list_attr(ctx, "directions", m, true));

  const Tensor& first = ctx.input(1 + n);
  if (first.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "scan input 0 must have batch and sequence axes, got shape {}",
                    shape_to_string(first.shape()));
  }
  const int64_t batch = first.dim(0);
  const int64_t max_len = first.dim(1);
  for (size_t j = 0; j < m; ++j) {
    const Tensor& x = ctx.input(1 + n + j);
    if (x.rank() < 2 || x.dim(0) != batch || x.dim(1) != max_len) {
      return ctx.fail(StatusCode::kShapeMismatch, "scan input {} has shape {}, expected ({}, {}, ...)", j,
                      shape_to_string(x.shape()), batch, max_len);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const Tensor& s = ctx.input(1 + i);
    if (s.rank() < 1 || s.dim(0) != batch) {
      return ctx.fail(StatusCode::kShapeMismatch, "state variable {} has shape {}, expected batch size {} first", i,
                      shape_to_string(s.shape()), batch);
    }
  }
  std::vector<int64_t> lengths(static_cast<size_t>(batch), max_len);
  if (ctx.has_input(0)) {
    VN_ASSIGN_OR_RETURN(lengths, input_int64s(ctx, 0, "sequence_lens"));
    if (static_cast<int64_t>(lengths.size()) != batch) {
      return ctx.fail(StatusCode::kShapeMismatch, "sequence_lens has {} entries for batch size {}", lengths.size(),
                      batch);
    }
    for (int64_t len : lengths) {
      if (len < 0 || len > max_len) {
        return ctx.fail(StatusCode::kInvalidModel, "sequence length {} is outside [0, {}]", len, max_len);
      }
    }
  }

  std::vector<Stacker> final_states = make_stackers(*body, 0, n, "state variable");
  std::vector<std::vector<Tensor>> rows(k);  // per scan output: each batch's stacked [len, element...]
  std::vector<Tensor> args(n + m);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lengths[static_cast<size_t>(b)];
    for (size_t i = 0; i < n; ++i) args[i] = slice_along(ctx.input(1 + i), 0, b);
    std::vector<Tensor> inputs(m);
    for (size_t j = 0; j < m; ++j) inputs[j] = slice_along(ctx.input(1 + n + j), 0, b);
    std::vector<Stacker> stacked = make_stackers(*body, n, k, "scan output");
    for (int64_t t = 0; t < len; ++t) {
      VN_RETURN_IF_ERROR(ctx.poll_cancel());
      for (size_t j = 0; j < m; ++j) args[n + j] = slice_along(inputs[j], 0, dirs[j] ? len - 1 - t : t);
      VN_ASSIGN_OR_RETURN(std::vector<Tensor> out, ctx.run_subgraph(*body, args));
      for (size_t i = 0; i < n; ++i) args[i] = std::move(out[i]);
      for (size_t j = 0; j < k; ++j) VN_RETURN_IF_ERROR(stacked[j].append(ctx, out[n + j]));
    }
    for (size_t i = 0; i < n; ++i) VN_RETURN_IF_ERROR(final_states[i].append(ctx, args[i]));
    for (size_t j = 0; j < k; ++j) {
      VN_ASSIGN_OR_RETURN(Tensor row, stacked[j].stack(ctx, 0, false, body->outputs[n + j]));
      rows[j].push_back(std::move(row));
    }
  }

  for (size_t i = 0; i < n; ++i) {
    VN_ASSIGN_OR_RETURN(Tensor y, final_states[i].stack(ctx, 0, false, body->outputs[i]));
    ctx.set_output(i, std::move(y));
  }
  for (size_t j = 0; j < k; ++j) {
    // Every batch's element shape must agree; the longest row gives it.
    const Tensor* widest = nullptr;
    for (const Tensor& row : rows[j]) {
      if (!widest || row.dim(0) > widest->dim(0)) widest = &row;
    }
    Shape shape;
    DType dtype = DType::kFloat32;
    if (widest) {
      shape = widest->shape();
      dtype = widest->dtype();
    } else {
      const Stacker none(fmt::format("scan output '{}'", body->outputs[n + j].name));
      VN_ASSIGN_OR_RETURN(Tensor empty, none.stack(ctx, 0, false, body->outputs[n + j]));
      shape = empty.shape();
      dtype = empty.dtype();
    }
    shape[0] = max_len;
    shape.insert(shape.begin(), batch);
    VN_ASSIGN_OR_RETURN(Tensor y, Tensor::create(dtype, shape));
    for (size_t b = 0; b < rows[j].size(); ++b) {
      const Tensor& row = rows[j][b];
      if (row.dim(0) == 0) continue;
      if (row.dtype() != dtype ||
          !std::equal(row.shape().begin() + 1, row.shape().end(), shape.begin() + 2, shape.end())) {
        return ctx.fail(StatusCode::kShapeMismatch, "scan output {} has element shape {} in batch {} but {} elsewhere",
                        j, shape_to_string(Shape(row.shape().begin() + 1, row.shape().end())), b,
                        shape_to_string(Shape(shape.begin() + 2, shape.end())));
      }
      if (y.numel() > 0) copy_batch_row(row, y, static_cast<int64_t>(b));
    }
    ctx.set_output(n + j, std::move(y));
  }
  return Status::OK();
}

}  // namespace

void register_scan_ops(OpRegistry& registry) {
  registry.add("Scan", 8, scan_8);
  // 19, 21, 23, 24 and 25 only added element types Vernier refuses when it reads them.
  for (int64_t v : {9, 11, 16, 19, 21, 23, 24, 25}) registry.add("Scan", v, scan_9);
}

}  // namespace vn::ops
