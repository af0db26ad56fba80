// SPDX-License-Identifier: Apache-2.0
// Fields of a model that libonnx 1.12's protobuf does not know. Its onnx.proto is IR version 8;
// models written since carry newer fields, which protobuf keeps aside as unknown fields instead
// of failing (newer element types need no such care: data_type and elem_type are plain int32
// fields, and values Vernier does not read are refused where they are converted). Reading such a model as if they were not there
// would be reading half of it, so each one is either known to leave the computation unchanged or
// refused.
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include "core/ir/onnx_proto.h"
#include "core/ir/onnx_schema.h"

namespace vn {
namespace {

namespace pb = google::protobuf;

/// A field added to onnx.proto after IR version 8, by its message and number.
struct NewerField {
  std::string_view message;
  int number;
  std::string_view name;
  /// Annotations that do not change what the model computes: read past.
  bool harmless;
};

constexpr NewerField kNewerFields[] = {
    {"onnx.NodeProto", 8, "overload", false},  // selects a model-local function overload
    {"onnx.NodeProto", 9, "metadata_props", true},
    {"onnx.NodeProto", 10, "device_configurations", true},  // multi-device sharding hints
    {"onnx.GraphProto", 16, "metadata_props", true},
    {"onnx.ValueInfoProto", 4, "metadata_props", true},
    {"onnx.TensorProto", 16, "metadata_props", true},
    {"onnx.ModelProto", 26, "configuration", true},  // multi-device configurations
};

// Fields whose content Vernier drops as a whole, with a warning, so what is inside them does not
// matter: model-local functions and training information.
bool dropped(const pb::FieldDescriptor* field) {
  const std::string& owner = field->containing_type()->full_name();
  return owner == "onnx.ModelProto" && (field->name() == "functions" || field->name() == "training_info");
}

// "node 'conv1'", "tensor 'w'", "graph 'main'": the message named for the user.
std::string describe(const pb::Message& m) {
  const pb::Descriptor* d = m.GetDescriptor();
  std::string what = d->name();
  if (what.size() > 5 && what.compare(what.size() - 5, 5, "Proto") == 0) what.resize(what.size() - 5);
  for (char& c : what) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (const pb::FieldDescriptor* name = d->FindFieldByName("name");
      name && name->type() == pb::FieldDescriptor::TYPE_STRING && !name->is_repeated()) {
    const std::string value = m.GetReflection()->GetString(m, name);
    if (!value.empty()) what += " '" + value + "'";
  }
  return what;
}

Status check_message(const pb::Message& m, std::string_view source) {
  const pb::Reflection* r = m.GetReflection();
  const pb::UnknownFieldSet& unknown = r->GetUnknownFields(m);
  const std::string& type = m.GetDescriptor()->full_name();
  for (int i = 0; i < unknown.field_count(); ++i) {
    const pb::UnknownField& f = unknown.field(i);
    const NewerField* known = nullptr;
    for (const NewerField& n : kNewerFields) {
      if (n.message == type && n.number == f.number()) known = &n;
    }
    if (known && known->harmless) continue;
    if (known && known->name == "overload" && f.type() == pb::UnknownField::TYPE_LENGTH_DELIMITED &&
        f.length_delimited().empty()) {
      continue;
    }
    if (known) {
      return make_error(StatusCode::kInvalidModel, "{}{}: field '{}' is not supported", source_prefix(source), describe(m),
                        known->name);
    }
    return make_error(StatusCode::kInvalidModel,
                      "{}{}: field {} of {} is newer than what Vernier reads (IR version up to {}); refusing rather "
                      "than reading half of the model",
                      source_prefix(source), describe(m), f.number(), type, kNewestIrVersion);
  }
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor* field : fields) {
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || dropped(field)) continue;
    if (field->is_repeated()) {
      for (int k = 0, n = r->FieldSize(m, field); k < n; ++k) {
        VN_RETURN_IF_ERROR(check_message(r->GetRepeatedMessage(m, field, k), source));
      }
    } else {
      VN_RETURN_IF_ERROR(check_message(r->GetMessage(m, field), source));
    }
  }
  return Status::OK();
}

}  // namespace

Status model_proto_check_understood(const onnx::ModelProto& proto, std::string_view source) {
  if (proto.ir_version() > kNewestIrVersion) {
    return make_error(StatusCode::kInvalidModel,
                      "{}IR version {} is newer than the {} Vernier reads (ONNX {}); refusing rather than reading it "
                      "by older rules",
                      source_prefix(source), proto.ir_version(), kNewestIrVersion, kOnnxTableVersion);
  }
  return check_message(proto, source);
}

}  // namespace vn
