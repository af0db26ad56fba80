// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ops/kernel_context.h"

namespace vn::ops {

/// A reference kernel: computes the node's outputs from its inputs, or returns why it cannot.
using KernelFn = Status (*)(KernelContext& ctx);

/// One registration: the kernel implements version `since_version` of `op_type` in `domain`, the
/// version ONNX defines from that opset until the op's next version. For an ONNX domain it must
/// be one of ONNX's since-versions of the op (tests/ops/registry_test.cpp checks every one), and a
/// kernel implements only the versions it is registered at: a node whose version is not
/// registered is refused, never run by a kernel of another version.
struct KernelDef {
  std::string domain;  ///< "" for the default ai.onnx domain
  std::string op_type;
  int64_t since_version = 1;
  KernelFn fn = nullptr;
};

/// Which version of an op a node runs, and whether a kernel implements it.
struct KernelLookup {
  const KernelDef* def = nullptr;  ///< the kernel, or nullptr with `reason` saying why there is none
  int64_t version = 0;             ///< the op's version in force at the opset (0 when unknown)
  std::string reason;              ///< one line for the user when `def` is null
};

/// Kernels keyed by (domain, op type, since-version). Filled explicitly by register_all_ops;
/// there is no static self-registration.
class OpRegistry {
 public:
  /// Registers a kernel. Registering the same key twice is a programming error (aborts).
  void add(std::string_view op_type, int64_t since_version, KernelFn fn, std::string_view domain = "");

  /// The kernel for `op_type` at the model's `opset` of `domain`. For ONNX's domains, the version
  /// in force at `opset` (ONNX's since-version table, core/ir/onnx_schema.h) must be registered
  /// itself; elsewhere the registration with the highest since_version <= opset is taken.
  KernelLookup lookup(std::string_view domain, std::string_view op_type, int64_t opset) const;
  /// lookup(...).def.
  const KernelDef* find(std::string_view domain, std::string_view op_type, int64_t opset) const;
  /// True when some version of the op is registered (to tell "unknown op" from "opset too old").
  bool knows(std::string_view domain, std::string_view op_type) const;
  /// The registered versions of the op, ascending.
  std::vector<int64_t> versions(std::string_view domain, std::string_view op_type) const;
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
