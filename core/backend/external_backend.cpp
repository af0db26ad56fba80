// SPDX-License-Identifier: Apache-2.0
#include "core/backend/external_backend.h"

#include <stdlib.h>

#include <system_error>

#include "core/common/logging.h"
#include "core/common/subprocess.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/polygraphy_json.h"
#include "core/ir/mapped_file.h"
#include "core/ir/onnx_export.h"

namespace vn {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
}

// The tensors of an outputs file: an .npz (a zip, whatever its name) or Polygraphy RunResults.
Result<TensorMap> read_outputs(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(std::string bytes, io::read_file_bytes(path));
  if (bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] == 'K') return io::npz_decode(bytes);
  VN_ASSIGN_OR_RETURN(io::RunResults results, io::run_results_from_json(bytes));
  if (results.empty() || results.front().iterations.empty()) {
    return make_error(StatusCode::kIoError, "{} holds no results", path.string());
  }
  return std::move(results.front().iterations.front().outputs);
}

}  // namespace

std::string expand_external_command(const std::string& command, const std::filesystem::path& model,
                                    const std::filesystem::path& inputs, const std::filesystem::path& outputs,
                                    const std::filesystem::path& mark) {
  std::string cmd = command;
  replace_all(cmd, "{model}", shell_quote(model.string()));
  replace_all(cmd, "{inputs}", shell_quote(inputs.string()));
  replace_all(cmd, "{outputs}", shell_quote(outputs.string()));
  replace_all(cmd, "{mark}", shell_quote(mark.string()));
  return cmd;
}

ExternalBackend::ExternalBackend(ExternalOptions options) : options_(std::move(options)) {}

ExternalBackend::~ExternalBackend() {
  if (own_workdir_) {
    std::error_code ec;
    std::filesystem::remove_all(workdir_, ec);
  }
}

Support ExternalBackend::supports(const Node&, int64_t) const { return {}; }

Status ExternalBackend::prepare_impl(const Model& model, const PrepareOptions&) {
  if (options_.command.find("{outputs}") == std::string::npos) {
    return make_error(StatusCode::kInvalidArgument,
                      "the external command must contain {{outputs}}, where it writes its results; e.g. "
                      "--external 'python3 assets/runners/onnxrt_runner.py {{model}} {{inputs}} {{outputs}} {{mark}}'");
  }
  for (const std::string& name : output_names_) {
    if (name.find('\n') != std::string::npos || name.find('\r') != std::string::npos) {
      return make_error(StatusCode::kInvalidArgument,
                        "tensor name '{}' holds a line break and cannot be listed in the mark file of an external "
                        "engine",
                        name);
    }
  }
  if (workdir_.empty()) {
    if (options_.workdir.empty()) {
      std::string pattern = (std::filesystem::temp_directory_path() / "vernier-external-XXXXXX").string();
      if (!mkdtemp(pattern.data())) {
        return make_error(StatusCode::kIoError, "cannot create a folder under {} for the external engine's files",
                          std::filesystem::temp_directory_path().string());
      }
      workdir_ = pattern;
      own_workdir_ = true;
    } else {
      workdir_ = options_.workdir;
      std::error_code ec;
      std::filesystem::create_directories(workdir_, ec);
      if (ec) return make_error(StatusCode::kIoError, "cannot create {}: {}", workdir_.string(), ec.message());
    }
  }
  model_file_ = options_.model_path;
  if (model_file_.empty()) {
    model_file_ = workdir_ / "model.onnx";
    VN_RETURN_IF_ERROR(save_model(model, model_file_));
  }
  std::string mark;
  for (const std::string& name : output_names_) mark += name + "\n";
  return file_write_atomic(workdir_ / "mark.txt", mark);
}

Result<TensorMap> ExternalBackend::run_impl(const TensorMap& feeds, const RunOptions& options) {
  const std::filesystem::path inputs = workdir_ / "inputs.json";
  const std::filesystem::path outputs = workdir_ / "outputs.json";
  const std::filesystem::path mark = workdir_ / "mark.txt";
  TensorMap fed;
  for (const ValueInfo* in : model()->graph.runtime_inputs()) fed.set(in->name, *feeds.find(in->name));
  VN_RETURN_IF_ERROR(io::save_feed_list({fed}, inputs));
  std::error_code ec;
  std::filesystem::remove(outputs, ec);

  const std::string command = expand_external_command(options_.command, model_file_, inputs, outputs, mark);
  ProcessOptions process;
  process.timeout_s = options_.timeout_s;
  process.cancel = options.cancel;
  VN_ASSIGN_OR_RETURN(ProcessResult ran, run_shell(command, process));
  last_stderr_ = ran.err;
  if (!ran.err.empty()) VN_LOG_DEBUG("{} stderr:\n{}", name(), ran.err);
  if (ran.cancelled) return make_error(StatusCode::kCancelled, "run cancelled");
  const std::string said = last_lines(ran.err.empty() ? ran.out : ran.err);
  if (!ran.succeeded()) {
    return make_error(StatusCode::kExternalFailure, "external engine {}: {}{}", ran.describe(options_.timeout_s),
                      options_.command, said.empty() ? "" : " | said: " + said);
  }
  if (!std::filesystem::exists(outputs)) {
    return make_error(StatusCode::kExternalFailure,
                      "external engine exited 0 but wrote no outputs to {{outputs}} ({}): {}{}", outputs.string(),
                      options_.command, said.empty() ? "" : " | said: " + said);
  }
  Result<TensorMap> produced = read_outputs(outputs);
  if (!produced.ok()) {
    return make_error(StatusCode::kExternalFailure, "external engine wrote unreadable outputs: {}",
                      produced.status().to_string());
  }

  for (const ValueInfo& out : model()->graph.outputs) {
    if (!produced->contains(out.name)) {
      return make_error(StatusCode::kExternalFailure,
                        "external engine's outputs lack graph output '{}' (it returned {} tensor(s))", out.name,
                        produced->size());
    }
  }
  TensorMap result;
  for (const std::string& name : output_names_) {
    if (const Tensor* t = produced->find(name)) result.set(name, *t);
  }
  // Reported in node order, one call per producing node, as a backend that ran the graph would.
  VN_RETURN_IF_ERROR(report_in_node_order(model()->graph, result, options));
  return result;
}

}  // namespace vn
