// SPDX-License-Identifier: Apache-2.0
#include "core/flow/session_file.h"

#include <regex>

#include <fmt/format.h>

#include "core/common/json_file.h"
#include "core/ir/mapped_file.h"

namespace vn::flow {
namespace {

constexpr std::string_view kFormat = "vernier-triage-session";
constexpr int kVersion = 1;

nlohmann::ordered_json step_json(const TriageStep& step, int run) {
  nlohmann::ordered_json j;
  j["node"] = step.node;
  if (step.answer) j["answer"] = *step.answer;
  j["summary"] = step.summary;
  j["evidence"] = step.evidence;
  j["seconds"] = step.seconds;
  j["engine_builds"] = step.builds;
  j["checks"] = step.checks;
  j["overridden"] = step.overridden;
  if (step.redone) j["redone"] = true;
  j["run"] = run;
  return j;
}

// `step` as its probe proposed it: an overridden answer turned back.
TriageStep proposal_of(TriageStep step) {
  if (step.answer && step.overridden) step.answer = !*step.answer;
  step.overridden = false;
  return step;
}

// A field of the state, of the JSON type `is` checks; kIoError naming it otherwise.
template <class Is>
Result<const nlohmann::ordered_json*> field(const nlohmann::ordered_json& object, const char* name, Is is,
                                            std::string_view where, const std::filesystem::path& file) {
  const auto it = object.find(name);
  VN_RETURN_IF_NOT(it != object.end() && is(*it), StatusCode::kIoError, "{}: {}'{}' missing or of the wrong type",
                   file.string(), where, name);
  return &*it;
}

bool is_string(const nlohmann::ordered_json& j) { return j.is_string(); }
bool is_integer(const nlohmann::ordered_json& j) { return j.is_number_integer(); }
bool is_number(const nlohmann::ordered_json& j) { return j.is_number(); }
bool is_boolean(const nlohmann::ordered_json& j) { return j.is_boolean(); }
bool is_array(const nlohmann::ordered_json& j) { return j.is_array(); }
bool is_object(const nlohmann::ordered_json& j) { return j.is_object(); }

Result<std::pair<TriageStep, int>> step_from_json(const nlohmann::ordered_json& j, std::string_view where,
                                                  const std::filesystem::path& file) {
  VN_RETURN_IF_NOT(j.is_object(), StatusCode::kIoError, "{}: {}not an object", file.string(), where);
  TriageStep step;
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* node, field(j, "node", is_string, where, file));
  step.node = node->get<std::string>();
  if (j.contains("answer")) {
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* answer, field(j, "answer", is_boolean, where, file));
    step.answer = answer->get<bool>();
  }
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* summary, field(j, "summary", is_string, where, file));
  step.summary = summary->get<std::string>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* evidence, field(j, "evidence", is_object, where, file));
  step.evidence = *evidence;
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* seconds, field(j, "seconds", is_number, where, file));
  step.seconds = seconds->get<double>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* builds, field(j, "engine_builds", is_integer, where, file));
  step.builds = builds->get<int64_t>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* checks, field(j, "checks", is_integer, where, file));
  step.checks = checks->get<int64_t>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* overridden, field(j, "overridden", is_boolean, where, file));
  step.overridden = overridden->get<bool>();
  step.redone = j.value("redone", false);
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* run, field(j, "run", is_integer, where, file));
  step.resumed = true;
  return std::make_pair(std::move(step), run->get<int>());
}

nlohmann::ordered_json iterations_json(const std::vector<SessionIteration>& iterations) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const SessionIteration& it : iterations) {
    j.push_back({{"key", it.key},
                 {"phase", it.phase},
                 {"iteration", it.iteration},
                 {"nodes", it.nodes},
                 {"verdict", debug::verdict_name(it.verdict)},
                 {"reason", it.reason},
                 {"run", it.run}});
  }
  return j;
}

Result<SessionReduce> reduce_from_json(const nlohmann::ordered_json& j, const std::filesystem::path& file) {
  const std::string where = "reduce: ";
  SessionReduce reduce;
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* node, field(j, "node", is_string, where, file));
  reduce.node = node->get<std::string>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* seconds, field(j, "seconds", is_number, where, file));
  reduce.seconds = seconds->get<double>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* builds, field(j, "engine_builds", is_integer, where, file));
  reduce.builds = builds->get<int64_t>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* checks, field(j, "checks", is_integer, where, file));
  reduce.checks = checks->get<int64_t>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* iterations, field(j, "iterations", is_array, where, file));
  for (size_t i = 0; i < iterations->size(); ++i) {
    const nlohmann::ordered_json& it = (*iterations)[i];
    const std::string at = fmt::format("reduce iteration {}: ", i);
    VN_RETURN_IF_NOT(it.is_object(), StatusCode::kIoError, "{}: {}not an object", file.string(), at);
    SessionIteration s;
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* key, field(it, "key", is_string, at, file));
    s.key = key->get<std::string>();
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* phase, field(it, "phase", is_string, at, file));
    s.phase = phase->get<std::string>();
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* iteration, field(it, "iteration", is_integer, at, file));
    s.iteration = iteration->get<int64_t>();
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* nodes, field(it, "nodes", is_integer, at, file));
    s.nodes = nodes->get<int64_t>();
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* verdict, field(it, "verdict", is_string, at, file));
    const std::optional<debug::Verdict> v = debug::verdict_from_name(verdict->get<std::string>());
    VN_RETURN_IF_NOT(v.has_value(), StatusCode::kIoError, "{}: {}unknown verdict '{}'", file.string(), at,
                     verdict->get<std::string>());
    s.verdict = *v;
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* reason, field(it, "reason", is_string, at, file));
    s.reason = reason->get<std::string>();
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* run, field(it, "run", is_integer, at, file));
    s.run = run->get<int>();
    reduce.iterations.push_back(std::move(s));
  }
  return reduce;
}

// What an atomic write killed before its rename leaves: "<name>.tmp-<pid>-<n>" (AtomicFileWriter).
void remove_temporary_files(const std::filesystem::path& dir) {
  static const std::regex temporary(R"(.*\.tmp-[0-9]+-[0-9]+)");
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && std::regex_match(it->path().filename().string(), temporary)) {
      stale.push_back(it->path());
    }
  }
  for (const std::filesystem::path& p : stale) std::filesystem::remove(p, ec);
}

}  // namespace

debug::DebugReplay SessionReduce::replay() const {
  debug::DebugReplay replay;
  for (const SessionIteration& it : iterations) {
    replay.record(it.key, debug::ReplayEntry{{{"num_nodes", it.nodes}}, it.iteration, it.verdict, it.reason});
  }
  return replay;
}

Result<TriageSession> TriageSession::create(const std::filesystem::path& workdir, nlohmann::ordered_json command,
                                            std::string model_hash) {
  std::error_code ec;
  std::filesystem::create_directories(workdir, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot create the work folder: {}", workdir.string(), ec.message());
  TriageSession s;
  s.workdir_ = workdir;
  s.command_ = std::move(command);
  s.model_hash_ = std::move(model_hash);
  return s;
}

bool TriageSession::exists(const std::filesystem::path& workdir) {
  std::error_code ec;
  return std::filesystem::exists(workdir / kSessionFile, ec);
}

Result<TriageSession> TriageSession::open(const std::filesystem::path& workdir) {
  const std::filesystem::path file = workdir / kSessionFile;
  VN_RETURN_IF_NOT(exists(workdir), StatusCode::kInvalidArgument, "{}: no triage session here ({} is missing)",
                   workdir.string(), std::string(kSessionFile));
  remove_temporary_files(workdir);
  remove_temporary_files(workdir / kSessionDir);
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json j, read_json_file(file, "triage session"));
  VN_RETURN_IF_NOT(j.is_object() && j.value("format", "") == kFormat, StatusCode::kIoError,
                   "{}: not a triage session (\"format\" is not \"{}\")", file.string(), kFormat);
  VN_RETURN_IF_NOT(j.value("version", 0) == kVersion, StatusCode::kIoError,
                   "{}: triage session version {} (this Vernier reads version {})", file.string(),
                   j.value("version", 0), kVersion);
  TriageSession s;
  s.workdir_ = workdir;
  s.resumed_ = true;
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* command, field(j, "command", is_object, "", file));
  s.command_ = *command;
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* hash, field(j, "model_hash", is_string, "", file));
  s.model_hash_ = hash->get<std::string>();
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* runs, field(j, "runs", is_integer, "", file));
  s.run_ = runs->get<int>() + 1;
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* path, field(j, "path", is_array, "", file));
  for (size_t i = 0; i < path->size(); ++i) {
    VN_ASSIGN_OR_RETURN(auto step, step_from_json((*path)[i], fmt::format("path step {}: ", i), file));
    s.path_.push_back(std::move(step.first));
    s.path_runs_.push_back(step.second);
    const auto iterations = (*path)[i].find("reduce_iterations");
    s.path_iterations_.push_back(iterations == (*path)[i].end() ? nlohmann::ordered_json() : *iterations);
    const auto walk = (*path)[i].find("walk");
    s.path_walks_.push_back(walk != (*path)[i].end() && walk->is_object() ? *walk : nlohmann::ordered_json());
  }
  const auto next = j.find("next");
  VN_RETURN_IF_NOT(next != j.end() && (next->is_string() || next->is_null()), StatusCode::kIoError,
                   "{}: 'next' missing or of the wrong type", file.string());
  if (next->is_string()) s.next_ = next->get<std::string>();
  s.ended_ = next->is_null();
  if (s.ended_) {
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* outcome, field(j, "outcome", is_string, "", file));
    s.outcome_ = outcome->get<std::string>();
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* culprit, field(j, "culprit", is_string, "", file));
    s.culprit_ = culprit->get<std::string>();
    VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* bundle, field(j, "bundle", is_string, "", file));
    s.bundle_ = bundle->get<std::string>();
  }
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* walk, field(j, "walk", is_object, "", file));
  s.walk_ = *walk;
  if (j.contains("pending")) {
    VN_ASSIGN_OR_RETURN(auto pending, step_from_json(j["pending"], "pending: ", file));
    s.pending_ = std::move(pending.first);
    s.pending_run_ = pending.second;
    s.pending_iterations_ = j["pending"].value("reduce_iterations", nlohmann::ordered_json());
  }
  if (const auto redo = j.find("redo"); redo != j.end()) {
    VN_RETURN_IF_NOT(redo->is_array(), StatusCode::kIoError, "{}: 'redo' is not a list", file.string());
    for (size_t i = 0; i < redo->size(); ++i) {
      VN_ASSIGN_OR_RETURN(auto step, step_from_json((*redo)[i], fmt::format("redo step {}: ", i), file));
      VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* walk,
                          field((*redo)[i], "walk", is_object, fmt::format("redo step {}: ", i), file));
      s.redo_.push_back(SessionRedo{std::move(step.first), *walk,
                                    (*redo)[i].value("reduce_iterations", nlohmann::ordered_json()), step.second});
    }
  }
  if (const auto undos = j.find("undos"); undos != j.end()) {
    VN_RETURN_IF_NOT(undos->is_array(), StatusCode::kIoError, "{}: 'undos' is not a list", file.string());
    s.undos_ = *undos;
  }
  if (j.contains("reduce")) {
    VN_ASSIGN_OR_RETURN(SessionReduce reduce, reduce_from_json(j["reduce"], file));
    s.reduce_ = std::move(reduce);
  }
  return s;
}

Result<std::filesystem::path> TriageSession::files_dir() const {
  const std::filesystem::path dir = workdir_ / kSessionDir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot create: {}", dir.string(), ec.message());
  return dir;
}

void TriageSession::set_pending(const TriageStep& step, nlohmann::ordered_json walk) {
  pending_ = step;
  pending_iterations_ = nlohmann::ordered_json();
  pending_run_ = run_;
  walk_ = std::move(walk);
}

void TriageSession::record_step(TriageStep step, std::string next, nlohmann::ordered_json walk) {
  const bool reduced = reduce_ && reduce_->node == step.node;
  // A step taken from its record (asked again after an undo, or retraced) keeps its reduction
  // and the run that probed it.
  const bool recorded = pending_ && pending_->node == step.node;
  path_iterations_.push_back(reduced    ? iterations_json(reduce_->iterations)
                             : recorded ? pending_iterations_
                                        : nlohmann::ordered_json());
  path_.push_back(std::move(step));
  path_runs_.push_back(recorded ? pending_run_ : run_);
  path_walks_.push_back(walk);
  next_ = std::move(next);
  walk_ = std::move(walk);
  pending_.reset();
  pending_iterations_ = nlohmann::ordered_json();
  reduce_.reset();
}

void TriageSession::undo_to(size_t index) {
  VN_CHECK(pending_.has_value() && index < path_.size(), "undo_to({}) without a pending question after it", index);
  nlohmann::ordered_json undone = nlohmann::ordered_json::array();
  std::vector<SessionRedo> redo;
  for (size_t i = index; i < path_.size(); ++i) {
    nlohmann::ordered_json u = {{"node", path_[i].node}};
    if (path_[i].answer) u["answer"] = *path_[i].answer;
    u["overridden"] = path_[i].overridden;
    undone.push_back(std::move(u));
    if (i > index)
      redo.push_back(SessionRedo{proposal_of(path_[i]), path_walks_[i], path_iterations_[i], path_runs_[i]});
  }
  const bool reduced = reduce_ && reduce_->node == pending_->node;
  redo.push_back(SessionRedo{*pending_, walk_, reduced ? iterations_json(reduce_->iterations) : pending_iterations_,
                             pending_run_});
  redo.insert(redo.end(), std::make_move_iterator(redo_.begin()), std::make_move_iterator(redo_.end()));
  redo_ = std::move(redo);
  undos_.push_back(
      {{"run", run_}, {"at", pending_->node}, {"back_to", path_[index].node}, {"undone", std::move(undone)}});
  pending_ = proposal_of(path_[index]);
  pending_iterations_ = path_iterations_[index];
  pending_run_ = path_runs_[index];
  walk_ = path_walks_[index];
  next_ = path_[index].node;
  path_.resize(index);
  path_runs_.resize(index);
  path_iterations_.resize(index);
  path_walks_.resize(index);
  reduce_.reset();
}

std::optional<SessionRedo> TriageSession::take_redo(const std::string& node) {
  if (redo_.empty() || redo_.front().step.node != node) {
    redo_.clear();
    return std::nullopt;
  }
  SessionRedo taken = std::move(redo_.front());
  redo_.erase(redo_.begin());
  pending_ = taken.step;
  pending_iterations_ = taken.iterations;
  pending_run_ = taken.run;
  walk_ = taken.walk;
  return taken;
}

void TriageSession::record_iteration(const std::string& node, const debug::ReduceIteration& iteration,
                                     double seconds, int64_t builds, int64_t checks) {
  if (!reduce_ || reduce_->node != node) reduce_ = SessionReduce{node, 0, 0, 0, {}};
  reduce_->seconds = seconds;
  reduce_->builds = builds;
  reduce_->checks = checks;
  reduce_->iterations.push_back(SessionIteration{iteration.key, iteration.phase, iteration.iteration,
                                                 static_cast<int64_t>(iteration.candidate.nodes.size()),
                                                 iteration.result.verdict, iteration.result.reason, run_});
}

void TriageSession::end(std::string outcome, std::string culprit, std::string bundle) {
  ended_ = true;
  next_.clear();
  outcome_ = std::move(outcome);
  culprit_ = std::move(culprit);
  bundle_ = std::move(bundle);
  pending_.reset();
  redo_.clear();
  reduce_.reset();
}

nlohmann::ordered_json TriageSession::to_json() const {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["command"] = command_;
  j["model_hash"] = model_hash_;
  j["runs"] = run_;
  j["path"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < path_.size(); ++i) {
    nlohmann::ordered_json step = step_json(path_[i], path_runs_[i]);
    if (!path_iterations_[i].is_null()) step["reduce_iterations"] = path_iterations_[i];
    if (!path_walks_[i].is_null()) step["walk"] = path_walks_[i];
    j["path"].push_back(std::move(step));
  }
  j["next"] = ended_ ? nlohmann::ordered_json() : nlohmann::ordered_json(next_);
  if (pending_) {
    j["pending"] = step_json(*pending_, pending_run_);
    if (!pending_iterations_.is_null()) j["pending"]["reduce_iterations"] = pending_iterations_;
  }
  if (!redo_.empty()) {
    j["redo"] = nlohmann::ordered_json::array();
    for (const SessionRedo& r : redo_) {
      nlohmann::ordered_json step = step_json(r.step, r.run);
      step["walk"] = r.walk;
      if (!r.iterations.is_null()) step["reduce_iterations"] = r.iterations;
      j["redo"].push_back(std::move(step));
    }
  }
  if (!undos_.empty()) j["undos"] = undos_;
  j["walk"] = walk_;
  if (reduce_) {
    nlohmann::ordered_json r;
    r["node"] = reduce_->node;
    r["seconds"] = reduce_->seconds;
    r["engine_builds"] = reduce_->builds;
    r["checks"] = reduce_->checks;
    r["iterations"] = iterations_json(reduce_->iterations);
    j["reduce"] = std::move(r);
  }
  if (ended_) {
    j["outcome"] = outcome_;
    j["culprit"] = culprit_;
    j["bundle"] = bundle_;
  }
  return j;
}

Status TriageSession::save() const { return file_write_atomic(file(), to_json().dump(2) + "\n"); }

}  // namespace vn::flow
