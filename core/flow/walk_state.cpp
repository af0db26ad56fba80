// SPDX-License-Identifier: Apache-2.0
// What a triage walk keeps in its session (core/flow/session.h) and brings back on --resume.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/debug/builtin_check.h"
#include "core/engine/plan.h"
#include "core/flow/walk.h"
#include "core/io/polygraphy_json.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"

namespace vn::flow {

nlohmann::ordered_json number_json(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

namespace {

double number_from(const nlohmann::ordered_json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string text = j.is_string() ? j.get<std::string>() : "nan";
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

nlohmann::ordered_json index_json(const std::optional<size_t>& index) {
  return index ? nlohmann::ordered_json(*index) : nlohmann::ordered_json();
}

// The layers of a layer-wise comparison with their culprit fields: what later probes read of it
// (the tensors' comparisons stay in the step's evidence).
nlohmann::ordered_json layerwise_json(const LayerwiseComparison& lw) {
  nlohmann::ordered_json j;
  j["local_errors"] = lw.local_errors;
  j["first_culprit"] = index_json(lw.first_culprit);
  j["first_nonfinite"] = index_json(lw.first_nonfinite);
  j["layers"] = nlohmann::ordered_json::array();
  for (const LayerComparison& l : lw.layers) {
    j["layers"].push_back({{"name", l.layer.name},
                           {"op", l.layer.op},
                           {"node", l.layer.node},
                           {"inputs", l.layer.inputs},
                           {"outputs", l.layer.outputs},
                           {"accumulated_excess", number_json(l.accumulated_excess)},
                           {"input_excess", number_json(l.input_excess)},
                           {"local_excess", number_json(l.local_excess)},
                           {"inputs_within", l.inputs_within},
                           {"introduces", l.introduces},
                           {"nonfinite", l.nonfinite},
                           {"score", number_json(l.score)},
                           {"rank", l.rank}});
  }
  return j;
}

LayerwiseComparison layerwise_from_json(const nlohmann::ordered_json& j) {
  LayerwiseComparison lw;
  lw.local_errors = j.value("local_errors", false);
  auto index = [&](const char* key) -> std::optional<size_t> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<size_t>();
  };
  for (const nlohmann::ordered_json& l : j.value("layers", nlohmann::ordered_json::array())) {
    LayerComparison layer;
    layer.layer.name = l.value("name", "");
    layer.layer.op = l.value("op", "");
    layer.layer.node = l.value("node", int64_t{-1});
    layer.layer.inputs = l.value("inputs", std::vector<std::string>{});
    layer.layer.outputs = l.value("outputs", std::vector<std::string>{});
    layer.accumulated_excess = number_from(l.value("accumulated_excess", nlohmann::ordered_json(0)));
    layer.input_excess = number_from(l.value("input_excess", nlohmann::ordered_json(0)));
    layer.local_excess = number_from(l.value("local_excess", nlohmann::ordered_json(-1)));
    layer.inputs_within = l.value("inputs_within", true);
    layer.introduces = l.value("introduces", false);
    layer.nonfinite = l.value("nonfinite", false);
    layer.score = number_from(l.value("score", nlohmann::ordered_json(0)));
    layer.rank = l.value("rank", 0);
    lw.layers.push_back(std::move(layer));
  }
  const std::optional<size_t> culprit = index("first_culprit"), nonfinite = index("first_nonfinite");
  if (culprit && *culprit < lw.layers.size()) lw.first_culprit = culprit;
  if (nonfinite && *nonfinite < lw.layers.size()) lw.first_nonfinite = nonfinite;
  return lw;
}

bool same_feeds(const std::vector<TensorMap>& a, const std::vector<TensorMap>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (const NamedTensor& t : a[i]) {
      const Tensor* other = b[i].find(t.name);
      if (!other || !other->same_as(t.tensor)) return false;
    }
  }
  return true;
}

// Where a file of the session folder is recorded: relative to the work folder, so a moved work
// folder still resumes.
std::string session_file(const TriageSession& session, const std::filesystem::path& path) {
  return std::filesystem::relative(path, session.workdir()).generic_string();
}

// Restores what walk_json kept. The reference outputs of the failing data are computed again
// (a reference run, not a check).
Status restore_walk(Walk& w, const TriageSession& session, std::string& saved_model_hash) {
  const nlohmann::ordered_json& j = session.walk();
  const std::filesystem::path& workdir = session.workdir();
  auto bad = [&](std::string_view what) {
    return make_error(StatusCode::kIoError, "{}: walk: {}", session.file().string(), what);
  };
  if (j.contains("model")) {
    const std::filesystem::path file = workdir / j.value("model", "");
    VN_ASSIGN_OR_RETURN(Model model, load_model(file));
    VN_RETURN_IF_NOT(engine::model_hash(model) == j.value("model_hash", ""), StatusCode::kIoError,
                     "{}: not the model this session saved (its hash differs)", file.string());
    w.config.model = std::move(model);
  }
  saved_model_hash = engine::model_hash(w.config.model);
  const std::string feeds = j.value("feeds", "none");
  if (feeds == "real") {
    w.feeds = w.config.real_feeds;
  } else if (feeds == "synthetic") {
    w.feeds = w.config.synthetic_feeds;
  } else if (feeds != "none") {
    VN_ASSIGN_OR_RETURN(w.feeds, io::load_feed_list(workdir / feeds));
  }
  if (feeds == "real" && w.config.real_feeds.empty()) return bad("the failing data is the real data, and none is given");
  if (!w.feeds.empty()) {
    VN_ASSIGN_OR_RETURN(w.ref_outputs, debug::reference_outputs(w.config.model, w.feeds, w.config.threads, w.cancel));
  }
  if (const auto lw = j.find("layerwise"); lw != j.end()) {
    if (!lw->is_object()) return bad("'layerwise' is not an object");
    w.layerwise = layerwise_from_json(*lw);
  }
  w.culprit = j.value("culprit", "");
  w.outcome = j.value("outcome", "");
  w.checks = j.value("checks", int64_t{0});
  w.builds = j.value("engine_builds", int64_t{0});
  if (const std::string replay = j.value("bad_replay", ""); !replay.empty()) w.bad_replay = workdir / replay;
  if (const auto failing = j.find("failing"); failing != j.end()) {
    if (!failing->is_object()) return bad("'failing' is not an object");
    BundleContents contents;
    VN_ASSIGN_OR_RETURN(contents.model, load_model(workdir / failing->value("model", "")));
    VN_ASSIGN_OR_RETURN(contents.feeds, io::load_feed_list(workdir / failing->value("inputs", "")));
    contents.build = w.config.build;
    if (const auto tactics = failing->find("tactics"); tactics != failing->end() && !tactics->is_null()) {
      VN_ASSIGN_OR_RETURN(engine::TacticReplay replay, engine::tactic_replay_from_json(*tactics));
      contents.build.replay = std::move(replay);
    }
    w.failing = std::move(contents);
  }
  return Status::OK();
}

}  // namespace

Result<nlohmann::ordered_json> walk_json(const Walk& w, const TriageSession& session, std::string& saved_model_hash) {
  nlohmann::ordered_json j = session.walk();
  VN_ASSIGN_OR_RETURN(const std::filesystem::path dir, session.files_dir());
  // A probe that rewrote the model (sanitize) hands the new model on.
  const std::string hash = engine::model_hash(w.config.model);
  if (hash != saved_model_hash) {
    VN_RETURN_IF_ERROR(save_model(w.config.model, dir / "model.onnx"));
    saved_model_hash = hash;
    j["model"] = session_file(session, dir / "model.onnx");
    j["model_hash"] = hash;
  }
  if (w.feeds.empty()) {
    j["feeds"] = "none";
  } else if (!w.config.real_feeds.empty() && same_feeds(w.feeds, w.config.real_feeds)) {
    j["feeds"] = "real";
  } else if (same_feeds(w.feeds, w.config.synthetic_feeds)) {
    j["feeds"] = "synthetic";
  } else {
    VN_RETURN_IF_ERROR(io::save_feed_list(w.feeds, dir / "feeds.json"));
    j["feeds"] = session_file(session, dir / "feeds.json");
  }
  if (w.layerwise) j["layerwise"] = layerwise_json(*w.layerwise);
  j["culprit"] = w.culprit;
  j["outcome"] = w.outcome;
  j["checks"] = w.checks;
  j["engine_builds"] = w.builds;
  j["bad_replay"] = w.bad_replay.empty() ? "" : session_file(session, w.bad_replay);
  if (w.failing) {
    VN_RETURN_IF_ERROR(save_model(w.failing->model, dir / "failing.onnx"));
    VN_RETURN_IF_ERROR(io::save_feed_list(w.failing->feeds, dir / "failing_inputs.json"));
    j["failing"] = {{"model", session_file(session, dir / "failing.onnx")},
                    {"inputs", session_file(session, dir / "failing_inputs.json")},
                    {"tactics", w.failing->build.replay ? engine::tactic_replay_to_json(*w.failing->build.replay)
                                                        : nlohmann::ordered_json()}};
  } else {
    j.erase("failing");
  }
  return j;
}

Result<const FlowNode*> open_session(Walk& w, TriageSession& session, const Flowchart& chart, TriageResult& result,
                                     const TriageObserver& observe, std::string& saved_model_hash) {
  if (!session.resumed()) {
    saved_model_hash = engine::model_hash(w.config.model);
    session.start_at(chart.start);
    VN_ASSIGN_OR_RETURN(nlohmann::ordered_json walk, walk_json(w, session, saved_model_hash));
    session.set_walk(std::move(walk));
    VN_RETURN_IF_ERROR(session.save());
    return chart.find(chart.start);
  }
  VN_RETURN_IF_NOT(engine::model_hash(w.config.model) == session.model_hash(), StatusCode::kInvalidArgument,
                   "{}: the model is not the one this session started with (its hash differs)",
                   session.file().string());
  for (const TriageStep& step : session.path()) {
    const FlowNode* node = chart.find(step.node);
    VN_RETURN_IF_NOT(node != nullptr, StatusCode::kInvalidArgument, "{}: step '{}' is not a node of the flowchart",
                     session.file().string(), step.node);
    result.path.push_back(step);
    if (observe) observe(step, *node);
  }
  VN_RETURN_IF_ERROR(restore_walk(w, session, saved_model_hash));
  VN_RETURN_IF_ERROR(session.save());  // the new run is counted
  if (session.ended()) {
    result.outcome = session.outcome();
    result.culprit = session.culprit();
    result.bundle = session.bundle();
    return nullptr;
  }
  const FlowNode* next = chart.find(session.next());
  VN_RETURN_IF_NOT(next != nullptr, StatusCode::kInvalidArgument, "{}: next step '{}' is not a node of the flowchart",
                   session.file().string(), session.next());
  return next;
}
}  // namespace vn::flow
