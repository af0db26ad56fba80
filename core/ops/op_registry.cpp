// SPDX-License-Identifier: Apache-2.0
#include "core/ops/op_registry.h"

#include <algorithm>
#include <tuple>

namespace vn::ops {
namespace {

std::string_view canonical_domain(std::string_view domain) { return is_default_domain(domain) ? "" : domain; }

}  // namespace

void OpRegistry::add(std::string_view op_type, int64_t since_version, KernelFn fn, std::string_view domain) {
  KernelDef def{std::string(canonical_domain(domain)), std::string(op_type), since_version, fn};
  auto key = [](const KernelDef& d) { return std::tie(d.domain, d.op_type, d.since_version); };
  auto it = std::lower_bound(defs_.begin(), defs_.end(), def,
                             [&](const KernelDef& a, const KernelDef& b) { return key(a) < key(b); });
  VN_CHECK(it == defs_.end() || key(*it) != key(def), "kernel {}:{}@{} registered twice", def.domain, def.op_type,
           def.since_version);
  defs_.insert(it, std::move(def));
}

const KernelDef* OpRegistry::find(std::string_view domain, std::string_view op_type, int64_t opset) const {
  const std::string_view d = canonical_domain(domain);
  const KernelDef* best = nullptr;
  for (const KernelDef& def : defs_) {
    if (def.domain == d && def.op_type == op_type && def.since_version <= opset) {
      if (!best || def.since_version > best->since_version) best = &def;
    }
  }
  return best;
}

bool OpRegistry::knows(std::string_view domain, std::string_view op_type) const {
  const std::string_view d = canonical_domain(domain);
  return std::any_of(defs_.begin(), defs_.end(),
                     [&](const KernelDef& def) { return def.domain == d && def.op_type == op_type; });
}

const OpRegistry& reference_registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_all_ops(r);
    return r;
  }();
  return registry;
}

}  // namespace vn::ops
