// SPDX-License-Identifier: Apache-2.0
#include "core/backend/runner_backend.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <unordered_set>

#include "core/common/logging.h"
#include "core/ir/onnx_export.h"

namespace vn {
namespace {

// The model handed to the runner: `model` with `names` appended to its graph outputs, typed where
// shape inference knows them. Untyped outputs are legal for runtimes (ONNX Runtime infers them),
// not for onnx::checker, which is why the file is written without the check: the model itself
// was checked when it was loaded.
Status write_marked_model(const Model& model, const std::vector<std::string>& names, const std::filesystem::path& path) {
  Model copy = model;
  if (!names.empty()) {
    if (Status s = infer_shapes(copy); !s.ok()) VN_LOG_DEBUG("runner model: {}", s.to_string());
    for (const std::string& name : names) {
      ValueInfo info = copy.graph.find_value_info(name).value_or(ValueInfo{});
      info.name = name;
      copy.graph.outputs.push_back(std::move(info));
    }
  }
  SaveOptions save;
  save.check_model = false;
  return save_model(copy, path, save);
}

}  // namespace

RunnerBackend::RunnerBackend(std::shared_ptr<RunnerClient> client, RunnerBackendOptions options)
    : client_(std::move(client)), options_(std::move(options)) {}

RunnerBackend::~RunnerBackend() { remove_written_model(); }

void RunnerBackend::remove_written_model() {
  if (written_model_.empty()) return;
  std::error_code ec;
  std::filesystem::remove(written_model_, ec);
  std::filesystem::remove(written_model_.string() + ".data", ec);
  written_model_.clear();
}

std::string RunnerBackend::name() const {
  const std::string& named = client_->options().command.name;
  return named == "runner" && !client_->hello().runner.empty() ? client_->hello().runner : named;
}

Support RunnerBackend::supports(const Node&, int64_t) const { return {}; }

Status RunnerBackend::prepare_impl(const Model& model, const PrepareOptions& options) {
  VN_RETURN_IF_ERROR(client_->start());
  const RunnerCapabilities& caps = capabilities();
  const std::string who = fmt::format("the {} runner ({} {})", name(), hello().runner, hello().version);
  if (options_.build.lowers() && !caps.lowers_precision) {
    return make_error(StatusCode::kInvalidArgument,
                      "{} runs the model as given and cannot honour --fp16/--bf16/--tf32/--int8 (it does not "
                      "claim lowers_precision); convert the model itself, or use a runner that builds in reduced "
                      "precision (trt)",
                      who);
  }
  if (!options_.build.layer_precisions.empty() && !caps.per_layer_precision) {
    return make_error(StatusCode::kInvalidArgument,
                      "{} cannot honour --layer-precisions (it does not claim per_layer_precision)", who);
  }

  // Tensors to make graph outputs: the marked ones that nodes produce. Graph inputs and
  // initializers are Vernier's own to return.
  const Graph& g = model.graph;
  GraphIndex index(g);
  std::vector<std::string> added;
  if (caps.intermediate_tensors) {
    for (const std::string& n : output_names_) {
      if (index.producer(n) >= 0 && !index.is_graph_output(n)) added.push_back(n);
    }
  }
  remove_written_model();
  load_ = RunnerLoad{options_.model_path, options_.build, options_.options};
  load_.build.threads = options.num_threads;
  if (!added.empty() || options_.model_path.empty()) {
    static std::atomic<uint64_t> counter{0};
    written_model_ = client_->private_dir() / "models" / fmt::format("model_{}.onnx", counter++);
    if (Status s = write_marked_model(model, added, written_model_); !s.ok()) {
      written_model_.clear();
      return s.with_context("writing the model for the runner");
    }
    load_.model = written_model_;
  }
  VN_ASSIGN_OR_RETURN(loaded_, client_->load(load_));
  serial_ = client_->load_serial();

  for (const RunnerTensorInfo& in : loaded_.inputs) {
    const auto declared = std::find_if(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == in.name; });
    if (declared == g.inputs.end() || index.is_initializer(in.name)) {
      return client_->reject("load", fmt::format("reported an input '{}' that the model does not have", in.name));
    }
    if (declared->dtype && *declared->dtype != in.dtype) {
      return client_->reject("load", fmt::format("takes input '{}' as {} but the model declares {}", in.name,
                                                 dtype_name(in.dtype), dtype_name(*declared->dtype)));
    }
  }
  // Every graph output of the model it was given, the added ones included: what was asked.
  std::vector<std::string> asked = added;
  for (const ValueInfo& out : g.outputs) asked.push_back(out.name);
  for (const std::string& name : asked) {
    const bool present = std::any_of(loaded_.outputs.begin(), loaded_.outputs.end(),
                                     [&](const RunnerTensorInfo& t) { return t.name == name; });
    if (!present) return client_->reject("load", fmt::format("does not return graph output '{}'", name));
  }
  return Status::OK();
}

Result<TensorMap> RunnerBackend::run_impl(const TensorMap& feeds, const RunOptions& options) {
  if (client_->load_serial() != serial_) {
    // Another backend loaded its model on the shared runner since.
    VN_ASSIGN_OR_RETURN(loaded_, client_->load(load_));
    serial_ = client_->load_serial();
  }
  VN_ASSIGN_OR_RETURN(TensorMap produced, client_->run(feeds, options.cancel));
  const Graph& g = model()->graph;
  GraphIndex index(g);
  TensorMap result;
  for (const std::string& n : output_names_) {
    if (const Tensor* t = produced.find(n)) {
      result.set(n, *t);
    } else if (index.is_graph_input(n) && feeds.contains(n)) {
      result.set(n, *feeds.find(n));
    } else if (const Initializer* init = g.find_initializer(n)) {
      result.set(n, init->tensor);
    }
  }
  VN_RETURN_IF_ERROR(report_in_node_order(g, result, options));
  return result;
}

}  // namespace vn
