// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ops/kernel_context.h"

namespace vn::ops {

/// A reference kernel: computes the node's outputs from its inputs, or returns why it cannot.
using KernelFn = Status (*)(KernelContext& ctx);

/// One registration: the kernel implements `op_type` of `domain` from opset `since_version` on,
/// until a registration with a higher since_version for the same op takes over.
struct KernelDef {
  std::string domain;  ///< "" for the default ai.onnx domain
  std::string op_type;
  int64_t since_version = 1;
  KernelFn fn = nullptr;
};

/// Kernels keyed by (domain, op type, since-version). Filled explicitly by register_all_ops;
/// there is no static self-registration.
class OpRegistry {
 public:
  /// Registers a kernel. Registering the same key twice is a programming error (aborts).
  void add(std::string_view op_type, int64_t since_version, KernelFn fn, std::string_view domain = "");

  /// The kernel with the highest since_version ≤ `opset`, or nullptr.
  const KernelDef* find(std::string_view domain, std::string_view op_type, int64_t opset) const;
  /// True when some version of the op is registered (to tell "unknown op" from "opset too old").
  bool knows(std::string_view domain, std::string_view op_type) const;
  /// Every registration, sorted by domain, op type and version.
  const std::vector<KernelDef>& all() const { return defs_; }

 private:
  std::vector<KernelDef> defs_;  // kept sorted
};

/// Registers every reference kernel family (core/ops/register_all.cpp).
void register_all_ops(OpRegistry& registry);

/// The process-wide registry of reference kernels, built on first use.
const OpRegistry& reference_registry();

}  // namespace vn::ops
