// SPDX-License-Identifier: Apache-2.0
#include "core/ir/onnx_signature.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <exception>

#include "core/common/logging.h"
#include "core/ir/onnx_proto.h"

namespace vn {
namespace {

// Tensor data above this size is not written for type checking, which never reads it.
constexpr uint64_t kTypeCheckDataLimit = 4096;

std::string schema_domain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}

OpFormal formal_of(const onnx::OpSchema::FormalParameter& p) {
  OpFormal f;
  f.name = p.GetName();
  f.type_str = p.GetTypeStr();
  for (const std::string* t : p.GetTypes()) {
    f.allows_float16 = f.allows_float16 || *t == "tensor(float16)";
    f.allows_float32 = f.allows_float32 || *t == "tensor(float)";
  }
  f.variadic = p.GetOption() == onnx::OpSchema::Variadic;
  return f;
}

const onnx::OpSchema* schema_at(std::string_view op_type, int64_t opset, const std::string& domain) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto range = ranges.find(domain);
  if (range == ranges.end() || opset < 1) return nullptr;
  const int version = static_cast<int>(std::min<int64_t>(opset, range->second.second));
  return onnx::OpSchemaRegistry::Schema(std::string(op_type), version, domain);
}

const OpFormal* formal_at(const std::vector<OpFormal>& formals, size_t i) {
  if (i < formals.size()) return &formals[i];
  if (!formals.empty() && formals.back().variadic) return &formals.back();
  return nullptr;
}

}  // namespace

const OpFormal* OpSignature::input(size_t i) const { return formal_at(inputs, i); }
const OpFormal* OpSignature::output(size_t i) const { return formal_at(outputs, i); }

std::optional<OpSignature> onnx_op_signature(std::string_view op_type, int64_t opset, std::string_view domain) {
  try {
    const onnx::OpSchema* schema = schema_at(op_type, opset, schema_domain(domain));
    if (!schema) return std::nullopt;
    OpSignature sig;
    sig.since_version = schema->SinceVersion();
    for (const auto& p : schema->inputs()) sig.inputs.push_back(formal_of(p));
    for (const auto& p : schema->outputs()) sig.outputs.push_back(formal_of(p));
    return sig;
  } catch (const std::exception& e) {
    VN_LOG_WARNING("libonnx schema of {}: {}", op_type, one_line(e.what()));
    return std::nullopt;
  }
}

std::optional<std::string> onnx_opset_upgrade_blocker(const Node& node, int64_t from, int64_t to) {
  const onnx::OpSchema* old_schema = schema_at(node.op_type, from, schema_domain(node.domain));
  const onnx::OpSchema* new_schema = schema_at(node.op_type, to, schema_domain(node.domain));
  if (!old_schema || !new_schema) return fmt::format("libonnx knows no {} schema at opset {}", node.op_type, to);
  if (old_schema->SinceVersion() == new_schema->SinceVersion()) return std::nullopt;
  const std::string change = fmt::format("{}-{} became {}-{}", node.op_type, old_schema->SinceVersion(),
                                         node.op_type, new_schema->SinceVersion());
  if (new_schema->Deprecated()) return change + " (deprecated)";
  auto same_formals = [](const auto& a, const auto& b, bool may_become_optional) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].GetName() != b[i].GetName()) return false;
      const bool widened = may_become_optional && a[i].GetOption() == onnx::OpSchema::Single &&
                           b[i].GetOption() == onnx::OpSchema::Optional;
      if (a[i].GetOption() != b[i].GetOption() && !widened) return false;
    }
    return true;
  };
  if (!same_formals(old_schema->inputs(), new_schema->inputs(), true)) return change + ": its inputs changed";
  if (!same_formals(old_schema->outputs(), new_schema->outputs(), false)) return change + ": its outputs changed";
  const auto& old_attrs = old_schema->attributes();
  const auto& new_attrs = new_schema->attributes();
  for (const Attribute& a : node.attributes) {
    if (new_attrs.count(a.name) == 0) return fmt::format("{}: attribute '{}' was removed", change, a.name);
  }
  for (const auto& [name, attr] : new_attrs) {
    const auto old = old_attrs.find(name);
    if (old == old_attrs.end()) {
      if (attr.required) return fmt::format("{}: it requires the new attribute '{}'", change, name);
      continue;
    }
    // A changed default matters only to a node that relies on it.
    const bool set = node.attr(name) != nullptr;
    if (old->second.type != attr.type ||
        (!set && old->second.default_value.SerializeAsString() != attr.default_value.SerializeAsString())) {
      return fmt::format("{}: attribute '{}' changed its type or default", change, name);
    }
  }
  return std::nullopt;
}

Status check_model_types(const Model& model) {
  try {
    onnx::ModelProto proto;
    ProtoWriteContext ctx;
    ctx.external_threshold = kTypeCheckDataLimit;
    VN_RETURN_IF_ERROR(model_to_proto(model, proto, &ctx));
    if (std::optional<std::string> reason = checker_blind_spot(proto)) {
      VN_LOG_WARNING("{}; the type check was skipped because libonnx would judge the model by older rules", *reason);
      return Status::OK();
    }
    VN_RETURN_IF_ERROR(model_proto_check_inference_hazards(proto, ""));
    const onnx::ShapeInferenceOptions options(/*check_type_val=*/true, /*strict_mode_val=*/1,
                                              /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "type check: {}", one_line(e.what()));
  }
  return Status::OK();
}

}  // namespace vn
