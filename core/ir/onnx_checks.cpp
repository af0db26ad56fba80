// SPDX-License-Identifier: Apache-2.0
// The libonnx wrappers that judge a model: external data locations, the checker, and shape
// inference with the hazards that would crash libonnx 1.12 found first.
#include <algorithm>
#include <exception>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "core/common/logging.h"
#include "core/ir/onnx_proto.h"
#include "core/ir/onnx_proto_detail.h"

namespace vn {
namespace {

using detail::tensor_what;
using onnx::AttributeProto;
using onnx::TensorProto;

// Calls f(TensorProto&) for every tensor in the graph: initializers and attribute tensors, subgraphs
// included. Sparse tensors are not visited (they are never written by Vernier, and external sparse
// data is rejected during conversion as any other external tensor would be checked).
template <typename F>
void for_each_tensor_proto(const onnx::GraphProto& graph, F&& f) {
  for (const TensorProto& t : graph.initializer()) f(t);
  for (const onnx::SparseTensorProto& s : graph.sparse_initializer()) {
    f(s.values());
    f(s.indices());
  }
  for (const onnx::NodeProto& n : graph.node()) {
    for (const AttributeProto& a : n.attribute()) {
      if (a.has_t()) f(a.t());
      for (const TensorProto& t : a.tensors()) f(t);
      if (a.has_sparse_tensor()) {
        f(a.sparse_tensor().values());
        f(a.sparse_tensor().indices());
      }
      if (a.has_g()) for_each_tensor_proto(a.g(), f);
      for (const onnx::GraphProto& g : a.graphs()) for_each_tensor_proto(g, f);
    }
  }
}

}  // namespace

Status external_location_check(std::string_view location, std::string_view what) {
  if (location.empty()) return make_error(StatusCode::kInvalidModel, "{}: external data location is empty", what);
  if (location.find('\0') != std::string_view::npos) {
    return make_error(StatusCode::kInvalidModel, "{}: external data location contains a NUL byte", what);
  }
  const std::filesystem::path p(location);
  if (p.is_absolute() || p.has_root_path()) {
    return make_error(StatusCode::kInvalidModel,
                      "{}: external data location '{}' is an absolute path; only paths relative to the model's folder "
                      "are allowed",
                      what, location);
  }
  const std::filesystem::path normal = p.lexically_normal();
  if (normal.empty() || normal == ".") {
    return make_error(StatusCode::kInvalidModel, "{}: external data location '{}' names no file", what, location);
  }
  if (*normal.begin() == "..") {
    return make_error(StatusCode::kInvalidModel,
                      "{}: external data location '{}' escapes the model's folder ('..'); only files inside it are "
                      "allowed",
                      what, location);
  }
  return Status::OK();
}

Status model_proto_check_external_locations(const onnx::ModelProto& proto, const std::filesystem::path& base_dir,
                                            std::string_view source) {
  Status first;
  for_each_tensor_proto(proto.graph(), [&](const TensorProto& t) {
    if (!first.ok() || !t.has_data_location() || t.data_location() != TensorProto::EXTERNAL) return;
    if (base_dir.empty()) {
      first = make_error(StatusCode::kInvalidModel,
                         "{}{}: external data cannot be resolved: the model's folder is unknown (load the model from "
                         "its file, or pass the folder as base_dir)",
                         source_prefix(source), tensor_what(t));
      return;
    }
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      if (e.key() != "location") continue;
      Status st = external_location_check(e.value(), tensor_what(t));
      if (!st.ok()) first = st.with_context(source);
    }
  });
  return first;
}

std::optional<std::string> checker_blind_spot(const onnx::ModelProto& model) {
  if (model.ir_version() > onnx::IR_VERSION) {
    return fmt::format("IR version {} is newer than libonnx's {}", model.ir_version(),
                       static_cast<int>(onnx::IR_VERSION));
  }
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const onnx::OperatorSetIdProto& o : model.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? std::string() : o.domain();
    const auto range = ranges.find(domain);
    if (range != ranges.end() && o.version() > range->second.second) {
      return fmt::format("opset {} of domain '{}' is newer than libonnx's {}", o.version(), o.domain(),
                         range->second.second);
    }
  }
  return std::nullopt;
}

Status model_proto_check(const onnx::ModelProto& model, const std::filesystem::path& model_dir,
                         std::string_view source) {
  if (std::optional<std::string> reason = checker_blind_spot(model)) {
    VN_LOG_WARNING("{}{}; the ONNX checker was skipped because it would judge the model by older rules", source_prefix(source),
                   *reason);
    return Status::OK();
  }
  // This is libonnx 1.12's check_model(const ModelProto&, CheckerContext&), which the header does not
  // declare; calling its public pieces lets the checker look for external data in `model_dir` instead
  // of the current directory.
  try {
    onnx::checker::CheckerContext ctx;
    std::string dir = model_dir.string();
    if (!dir.empty() && dir.back() != '/') dir += '/';
    ctx.set_model_dir(dir);
    if (!model.ir_version()) fail_check("The model does not have an ir_version set properly.");
    if (model.ir_version() > onnx::IR_VERSION) fail_check("Your model ir_version is higher than the checker's.");
    std::unordered_set<std::string> keys;
    for (const onnx::StringStringEntryProto& entry : model.metadata_props()) {
      if (!keys.insert(entry.key()).second) fail_check("Your model has duplicate keys in metadata_props.");
    }
    ctx.set_ir_version(static_cast<int>(model.ir_version()));
    std::unordered_map<std::string, int> opset_imports;
    for (const onnx::OperatorSetIdProto& o : model.opset_import()) {
      opset_imports[o.domain()] = static_cast<int>(o.version());
    }
    if (model.ir_version() >= 3) {
      if (opset_imports.empty()) fail_check("model with IR version >= 3 must specify opset_import for ONNX");
    } else if (opset_imports.empty()) {
      opset_imports[onnx::ONNX_DOMAIN] = 1;
    } else {
      fail_check("model with IR version < 3 cannot have opset_import specified");
    }
    ctx.set_opset_imports(opset_imports);
    onnx::checker::LexicalScopeContext lex_ctx;
    onnx::checker::check_graph(model.graph(), ctx, lex_ctx);
    if (ctx.get_ir_version() >= 0x00000008) onnx::checker::check_model_local_functions(model, ctx, lex_ctx);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "{}ONNX checker: {}", source_prefix(source), one_line(e.what()));
  }
  return Status::OK();
}

namespace {

// Strict mode: node-level failures are collected and reported, not skipped silently.
const onnx::ShapeInferenceOptions kInferenceOptions(/*check_type_val=*/false, /*strict_mode_val=*/1,
                                                   /*data_prop_val=*/false);

// A node whose shape inference in libonnx 1.12 (convPoolShapeInference, convTransposeShapeInference)
// indexes past the end of a vector when W's rank differs from X's, or when "pads" is not two values
// per spatial axis of X (or strides, dilations, kernel_shape one): a crash, not an error. Inputs are
// positions in the node; w is -1 for pooling.
struct ConvLikeOp {
  std::string_view op_type;
  int x;
  int w;
};
constexpr ConvLikeOp kConvLikeOps[] = {{"Conv", 0, 1},          {"ConvInteger", 0, 1}, {"QLinearConv", 0, 3},
                                       {"ConvTranspose", 0, 1}, {"MaxPool", 0, -1},    {"AveragePool", 0, -1},
                                       {"LpPool", 0, -1}};
// Attributes with one value per spatial axis (pads: two).
constexpr std::string_view kPerAxisAttributes[] = {"pads", "strides", "dilations", "kernel_shape", "output_padding"};

const ConvLikeOp* conv_like(const onnx::NodeProto& node) {
  if (node.domain() != "" && node.domain() != "ai.onnx") return nullptr;
  for (const ConvLikeOp& op : kConvLikeOps) {
    if (node.op_type() == op.op_type) return &op;
  }
  return nullptr;
}

// One conv-like node of the rank-probing copy, with the graphs that can define its inputs
// (its own graph first, then the enclosing ones).
struct ConvProbe {
  std::string node_name;
  std::string op_type;
  std::string x;
  std::string w;  ///< empty for pooling
  std::vector<std::pair<std::string, int>> per_axis;  ///< kPerAxisAttributes present, with their sizes
  std::vector<const onnx::GraphProto*> scopes;
};

// Replaces every conv-like node of `graph` (subgraphs included) by Identity(X), whose output has
// the rank the node's output would have, and records it. Float weights are dropped: inference reads
// only their dims, and the copy must not double the memory of a large model.
void neutralize_conv_like(onnx::GraphProto& graph, std::vector<const onnx::GraphProto*> scopes,
                          std::vector<ConvProbe>& probes) {
  scopes.insert(scopes.begin(), &graph);
  for (onnx::TensorProto& init : *graph.mutable_initializer()) {
    if (init.data_type() != onnx::TensorProto::INT64 && init.data_type() != onnx::TensorProto::INT32) {
      init.clear_raw_data();
      init.clear_float_data();
    }
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) neutralize_conv_like(*attr.mutable_g(), scopes, probes);
      for (onnx::GraphProto& g : *attr.mutable_graphs()) neutralize_conv_like(g, scopes, probes);
    }
    const ConvLikeOp* op = conv_like(node);
    if (!op || node.input_size() <= std::max(op->x, op->w) || node.output_size() < 1) continue;
    ConvProbe probe{node.name(), node.op_type(), node.input(op->x), op->w >= 0 ? node.input(op->w) : "", {}, scopes};
    for (const onnx::AttributeProto& attr : node.attribute()) {
      for (std::string_view name : kPerAxisAttributes) {
        if (attr.name() == name) probe.per_axis.emplace_back(attr.name(), attr.ints_size());
      }
    }
    probes.push_back(std::move(probe));
    const std::string x = node.input(op->x), y = node.output(0);
    node.Clear();
    node.set_op_type("Identity");
    node.add_input(x);
    node.add_output(y);
  }
}

// The rank of `name` as the graphs in `scopes` declare or infer it, or -1 when unknown.
int rank_in_scopes(const std::string& name, const std::vector<const onnx::GraphProto*>& scopes) {
  const auto rank_of = [](const onnx::ValueInfoProto& v) {
    return v.type().has_tensor_type() && v.type().tensor_type().has_shape() ? v.type().tensor_type().shape().dim_size()
                                                                             : -1;
  };
  for (const onnx::GraphProto* g : scopes) {
    for (const onnx::TensorProto& t : g->initializer()) {
      if (t.name() == name) return t.dims_size();
    }
    for (const auto* list : {&g->input(), &g->value_info(), &g->output()}) {
      for (const onnx::ValueInfoProto& v : *list) {
        if (v.name() == name) return rank_of(v);
      }
    }
  }
  return -1;
}

// Attributes libonnx 1.12's shape inference divides by without checking (found by fuzz_onnx_model:
// MaxPool strides [0, 2] raised SIGFPE): they must be positive.
struct DivisorAttribute {
  std::string_view op_type;
  std::string_view attribute;
};
constexpr DivisorAttribute kDivisorAttributes[] = {
    {"Conv", "strides"},          {"Conv", "dilations"},        {"ConvInteger", "strides"},
    {"ConvInteger", "dilations"}, {"QLinearConv", "strides"},   {"QLinearConv", "dilations"},
    {"ConvTranspose", "strides"}, {"ConvTranspose", "dilations"}, {"MaxPool", "strides"},
    {"MaxPool", "dilations"},     {"AveragePool", "strides"},   {"LpPool", "strides"},
    {"MaxUnpool", "strides"},     {"DepthToSpace", "blocksize"}, {"SpaceToDepth", "blocksize"},
};

Status check_divisor_attributes(const onnx::GraphProto& graph, std::string_view source) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) VN_RETURN_IF_ERROR(check_divisor_attributes(attr.g(), source));
      for (const onnx::GraphProto& g : attr.graphs()) VN_RETURN_IF_ERROR(check_divisor_attributes(g, source));
      if (node.domain() != "" && node.domain() != "ai.onnx") continue;
      for (const DivisorAttribute& d : kDivisorAttributes) {
        if (node.op_type() != d.op_type || attr.name() != d.attribute) continue;
        bool positive = !attr.has_i() || attr.i() > 0;
        for (int64_t v : attr.ints()) positive = positive && v > 0;
        if (!positive) {
          return make_error(StatusCode::kInvalidModel, "{}node '{}' ({}): attribute '{}' must be positive", source_prefix(source),
                            node.name(), node.op_type(), attr.name());
        }
      }
    }
  }
  return Status::OK();
}

bool has_conv_like(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (conv_like(node)) return true;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g() && has_conv_like(attr.g())) return true;
      for (const onnx::GraphProto& g : attr.graphs()) {
        if (has_conv_like(g)) return true;
      }
    }
  }
  return false;
}

// Copies `proto` without the payloads of its large floating-point initializers (the weights):
// inference on the copy needs their shapes only, and copying a ResNet's weights would double the
// peak memory of loading it. Integer initializers, which shape computations read, are copied
// whole. The payloads are moved out of `proto` for the copy and back.
onnx::ModelProto copy_without_weights(onnx::ModelProto& proto) {
  constexpr size_t kSmall = 4096;
  std::vector<std::pair<onnx::TensorProto*, std::string>> moved;
  for (onnx::TensorProto& t : *proto.mutable_graph()->mutable_initializer()) {
    const int type = t.data_type();
    const bool weights = type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::FLOAT16 ||
                         type == onnx::TensorProto::DOUBLE || type == onnx::TensorProto::BFLOAT16;
    if (weights && t.has_raw_data() && t.raw_data().size() > kSmall) {
      moved.emplace_back(&t, std::string());
      moved.back().second.swap(*t.mutable_raw_data());
    }
  }
  struct Restore {
    std::vector<std::pair<onnx::TensorProto*, std::string>>& moved;
    ~Restore() {
      for (auto& [t, bytes] : moved) t->mutable_raw_data()->swap(bytes);
    }
  } restore{moved};
  return proto;
}

// Finds the nodes libonnx would crash on: zero divisors in attributes, and conv-like nodes whose
// input ranks differ, found by inferring ranks on a copy in which they cannot crash it.
Status check_inference_hazards(onnx::ModelProto& proto, std::string_view source,
                               const onnx::ShapeInferenceOptions& options) {
  VN_RETURN_IF_ERROR(check_divisor_attributes(proto.graph(), source));
  if (!has_conv_like(proto.graph())) return Status::OK();
  onnx::ModelProto probe = copy_without_weights(proto);
  std::vector<ConvProbe> probes;
  neutralize_conv_like(*probe.mutable_graph(), {}, probes);
  try {
    onnx::shape_inference::InferShapes(probe, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    // What fails here fails the real inference too, which reports it; ranks found so far still count.
  }
  for (const ConvProbe& p : probes) {
    const int x = rank_in_scopes(p.x, p.scopes), w = p.w.empty() ? -1 : rank_in_scopes(p.w, p.scopes);
    for (const auto& [name, size] : p.per_axis) {
      const int expected = (x - 2) * (name == "pads" ? 2 : 1);
      if (x >= 2 && size != expected) {
        return make_error(StatusCode::kInvalidModel,
                          "{}node '{}' ({}): attribute '{}' has {} values, but input '{}' of rank {} needs {}",
                          source_prefix(source), p.node_name, p.op_type, name, size, p.x, x, expected);
      }
    }
    if (x >= 0 && w >= 0 && w != x) {
      return make_error(StatusCode::kInvalidModel, "{}node '{}' ({}): weight '{}' has rank {}, but input '{}' has rank {}",
                        source_prefix(source), p.node_name, p.op_type, p.w, w, p.x, x);
    }
  }
  return Status::OK();
}

}  // namespace

Status model_proto_check_inference_hazards(onnx::ModelProto& proto, std::string_view source) {
  try {
    return check_inference_hazards(proto, source, kInferenceOptions);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "{}{}", source_prefix(source), one_line(e.what()));
  }
}

Status model_proto_infer_shapes(onnx::ModelProto& proto, std::string_view source, bool hazards_checked) {
  try {
    const onnx::ShapeInferenceOptions& options = kInferenceOptions;
    if (!hazards_checked) {
      Status hazards = check_inference_hazards(proto, source, options);
      if (!hazards.ok()) return make_error(StatusCode::kInvalidModel, "{}shape inference not run: {}", source_prefix(source), hazards.message());
    }
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "{}shape inference failed: {}", source_prefix(source), one_line(e.what()));
  }
  return Status::OK();
}

std::string one_line(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  bool space = false;
  for (char c : message) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace vn
