// SPDX-License-Identifier: Apache-2.0
#include "core/ir/onnx_export.h"

#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>

#include "core/ir/mapped_file.h"
#include "core/ir/onnx_proto.h"

namespace vn {

static_assert(kMaxModelProtoBytes == kProtobufMaxBytes);

namespace {

// Tensors above this size are handed to shape inference without their data: libonnx reads tensor
// data only for shape-like inputs (Reshape's shape, Slice's starts), which are far smaller.
constexpr uint64_t kInferenceDataLimit = 4096;

uint64_t tensor_bytes(const Tensor& t) {
  if (!t.defined()) return 0;
  if (t.dtype() != DType::kString) return t.nbytes();
  uint64_t n = 0;
  for (const std::string& s : t.values<std::string>()) n += s.size();
  return n;
}

// The bytes of tensor data in the graph, subgraphs included: a lower bound of the serialized size.
uint64_t total_tensor_bytes(const Graph& graph) {
  uint64_t n = 0;
  for (const Initializer& i : graph.initializers) n += tensor_bytes(i.tensor);
  for (const Node& node : graph.nodes) {
    for (const Attribute& a : node.attributes) {
      n += tensor_bytes(a.t);
      for (const Tensor& t : a.tensors) n += tensor_bytes(t);
      if (a.g) n += total_tensor_bytes(*a.g);
      for (const auto& g : a.graphs) {
        if (g) n += total_tensor_bytes(*g);
      }
    }
  }
  return n;
}

template <typename F>
void for_each_tensor_proto_mutable(onnx::GraphProto& graph, F&& f) {
  for (onnx::TensorProto& t : *graph.mutable_initializer()) f(t);
  for (onnx::NodeProto& n : *graph.mutable_node()) {
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_t()) f(*a.mutable_t());
      for (onnx::TensorProto& t : *a.mutable_tensors()) f(t);
      if (a.has_g()) for_each_tensor_proto_mutable(*a.mutable_g(), f);
      for (onnx::GraphProto& g : *a.mutable_graphs()) for_each_tensor_proto_mutable(g, f);
    }
  }
}

Status write_proto(const onnx::ModelProto& proto, AtomicFileWriter& writer) {
  google::protobuf::io::FileOutputStream out(writer.fd());
  const bool serialized = proto.SerializeToZeroCopyStream(&out);
  const bool flushed = out.Flush();
  if (!serialized || !flushed) {
    const int err = out.GetErrno();
    return make_error(StatusCode::kIoError, "{}: write failed: {}", writer.path().string(),
                      err ? std::strerror(err) : "protobuf serialization failed");
  }
  return Status::OK();
}

// Copies the types shape inference found in `proto` (built from `graph` by model_to_proto, so nodes
// and attributes correspond one to one) back into `graph`.
void refresh_types(Graph& graph, const onnx::GraphProto& proto) {
  graph.value_info.clear();
  for (const onnx::ValueInfoProto& v : proto.value_info()) {
    if (v.has_type() && v.type().value_case() == onnx::TypeProto::kTensorType) {
      graph.value_info.push_back(value_info_from_proto(v));
    }
  }
  const auto fill_unknown = [](std::vector<ValueInfo>& infos, const auto& protos) {
    for (size_t i = 0; i < infos.size() && i < static_cast<size_t>(protos.size()); ++i) {
      const ValueInfo inferred = value_info_from_proto(protos.Get(static_cast<int>(i)));
      ValueInfo& v = infos[i];
      if (!v.dtype) v.dtype = inferred.dtype;
      if (!v.shape) {
        v.shape = inferred.shape;
      } else if (inferred.shape && inferred.shape->size() == v.shape->size()) {
        for (size_t d = 0; d < v.shape->size(); ++d) {
          Dim& dim = (*v.shape)[d];
          if (!dim.known() && dim.param.empty()) dim = (*inferred.shape)[d];
        }
      }
    }
  };
  fill_unknown(graph.inputs, proto.input());
  fill_unknown(graph.outputs, proto.output());
  for (size_t i = 0; i < graph.nodes.size() && i < static_cast<size_t>(proto.node_size()); ++i) {
    Node& node = graph.nodes[i];
    const onnx::NodeProto& np = proto.node(static_cast<int>(i));
    for (size_t j = 0; j < node.attributes.size() && j < static_cast<size_t>(np.attribute_size()); ++j) {
      Attribute& a = node.attributes[j];
      const onnx::AttributeProto& ap = np.attribute(static_cast<int>(j));
      if (a.g && ap.has_g()) {
        Graph copy = *a.g;
        refresh_types(copy, ap.g());
        a.g = std::make_shared<const Graph>(std::move(copy));
      }
      for (size_t k = 0; k < a.graphs.size() && k < static_cast<size_t>(ap.graphs_size()); ++k) {
        if (!a.graphs[k]) continue;
        Graph copy = *a.graphs[k];
        refresh_types(copy, ap.graphs(static_cast<int>(k)));
        a.graphs[k] = std::make_shared<const Graph>(std::move(copy));
      }
    }
  }
}

Status save_model_impl(const Model& model, const std::filesystem::path& path, const SaveOptions& options) {
  const std::string target = path.string();
  if (!path.has_filename()) return make_error(StatusCode::kInvalidArgument, "'{}' is not a file path", target);
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  const std::string location =
      options.external_data_file.empty() ? path.filename().string() + ".data" : options.external_data_file;
  if (Status st = external_location_check(location, "external_data_file"); !st.ok()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("{}: {}", target, st.message()));
  }
  const std::filesystem::path data_path = dir / location;
  if (data_path.lexically_normal() == path.lexically_normal()) {
    return make_error(StatusCode::kInvalidArgument, "{}: external_data_file '{}' is the model file itself", target,
                      location);
  }

  bool external = options.force_external_data || total_tensor_bytes(model.graph) >= options.max_proto_bytes;
  onnx::ModelProto proto;
  ProtoWriteContext ctx;
  if (!external) {
    VN_RETURN_IF_ERROR(model_to_proto(model, proto));
    if (proto.ByteSizeLong() > options.max_proto_bytes) {
      external = true;
      proto.Clear();
    }
  }
  if (external) {
    ctx.external_threshold = options.external_data_threshold;
    ctx.external_location = location;
    VN_RETURN_IF_ERROR(model_to_proto(model, proto, &ctx));
    const uint64_t size = proto.ByteSizeLong();
    if (size > options.max_proto_bytes) {
      return make_error(StatusCode::kInvalidArgument,
                        "{}: the model is {} bytes even with tensors of {} bytes or more in external data, over the "
                        "{}-byte limit of one protobuf message; lower external_data_threshold",
                        target, size, options.external_data_threshold, options.max_proto_bytes);
    }
  }

  std::error_code ec;
  std::filesystem::create_directories(data_path.parent_path(), ec);
  std::optional<AtomicFileWriter> data_writer;
  if (!ctx.external.empty()) {
    VN_ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::create(data_path));
    for (const ExternalTensor& e : ctx.external) {
      VN_RETURN_IF_ERROR(w.pad_to(e.offset));
      VN_RETURN_IF_ERROR(w.write(e.tensor.raw(), e.tensor.nbytes()));
    }
    data_writer.emplace(std::move(w));
  }

  if (options.check_model) {
    if (data_writer) {
      // The checker insists that external data files exist, but the data is still in its temporary
      // file; a copy of the (small, data-less) proto pointing there is checked instead.
      onnx::ModelProto shadow(proto);
      const std::string temp_location =
          (std::filesystem::path(location).parent_path() / data_writer->temp_path().filename()).string();
      for_each_tensor_proto_mutable(*shadow.mutable_graph(), [&](onnx::TensorProto& t) {
        for (onnx::StringStringEntryProto& e : *t.mutable_external_data()) {
          if (e.key() == "location") e.set_value(temp_location);
        }
      });
      VN_RETURN_IF_ERROR(model_proto_check(shadow, dir, target));
    } else {
      VN_RETURN_IF_ERROR(model_proto_check(proto, dir, target));
    }
  }

  VN_ASSIGN_OR_RETURN(AtomicFileWriter model_writer, AtomicFileWriter::create(path));
  VN_RETURN_IF_ERROR(write_proto(proto, model_writer));
  if (data_writer) VN_RETURN_IF_ERROR(data_writer->commit());
  return model_writer.commit();
}

}  // namespace

Result<std::string> serialize_model(const Model& model) { return serialize_model(model, kMaxModelProtoBytes); }

Result<std::string> serialize_model(const Model& model, uint64_t max_bytes) {
  const auto too_big = [&](uint64_t size) {
    return make_error(StatusCode::kInvalidArgument,
                      "the model serializes to {}{} bytes, over the {}-byte limit of one protobuf message; save it "
                      "with save_model, which moves large tensors to external data",
                      size == 0 ? "more than " : "", size == 0 ? max_bytes : size, max_bytes);
  };
  // Checked before building the proto, so that a 10 GB model is refused without copying it.
  if (total_tensor_bytes(model.graph) > max_bytes) return too_big(0);
  try {
    onnx::ModelProto proto;
    VN_RETURN_IF_ERROR(model_to_proto(model, proto));
    const uint64_t size = proto.ByteSizeLong();
    if (size > max_bytes) return too_big(size);
    std::string out;
    if (!proto.SerializeToString(&out)) return make_error(StatusCode::kInternal, "protobuf serialization failed");
    return out;
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInternal, "serializing the model: {}", e.what());
  }
}

Status save_model(const Model& model, const std::filesystem::path& path, const SaveOptions& options) {
  try {
    return save_model_impl(model, path, options);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kIoError, "{}: {}", path.string(), one_line(e.what()));
  }
}

Status infer_shapes(Model& model) {
  try {
    onnx::ModelProto proto;
    ProtoWriteContext ctx;
    ctx.external_threshold = kInferenceDataLimit;
    VN_RETURN_IF_ERROR(model_to_proto(model, proto, &ctx));
    Status inferred = model_proto_infer_shapes(proto, "");
    refresh_types(model.graph, proto.graph());
    return inferred;
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "shape inference failed: {}", one_line(e.what()));
  }
}

}  // namespace vn
