// SPDX-License-Identifier: Apache-2.0
// The client side of the engine runner protocol (version 1, README "Engine runners"): one
// long-lived runner process answers hello, load, run and exit requests, one JSON line each, and
// exchanges tensors as .npy files in a private folder.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/runner_registry.h"
#include "core/common/child_process.h"
#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn {

/// The protocol version this client speaks.
inline constexpr int kRunnerProtocol = 1;

/// What a runner says it can do (hello's "capabilities"; absent means false).
struct RunnerCapabilities {
  bool builds_vary = false;           ///< two loads of one model may give different numerics
  bool intermediate_tensors = false;  ///< returns any tensor that is a graph output of the model it loads
  bool lowers_precision = false;      ///< honours the fp16/bf16/tf32/int8 build flags itself
  bool per_layer_precision = false;   ///< honours build.layer_precisions
  bool tactic_replays = false;        ///< writes Polygraphy TacticReplayData among its artifacts
  bool artifacts = false;             ///< returns files (engine plans, ...) in build.artifacts
};

/// Every capability by its protocol name, in protocol order.
inline constexpr std::pair<const char*, bool RunnerCapabilities::*> kRunnerCapabilityFields[] = {
    {"builds_vary", &RunnerCapabilities::builds_vary},
    {"intermediate_tensors", &RunnerCapabilities::intermediate_tensors},
    {"lowers_precision", &RunnerCapabilities::lowers_precision},
    {"per_layer_precision", &RunnerCapabilities::per_layer_precision},
    {"tactic_replays", &RunnerCapabilities::tactic_replays},
    {"artifacts", &RunnerCapabilities::artifacts},
};

/// The hello reply.
struct RunnerHello {
  std::string runner;   ///< the runner's own name ("ort")
  std::string version;  ///< its engine's version ("1.30.0")
  RunnerCapabilities capabilities;
};

/// The build flags a load sends (README: "build" of the load request).
struct RunnerBuildFlags {
  bool fp16 = false, bf16 = false, tf32 = false, int8 = false;
  std::optional<uint64_t> builder_seed;  ///< sent only when set
  std::vector<std::pair<std::string, std::string>> layer_precisions;  ///< layer name -> fp32|tf32|fp16|bf16|int8
  std::string precision_constraints = "none";  ///< none|prefer|obey
  int threads = 0;                            ///< 0: the runner's default
  /// Whether any flag asks for a precision below fp32.
  bool lowers() const { return fp16 || bf16 || tf32 || int8; }
};

/// One load request.
struct RunnerLoad {
  std::filesystem::path model;  ///< an absolute path to an ONNX file
  RunnerBuildFlags build;
  std::vector<std::pair<std::string, std::string>> options;  ///< --runner-option KEY=VALUE, in order
};

/// A tensor of the loaded model as the runner describes it.
struct RunnerTensorInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  std::optional<std::vector<Dim>> shape;  ///< nullopt: rank unknown; unknown dims have value -1
};

/// One layer of the runner's build, as it reports it (any field may be empty).
struct RunnerLayer {
  std::string name, type, precision, tactic;
};

/// The load reply.
struct RunnerLoaded {
  std::vector<RunnerTensorInfo> inputs;
  std::vector<RunnerTensorInfo> outputs;
  std::vector<RunnerLayer> layers;
  std::vector<std::filesystem::path> artifacts;  ///< files inside the private folder
};

struct RunnerOptions {
  RunnerCommand command;
  /// Seconds each request may take before the runner is killed; 0 for no limit.
  double hello_timeout_s = 60;
  double load_timeout_s = 600;
  double run_timeout_s = 300;
  /// Where the private folder is created; empty for the system temp dir.
  std::filesystem::path temp_parent;
  /// Bytes of the runner's stderr kept for messages.
  size_t stderr_cap = size_t{64} << 10;
  /// The longest reply line accepted.
  size_t max_line_bytes = size_t{16} << 20;
};

/// Drives one runner process. The process starts on the first request. Any failure of a request
/// (the runner crashed or exited, did not reply in time, replied with a line that is not a valid
/// reply, returned missing, mistyped or misplaced tensors) is a kExternalFailure whose one-line
/// message says what happened and quotes the last lines of the runner's stderr; the process is
/// killed then, and the next request starts a new one transparently (hello, and the last model
/// loaded again with the same build and options). A reply {"ok": false, "error": ...} fails that
/// request only (kExternalFailure with the runner's message); the process keeps running.
/// Not thread-safe: one request at a time.
class RunnerClient {
 public:
  explicit RunnerClient(RunnerOptions options);
  /// Asks the runner to exit, waits briefly, kills its process group, removes the private folder.
  ~RunnerClient();
  RunnerClient(const RunnerClient&) = delete;
  RunnerClient& operator=(const RunnerClient&) = delete;

  /// Creates the private folder (mode 0700) and starts the runner with a hello when it is not
  /// running. Errors: kIoError (folder), kExternalFailure (cannot start, bad hello, wrong protocol).
  Status start();
  /// The last hello reply (valid after start()).
  const RunnerHello& hello() const { return hello_; }
  /// The folder every exchanged file must be inside (valid after start()).
  const std::filesystem::path& private_dir() const { return private_dir_; }

  /// Loads `request` (replacing the runner's current model) and returns the validated reply. The
  /// model must exist; artifacts must be files inside the private folder.
  Result<RunnerLoaded> load(const RunnerLoad& request);
  /// Increases with every successful load(); a transparent reload keeps it.
  uint64_t load_serial() const { return load_serial_; }
  /// The reply of the last successful load.
  const RunnerLoaded& loaded() const { return loaded_; }

  /// Runs the loaded model on `feeds` (one per input of the load reply; others are ignored) and
  /// returns every output of the load reply, checked against it: present once, dtype equal, rank
  /// and known dims equal, file inside the private folder. kCancelled when `cancel` becomes true
  /// (the runner is killed). kInvalidArgument when no model is loaded; kNotFound for a missing feed.
  Result<TensorMap> run(const TensorMap& feeds, const std::atomic<bool>* cancel = nullptr);

  /// For a reply its caller finds wrong (a load reply that does not fit the model): kills the
  /// runner as for any failure and returns the kExternalFailure for `what` during `op`, quoting
  /// the runner's stderr. The next request restarts it.
  Status reject(const char* op, const std::string& what) {
    model_loaded_ = false;
    last_load_.reset();
    ++load_serial_;
    return fail(op, what);
  }

  /// The end of the runner's stderr so far (its current or last process).
  std::string stderr_tail() const;
  /// How many runner processes were started (1 + transparent restarts).
  int starts() const { return starts_; }
  const RunnerOptions& options() const { return options_; }

 private:
  Status start_process();
  Status ensure_ready();
  // Sends `request` (its id is set here) and returns the reply object once its id and "ok" are
  // checked. `op` names the request in errors.
  Result<nlohmann::json> request(nlohmann::json request, const char* op, double timeout_s,
                                 const std::atomic<bool>* cancel = nullptr);
  // Kills the runner and returns the kExternalFailure for `what` during `op`, quoting stderr.
  // `ended`: the runner closed a pipe, so its exit status is waited for (briefly) and told.
  Status fail(const char* op, const std::string& what, bool ended = false);
  // Starts the runner if needed and sends a load, without touching the state of load().
  Result<RunnerLoaded> send_load(const RunnerLoad& load);
  Result<std::filesystem::path> inside_private_dir(const std::string& path, const char* what) const;
  Result<RunnerLoaded> parse_load_reply(const nlohmann::json& reply) const;
  Result<TensorMap> parse_run_reply(const nlohmann::json& reply) const;

  RunnerOptions options_;
  std::filesystem::path private_dir_;
  std::filesystem::path private_dir_canonical_;
  std::unique_ptr<ChildProcess> child_;
  std::string last_stderr_;  // stderr of the last process that ended
  RunnerHello hello_;
  int64_t next_id_ = 1;
  int starts_ = 0;
  std::optional<RunnerLoad> last_load_;
  RunnerLoaded loaded_;
  uint64_t load_serial_ = 0;
  bool model_loaded_ = false;  // whether the current process holds last_load_
};

}  // namespace vn
