// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_file.h"
#include "core/engine/plan.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/common/hash.h"
#include "core/common/json_depth.h"
#include "core/ir/mapped_file.h"

namespace vn::engine {
namespace {

constexpr std::string_view kFormat = "vernier-plan";

/// FNV-1a over strings and numbers, and over tensor bytes eight at a time (fast enough for
/// gigabyte models, and still sensitive to every bit).
class Hasher {
 public:
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      mix(w);
    }
    for (; i < n; ++i) mix(p[i]);
    mix(n);
  }
  void str(std::string_view s) { bytes(s.data(), s.size()); }
  void num(int64_t v) { mix(static_cast<uint64_t>(v)); }
  void tensor(const Tensor& t) {
    num(static_cast<int64_t>(t.dtype()));
    for (int64_t d : t.shape()) num(d);
    if (t.dtype() == DType::kString) {
      for (const std::string& s : t.values<std::string>()) str(s);
    } else {
      bytes(t.raw(), t.nbytes());
    }
  }
  void graph(const Graph& g) {
    for (const ValueInfo& v : g.inputs) {
      str(v.name);
      str(v.type_string());
    }
    for (const ValueInfo& v : g.outputs) str(v.name);
    for (const Node& n : g.nodes) {
      str(n.name);
      str(n.op_type);
      str(n.domain);
      for (const std::string& s : n.inputs) str(s);
      num(-1);
      for (const std::string& s : n.outputs) str(s);
      for (const Attribute& a : n.attributes) attribute(a);
      num(-2);
    }
    for (const Initializer& init : g.initializers) {
      str(init.name);
      tensor(init.tensor);
    }
  }
  uint64_t value() const { return h_; }

 private:
  void attribute(const Attribute& a) {
    str(a.name);
    num(static_cast<int64_t>(a.type));
    uint32_t f;
    std::memcpy(&f, &a.f, sizeof(f));
    num(f);
    num(a.i);
    str(a.s);
    if (a.t.defined()) tensor(a.t);
    if (a.g) graph(*a.g);
    for (float v : a.floats) {
      std::memcpy(&f, &v, sizeof(f));
      num(f);
    }
    for (int64_t v : a.ints) num(v);
    for (const std::string& s : a.strings) str(s);
    for (const Tensor& t : a.tensors) tensor(t);
    for (const auto& sub : a.graphs) graph(*sub);
  }
  void mix(uint64_t v) { h_ = fnv1a_word(h_, v); }
  uint64_t h_ = kFnv1aBasis;
};

nlohmann::ordered_json desc_json(const std::vector<TensorDesc>& descs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const TensorDesc& d : descs) out.push_back({{"dtype", dtype_name(d.dtype)}, {"shape", d.shape}});
  return out;
}

/// Reads JSON values with errors that say where the plan is malformed: JsonReader's fields plus
/// the plan's own types.
class Reader : public JsonReader {
 public:
  explicit Reader(std::string where) : JsonReader("plan", std::move(where)) {}

  Result<Shape> shape(const nlohmann::ordered_json& j) const {
    Shape out;
    if (!j.is_array()) return fail("a shape must be a list of integers");
    for (const nlohmann::ordered_json& e : j) {
      if (!e.is_number_integer()) return fail("a shape must be a list of integers");
      out.push_back(e.get<int64_t>());
    }
    Result<int64_t> numel = shape_numel_checked(out, DType::kUInt8);
    if (!numel.ok()) return fail(fmt::format("shape {}: {}", shape_to_string(out), numel.status().message()));
    return out;
  }
  Result<std::vector<TensorDesc>> descs(const nlohmann::ordered_json& j, const char* key) const {
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* v, field(j, key));
    if (!v->is_array()) return fail(fmt::format("\"{}\" must be a list", key));
    std::vector<TensorDesc> out;
    for (const nlohmann::ordered_json& e : *v) {
      VN_ASSIGN_OR_RETURN(std::string dt, string(e, "dtype"));
      std::optional<DType> dtype = dtype_from_name(dt);
      if (!dtype) return fail(fmt::format("unknown dtype '{}'", dt));
      VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* s, field(e, "shape"));
      VN_ASSIGN_OR_RETURN(Shape sh, shape(*s));
      out.push_back({*dtype, std::move(sh)});
    }
    return out;
  }
  Result<PrecisionId> precision(const nlohmann::ordered_json& j, const char* key) const {
    VN_ASSIGN_OR_RETURN(std::string name, string(j, key));
    std::optional<PrecisionId> p = precision_from_name(name);
    if (!p) return fail(fmt::format("unknown precision '{}'", name));
    return *p;
  }
  Result<TacticId> tactic(const nlohmann::ordered_json& j, const char* key) const {
    VN_ASSIGN_OR_RETURN(std::string name, string(j, key));
    const TacticInfo* t = find_tactic(name);
    if (!t) return fail(fmt::format("unknown tactic '{}'", name));
    return t->id;
  }

};

Result<PlanLayer> layer_from_json(const nlohmann::ordered_json& j, size_t index) {
  const Reader r(fmt::format("layer {}", index));
  PlanLayer l;
  VN_ASSIGN_OR_RETURN(l.name, r.string(j, "name"));
  VN_ASSIGN_OR_RETURN(std::string kind, r.string(j, "kind"));
  std::optional<LayerKind> k = layer_kind_from_name(kind);
  if (!k) return r.fail(fmt::format("unknown layer kind '{}'", kind));
  l.kind = *k;
  VN_ASSIGN_OR_RETURN(l.nodes, r.strings(j, "nodes"));
  VN_ASSIGN_OR_RETURN(l.inputs, r.strings(j, "inputs"));
  VN_ASSIGN_OR_RETURN(l.outputs, r.strings(j, "outputs"));
  VN_ASSIGN_OR_RETURN(l.hidden, r.strings(j, "hidden"));
  VN_ASSIGN_OR_RETURN(l.precision, r.precision(j, "precision"));
  VN_ASSIGN_OR_RETURN(l.tactic, r.tactic(j, "tactic"));
  VN_ASSIGN_OR_RETURN(l.input_desc, r.descs(j, "input_desc"));
  VN_ASSIGN_OR_RETURN(l.output_desc, r.descs(j, "output_desc"));
  VN_ASSIGN_OR_RETURN(l.choice, r.string(j, "choice"));
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* timings, r.field(j, "timings"));
  if (!timings->is_array()) return r.fail("\"timings\" must be a list");
  for (const nlohmann::ordered_json& t : *timings) {
    TacticTiming tt;
    VN_ASSIGN_OR_RETURN(tt.tactic, r.tactic(t, "tactic"));
    VN_ASSIGN_OR_RETURN(tt.precision, r.precision(t, "precision"));
    VN_ASSIGN_OR_RETURN(tt.median_ms, r.number(t, "median_ms"));
    l.timings.push_back(tt);
  }
  if (j.contains("int8_fallback")) {
    VN_ASSIGN_OR_RETURN(l.int8_fallback, r.string(j, "int8_fallback"));
  }
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* faults, r.field(j, "faults"));
  if (!faults->is_array()) return r.fail("\"faults\" must be a list of fault indices");
  for (const nlohmann::ordered_json& f : *faults) {
    if (!f.is_number_unsigned()) return r.fail("\"faults\" must be a list of fault indices");
    l.faults.push_back(f.get<size_t>());
  }
  return l;
}

Status settings_from_json(const nlohmann::ordered_json& j, BuildSettings& s) {
  const Reader r("build");
  VN_ASSIGN_OR_RETURN(std::vector<std::string> allowed, r.strings(j, "allowed_precisions"));
  s.allowed = 0;
  for (const std::string& name : allowed) {
    std::optional<PrecisionId> p = precision_from_name(name);
    if (!p) return r.fail(fmt::format("unknown precision '{}'", name));
    s.allowed |= mask_of(*p);
  }
  VN_ASSIGN_OR_RETURN(std::string constraints, r.string(j, "precision_constraints"));
  std::optional<PrecisionConstraints> c = constraints_from_name(constraints);
  if (!c) return r.fail(fmt::format("unknown precision constraints '{}'", constraints));
  s.constraints = *c;
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* lp, r.field(j, "layer_precisions"));
  if (!lp->is_object()) return r.fail("\"layer_precisions\" must be an object");
  for (auto it = lp->begin(); it != lp->end(); ++it) {
    VN_ASSIGN_OR_RETURN(PrecisionId p, r.precision(*lp, it.key().c_str()));
    s.layer_precisions.emplace_back(it.key(), p);
  }
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* seed, r.field(j, "builder_seed"));
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* margin, r.field(j, "timing_margin"));
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* det, r.field(j, "deterministic"));
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* replayed, r.field(j, "replayed"));
  if (!seed->is_number_unsigned() || !margin->is_number() || !det->is_boolean() || !replayed->is_boolean()) {
    return r.fail("builder_seed, timing_margin, deterministic or replayed has the wrong type");
  }
  s.builder_seed = seed->get<uint64_t>();
  s.timing_margin = margin->get<double>();
  s.deterministic = det->get<bool>();
  s.replayed = replayed->get<bool>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* shapes, r.field(j, "input_shapes"));
  if (!shapes->is_object()) return r.fail("\"input_shapes\" must be an object");
  for (auto it = shapes->begin(); it != shapes->end(); ++it) {
    VN_ASSIGN_OR_RETURN(s.input_shapes[it.key()], r.shape(it.value()));
  }
  return Status::OK();
}

}  // namespace

const PlanLayer* Plan::find_layer(std::string_view name) const {
  for (const PlanLayer& l : layers) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

std::string model_hash(const Model& model) {
  Hasher h;
  for (const OpsetId& o : model.opset_imports) {
    h.str(is_default_domain(o.domain) ? "" : o.domain);
    h.num(o.version);
  }
  h.graph(model.graph);
  return fmt::format("0x{:016x}", h.value());
}

nlohmann::ordered_json plan_to_json(const Plan& plan) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = Plan::kFormatVersion;
  j["model"] = {{"name", plan.model_name}, {"hash", plan.model_hash}};
  const BuildSettings& s = plan.settings;
  nlohmann::ordered_json allowed = nlohmann::ordered_json::array();
  for (size_t i = 0; i < kPrecisionCount; ++i) {
    if (mask_has(s.allowed, static_cast<PrecisionId>(i)))
      allowed.push_back(precision_name(static_cast<PrecisionId>(i)));
  }
  nlohmann::ordered_json lp = nlohmann::ordered_json::object();
  for (const auto& [name, p] : s.layer_precisions) lp[name] = precision_name(p);
  nlohmann::ordered_json shapes = nlohmann::ordered_json::object();
  for (const auto& [name, shape] : s.input_shapes) shapes[name] = shape;
  j["build"] = {{"allowed_precisions", allowed},    {"precision_constraints", constraints_name(s.constraints)},
                {"layer_precisions", lp},           {"builder_seed", s.builder_seed},
                {"timing_margin", s.timing_margin}, {"deterministic", s.deterministic},
                {"replayed", s.replayed},           {"input_shapes", shapes}};
  j["outputs"] = plan.outputs;
  j["folded"] = plan.folded;
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const PlanLayer& l : plan.layers) {
    nlohmann::ordered_json timings = nlohmann::ordered_json::array();
    for (const TacticTiming& t : l.timings) {
      timings.push_back({{"tactic", tactic_info(t.tactic).name},
                         {"precision", precision_name(t.precision)},
                         {"median_ms", t.median_ms}});
    }
    layers.push_back({{"name", l.name},
                      {"kind", layer_kind_name(l.kind)},
                      {"nodes", l.nodes},
                      {"inputs", l.inputs},
                      {"outputs", l.outputs},
                      {"hidden", l.hidden},
                      {"precision", precision_name(l.precision)},
                      {"tactic", tactic_info(l.tactic).name},
                      {"choice", l.choice},
                      {"input_desc", desc_json(l.input_desc)},
                      {"output_desc", desc_json(l.output_desc)},
                      {"timings", timings},
                      {"faults", l.faults}});
    if (!l.int8_fallback.empty()) layers.back()["int8_fallback"] = l.int8_fallback;
  }
  j["layers"] = std::move(layers);
  nlohmann::ordered_json prevented = nlohmann::ordered_json::array();
  for (const PreventedFusion& p : plan.prevented) {
    prevented.push_back({{"fusion", p.fusion}, {"nodes", p.nodes}, {"marked_tensor", p.tensor}});
  }
  j["prevented_fusions"] = std::move(prevented);
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  for (const FaultSpec& f : plan.faults) faults.push_back(f.text);
  j["faults"] = std::move(faults);
  if (!plan.calibration.empty() || !plan.int8_scales.empty()) {
    nlohmann::ordered_json scales = nlohmann::ordered_json::object();
    for (const auto& [name, scale] : plan.int8_scales) scales[name] = static_cast<double>(scale);
    j["int8"] = {{"calibration", plan.calibration}, {"scales", std::move(scales)}};
  }
  return j;
}

Result<Plan> plan_from_json(const nlohmann::ordered_json& j) {
  const Reader r("");
  VN_ASSIGN_OR_RETURN(std::string format, r.string(j, "format"));
  if (format != kFormat) return r.fail(fmt::format("format is '{}', not '{}'", format, kFormat));
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* version, r.field(j, "version"));
  if (!version->is_number_integer() || version->get<int>() != Plan::kFormatVersion) {
    return r.fail(fmt::format("version {} is not {}, the version this Vernier reads; rebuild the plan", version->dump(),
                              Plan::kFormatVersion));
  }
  Plan plan;
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* model, r.field(j, "model"));
  VN_ASSIGN_OR_RETURN(plan.model_name, r.string(*model, "name"));
  VN_ASSIGN_OR_RETURN(plan.model_hash, r.string(*model, "hash"));
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* build, r.field(j, "build"));
  VN_RETURN_IF_ERROR(settings_from_json(*build, plan.settings));
  VN_ASSIGN_OR_RETURN(plan.outputs, r.strings(j, "outputs"));
  VN_ASSIGN_OR_RETURN(plan.folded, r.strings(j, "folded"));
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* layers, r.field(j, "layers"));
  if (!layers->is_array()) return r.fail("\"layers\" must be a list");
  for (size_t i = 0; i < layers->size(); ++i) {
    VN_ASSIGN_OR_RETURN(PlanLayer l, layer_from_json((*layers)[i], i));
    plan.layers.push_back(std::move(l));
  }
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* prevented, r.field(j, "prevented_fusions"));
  if (!prevented->is_array()) return r.fail("\"prevented_fusions\" must be a list");
  for (const nlohmann::ordered_json& p : *prevented) {
    PreventedFusion f;
    VN_ASSIGN_OR_RETURN(f.fusion, r.string(p, "fusion"));
    VN_ASSIGN_OR_RETURN(f.nodes, r.strings(p, "nodes"));
    VN_ASSIGN_OR_RETURN(f.tensor, r.string(p, "marked_tensor"));
    plan.prevented.push_back(std::move(f));
  }
  VN_ASSIGN_OR_RETURN(std::vector<std::string> faults, r.strings(j, "faults"));
  for (const std::string& text : faults) {
    Result<FaultSpec> f = parse_fault(text);
    if (!f.ok()) return r.fail(f.status().message());
    plan.faults.push_back(std::move(*f));
  }
  if (j.contains("int8")) {
    const nlohmann::ordered_json& int8 = j["int8"];
    VN_ASSIGN_OR_RETURN(plan.calibration, r.string(int8, "calibration"));
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* scales, r.field(int8, "scales"));
    if (!scales->is_object()) return r.fail("\"int8\".\"scales\" must be an object");
    for (auto it = scales->begin(); it != scales->end(); ++it) {
      if (!it.value().is_number() || !(it.value().get<double>() > 0)) {
        return r.fail(fmt::format("the int8 scale of '{}' is not a positive number", it.key()));
      }
      plan.int8_scales[it.key()] = static_cast<float>(it.value().get<double>());
    }
  }
  for (const PlanLayer& l : plan.layers) {
    for (size_t f : l.faults) {
      if (f >= plan.faults.size())
        return r.fail(fmt::format("layer '{}' names fault {} of {}", l.name, f, faults.size()));
    }
  }
  return plan;
}

Status save_plan(const Plan& plan, const std::filesystem::path& path) {
  return file_write_atomic(path, plan_to_json(plan).dump(2) + "\n");
}

Result<Plan> load_plan(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json j, read_json_file(path, "Vernier plan"));
  Result<Plan> plan = plan_from_json(j);
  if (!plan.ok()) return plan.status().with_context(path.string());
  return plan;
}

bool is_plan_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char first = 0;
  while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
  }
  if (first != '{') return false;
  in.seekg(0);
  std::stringstream buf;
  buf << in.rdbuf();
  if (!check_json_depth(buf.str()).ok()) return false;
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(buf.str(), nullptr, false);
  return j.is_object() && j.contains("format") && j["format"] == kFormat;
}

Status check_plan_model(const Plan& plan, const Model& model) {
  const std::string hash = model_hash(model);
  if (hash == plan.model_hash) return Status::OK();
  return make_error(StatusCode::kInvalidArgument,
                    "the plan was built for another model ('{}', hash {}); this model's hash is {}: rebuild the plan "
                    "with `vernier convert`",
                    plan.model_name, plan.model_hash, hash);
}

}  // namespace vn::engine
