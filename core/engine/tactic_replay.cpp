// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_file.h"
#include "core/engine/tactic_replay.h"


#include "core/ir/mapped_file.h"

namespace vn::engine {
namespace {

/// TensorRT's name for how a layer stores a tensor of `dtype`: float32 tensors are stored in the
/// layer's storage format.
std::string trt_dtype(DType dtype, PrecisionId precision) {
  if (dtype == DType::kFloat32) {
    switch (precision_of(precision).storage) {
      case DType::kFloat16:
        return "DataType.HALF";
      case DType::kBFloat16:
        return "DataType.BF16";
      case DType::kInt8:
        return "DataType.INT8";
      default:
        return "DataType.FLOAT";
    }
  }
  switch (dtype) {
    case DType::kFloat16:
      return "DataType.HALF";
    case DType::kBFloat16:
      return "DataType.BF16";
    case DType::kInt8:
      return "DataType.INT8";
    case DType::kUInt8:
      return "DataType.UINT8";
    case DType::kInt32:
      return "DataType.INT32";
    case DType::kInt64:
      return "DataType.INT64";
    case DType::kBool:
      return "DataType.BOOL";
    default:
      return fmt::format("DataType.{}", dtype_name(dtype));
  }
}

Shape dense_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(shape[i], 1);
  return strides;
}

std::vector<ReplayTensor> replay_tensors(const std::vector<TensorDesc>& descs, PrecisionId precision) {
  std::vector<ReplayTensor> out;
  for (const TensorDesc& d : descs) out.push_back({trt_dtype(d.dtype, precision), dense_strides(d.shape)});
  return out;
}

nlohmann::ordered_json tensor_infos(const std::vector<ReplayTensor>& tensors) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ReplayTensor& t : tensors) {
    out.push_back({{"dtype", t.dtype},
                   {"strides", t.strides},
                   {"vectorized_dim", -1},
                   {"components_per_element", 1},
                   {"polygraphy_class", "TensorInfo"}});
  }
  return out;
}

Status malformed(const std::string& layer, std::string_view what) {
  return make_error(StatusCode::kIoError, "tactic replay: layer '{}': {}", layer, what);
}

Result<std::vector<ReplayTensor>> read_tensors(const nlohmann::ordered_json& a, const char* key,
                                               const std::string& layer) {
  std::vector<ReplayTensor> out;
  if (!a.contains(key)) return out;
  if (!a[key].is_array()) return malformed(layer, fmt::format("\"{}\" must be a list of TensorInfo", key));
  for (const nlohmann::ordered_json& t : a[key]) {
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string()) {
      return malformed(layer, fmt::format("an entry of \"{}\" has no dtype", key));
    }
    ReplayTensor rt;
    rt.dtype = t["dtype"].get<std::string>();
    if (t.contains("strides") && t["strides"].is_array()) {
      for (const nlohmann::ordered_json& s : t["strides"]) {
        if (s.is_number_integer()) rt.strides.push_back(s.get<int64_t>());
      }
    }
    out.push_back(std::move(rt));
  }
  return out;
}

}  // namespace

const ReplayEntry* TacticReplay::find(std::string_view layer) const {
  for (const ReplayEntry& e : entries) {
    if (e.layer == layer) return &e;
  }
  return nullptr;
}

TacticReplay tactic_replay_from_plan(const Plan& plan) {
  TacticReplay replay;
  for (const PlanLayer& l : plan.layers) {
    replay.entries.push_back({l.name, l.tactic, l.precision, l.nodes, replay_tensors(l.input_desc, l.precision),
                              replay_tensors(l.output_desc, l.precision)});
  }
  return replay;
}

nlohmann::ordered_json tactic_replay_to_json(const TacticReplay& replay) {
  nlohmann::ordered_json layers = nlohmann::ordered_json::object();
  for (const ReplayEntry& e : replay.entries) {
    layers[e.layer] = {
        {"implementation", static_cast<int64_t>(tactic_info(e.tactic).kind)},
        {"tactic", tactic_replay_id(e.tactic)},
        {"inputs", tensor_infos(e.inputs)},
        {"outputs", tensor_infos(e.outputs)},
        {"vernier",
         {{"tactic", tactic_info(e.tactic).name}, {"precision", precision_name(e.precision)}, {"nodes", e.nodes}}},
        {"polygraphy_class", "Algorithm"}};
  }
  nlohmann::ordered_json j;
  j["replay"] = std::move(layers);
  j["polygraphy_class"] = "TacticReplayData";
  return j;
}

Result<TacticReplay> tactic_replay_from_json(const nlohmann::ordered_json& j) {
  if (!j.is_object() || !j.contains("replay") || !j["replay"].is_object()) {
    return make_error(StatusCode::kIoError, "tactic replay: expected an object with a \"replay\" map of layers");
  }
  if (j.contains("polygraphy_class") && j["polygraphy_class"] != "TacticReplayData") {
    return make_error(StatusCode::kIoError, "tactic replay: \"polygraphy_class\" is not \"TacticReplayData\"");
  }
  TacticReplay replay;
  for (auto it = j["replay"].begin(); it != j["replay"].end(); ++it) {
    const std::string& layer = it.key();
    const nlohmann::ordered_json& a = it.value();
    if (!a.is_object()) return malformed(layer, "not an Algorithm object");
    // Polygraphy's own fields are checked even when the "vernier" names decide: Polygraphy reads them.
    if (a.contains("polygraphy_class") && a["polygraphy_class"] != "Algorithm") {
      return malformed(layer, "\"polygraphy_class\" is not \"Algorithm\"");
    }
    for (const char* key : {"implementation", "tactic"}) {
      if (a.contains(key) && !a[key].is_number_integer()) return malformed(layer, fmt::format("\"{}\" is not an integer", key));
    }
    ReplayEntry e;
    e.layer = layer;
    VN_ASSIGN_OR_RETURN(e.inputs, read_tensors(a, "inputs", layer));
    VN_ASSIGN_OR_RETURN(e.outputs, read_tensors(a, "outputs", layer));
    if (a.contains("vernier")) {
      const nlohmann::ordered_json& v = a["vernier"];
      if (!v.is_object() || !v.contains("tactic") || !v["tactic"].is_string() || !v.contains("precision") ||
          !v["precision"].is_string()) {
        return malformed(layer, "\"vernier\" needs \"tactic\" and \"precision\" names");
      }
      const TacticInfo* t = find_tactic(v["tactic"].get<std::string>());
      if (!t) return malformed(layer, fmt::format("unknown tactic '{}'", v["tactic"].get<std::string>()));
      const std::optional<PrecisionId> p = precision_from_name(v["precision"].get<std::string>());
      if (!p) return malformed(layer, fmt::format("unknown precision '{}'", v["precision"].get<std::string>()));
      e.tactic = t->id;
      e.precision = *p;
      if (v.contains("nodes")) {
        if (!v["nodes"].is_array()) return malformed(layer, "\"vernier\" \"nodes\" is not a list of names");
        for (const nlohmann::ordered_json& n : v["nodes"]) {
          if (!n.is_string()) return malformed(layer, "\"vernier\" \"nodes\" is not a list of names");
          e.nodes.push_back(n.get<std::string>());
        }
      }
    } else {
      if (!a.contains("tactic") || !a["tactic"].is_number_integer()) return malformed(layer, "no \"tactic\" id");
      const int64_t id = a["tactic"].get<int64_t>();
      const TacticInfo* found = nullptr;
      for (const TacticInfo& t : all_tactics()) {
        if (tactic_replay_id(t.id) == id) found = &t;
      }
      if (!found) return malformed(layer, fmt::format("tactic id {} is not one of Vernier's tactics", id));
      e.tactic = found->id;
      const std::string out = e.outputs.empty() ? "DataType.FLOAT" : e.outputs[0].dtype;
      e.precision = out == "DataType.HALF"
                        ? (found->supports(PrecisionId::kFp16) ? PrecisionId::kFp16 : PrecisionId::kFp16Strict)
                    : out == "DataType.BF16"                                        ? PrecisionId::kBf16
                    : out == "DataType.INT8" && found->supports(PrecisionId::kInt8) ? PrecisionId::kInt8
                                                                                    : PrecisionId::kFp32;
    }
    replay.entries.push_back(std::move(e));
  }
  return replay;
}

Status save_tactic_replay(const TacticReplay& replay, const std::filesystem::path& path) {
  return file_write_atomic(path, tactic_replay_to_json(replay).dump(4) + "\n");
}

Result<TacticReplay> load_tactic_replay(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json j, read_json_file(path, "tactic replay"));
  Result<TacticReplay> replay = tactic_replay_from_json(j);
  if (!replay.ok()) return replay.status().with_context(path.string());
  return replay;
}

}  // namespace vn::engine
