// SPDX-License-Identifier: Apache-2.0
// An engine Vernier does not link: a command run once per inference with a file protocol.
#pragma once

#include <filesystem>
#include <string>

#include "core/backend/backend.h"

namespace vn {

/// How to run an external engine (`--external`).
struct ExternalOptions {
  /// The command line, run with /bin/sh -c after its placeholders are replaced by shell-quoted
  /// paths: {model} the ONNX model, {inputs} the feed (Polygraphy feed-list JSON holding one feed
  /// dict), {outputs} where the command must write its results (Polygraphy RunResults JSON, first
  /// runner's first iteration, or an .npz), {mark} a text file naming the tensors to return, one
  /// per line (the graph outputs, then the marked tensors). {outputs} is required.
  std::string command;
  /// The model file to pass as {model} when the model given to prepare() is that file unchanged;
  /// empty to have prepare() write the model into the work folder.
  std::filesystem::path model_path;
  /// Seconds per inference before the command's process group is killed; 0 for no limit.
  double timeout_s = 0;
  /// Where the protocol files go; empty for a fresh folder under the system temp dir, removed
  /// with the backend.
  std::filesystem::path workdir;
  /// The backend's name in reports.
  std::string name = "external";
};

/// Runs an inference by running ExternalOptions::command. A command that exits non-zero, dies by
/// a signal, times out or leaves no readable outputs fails the run with kExternalFailure and a
/// one-line message quoting the end of its stderr; the full stderr of the last run is kept
/// (last_stderr). Tensors the command returns beyond those asked for are ignored; marked tensors
/// it does not return are left out of the result (a runtime may not expose every tensor), graph
/// outputs it does not return are an error. The observer is called after the command has
/// finished, once per node that produced a returned tensor, in node order.
class ExternalBackend final : public Backend {
 public:
  explicit ExternalBackend(ExternalOptions options);
  ~ExternalBackend() override;

  std::string name() const override { return options_.name; }
  /// Always supported: the external engine decides.
  Support supports(const Node& node, int64_t opset) const override;

  /// What the command wrote to stderr on the last run (capped).
  const std::string& last_stderr() const { return last_stderr_; }

 protected:
  /// Checks the command template, creates the work folder, writes the model when needed and the
  /// mark file. Errors: kInvalidArgument for a template without {outputs} or a tensor name with a
  /// line break; kIoError when the folder or files cannot be written.
  Status prepare_impl(const Model& model, const PrepareOptions& options) override;
  Result<TensorMap> run_impl(const TensorMap& feeds, const RunOptions& options) override;

 private:
  ExternalOptions options_;
  std::filesystem::path workdir_;
  bool own_workdir_ = false;
  std::filesystem::path model_file_;
  std::string last_stderr_;
};

/// `command` with {model}, {inputs}, {outputs} and {mark} replaced by the shell-quoted paths.
std::string expand_external_command(const std::string& command, const std::filesystem::path& model,
                                    const std::filesystem::path& inputs, const std::filesystem::path& outputs,
                                    const std::filesystem::path& mark);

}  // namespace vn
