// SPDX-License-Identifier: Apache-2.0
#include "core/flow/scenario.h"

#include <limits>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/json_file.h"

namespace vn::flow {
namespace {

using Json = nlohmann::ordered_json;

// Reads the members of one object of the file, naming the file and "section.key" in every error.
class Reader {
 public:
  Reader(const std::filesystem::path& file, std::string section, const Json& object)
      : file_(file), section_(std::move(section)), object_(object) {}

  Status error(std::string_view key, std::string_view what) const {
    return make_error(StatusCode::kIoError, "{}: '{}{}': {}", file_.string(), section_.empty() ? "" : section_ + ".",
                      key, what);
  }

  // Refuses members other than `known`.
  Status only(const std::set<std::string>& known) const {
    for (const auto& [key, value] : object_.items()) {
      if (!known.count(key)) return error(key, "unknown key");
    }
    return Status::OK();
  }

  const Json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  Status text(const char* key, std::string& out, bool required = false) const {
    const Json* v = find(key);
    if (!v) return required ? error(key, "missing") : Status::OK();
    if (!v->is_string() || v->get<std::string>().empty()) return error(key, "expected a non-empty string");
    out = v->get<std::string>();
    return Status::OK();
  }

  Status texts(const char* key, std::vector<std::string>& out) const {
    const Json* v = find(key);
    if (!v) return Status::OK();
    if (!v->is_array()) return error(key, "expected a list of strings");
    for (const Json& item : *v) {
      if (!item.is_string()) return error(key, "expected a list of strings");
      out.push_back(item.get<std::string>());
    }
    return Status::OK();
  }

  // A path or list of paths, made relative to the scenario's folder.
  Status paths(const char* key, std::vector<std::filesystem::path>& out) const {
    std::vector<std::string> items;
    if (const Json* v = find(key); v && v->is_string()) {
      items.push_back(v->get<std::string>());
    } else {
      VN_RETURN_IF_ERROR(texts(key, items));
    }
    for (const std::string& item : items) {
      if (item.empty()) return error(key, "empty path");
      out.push_back(resolve(item));
    }
    return Status::OK();
  }

  std::filesystem::path resolve(const std::string& path) const { return file_.parent_path() / path; }

  Status flag(const char* key, bool& out) const {
    const Json* v = find(key);
    if (!v) return Status::OK();
    if (!v->is_boolean()) return error(key, "expected true or false");
    out = v->get<bool>();
    return Status::OK();
  }

  template <typename T>
  Status integer(const char* key, std::optional<T>& out, int64_t min, uint64_t max) const {
    const Json* v = find(key);
    if (!v) return Status::OK();
    bool in_range = false;
    if (v->is_number_unsigned()) {
      const uint64_t u = v->get<uint64_t>();
      in_range = u <= max && (min <= 0 || u >= static_cast<uint64_t>(min));
    } else if (v->is_number_integer()) {
      const int64_t i = v->get<int64_t>();
      in_range = i >= min && (i < 0 || static_cast<uint64_t>(i) <= max);
    }
    if (!in_range) return error(key, fmt::format("expected an integer in [{}, {}]", min, max));
    out = v->is_number_unsigned() ? static_cast<T>(v->get<uint64_t>()) : static_cast<T>(v->get<int64_t>());
    return Status::OK();
  }

  Status integers(const char* key, std::vector<int>& out) const {
    const Json* v = find(key);
    if (!v) return Status::OK();
    if (!v->is_array()) return error(key, "expected a list of integers");
    for (const Json& item : *v) {
      if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() > 255) {
        return error(key, "expected a list of exit codes (0 to 255)");
      }
      out.push_back(static_cast<int>(item.get<int64_t>()));
    }
    return Status::OK();
  }

  Status number(const char* key, std::optional<double>& out) const {
    const Json* v = find(key);
    if (!v) return Status::OK();
    if (!v->is_number() || v->get<double>() < 0) return error(key, "expected a non-negative number");
    out = v->get<double>();
    return Status::OK();
  }

  // The member `key` as an object (nullptr when absent).
  Result<const Json*> object(const char* key) const {
    const Json* v = find(key);
    if (v && !v->is_object()) return error(key, "expected an object");
    return v;
  }

 private:
  const std::filesystem::path& file_;
  std::string section_;
  const Json& object_;
};

Status read_data(const Reader& r, Scenario& s) {
  VN_RETURN_IF_ERROR(r.only({"seed", "val_range", "load_inputs", "iterations"}));
  VN_RETURN_IF_ERROR(r.integer("seed", s.seed, 0, std::numeric_limits<uint32_t>::max()));
  VN_RETURN_IF_ERROR(r.texts("val_range", s.val_range));
  VN_RETURN_IF_ERROR(r.paths("load_inputs", s.load_inputs));
  return r.integer("iterations", s.iterations, 1, 1000000);
}

Status read_engine(const Reader& r, Scenario& s) {
  VN_RETURN_IF_ERROR(r.only({"runner", "runner_options", "precisions", "deterministic", "builder_seed",
                             "timing_margin", "inject_fault", "layer_precisions", "precision_constraints",
                             "calibration_data", "calibration_method"}));
  VN_RETURN_IF_ERROR(r.text("runner", s.engine_runner));
  VN_RETURN_IF_ERROR(r.texts("runner_options", s.runner_options));
  VN_RETURN_IF_ERROR(r.texts("precisions", s.precisions));
  for (const std::string& p : s.precisions) {
    if (p != "fp16" && p != "bf16" && p != "tf32" && p != "int8") {
      return r.error("precisions", fmt::format("'{}' is not fp16, bf16, tf32 or int8", p));
    }
  }
  VN_RETURN_IF_ERROR(r.flag("deterministic", s.deterministic));
  VN_RETURN_IF_ERROR(r.integer("builder_seed", s.builder_seed, 0, std::numeric_limits<uint64_t>::max()));
  VN_RETURN_IF_ERROR(r.number("timing_margin", s.timing_margin));
  VN_RETURN_IF_ERROR(r.texts("inject_fault", s.inject_fault));
  VN_RETURN_IF_ERROR(r.texts("layer_precisions", s.layer_precisions));
  VN_RETURN_IF_ERROR(r.text("precision_constraints", s.precision_constraints));
  std::string calibration_data;
  VN_RETURN_IF_ERROR(r.text("calibration_data", calibration_data));
  if (!calibration_data.empty()) s.calibration_data = r.resolve(calibration_data);
  return r.text("calibration_method", s.calibration_method);
}

Status read_check(const Reader& r, Scenario& s) {
  VN_RETURN_IF_ERROR(r.only({"command", "fail_regex", "fail_code", "ignore_fail_code", "timeout"}));
  ScenarioCheck check;
  VN_RETURN_IF_ERROR(r.texts("command", check.command));
  if (check.command.empty()) return r.error("command", "expected the check's argv, a non-empty list of strings");
  VN_RETURN_IF_ERROR(r.texts("fail_regex", check.fail_regex));
  VN_RETURN_IF_ERROR(r.integers("fail_code", check.fail_codes));
  VN_RETURN_IF_ERROR(r.integers("ignore_fail_code", check.ignore_fail_codes));
  std::optional<double> timeout;
  VN_RETURN_IF_ERROR(r.number("timeout", timeout));
  check.timeout_s = timeout.value_or(0);
  s.check = std::move(check);
  return Status::OK();
}

Status read_expect(const Reader& r, Scenario& s) {
  VN_RETURN_IF_ERROR(r.only({"outcome", "path", "culprit"}));
  VN_RETURN_IF_ERROR(r.text("outcome", s.expect.outcome, /*required=*/true));
  VN_RETURN_IF_ERROR(r.texts("path", s.expect.path));
  if (s.expect.path.empty()) return r.error("path", "expected the node ids of the path");
  return r.text("culprit", s.expect.culprit);
}

}  // namespace

Result<Scenario> load_scenario(const std::filesystem::path& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot open the scenario: {}", path.string(), ec.message());
  VN_RETURN_IF_NOT(size <= kMaxScenarioBytes, StatusCode::kIoError,
                   "{}: {} bytes is too large for a scenario (at most {})", path.string(), size, kMaxScenarioBytes);
  VN_ASSIGN_OR_RETURN(const Json json, read_json_file(path, "scenario"));
  VN_RETURN_IF_NOT(json.is_object() && json.value("format", "") == "vernier-scenario" && json.contains("version") &&
                       json["version"] == 1,
                   StatusCode::kIoError, "{}: not a Vernier scenario (version 1)", path.string());
  Scenario s;
  s.file = path;
  const Reader top(path, "", json);
  VN_RETURN_IF_ERROR(top.only(
      {"format", "version", "name", "title", "description", "model", "data", "engine", "compare", "triage", "check",
       "expect"}));
  VN_RETURN_IF_ERROR(top.text("name", s.name, /*required=*/true));
  VN_RETURN_IF_ERROR(top.text("title", s.title, /*required=*/true));
  VN_RETURN_IF_ERROR(top.text("description", s.description));
  std::string model;
  VN_RETURN_IF_ERROR(top.text("model", model, /*required=*/true));
  s.model = path.parent_path() / model;

  VN_ASSIGN_OR_RETURN(const Json* data, top.object("data"));
  if (data) VN_RETURN_IF_ERROR(read_data(Reader(path, "data", *data), s));
  VN_ASSIGN_OR_RETURN(const Json* engine, top.object("engine"));
  if (engine) VN_RETURN_IF_ERROR(read_engine(Reader(path, "engine", *engine), s));
  VN_ASSIGN_OR_RETURN(const Json* compare, top.object("compare"));
  if (compare) {
    const Reader r(path, "compare", *compare);
    VN_RETURN_IF_ERROR(r.only({"atol", "rtol"}));
    VN_RETURN_IF_ERROR(r.texts("atol", s.atol));
    VN_RETURN_IF_ERROR(r.texts("rtol", s.rtol));
  }
  VN_ASSIGN_OR_RETURN(const Json* triage, top.object("triage"));
  if (triage) {
    const Reader r(path, "triage", *triage);
    VN_RETURN_IF_ERROR(r.only({"builds"}));
    VN_RETURN_IF_ERROR(r.integer("builds", s.builds, 2, 1000));
  }
  VN_ASSIGN_OR_RETURN(const Json* check, top.object("check"));
  if (check) VN_RETURN_IF_ERROR(read_check(Reader(path, "check", *check), s));
  VN_ASSIGN_OR_RETURN(const Json* expect, top.object("expect"));
  VN_RETURN_IF_NOT(expect, StatusCode::kIoError, "{}: 'expect': missing", path.string());
  VN_RETURN_IF_ERROR(read_expect(Reader(path, "expect", *expect), s));
  return s;
}

}  // namespace vn::flow
