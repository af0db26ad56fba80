// SPDX-License-Identifier: Apache-2.0
#include "core/ops/op_registry.h"

#include <algorithm>
#include <tuple>

#include "core/ir/onnx_schema.h"

namespace vn::ops {
namespace {

std::string_view canonical_domain(std::string_view domain) { return is_default_domain(domain) ? "" : domain; }

std::string domain_label(std::string_view domain) { return domain.empty() ? "ai.onnx" : std::string(domain); }

std::string version_list(std::string_view op, const std::vector<int64_t>& versions) {
  std::string out;
  for (int64_t v : versions) out += fmt::format("{}{}-{}", out.empty() ? "" : ", ", op, v);
  return out;
}

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

std::vector<int64_t> OpRegistry::versions(std::string_view domain, std::string_view op_type) const {
  const std::string_view d = canonical_domain(domain);
  std::vector<int64_t> out;
  for (const KernelDef& def : defs_) {
    if (def.domain == d && def.op_type == op_type) out.push_back(def.since_version);
  }
  return out;
}

KernelLookup OpRegistry::lookup(std::string_view domain, std::string_view op_type, int64_t opset) const {
  const std::string_view d = canonical_domain(domain);
  KernelLookup result;
  if (opset < 1) {
    result.reason = fmt::format("the model imports no opset for domain '{}'", domain_label(d));
    return result;
  }
  if (!is_onnx_domain(d)) {
    for (const KernelDef& def : defs_) {
      if (def.domain == d && def.op_type == op_type && def.since_version <= opset &&
          (!result.def || def.since_version > result.def->since_version)) {
        result.def = &def;
      }
    }
    if (result.def) {
      result.version = result.def->since_version;
    } else {
      result.reason = fmt::format("unknown op {} in domain {}", op_type, domain_label(d));
    }
    return result;
  }
  if (opset > newest_onnx_opset(d)) {
    result.reason = fmt::format("opset {} of domain {} is newer than the {} Vernier knows (ONNX {}); {} may have "
                                "changed there",
                                opset, domain_label(d), newest_onnx_opset(d), kOnnxTableVersion, op_type);
    return result;
  }
  const OnnxSchema* schema = onnx_schema(d, op_type, opset);
  if (!schema) {
    const auto all = onnx_schema_versions(d, op_type);
    result.reason = all.empty() ? fmt::format("unknown op {} in domain {}", op_type, domain_label(d))
                                : fmt::format("{} does not exist at opset {} (ONNX defines it from opset {})", op_type,
                                              opset, all.front().since_version);
    return result;
  }
  result.version = schema->since_version;
  for (const KernelDef& def : defs_) {
    if (def.domain == d && def.op_type == op_type && def.since_version == schema->since_version) {
      result.def = &def;
      return result;
    }
  }
  const std::vector<int64_t> have = versions(d, op_type);
  result.reason = have.empty()
                      ? fmt::format("{} (opset {}) is not implemented", schema->label(), opset)
                      : fmt::format("{} (the version in force at opset {}) is not implemented; implemented: {}",
                                    schema->label(), opset, version_list(op_type, have));
  return result;
}

const KernelDef* OpRegistry::find(std::string_view domain, std::string_view op_type, int64_t opset) const {
  return lookup(domain, op_type, opset).def;
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
