// SPDX-License-Identifier: Apache-2.0
#include "core/backend/runner_registry.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

namespace vn {
namespace {

constexpr std::array<NamedRunner, 3> kNamedRunners = {{
    {"ort", "node", "ort_runner.js", "ONNX Runtime 1.30 (CPU) through onnxruntime-node on Node.js"},
    {"ort-python", "python3", "ort_runner.py", "ONNX Runtime through its Python package (onnxruntime)"},
    {"trt", "python3", "trt_runner.py", "TensorRT through its Python API (tensorrt, optionally polygraphy)"},
}};

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string_view rest(path);
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

std::string names_list() {
  std::string names;
  for (const NamedRunner& r : kNamedRunners) names += (names.empty() ? "" : ", ") + std::string(r.name);
  return names;
}

}  // namespace

std::span<const NamedRunner> named_runners() { return kNamedRunners; }

Result<RunnerCommand> resolve_runner(const std::string& spec, const std::filesystem::path& assets_dir) {
  const bool blank = std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isspace(c); });
  if (blank) {
    return make_error(StatusCode::kInvalidArgument, "--engine-runner needs a runner: {} or a command line",
                      names_list());
  }
  RunnerCommand command;
  command.spec = spec;
  const auto named = std::find_if(kNamedRunners.begin(), kNamedRunners.end(),
                                  [&](const NamedRunner& r) { return r.name == spec; });
  if (named == kNamedRunners.end()) {
    const bool one_word = std::none_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isspace(c); });
    if (one_word && spec.find('/') == std::string::npos && !on_path(spec)) {
      return make_error(StatusCode::kInvalidArgument,
                        "--engine-runner '{}' is neither a named runner ({}) nor a program on PATH; a command line "
                        "is run with /bin/sh",
                        spec, names_list());
    }
    command.name = "runner";
    command.argv = {"/bin/sh", "-c", spec};
    return command;
  }
  const std::filesystem::path script = assets_dir / "runners" / std::string(named->script);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(script, ec)) {
    return make_error(StatusCode::kNotFound,
                      "the {} runner's script {} is missing; set VERNIER_ASSETS to Vernier's assets folder",
                      named->name, script.string());
  }
  command.name = std::string(named->name);
  command.argv = {std::string(named->interpreter), script.string()};
  if (named->interpreter == "node") {
    // Where scripts/install-deps.sh puts onnxruntime-node, ahead of the user's own NODE_PATH.
    std::string node_path = (assets_dir / ".." / ".deps" / "node" / "node_modules").lexically_normal().string();
    if (const char* user = std::getenv("NODE_PATH"); user && *user) node_path += std::string(":") + user;
    command.env.emplace_back("NODE_PATH", node_path);
  }
  return command;
}

}  // namespace vn
