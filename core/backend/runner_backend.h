// SPDX-License-Identifier: Apache-2.0
// An engine run by a persistent runner process (`--engine-runner`, README "Engine runners").
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/runner_client.h"

namespace vn {

/// What a RunnerBackend asks its runner to build.
struct RunnerBackendOptions {
  /// The model's own file, passed to the runner as is when no tensor has to be made a graph
  /// output; empty to have prepare() always write the model into the private folder.
  std::filesystem::path model_path;
  RunnerBuildFlags build;
  /// --runner-option KEY=VALUE pairs, passed to the runner's load.
  std::vector<std::pair<std::string, std::string>> options;
};

/// Runs inferences on a runner. Several backends may share one RunnerClient (one process for a
/// whole reduction): each loads its model again when another one was loaded since.
///
/// prepare() refuses (kInvalidArgument) build flags the runner cannot honour: reduced precisions
/// without `lowers_precision`, layer precisions without `per_layer_precision`. It writes the model
/// into the runner's private folder with the tensors to return made graph outputs (when the runner
/// has `intermediate_tensors`; otherwise only the graph outputs come back and marked tensors are
/// left out of results, as ExternalBackend leaves them), loads it, and checks the load reply
/// against the model: the runner's inputs must be inputs of the model with their declared dtypes,
/// and every graph output of the model it was given, added ones included, must be among its
/// outputs (kExternalFailure otherwise). Marked graph
/// inputs and initializers are returned by Vernier itself. run() returns the requested tensors the
/// runner produced and calls the observer once per producing node, in node order, after the run.
/// Runner failures are kExternalFailure (see RunnerClient: the next request restarts it).
class RunnerBackend final : public Backend {
 public:
  RunnerBackend(std::shared_ptr<RunnerClient> client, RunnerBackendOptions options);
  /// Removes the model file it wrote.
  ~RunnerBackend() override;

  /// The named runner's name ("ort", "trt"); for a command line, the runner's own name from its
  /// hello once started, "runner" before.
  std::string name() const override;
  /// Always supported: the runner decides, and says so at load.
  Support supports(const Node& node, int64_t opset) const override;

  /// The runner's hello (valid after prepare()).
  const RunnerHello& hello() const { return client_->hello(); }
  const RunnerCapabilities& capabilities() const { return client_->hello().capabilities; }
  /// The load reply of this backend's model: the runner's inputs, outputs, layers and artifacts.
  const RunnerLoaded& loaded() const { return loaded_; }
  /// Whether the model file handed to the runner was written by prepare() (tensors added).
  bool wrote_model() const { return !written_model_.empty(); }
  RunnerClient& client() { return *client_; }

 protected:
  Status prepare_impl(const Model& model, const PrepareOptions& options) override;
  Result<TensorMap> run_impl(const TensorMap& feeds, const RunOptions& options) override;

 private:
  void remove_written_model();

  std::shared_ptr<RunnerClient> client_;
  RunnerBackendOptions options_;
  RunnerLoad load_;
  uint64_t serial_ = 0;
  RunnerLoaded loaded_;
  std::filesystem::path written_model_;
};

}  // namespace vn
