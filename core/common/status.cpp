// SPDX-License-Identifier: Apache-2.0
#include "core/common/status.h"

#include <cstdio>
#include <cstdlib>

namespace vn {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kInvalidModel: return "invalid model";
    case StatusCode::kUnsupportedOp: return "unsupported op";
    case StatusCode::kUnsupportedAttr: return "unsupported attribute";
    case StatusCode::kUnsupportedDType: return "unsupported dtype";
    case StatusCode::kShapeMismatch: return "shape mismatch";
    case StatusCode::kNumericFailure: return "numeric failure";
    case StatusCode::kIoError: return "i/o error";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kExternalFailure: return "external command failed";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message, std::optional<NodeRef> node) {
  if (code == StatusCode::kOk) return;
  state_ = std::make_shared<const State>(State{code, std::move(message), std::move(node)});
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::to_string() const {
  if (!state_) return "OK";
  if (!state_->node) return state_->message;
  const NodeRef& n = *state_->node;
  std::string where = n.index >= 0 ? fmt::format("node {} ", n.index) : std::string("node ");
  where += fmt::format("'{}'", n.name);
  if (!n.op_type.empty()) where += fmt::format(" ({})", n.op_type);
  return where + ": " + state_->message;
}

Status Status::with_context(std::string_view context) const {
  if (!state_) return *this;
  return Status(state_->code, fmt::format("{}: {}", context, state_->message), state_->node);
}

Status Status::with_node(NodeRef node) const {
  if (!state_ || state_->node) return *this;
  return Status(state_->code, state_->message, std::move(node));
}

void check_failed(const char* file, int line, const char* condition, std::string_view message) {
  std::fprintf(stderr, "vernier: internal error at %s:%d: check '%s' failed%s%.*s\n", file, line, condition,
               message.empty() ? "" : ": ", static_cast<int>(message.size()), message.data());
  std::abort();
}

}  // namespace vn
