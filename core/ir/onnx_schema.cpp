// SPDX-License-Identifier: Apache-2.0
#include "core/ir/onnx_schema.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace vn {
namespace {

constexpr OnnxSchema kSchemas[] = {
#define VN_ONNX_SCHEMA(domain, op, since, deprecated, min_in, max_in, min_out, max_out, inputs, outputs, attrs) \
  OnnxSchema{domain, op, since, deprecated, min_in, max_in, min_out, max_out, inputs, outputs, attrs},
#include "core/ir/onnx_schemas_a_k.inc"
#include "core/ir/onnx_schemas_l_z.inc"
#undef VN_ONNX_SCHEMA
};

// The table is generated sorted; the lookups below rely on it.
constexpr bool sorted() {
  for (size_t i = 1; i < std::size(kSchemas); ++i) {
    const OnnxSchema& a = kSchemas[i - 1];
    const OnnxSchema& b = kSchemas[i];
    if (std::tie(a.domain, a.op, a.since_version) >= std::tie(b.domain, b.op, b.since_version)) return false;
  }
  return true;
}
static_assert(sorted(), "onnx_schemas_*.inc must be sorted by domain, op and version");

// The constants of onnx_schema.h describe the table that was generated.
#define VN_ONNX_SCHEMA(...)
#define VN_ONNX_TABLE_INFO(onnx_version, ir_version, opset)                                         \
  static_assert(std::string_view(onnx_version) == kOnnxTableVersion && (ir_version) == kNewestIrVersion && \
                    (opset) == kNewestDefaultOpset,                                                   \
                "onnx_schema.h's constants do not match onnx_schemas_a_k.inc");
#include "core/ir/onnx_schemas_a_k.inc"
#undef VN_ONNX_SCHEMA

std::string_view canonical(std::string_view domain) { return domain == "ai.onnx" ? std::string_view() : domain; }

// Calls f(item) for each comma-separated item of `list`.
template <typename F>
void for_each_item(std::string_view list, F&& f) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    f(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

}  // namespace

bool OnnxSchema::has_attribute(std::string_view name) const {
  bool found = false;
  for_each_item(attributes, [&](std::string_view a) {
    if (!a.empty() && a.back() == '!') a.remove_suffix(1);
    found |= a == name;
  });
  return found;
}

std::vector<std::string_view> OnnxSchema::required_attributes() const {
  std::vector<std::string_view> out;
  for_each_item(attributes, [&](std::string_view a) {
    if (!a.empty() && a.back() == '!') out.push_back(a.substr(0, a.size() - 1));
  });
  return out;
}

std::string_view OnnxSchema::input_name(size_t i) const {
  size_t k = 0;
  std::string_view found;
  for_each_item(inputs, [&](std::string_view in) {
    if (k == i || (k < i && !in.empty() && in.back() == '*')) found = in;
    ++k;
  });
  while (!found.empty() && (found.back() == '?' || found.back() == '*')) found.remove_suffix(1);
  return found;
}

std::string OnnxSchema::label() const { return fmt::format("{}-{}", op, since_version); }

bool is_onnx_domain(std::string_view domain) {
  domain = canonical(domain);
  return domain.empty() || domain == "ai.onnx.ml" || domain == "ai.onnx.preview.training" ||
         domain == "ai.onnx.preview";
}

int64_t newest_onnx_opset(std::string_view domain) {
  domain = canonical(domain);
  if (domain.empty()) return kNewestDefaultOpset;
  int64_t newest = 0;
  for (const OnnxSchema& s : kSchemas) {
    if (s.domain == domain) newest = std::max<int64_t>(newest, s.since_version);
  }
  return newest;
}

std::span<const OnnxSchema> onnx_schema_versions(std::string_view domain, std::string_view op) {
  domain = canonical(domain);
  const auto key = std::make_pair(domain, op);
  const OnnxSchema* first = std::lower_bound(std::begin(kSchemas), std::end(kSchemas), key,
                                             [](const OnnxSchema& s, const auto& k) {
                                               return std::tie(s.domain, s.op) < std::tie(k.first, k.second);
                                             });
  const OnnxSchema* last = first;
  while (last != std::end(kSchemas) && last->domain == domain && last->op == op) ++last;
  return {first, last};
}

const OnnxSchema* onnx_schema(std::string_view domain, std::string_view op, int64_t opset) {
  const OnnxSchema* in_force = nullptr;
  for (const OnnxSchema& s : onnx_schema_versions(domain, op)) {
    if (s.since_version <= opset) in_force = &s;
  }
  return in_force;
}

std::span<const OnnxSchema> all_onnx_schemas() { return kSchemas; }

}  // namespace vn
