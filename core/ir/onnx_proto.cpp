// SPDX-License-Identifier: Apache-2.0
// Graph-level conversions between Vernier's IR and ONNX protobuf messages: value infos, attributes,
// graphs and models, and the protobuf parse of a model. Tensors are in onnx_tensor_proto.cpp, the
// libonnx checks in onnx_checks.cpp.
#include <algorithm>
#include <cstring>
#include <utility>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream.h>
#include <onnx/onnx_pb.h>

#include "core/common/logging.h"
#include "core/ir/onnx_proto.h"
#include "core/ir/onnx_proto_detail.h"

namespace vn {
namespace {

using detail::release_tensor_data;
using detail::sparse_from_proto_impl;
using detail::tensor_from_proto_impl;
using onnx::AttributeProto;
using onnx::TensorProto;

// --- Value infos and types -----------------------------------------------------------------------

std::string type_description(const onnx::ValueInfoProto& proto) {
  if (!proto.has_type()) return "no type";
  const onnx::TypeProto& t = proto.type();
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return "a tensor of " + onnx_type_name(t.tensor_type().elem_type());
    case onnx::TypeProto::kSequenceType:
      return "a sequence";
    case onnx::TypeProto::kMapType:
      return "a map";
    case onnx::TypeProto::kOptionalType:
      return "an optional";
    case onnx::TypeProto::kSparseTensorType:
      return "a sparse tensor";
    case onnx::TypeProto::kOpaqueType:
      return "an opaque type";
    default:
      return "no type";
  }
}

// --- Attributes ----------------------------------------------------------------------------------

AttributeProto::AttributeType guess_attribute_type(const AttributeProto& p) {
  if (p.has_f()) return AttributeProto::FLOAT;
  if (p.has_i()) return AttributeProto::INT;
  if (p.has_s()) return AttributeProto::STRING;
  if (p.has_t()) return AttributeProto::TENSOR;
  if (p.has_g()) return AttributeProto::GRAPH;
  if (p.has_sparse_tensor()) return AttributeProto::SPARSE_TENSOR;
  if (p.has_tp()) return AttributeProto::TYPE_PROTO;
  if (p.floats_size() > 0) return AttributeProto::FLOATS;
  if (p.ints_size() > 0) return AttributeProto::INTS;
  if (p.strings_size() > 0) return AttributeProto::STRINGS;
  if (p.tensors_size() > 0) return AttributeProto::TENSORS;
  if (p.graphs_size() > 0) return AttributeProto::GRAPHS;
  if (p.sparse_tensors_size() > 0) return AttributeProto::SPARSE_TENSORS;
  if (p.type_protos_size() > 0) return AttributeProto::TYPE_PROTOS;
  return AttributeProto::UNDEFINED;
}

Result<std::shared_ptr<const Graph>> subgraph_from_proto(onnx::GraphProto& proto, ProtoReadContext& ctx) {
  VN_ASSIGN_OR_RETURN(Graph g, graph_from_proto(proto, ctx, /*main_graph=*/false));
  return std::make_shared<const Graph>(std::move(g));
}

// Converts an attribute of `owner`, including subgraphs (recursively) and tensors. An attribute
// without a type (IR version 1) gets the type of the field that is set. Sparse tensors are
// densified; a Constant's sparse_value becomes a dense `value` (the caller renames, see
// graph_from_proto). TYPE_PROTO attributes are kUnsupportedAttr. Tensor data is released from `p`
// once converted.
Result<Attribute> attribute_from_proto_impl(AttributeProto& p, ProtoReadContext& ctx, const std::string& owner) {
  Attribute a;
  a.name = p.name();
  a.doc_string = p.doc_string();
  a.ref_attr_name = p.ref_attr_name();
  const std::string what = fmt::format("attribute '{}'{}", p.name(), owner.empty() ? "" : " of " + owner);
  AttributeProto::AttributeType type = p.type();
  if (type == AttributeProto::UNDEFINED) type = guess_attribute_type(p);
  switch (type) {
    case AttributeProto::UNDEFINED:
      a.type = AttrType::kUndefined;
      break;
    case AttributeProto::FLOAT:
      a.type = AttrType::kFloat;
      a.f = p.f();
      break;
    case AttributeProto::INT:
      a.type = AttrType::kInt;
      a.i = p.i();
      break;
    case AttributeProto::STRING:
      a.type = AttrType::kString;
      a.s = p.s();
      break;
    case AttributeProto::TENSOR: {
      a.type = AttrType::kTensor;
      VN_ASSIGN_OR_RETURN(a.t, tensor_from_proto_impl(p.t(), ctx, what));
      release_tensor_data(*p.mutable_t());
      break;
    }
    case AttributeProto::SPARSE_TENSOR: {
      a.type = AttrType::kTensor;
      VN_ASSIGN_OR_RETURN(a.t, sparse_from_proto_impl(p.sparse_tensor(), ctx, what));
      break;
    }
    case AttributeProto::GRAPH: {
      a.type = AttrType::kGraph;
      VN_ASSIGN_OR_RETURN(a.g, subgraph_from_proto(*p.mutable_g(), ctx));
      break;
    }
    case AttributeProto::FLOATS:
      a.type = AttrType::kFloats;
      a.floats.assign(p.floats().begin(), p.floats().end());
      break;
    case AttributeProto::INTS:
      a.type = AttrType::kInts;
      a.ints.assign(p.ints().begin(), p.ints().end());
      break;
    case AttributeProto::STRINGS:
      a.type = AttrType::kStrings;
      a.strings.assign(p.strings().begin(), p.strings().end());
      break;
    case AttributeProto::TENSORS:
      a.type = AttrType::kTensors;
      for (int k = 0; k < p.tensors_size(); ++k) {
        VN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto_impl(p.tensors(k), ctx, fmt::format("{} [{}]", what, k)));
        a.tensors.push_back(std::move(t));
        release_tensor_data(*p.mutable_tensors(k));
      }
      break;
    case AttributeProto::SPARSE_TENSORS:
      a.type = AttrType::kTensors;
      for (int k = 0; k < p.sparse_tensors_size(); ++k) {
        VN_ASSIGN_OR_RETURN(Tensor t,
                            sparse_from_proto_impl(p.sparse_tensors(k), ctx, fmt::format("{} [{}]", what, k)));
        a.tensors.push_back(std::move(t));
      }
      break;
    case AttributeProto::GRAPHS:
      a.type = AttrType::kGraphs;
      for (int k = 0; k < p.graphs_size(); ++k) {
        VN_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> g, subgraph_from_proto(*p.mutable_graphs(k), ctx));
        a.graphs.push_back(std::move(g));
      }
      break;
    case AttributeProto::TYPE_PROTO:
    case AttributeProto::TYPE_PROTOS:
      return make_error(StatusCode::kUnsupportedAttr, "{}{}: type-proto attributes are not supported",
                        source_prefix(ctx.source), what);
    default:
      return make_error(StatusCode::kUnsupportedAttr, "{}{}: unknown attribute type {}", source_prefix(ctx.source), what,
                        static_cast<int>(type));
  }
  return a;
}

}  // namespace

// --- Public: value infos ---------------------------------------------------------------------------

bool value_info_proto_supported(const onnx::ValueInfoProto& proto) {
  if (!proto.has_type() || proto.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return true;
  if (proto.type().value_case() != onnx::TypeProto::kTensorType) return false;
  const int32_t elem = proto.type().tensor_type().elem_type();
  return elem == TensorProto::UNDEFINED || dtype_from_onnx(elem).has_value();
}

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& proto) {
  ValueInfo v;
  v.name = proto.name();
  v.doc_string = proto.doc_string();
  if (!proto.has_type() || proto.type().value_case() != onnx::TypeProto::kTensorType) return v;
  const onnx::TypeProto::Tensor& tt = proto.type().tensor_type();
  if (tt.has_elem_type()) v.dtype = dtype_from_onnx(tt.elem_type());
  if (tt.has_shape()) {
    std::vector<Dim> dims;
    dims.reserve(static_cast<size_t>(tt.shape().dim_size()));
    for (const onnx::TensorShapeProto::Dimension& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        dims.push_back(Dim::of(d.dim_value()));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        dims.push_back(Dim::named(d.dim_param()));
      } else {
        dims.push_back(Dim{});
      }
    }
    v.shape = std::move(dims);
  }
  return v;
}

void value_info_to_proto(const ValueInfo& info, onnx::ValueInfoProto& proto) {
  proto.set_name(info.name);
  if (!info.doc_string.empty()) proto.set_doc_string(info.doc_string);
  if (!info.dtype && !info.shape) return;
  onnx::TypeProto::Tensor* tt = proto.mutable_type()->mutable_tensor_type();
  if (info.dtype) tt->set_elem_type(dtype_to_onnx(*info.dtype));
  if (info.shape) {
    onnx::TensorShapeProto* shape = tt->mutable_shape();
    for (const Dim& d : *info.shape) {
      onnx::TensorShapeProto::Dimension* out = shape->add_dim();
      if (d.known()) {
        out->set_dim_value(d.value);
      } else if (!d.param.empty()) {
        out->set_dim_param(d.param);
      }
    }
  }
}

// --- Public: attributes, graphs, models --------------------------------------------------------------

Status attribute_to_proto(const Attribute& attr, AttributeProto& proto, ProtoWriteContext* ctx) {
  proto.set_name(attr.name);
  if (!attr.doc_string.empty()) proto.set_doc_string(attr.doc_string);
  if (!attr.ref_attr_name.empty()) proto.set_ref_attr_name(attr.ref_attr_name);
  switch (attr.type) {
    case AttrType::kUndefined:
      proto.set_type(AttributeProto::UNDEFINED);
      break;
    case AttrType::kFloat:
      proto.set_type(AttributeProto::FLOAT);
      proto.set_f(attr.f);
      break;
    case AttrType::kInt:
      proto.set_type(AttributeProto::INT);
      proto.set_i(attr.i);
      break;
    case AttrType::kString:
      proto.set_type(AttributeProto::STRING);
      proto.set_s(attr.s);
      break;
    case AttrType::kTensor:
      proto.set_type(AttributeProto::TENSOR);
      VN_RETURN_IF_ERROR(
          tensor_to_proto(attr.t, "", *proto.mutable_t(), ctx).with_context("attribute '" + attr.name + "'"));
      break;
    case AttrType::kGraph:
      proto.set_type(AttributeProto::GRAPH);
      if (!attr.g) return make_error(StatusCode::kInvalidArgument, "attribute '{}' has no graph", attr.name);
      VN_RETURN_IF_ERROR(graph_to_proto(*attr.g, *proto.mutable_g(), ctx));
      break;
    case AttrType::kFloats:
      proto.set_type(AttributeProto::FLOATS);
      for (float v : attr.floats) proto.add_floats(v);
      break;
    case AttrType::kInts:
      proto.set_type(AttributeProto::INTS);
      for (int64_t v : attr.ints) proto.add_ints(v);
      break;
    case AttrType::kStrings:
      proto.set_type(AttributeProto::STRINGS);
      for (const std::string& v : attr.strings) proto.add_strings(v);
      break;
    case AttrType::kTensors:
      proto.set_type(AttributeProto::TENSORS);
      for (const Tensor& t : attr.tensors) {
        VN_RETURN_IF_ERROR(
            tensor_to_proto(t, "", *proto.add_tensors(), ctx).with_context("attribute '" + attr.name + "'"));
      }
      break;
    case AttrType::kGraphs:
      proto.set_type(AttributeProto::GRAPHS);
      for (const std::shared_ptr<const Graph>& g : attr.graphs) {
        if (!g) return make_error(StatusCode::kInvalidArgument, "attribute '{}' has a missing graph", attr.name);
        VN_RETURN_IF_ERROR(graph_to_proto(*g, *proto.add_graphs(), ctx));
      }
      break;
  }
  return Status::OK();
}

Result<Graph> graph_from_proto(onnx::GraphProto& proto, ProtoReadContext& ctx, bool main_graph) {
  Graph g;
  g.name = proto.name();
  g.doc_string = proto.doc_string();
  const auto convert_io = [&](const onnx::ValueInfoProto& v, const char* kind) -> Result<ValueInfo> {
    if (main_graph && !value_info_proto_supported(v)) {
      return make_error(StatusCode::kUnsupportedDType, "{}graph {} '{}' is {}; Vernier handles tensors of {} only",
                        source_prefix(ctx.source), kind, v.name(), type_description(v),
                        "bool, integer, floating-point and string elements");
    }
    return value_info_from_proto(v);
  };
  g.inputs.reserve(static_cast<size_t>(proto.input_size()));
  for (const onnx::ValueInfoProto& v : proto.input()) {
    VN_ASSIGN_OR_RETURN(ValueInfo info, convert_io(v, "input"));
    g.inputs.push_back(std::move(info));
  }
  for (const onnx::ValueInfoProto& v : proto.output()) {
    VN_ASSIGN_OR_RETURN(ValueInfo info, convert_io(v, "output"));
    g.outputs.push_back(std::move(info));
  }
  for (const onnx::ValueInfoProto& v : proto.value_info()) {
    // Non-tensor entries carry nothing Vernier can use; shape inference can recreate them on export.
    if (v.has_type() && v.type().value_case() == onnx::TypeProto::kTensorType) {
      g.value_info.push_back(value_info_from_proto(v));
    }
  }
  g.initializers.reserve(static_cast<size_t>(proto.initializer_size()));
  for (TensorProto& t : *proto.mutable_initializer()) {
    VN_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_proto(t, ctx));
    g.initializers.push_back(Initializer{t.name(), std::move(tensor)});
    release_tensor_data(t);
  }
  for (const onnx::SparseTensorProto& s : proto.sparse_initializer()) {
    VN_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_sparse_proto(s, ctx));
    g.initializers.push_back(Initializer{s.values().name(), std::move(tensor)});
  }
  g.nodes.reserve(static_cast<size_t>(proto.node_size()));
  for (int i = 0; i < proto.node_size(); ++i) {
    onnx::NodeProto& np = *proto.mutable_node(i);
    Node n;
    n.name = np.name();
    n.op_type = np.op_type();
    n.domain = np.domain();
    n.doc_string = np.doc_string();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    const std::string owner = fmt::format("node '{}' ({})", np.name(), np.op_type());
    n.attributes.reserve(static_cast<size_t>(np.attribute_size()));
    for (AttributeProto& ap : *np.mutable_attribute()) {
      Result<Attribute> a = attribute_from_proto_impl(ap, ctx, owner);
      if (!a.ok()) return a.status().with_node(n.ref(i));
      // A sparse constant becomes a dense one: Vernier's Constant reads `value`.
      if (n.op_type == "Constant" && is_default_domain(n.domain) && a->name == "sparse_value") a->name = "value";
      n.attributes.push_back(std::move(a).value());
    }
    g.nodes.push_back(std::move(n));
  }
  return g;
}

Status graph_to_proto(const Graph& graph, onnx::GraphProto& proto, ProtoWriteContext* ctx) {
  proto.set_name(graph.name);
  if (!graph.doc_string.empty()) proto.set_doc_string(graph.doc_string);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    onnx::NodeProto* np = proto.add_node();
    for (const std::string& in : n.inputs) np->add_input(in);
    for (const std::string& out : n.outputs) np->add_output(out);
    if (!n.name.empty()) np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    if (!n.doc_string.empty()) np->set_doc_string(n.doc_string);
    for (const Attribute& a : n.attributes) {
      Status st = attribute_to_proto(a, *np->add_attribute(), ctx);
      if (!st.ok()) return st.with_node(n.ref(static_cast<int64_t>(i)));
    }
  }
  for (const Initializer& init : graph.initializers) {
    VN_RETURN_IF_ERROR(tensor_to_proto(init.tensor, init.name, *proto.add_initializer(), ctx));
  }
  for (const ValueInfo& v : graph.inputs) value_info_to_proto(v, *proto.add_input());
  for (const ValueInfo& v : graph.outputs) value_info_to_proto(v, *proto.add_output());
  for (const ValueInfo& v : graph.value_info) value_info_to_proto(v, *proto.add_value_info());
  return Status::OK();
}

Result<Model> model_from_proto(onnx::ModelProto& proto, ProtoReadContext& ctx) {
  Model m;
  m.ir_version = proto.ir_version();
  for (const onnx::OperatorSetIdProto& o : proto.opset_import())
    m.opset_imports.push_back(OpsetId{o.domain(), o.version()});
  m.producer_name = proto.producer_name();
  m.producer_version = proto.producer_version();
  m.domain = proto.domain();
  m.model_version = proto.model_version();
  m.doc_string = proto.doc_string();
  for (const onnx::StringStringEntryProto& e : proto.metadata_props()) m.metadata.emplace_back(e.key(), e.value());
  if (proto.functions_size() > 0) {
    VN_LOG_WARNING(
        "{}{} model-local function(s) dropped: Vernier does not keep them, and nodes calling them will "
        "be reported as unsupported ops",
        source_prefix(ctx.source), proto.functions_size());
  }
  if (proto.training_info_size() > 0) {
    VN_LOG_WARNING("{}training info dropped: Vernier keeps the inference graph only", source_prefix(ctx.source));
  }
  VN_ASSIGN_OR_RETURN(m.graph, graph_from_proto(*proto.mutable_graph(), ctx, /*main_graph=*/true));
  m.base_dir = ctx.base_dir;
  return m;
}

Status model_to_proto(const Model& model, onnx::ModelProto& proto, ProtoWriteContext* ctx) {
  proto.set_ir_version(model.ir_version);
  for (const OpsetId& o : model.opset_imports) {
    onnx::OperatorSetIdProto* op = proto.add_opset_import();
    op->set_domain(o.domain);
    op->set_version(o.version);
  }
  if (!model.producer_name.empty()) proto.set_producer_name(model.producer_name);
  if (!model.producer_version.empty()) proto.set_producer_version(model.producer_version);
  if (!model.domain.empty()) proto.set_domain(model.domain);
  if (model.model_version != 0) proto.set_model_version(model.model_version);
  if (!model.doc_string.empty()) proto.set_doc_string(model.doc_string);
  for (const auto& [key, value] : model.metadata) {
    onnx::StringStringEntryProto* e = proto.add_metadata_props();
    e->set_key(key);
    e->set_value(value);
  }
  return graph_to_proto(model.graph, *proto.mutable_graph(), ctx);
}

// --- Public: protobuf and libonnx wrappers -----------------------------------------------------------

namespace {

// Serves a mapped file to protobuf in blocks and releases the pages before the block being read:
// protobuf copies every field out of the stream, and the ZeroCopyInputStream contract lets it
// keep only the latest block.
class ReleasingFileStream final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  explicit ReleasingFileStream(const MappedFile& file) : file_(file) {}

  bool Next(const void** data, int* size) override {
    if (pos_ >= file_.size()) return false;
    file_.release_before(pos_);
    const uint64_t n = std::min<uint64_t>(kBlock, file_.size() - pos_);
    *data = file_.data() + pos_;
    *size = static_cast<int>(n);
    pos_ += n;
    return true;
  }
  void BackUp(int count) override { pos_ -= static_cast<uint64_t>(count); }
  bool Skip(int count) override {
    const uint64_t left = file_.size() - pos_;
    pos_ += std::min<uint64_t>(static_cast<uint64_t>(count), left);
    return static_cast<uint64_t>(count) <= left;
  }
  int64_t ByteCount() const override { return static_cast<int64_t>(pos_); }

 private:
  static constexpr uint64_t kBlock = uint64_t{1} << 20;
  const MappedFile& file_;
  uint64_t pos_ = 0;
};

// The checks and the parse shared by both entry points, from an open CodedInputStream.
Status parse_checked(uint64_t size, std::string_view source, google::protobuf::io::CodedInputStream& in,
                     onnx::ModelProto& proto) {
  if (size > kProtobufMaxBytes) {
    return make_error(StatusCode::kInvalidModel,
                      "{}{} bytes is over protobuf's 2 GiB limit on one message; a model this large must keep its "
                      "weights in external data",
                      source_prefix(source), size);
  }
  if (size == 0)
    return make_error(StatusCode::kInvalidModel, "{}not a valid ONNX model (the file is empty)", source_prefix(source));
  in.SetTotalBytesLimit(static_cast<int>(kProtobufMaxBytes));
  if (!proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    return make_error(StatusCode::kInvalidModel, "{}not a valid ONNX model (protobuf parse failed)", source_prefix(source));
  }
  if (!proto.has_graph()) {
    return make_error(StatusCode::kInvalidModel, "{}not a valid ONNX model (no graph in the protobuf message)",
                      source_prefix(source));
  }
  return Status::OK();
}

}  // namespace

Status model_proto_parse(const MappedFile& file, std::string_view source, onnx::ModelProto& proto) {
  ReleasingFileStream stream(file);
  google::protobuf::io::CodedInputStream in(&stream);
  return parse_checked(file.size(), source, in, proto);
}

Status model_proto_parse(std::string_view bytes, std::string_view source, onnx::ModelProto& proto) {
  // The size is checked before it is narrowed to protobuf's int.
  const int size = static_cast<int>(std::min<uint64_t>(bytes.size(), kProtobufMaxBytes));
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), size);
  return parse_checked(bytes.size(), source, in, proto);
}

}  // namespace vn
