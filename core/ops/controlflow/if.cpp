// SPDX-License-Identifier: Apache-2.0
// If: runs then_branch or else_branch, whose outputs become the node's. The branches read the
// enclosing scopes by name and take no inputs. Versions 11, 13 and 16 widen the output types
// (shapes may differ between branches, then sequences and optionals); for tensors all behave alike.
#include "core/ops/controlflow/iteration.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status if_op(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(const bool cond, read_condition(ctx, ctx.input(0), "cond"));
  const char* branch = cond ? "then_branch" : "else_branch";
  // The branch not taken is part of the node all the same.
  ctx.ignore_attrs({cond ? "else_branch" : "then_branch"});
  VN_ASSIGN_OR_RETURN(const Graph* body, required_body(ctx, branch));
  VN_RETURN_IF_ERROR(check_body_signature(ctx, *body, branch, 0, ctx.output_count()));
  VN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, ctx.run_subgraph(*body, {}));
  for (size_t i = 0; i < outputs.size(); ++i) ctx.set_output(i, std::move(outputs[i]));
  return Status::OK();
}

}  // namespace

void register_if_ops(OpRegistry& registry) {
  // 19, 21, 23, 24 and 25 only added element types Vernier refuses when it reads them.
  for (int64_t v : {1, 11, 13, 16, 19, 21, 23, 24, 25}) registry.add("If", v, if_op);
}

}  // namespace vn::ops
