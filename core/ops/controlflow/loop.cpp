// SPDX-License-Identifier: Apache-2.0
// Loop: runs its body while the trip count M and the condition allow, threading loop-carried
// values through and stacking each scan output along a new first axis. M and cond are both
// optional; the body's condition output is honoured in every mode, as ONNX Runtime and the ONNX
// reference evaluator do. Versions 11, 13 and 16 differ only in the types a value may have
// (sequences, optionals); for tensors all behave alike.
#include <cstdint>
#include <limits>

#include "core/ops/controlflow/iteration.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status loop(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(const Graph* body, required_body(ctx, "body"));
  if (ctx.input_count() < 2) {
    return ctx.fail(StatusCode::kInvalidModel, "expects inputs M and cond (either may be empty), got {} inputs",
                    ctx.input_count());
  }
  const size_t carried = ctx.input_count() - 2;
  if (ctx.output_count() < carried || ctx.output_count() == 0) {
    return ctx.fail(StatusCode::kInvalidModel, "has {} loop-carried inputs but {} outputs", carried,
                    ctx.output_count());
  }
  const size_t scans = ctx.output_count() - carried;
  VN_RETURN_IF_ERROR(check_body_signature(ctx, *body, "body", 2 + carried, 1 + carried + scans));
  for (size_t i = 0; i < carried; ++i) {
    if (!ctx.has_input(2 + i)) return ctx.fail(StatusCode::kInvalidModel, "loop-carried input {} is missing", i);
  }

  int64_t trip_count = std::numeric_limits<int64_t>::max();
  if (ctx.has_input(0)) {
    const Tensor& m = ctx.input(0);
    if (m.dtype() != DType::kInt64 || m.numel() != 1) {
      return ctx.fail(StatusCode::kInvalidModel, "M must be an int64 tensor of one element, got {} {}",
                      dtype_name(m.dtype()), shape_to_string(m.shape()));
    }
    trip_count = m.data<int64_t>()[0];
  }
  bool cond = true;
  if (ctx.has_input(1)) {
    VN_ASSIGN_OR_RETURN(cond, read_condition(ctx, ctx.input(1), "cond"));
  }

  std::vector<Tensor> state(2 + carried);
  for (size_t i = 0; i < carried; ++i) state[2 + i] = ctx.input(2 + i);
  std::vector<Stacker> stacked;
  for (size_t k = 0; k < scans; ++k) {
    stacked.emplace_back(fmt::format("scan output '{}'", body->outputs[1 + carried + k].name));
  }

  for (int64_t i = 0; i < trip_count && cond; ++i) {
    VN_RETURN_IF_ERROR(ctx.poll_cancel());
    state[0] = Tensor::scalar<int64_t>(i);
    state[1] = Tensor::scalar<bool>(cond);
    VN_ASSIGN_OR_RETURN(std::vector<Tensor> out, ctx.run_subgraph(*body, state));
    VN_ASSIGN_OR_RETURN(cond, read_condition(ctx, out[0], "the body's condition output"));
    for (size_t c = 0; c < carried; ++c) state[2 + c] = std::move(out[1 + c]);
    for (size_t k = 0; k < scans; ++k) VN_RETURN_IF_ERROR(stacked[k].append(ctx, out[1 + carried + k]));
  }

  for (size_t c = 0; c < carried; ++c) ctx.set_output(c, std::move(state[2 + c]));
  for (size_t k = 0; k < scans; ++k) {
    VN_ASSIGN_OR_RETURN(Tensor y, stacked[k].stack(ctx, 0, false, body->outputs[1 + carried + k]));
    ctx.set_output(carried + k, std::move(y));
  }
  return Status::OK();
}

}  // namespace

void register_loop_ops(OpRegistry& registry) {
  // 19, 21, 23, 24 and 25 only added element types Vernier refuses when it reads them.
  for (int64_t v : {1, 11, 13, 16, 19, 21, 23, 24, 25}) registry.add("Loop", v, loop);
}

}  // namespace vn::ops
