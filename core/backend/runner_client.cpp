// SPDX-License-Identifier: Apache-2.0
#include "core/backend/runner_client.h"

#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <system_error>

#include "core/common/json_depth.h"
#include "core/common/logging.h"
#include "core/io/npy.h"

namespace vn {
namespace {

using nlohmann::json;

// The start of an offending reply line, for a one-line message.
std::string clip(std::string_view text, size_t max = 120) {
  std::string s(text.substr(0, max));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return text.size() > max ? s + "..." : s;
}

// The last lines of a runner's log for a one-line message, without terminal colour codes (ONNX
// Runtime colours its warnings even into a pipe).
std::string quote_log(const std::string& log) {
  std::string plain;
  plain.reserve(log.size());
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i] == '\x1b' && i + 1 < log.size() && log[i + 1] == '[') {
      i += 2;
      while (i < log.size() && !(log[i] >= 0x40 && log[i] <= 0x7e)) ++i;
      continue;
    }
    plain += log[i];
  }
  return last_lines(plain);
}

// An error in a reply's content; request() turns it into a runner failure.
template <typename... Args>
Status bad_reply(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kExternalFailure, format, std::forward<Args>(args)...);
}

// The string member `key` of `obj`: "" when absent and not required.
Result<std::string> string_field(const json& obj, const char* key, const std::string& where, bool required) {
  const auto it = obj.find(key);
  if (it == obj.end() || (it->is_null() && !required)) {
    if (required) return bad_reply("{} lacks \"{}\"", where, key);
    return std::string();
  }
  if (!it->is_string()) return bad_reply("{} has a \"{}\" that is not a string", where, key);
  return it->get<std::string>();
}

std::string dims_text(const std::optional<std::vector<Dim>>& dims) {
  if (!dims) return "(unknown rank)";
  std::string s = "(";
  for (size_t i = 0; i < dims->size(); ++i) {
    const Dim& d = (*dims)[i];
    s += (i ? ", " : "") + (d.known() ? std::to_string(d.value) : d.param.empty() ? "?" : d.param);
  }
  return s + ")";
}

Result<RunnerTensorInfo> parse_tensor_info(const json& j, const std::string& where) {
  if (!j.is_object()) return bad_reply("{} holds an entry that is not an object", where);
  RunnerTensorInfo info;
  VN_ASSIGN_OR_RETURN(info.name, string_field(j, "name", where, true));
  if (info.name.empty()) return bad_reply("{} holds a tensor without a name", where);
  const std::string at = fmt::format("{} '{}'", where, info.name);
  VN_ASSIGN_OR_RETURN(const std::string dtype, string_field(j, "dtype", at, true));
  const std::optional<DType> parsed = dtype_from_name(dtype);
  if (!parsed) return bad_reply("{} has an unknown dtype \"{}\"", at, clip(dtype, 40));
  if (*parsed == DType::kString) return bad_reply("{} is a string tensor, which .npy files cannot carry", at);
  info.dtype = *parsed;
  const auto shape = j.find("shape");
  if (shape == j.end() || shape->is_null()) return info;
  if (!shape->is_array()) return bad_reply("{} has a shape that is not a list", at);
  info.shape.emplace();
  for (const json& d : *shape) {
    if (d.is_number_integer() && d.get<int64_t>() >= 0) {
      info.shape->push_back(Dim::of(d.get<int64_t>()));
    } else if (d.is_string()) {
      info.shape->push_back(Dim::named(d.get<std::string>()));
    } else if (d.is_null() || (d.is_number_integer() && d.get<int64_t>() == -1)) {
      info.shape->push_back(Dim{});
    } else {
      return bad_reply("{} has a dimension {} (expected a size, a name or null)", at, clip(d.dump(), 40));
    }
  }
  return info;
}

Result<std::vector<RunnerTensorInfo>> parse_tensor_list(const json& reply, const char* key) {
  const auto it = reply.find(key);
  if (it == reply.end() || !it->is_array()) return bad_reply("the load reply lacks the list \"{}\"", key);
  std::vector<RunnerTensorInfo> list;
  for (const json& entry : *it) {
    VN_ASSIGN_OR_RETURN(RunnerTensorInfo info, parse_tensor_info(entry, fmt::format("the load reply's {}", key)));
    const bool twice = std::any_of(list.begin(), list.end(), [&](const RunnerTensorInfo& t) { return t.name == info.name; });
    if (twice) return bad_reply("the load reply lists {} '{}' twice", key, info.name);
    list.push_back(std::move(info));
  }
  return list;
}

// Writes an exchanged tensor. A plain write, not npy_save's atomic one: the private folder is
// scratch space, read once right after, and an fsync per tensor would cost more than the run.
Status write_npy(const Tensor& tensor, const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(const std::string bytes, io::npy_encode(tensor));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return make_error(StatusCode::kIoError, "{}: cannot write", path.string());
  return Status::OK();
}

json build_json(const RunnerBuildFlags& build) {
  json b = {{"fp16", build.fp16}, {"bf16", build.bf16}, {"tf32", build.tf32}, {"int8", build.int8},
            {"precision_constraints", build.precision_constraints}, {"threads", build.threads}};
  if (build.builder_seed) b["builder_seed"] = *build.builder_seed;
  json layers = json::object();
  for (const auto& [name, precision] : build.layer_precisions) layers[name] = precision;
  b["layer_precisions"] = std::move(layers);
  return b;
}

}  // namespace

RunnerClient::RunnerClient(RunnerOptions options) : options_(std::move(options)) {}

RunnerClient::~RunnerClient() {
  if (child_) {
    // A polite exit first, so that the runner can release its engine; then the group goes.
    const json bye = {{"id", next_id_++}, {"op", "exit"}};
    if (child_->write_line(bye.dump(), 1.0).ok()) {
      std::string line;
      child_->read_line(line, 2.0);
    }
    child_->close_stdin();
    child_->wait_exit(2.0);
    child_.reset();
  }
  if (!private_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(private_dir_, ec);
  }
}

std::string RunnerClient::stderr_tail() const { return child_ ? child_->stderr_tail() : last_stderr_; }

Status RunnerClient::fail(const char* op, const std::string& what, bool ended) {
  std::string how;
  if (child_) {
    // A runner that closed its pipes is dying: give it a moment so that its exit status says why.
    if (child_->wait_exit(ended ? 2.0 : 0.0)) {
      how = " (" + child_->ending().describe() + ")";
    }
    child_->kill_group();
    last_stderr_ = child_->stderr_tail();
    child_.reset();
  }
  model_loaded_ = false;
  if (!last_stderr_.empty()) VN_LOG_DEBUG("runner {} stderr:\n{}", options_.command.spec, last_stderr_);
  const std::string said = quote_log(last_stderr_);
  return make_error(StatusCode::kExternalFailure, "runner '{}' {}: {}{}{}", clip(options_.command.spec, 80), op, what,
                    how, said.empty() ? "" : " | said: " + said);
}

Result<json> RunnerClient::request(json req, const char* op, double timeout_s, const std::atomic<bool>* cancel) {
  if (!child_) return make_error(StatusCode::kInternal, "runner request '{}' without a runner process", op);
  const int64_t id = next_id_++;
  req["id"] = id;
  std::string text;
  try {
    text = req.dump();
  } catch (const nlohmann::json::exception&) {
    return make_error(StatusCode::kInvalidArgument,
                      "runner '{}' {}: the request holds a path or name that is not UTF-8, which JSON cannot carry",
                      clip(options_.command.spec, 80), op);
  }
  if (Status s = child_->write_line(text, timeout_s); !s.ok()) return fail(op, s.message(), /*ended=*/true);
  std::string line;
  switch (child_->read_line(line, timeout_s, cancel)) {
    case LineStatus::kLine: break;
    case LineStatus::kTimeout: {
      const char* flag = std::strcmp(op, "run") == 0    ? " (--runner-timeout)"
                         : std::strcmp(op, "load") == 0 ? " (--runner-load-timeout)"
                                                        : "";
      return fail(op, fmt::format("no reply within {:g} s{}", timeout_s, flag));
    }
    case LineStatus::kClosed: return fail(op, "closed its stdout before replying", /*ended=*/true);
    case LineStatus::kTooLong:
      return fail(op, fmt::format("replied with a line longer than {} bytes", options_.max_line_bytes));
    case LineStatus::kCancelled: {
      child_.reset();
      model_loaded_ = false;
      return make_error(StatusCode::kCancelled, "{} cancelled", op);
    }
  }
  if (!check_json_depth(line).ok()) return fail(op, "replied with JSON nested too deep");
  json reply = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object()) {
    return fail(op, fmt::format("replied with a line that is not a JSON object: {}", clip(line)));
  }
  const auto rid = reply.find("id");
  if (rid == reply.end() || !rid->is_number_integer() || rid->get<int64_t>() != id) {
    return fail(op, fmt::format("replied with id {} to request {}", rid == reply.end() ? "(none)" : clip(rid->dump(), 40), id));
  }
  const auto ok = reply.find("ok");
  if (ok == reply.end() || !ok->is_boolean()) return fail(op, "replied without a boolean \"ok\"");
  if (!ok->get<bool>()) {
    const auto err = reply.find("error");
    const std::string message = err != reply.end() && err->is_string() ? err->get<std::string>() : "no message";
    const std::string said = quote_log(child_->stderr_tail());
    return make_error(StatusCode::kExternalFailure, "runner '{}' {} failed: {}{}", clip(options_.command.spec, 80), op,
                      clip(message, 2000), said.empty() ? "" : " | said: " + said);
  }
  return reply;
}

Status RunnerClient::start() {
  if (private_dir_.empty()) {
    const std::filesystem::path parent =
        options_.temp_parent.empty() ? std::filesystem::temp_directory_path() : options_.temp_parent;
    std::string pattern = (parent / "vernier-runner-XXXXXX").string();
    // mkdtemp makes it 0700: the runner and Vernier are the only readers of the exchanged files.
    if (!mkdtemp(pattern.data())) {
      return make_error(StatusCode::kIoError, "cannot create a folder under {} for the runner's files: {}",
                        parent.string(), std::strerror(errno));
    }
    private_dir_ = pattern;
    std::error_code ec;
    private_dir_canonical_ = std::filesystem::canonical(private_dir_, ec);
    for (const char* sub : {"engine", "io", "models"}) {
      if (!std::filesystem::create_directory(private_dir_ / sub, ec) || ec) {
        return make_error(StatusCode::kIoError, "cannot create {}: {}", (private_dir_ / sub).string(), ec.message());
      }
    }
  }
  if (child_) return Status::OK();
  return start_process();
}

Status RunnerClient::start_process() {
  ChildOptions child;
  child.env = options_.command.env;
  child.stderr_cap = options_.stderr_cap;
  child.max_line_bytes = options_.max_line_bytes;
  Result<std::unique_ptr<ChildProcess>> spawned = ChildProcess::spawn(options_.command.argv, child);
  if (!spawned.ok()) {
    return make_error(StatusCode::kExternalFailure, "runner '{}': {}{}", clip(options_.command.spec, 80),
                      spawned.status().message(),
                      options_.command.name == "ort" ? " (scripts/install-deps.sh installs Node.js and onnxruntime-node)"
                                                     : "");
  }
  child_ = std::move(*spawned);
  ++starts_;
  model_loaded_ = false;
  Result<json> answered = request({{"op", "hello"}, {"protocol", kRunnerProtocol}}, "hello", options_.hello_timeout_s);
  if (!answered.ok()) {
    // A runner that refused the hello is of no use, even alive.
    if (child_) {
      child_->kill_group();
      last_stderr_ = child_->stderr_tail();
      child_.reset();
    }
    return answered.status();
  }
  const json& reply = *answered;
  const auto protocol = reply.find("protocol");
  if (protocol == reply.end() || !protocol->is_number_integer() || protocol->get<int64_t>() != kRunnerProtocol) {
    return fail("hello", fmt::format("speaks protocol {}, Vernier speaks {}",
                                     protocol == reply.end() ? "(none)" : clip(protocol->dump(), 20), kRunnerProtocol));
  }
  RunnerHello hello;
  Result<std::string> runner = string_field(reply, "runner", "the hello reply", true);
  Result<std::string> version = string_field(reply, "version", "the hello reply", true);
  if (!runner.ok()) return fail("hello", runner.status().message());
  if (!version.ok()) return fail("hello", version.status().message());
  hello.runner = *runner;
  hello.version = *version;
  if (const auto caps = reply.find("capabilities"); caps != reply.end() && !caps->is_null()) {
    if (!caps->is_object()) return fail("hello", "replied with \"capabilities\" that is not an object");
    for (const auto& [key, member] : kRunnerCapabilityFields) {
      const auto it = caps->find(key);
      if (it == caps->end()) continue;
      if (!it->is_boolean()) return fail("hello", fmt::format("replied with capability \"{}\" that is not a boolean", key));
      hello.capabilities.*member = it->get<bool>();
    }
  }
  hello_ = std::move(hello);
  return Status::OK();
}

Result<std::filesystem::path> RunnerClient::inside_private_dir(const std::string& path, const char* what) const {
  const std::filesystem::path p(path);
  if (!p.is_absolute()) return bad_reply("{} path '{}' is not absolute", what, clip(path, 200));
  std::error_code ec;
  // Symbolic links resolved: a link inside the folder to a file outside it is outside.
  const std::filesystem::path real = std::filesystem::weakly_canonical(p, ec);
  const auto [end, _] = std::mismatch(private_dir_canonical_.begin(), private_dir_canonical_.end(), real.begin(), real.end());
  if (ec || end != private_dir_canonical_.end() || real == private_dir_canonical_) {
    return bad_reply("{} path '{}' is outside the private folder {}", what, clip(path, 200), private_dir_.string());
  }
  if (!std::filesystem::is_regular_file(real, ec)) return bad_reply("{} '{}' is not a file", what, clip(path, 200));
  return real;
}

Result<RunnerLoaded> RunnerClient::parse_load_reply(const json& reply) const {
  RunnerLoaded loaded;
  VN_ASSIGN_OR_RETURN(loaded.inputs, parse_tensor_list(reply, "inputs"));
  VN_ASSIGN_OR_RETURN(loaded.outputs, parse_tensor_list(reply, "outputs"));
  const auto build = reply.find("build");
  if (build == reply.end() || build->is_null()) return loaded;
  if (!build->is_object()) return bad_reply("the load reply's \"build\" is not an object");
  if (const auto layers = build->find("layers"); layers != build->end() && !layers->is_null()) {
    if (!layers->is_array()) return bad_reply("the load reply's build.layers is not a list");
    for (const json& l : *layers) {
      if (!l.is_object()) return bad_reply("the load reply's build.layers holds an entry that is not an object");
      RunnerLayer layer;
      VN_ASSIGN_OR_RETURN(layer.name, string_field(l, "name", "a build layer", false));
      VN_ASSIGN_OR_RETURN(layer.type, string_field(l, "type", "a build layer", false));
      VN_ASSIGN_OR_RETURN(layer.precision, string_field(l, "precision", "a build layer", false));
      VN_ASSIGN_OR_RETURN(layer.tactic, string_field(l, "tactic", "a build layer", false));
      loaded.layers.push_back(std::move(layer));
    }
  }
  if (const auto artifacts = build->find("artifacts"); artifacts != build->end() && !artifacts->is_null()) {
    if (!artifacts->is_array()) return bad_reply("the load reply's build.artifacts is not a list");
    for (const json& a : *artifacts) {
      if (!a.is_string()) return bad_reply("the load reply's build.artifacts holds an entry that is not a path");
      VN_ASSIGN_OR_RETURN(std::filesystem::path path, inside_private_dir(a.get<std::string>(), "artifact"));
      loaded.artifacts.push_back(std::move(path));
    }
  }
  return loaded;
}

Result<RunnerLoaded> RunnerClient::send_load(const RunnerLoad& load) {
  VN_RETURN_IF_ERROR(start());
  json options = json::object();
  for (const auto& [key, value] : load.options) options[key] = value;
  const json req = {{"op", "load"},
                    {"model", std::filesystem::absolute(load.model).string()},
                    {"workdir", (private_dir_ / "engine").string()},
                    {"build", build_json(load.build)},
                    {"options", std::move(options)}};
  VN_ASSIGN_OR_RETURN(const json reply, request(req, "load", options_.load_timeout_s));
  Result<RunnerLoaded> parsed = parse_load_reply(reply);
  if (!parsed.ok()) return fail("load", parsed.status().message());
  model_loaded_ = true;
  return parsed;
}

Result<RunnerLoaded> RunnerClient::load(const RunnerLoad& load) {
  // Whatever happens, the runner no longer holds a model anyone asked for before.
  last_load_.reset();
  loaded_ = {};
  model_loaded_ = false;
  ++load_serial_;
  VN_ASSIGN_OR_RETURN(loaded_, send_load(load));
  last_load_ = load;
  ++load_serial_;
  return loaded_;
}

Status RunnerClient::ensure_ready() {
  if (child_ && model_loaded_) return Status::OK();
  // A restart after a failure: the same model with the same build, as if nothing had happened.
  // When this fails too, the next request tries again.
  Result<RunnerLoaded> reloaded = send_load(*last_load_);
  if (!reloaded.ok()) return reloaded.status().with_context("restarting the runner and loading the model again");
  loaded_ = std::move(*reloaded);
  return Status::OK();
}

Result<TensorMap> RunnerClient::parse_run_reply(const json& reply) const {
  const auto outputs = reply.find("outputs");
  if (outputs == reply.end() || !outputs->is_array()) return bad_reply("the run reply lacks the list \"outputs\"");
  std::vector<std::optional<Tensor>> found(loaded_.outputs.size());
  for (const json& entry : *outputs) {
    if (!entry.is_object()) return bad_reply("the run reply's outputs hold an entry that is not an object");
    VN_ASSIGN_OR_RETURN(const std::string name, string_field(entry, "name", "a run reply output", true));
    const auto info = std::find_if(loaded_.outputs.begin(), loaded_.outputs.end(),
                                   [&](const RunnerTensorInfo& t) { return t.name == name; });
    if (info == loaded_.outputs.end()) {
      return bad_reply("returned '{}', which is not an output of the loaded model", clip(name, 200));
    }
    std::optional<Tensor>& slot = found[static_cast<size_t>(info - loaded_.outputs.begin())];
    if (slot) return bad_reply("returned output '{}' twice", name);
    const std::string what = fmt::format("output '{}'", name);
    VN_ASSIGN_OR_RETURN(const std::string path, string_field(entry, "path", what, true));
    VN_ASSIGN_OR_RETURN(const std::filesystem::path file, inside_private_dir(path, what.c_str()));
    Result<Tensor> tensor = io::npy_load(file);
    if (!tensor.ok()) return bad_reply("returned {} in an unreadable file: {}", what, tensor.status().message());
    VN_ASSIGN_OR_RETURN(const std::string dtype, string_field(entry, "dtype", what, false));
    if (!dtype.empty() && dtype != dtype_name(tensor->dtype())) {
      // bfloat16 has no numpy dtype: its bits travel as uint16.
      if (dtype != "bfloat16" || tensor->dtype() != DType::kUInt16) {
        return bad_reply("returned {} as \"{}\" in a .npy of {} (only bfloat16 may travel as uint16 bits)", what,
                         clip(dtype, 40), dtype_name(tensor->dtype()));
      }
      Tensor bits = *tensor;
      Tensor bf16(DType::kBFloat16, bits.shape());
      std::memcpy(bf16.mutable_raw(), bits.raw(), bits.nbytes());
      tensor = std::move(bf16);
    }
    if (tensor->dtype() != info->dtype) {
      return bad_reply("returned {} as {} but its load reply declared {}", what, dtype_name(tensor->dtype()),
                       dtype_name(info->dtype));
    }
    if (info->shape) {
      bool same = info->shape->size() == tensor->shape().size();
      for (size_t d = 0; same && d < info->shape->size(); ++d) {
        same = !(*info->shape)[d].known() || (*info->shape)[d].value == tensor->shape()[d];
      }
      if (!same) {
        return bad_reply("returned {} with shape {} but its load reply declared {}", what,
                         shape_to_string(tensor->shape()), dims_text(info->shape));
      }
    }
    slot = std::move(*tensor);
  }
  TensorMap result;
  for (size_t i = 0; i < found.size(); ++i) {
    if (!found[i]) return bad_reply("did not return output '{}'", loaded_.outputs[i].name);
    result.set(loaded_.outputs[i].name, std::move(*found[i]));
  }
  return result;
}

Result<TensorMap> RunnerClient::run(const TensorMap& feeds, const std::atomic<bool>* cancel) {
  if (!last_load_) return make_error(StatusCode::kInvalidArgument, "runner '{}': no model loaded", options_.command.spec);
  VN_RETURN_IF_ERROR(ensure_ready());
  // A fresh exchange folder: a runner that names a file it did not write this time fails loudly
  // instead of handing back the last run's tensor.
  const std::filesystem::path io = private_dir_ / "io";
  std::error_code ec;
  std::filesystem::remove_all(io, ec);
  std::filesystem::create_directory(io, ec);
  if (ec) return make_error(StatusCode::kIoError, "cannot recreate {}: {}", io.string(), ec.message());
  json inputs = json::array();
  for (size_t i = 0; i < loaded_.inputs.size(); ++i) {
    const std::string& name = loaded_.inputs[i].name;
    const Tensor* t = feeds.find(name);
    if (!t) return make_error(StatusCode::kNotFound, "runner '{}' needs input '{}', which is not fed", options_.command.spec, name);
    const std::filesystem::path path = io / fmt::format("in_{}.npy", i);
    json entry = {{"name", name}, {"path", path.string()}};
    if (t->dtype() == DType::kBFloat16) {
      Tensor bits(DType::kUInt16, t->shape());
      std::memcpy(bits.mutable_raw(), t->raw(), t->nbytes());
      VN_RETURN_IF_ERROR(write_npy(bits, path));
      entry["dtype"] = "bfloat16";
    } else {
      VN_RETURN_IF_ERROR(write_npy(*t, path));
    }
    inputs.push_back(std::move(entry));
  }
  const json req = {{"op", "run"}, {"inputs", std::move(inputs)}, {"outputs_dir", io.string()}};
  VN_ASSIGN_OR_RETURN(const json reply, request(req, "run", options_.run_timeout_s, cancel));
  Result<TensorMap> outputs = parse_run_reply(reply);
  if (!outputs.ok()) return fail("run", outputs.status().message());
  return outputs;
}

}  // namespace vn
