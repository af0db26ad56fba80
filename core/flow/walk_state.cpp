// SPDX-License-Identifier: Apache-2.0
// What a triage walk keeps in its session (core/flow/session_file.h) and brings back on --resume.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/common/json_file.h"
#include "core/debug/builtin_check.h"
#include "core/engine/plan.h"
#include "core/flow/walk.h"
#include "core/io/polygraphy_json.h"
#include "core/ir/mapped_file.h"
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

// Files of the session folder are named after their contents ("failing_<hash>.onnx"): the state
// of every step refers to its own, which no later step overwrites, so an undo can go back to it.
std::string content_hash(std::string_view text) { return fmt::format("{:016x}", std::hash<std::string_view>()(text)); }

// The stem of the files of the failing case (model, inputs, tactics).
Result<std::string> failing_stem(const BundleContents& failing) {
  VN_ASSIGN_OR_RETURN(const std::string feeds, io::feed_list_to_json(failing.feeds));
  const std::string tactics =
      failing.build.replay ? engine::tactic_replay_to_json(*failing.build.replay).dump() : std::string();
  return "failing_" + content_hash(engine::model_hash(failing.model) + feeds + tactics);
}

// Writes `write` to `path` unless a file is there already (it holds the same contents).
template <class Write>
Status write_once(const std::filesystem::path& path, Write write) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return Status::OK();
  return write(path);
}

// The session file of a layer-wise comparison's hand-on (layerwise_json), written once.
Result<std::string> layerwise_file(const TriageSession& session, const nlohmann::ordered_json& layerwise) {
  VN_ASSIGN_OR_RETURN(const std::filesystem::path dir, session.files_dir());
  const std::string text = layerwise.dump();
  const std::filesystem::path path = dir / ("layerwise_" + content_hash(text) + ".json");
  VN_RETURN_IF_ERROR(write_once(path, [&](const std::filesystem::path& p) { return file_write_atomic(p, text); }));
  return session_file(session, path);
}

}  // namespace

Status restore_walk(Walk& w, const nlohmann::ordered_json& j, const TriageSession& session,
                    std::string& saved_model_hash) {
  const std::filesystem::path& workdir = session.workdir();
  auto bad = [&](std::string_view what) {
    return make_error(StatusCode::kIoError, "{}: walk: {}", session.file().string(), what);
  };
  bool model_changed = false;
  const std::string current_hash = engine::model_hash(w.config.model);
  const std::string wanted_hash = j.contains("model") ? j.value("model_hash", "") : session.model_hash();
  if (current_hash != wanted_hash) {
    if (!j.contains("model")) return bad("the model the session started with is not at hand");
    const std::filesystem::path file = workdir / j.value("model", "");
    VN_ASSIGN_OR_RETURN(Model model, load_model(file));
    VN_RETURN_IF_NOT(engine::model_hash(model) == wanted_hash, StatusCode::kIoError,
                     "{}: not the model this session saved (its hash differs)", file.string());
    w.config.model = std::move(model);
    model_changed = true;
  }
  saved_model_hash = wanted_hash;
  const std::string feeds_name = j.value("feeds", "none");
  std::vector<TensorMap> feeds;
  if (feeds_name == "real") {
    if (w.config.real_feeds.empty()) return bad("the failing data is the real data, and none is given");
    feeds = w.config.real_feeds;
  } else if (feeds_name == "synthetic") {
    feeds = w.config.synthetic_feeds;
  } else if (feeds_name != "none") {
    VN_ASSIGN_OR_RETURN(feeds, io::load_feed_list(workdir / feeds_name));
  }
  // The reference outputs and the reducer (every tensor's reference values) follow from the model
  // and the failing data: computed again (reference runs, not checks) only when those changed.
  if (model_changed || !same_feeds(feeds, w.feeds)) {
    w.feeds = std::move(feeds);
    w.ref_outputs.clear();
    w.reducer.reset();
    if (!w.feeds.empty()) {
      VN_ASSIGN_OR_RETURN(w.ref_outputs, debug::reference_outputs(w.config.model, w.feeds, w.config.threads, w.cancel));
    }
  }
  if (const auto lw = j.find("layerwise"); lw == j.end()) {
    w.layerwise.reset();
  } else {
    // The comparison in memory keeps its tensors' statistics, which the file does not: it stays
    // when it is the one recorded.
    nlohmann::ordered_json recorded;
    if (lw->is_string()) {
      VN_ASSIGN_OR_RETURN(recorded, read_json_file(workdir / lw->get<std::string>(), "layer-wise comparison"));
    } else {
      recorded = *lw;
    }
    if (!recorded.is_object()) return bad("'layerwise' is not an object");
    if (!w.layerwise || layerwise_json(*w.layerwise) != recorded) w.layerwise = layerwise_from_json(recorded);
  }
  w.culprit = j.value("culprit", "");
  w.outcome = j.value("outcome", "");
  w.lost_failure = j.value("lost_failure", "");
  w.checks = j.value("checks", int64_t{0});
  w.builds = j.value("engine_builds", int64_t{0});
  const std::string replay = j.value("bad_replay", "");
  w.bad_replay = replay.empty() ? std::filesystem::path() : workdir / replay;
  if (const auto failing = j.find("failing"); failing == j.end()) {
    w.failing.reset();
  } else {
    if (!failing->is_object()) return bad("'failing' is not an object");
    bool same = false;
    if (w.failing) {
      VN_ASSIGN_OR_RETURN(const std::string stem, failing_stem(*w.failing));
      same = std::filesystem::path(failing->value("model", "")).stem() == stem;
    }
    if (!same) {
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
  }
  return Status::OK();
}

Result<nlohmann::ordered_json> walk_json(const Walk& w, const TriageSession& session, std::string& saved_model_hash) {
  nlohmann::ordered_json j = session.walk();
  VN_ASSIGN_OR_RETURN(const std::filesystem::path dir, session.files_dir());
  // A probe that rewrote the model (sanitize) hands the new model on.
  const std::string hash = engine::model_hash(w.config.model);
  if (hash != saved_model_hash) {
    const std::filesystem::path file = dir / fmt::format("model_{}.onnx", hash.substr(2));
    VN_RETURN_IF_ERROR(write_once(file, [&](const std::filesystem::path& p) { return save_model(w.config.model, p); }));
    saved_model_hash = hash;
    j["model"] = session_file(session, file);
    j["model_hash"] = hash;
  }
  if (w.feeds.empty()) {
    j["feeds"] = "none";
  } else if (!w.config.real_feeds.empty() && same_feeds(w.feeds, w.config.real_feeds)) {
    j["feeds"] = "real";
  } else if (same_feeds(w.feeds, w.config.synthetic_feeds)) {
    j["feeds"] = "synthetic";
  } else {
    VN_ASSIGN_OR_RETURN(const std::string text, io::feed_list_to_json(w.feeds));
    const std::filesystem::path file = dir / ("feeds_" + content_hash(text) + ".json");
    VN_RETURN_IF_ERROR(write_once(file, [&](const std::filesystem::path& p) { return file_write_atomic(p, text); }));
    j["feeds"] = session_file(session, file);
  }
  if (w.layerwise) {
    VN_ASSIGN_OR_RETURN(j["layerwise"], layerwise_file(session, layerwise_json(*w.layerwise)));
  } else {
    j.erase("layerwise");
  }
  j["culprit"] = w.culprit;
  j["outcome"] = w.outcome;
  j["lost_failure"] = w.lost_failure;
  j["checks"] = w.checks;
  j["engine_builds"] = w.builds;
  j["bad_replay"] = w.bad_replay.empty() ? "" : session_file(session, w.bad_replay);
  if (w.failing) {
    VN_ASSIGN_OR_RETURN(const std::string stem, failing_stem(*w.failing));
    const std::filesystem::path model = dir / (stem + ".onnx"), inputs = dir / (stem + "_inputs.json");
    VN_RETURN_IF_ERROR(
        write_once(model, [&](const std::filesystem::path& p) { return save_model(w.failing->model, p); }));
    VN_RETURN_IF_ERROR(
        write_once(inputs, [&](const std::filesystem::path& p) { return io::save_feed_list(w.failing->feeds, p); }));
    j["failing"] = {{"model", session_file(session, model)},
                    {"inputs", session_file(session, inputs)},
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
  VN_RETURN_IF_ERROR(restore_walk(w, session.walk(), session, saved_model_hash));
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
