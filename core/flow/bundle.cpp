// SPDX-License-Identifier: Apache-2.0
#include "core/flow/bundle.h"

#include <fmt/format.h>

#include "core/common/subprocess.h"
#include "core/engine/engine_backend.h"
#include "core/engine/tactic_replay.h"
#include "core/io/polygraphy_json.h"
#include "core/io/test_folder.h"
#include "core/ir/mapped_file.h"
#include "core/ir/onnx_export.h"
#include "core/ref/reference_backend.h"

namespace vn::flow {
namespace {

Result<io::RunnerResults> run_all(Backend& backend, const std::string& name, const std::vector<TensorMap>& feeds) {
  io::RunnerResults runner;
  runner.runner_name = name;
  for (const TensorMap& feed : feeds) {
    VN_ASSIGN_OR_RETURN(TensorMap out, backend.run(feed));
    runner.iterations.push_back(io::IterationResult{std::move(out), std::nullopt, name});
  }
  return runner;
}

// The vernier that writes the bundle, by absolute path ("vernier" from PATH when the system
// cannot tell).
std::string this_vernier() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec || self.empty() ? std::string("vernier") : self.string();
}

std::string tolerance_flags(const CompareConfig& compare) {
  const Tolerance t = compare.tolerance_for("");
  return fmt::format("--atol {:g} --rtol {:g}", t.atol, t.rtol);
}

// `vernier run`'s flags that build the failing engine again: the built-in engine's saved plan; for
// another engine, its runner and, unless the bundle holds the model Vernier converted for it
// (engine_model.onnx), the engine build flags.
std::string engine_flags(const eut::EngineUnderTest& engine, const eut::Build& build, const engine::BuildOptions& b) {
  const std::vector<std::string> selects = engine.command_line();
  if (selects.empty()) return "--engine --load-engine plan.json";
  std::vector<std::string> args = selects;
  if (build.converted_model()) {
    args.insert(args.end(), {"--engine-model", "engine_model.onnx"});
  } else {
    using engine::PrecisionId;
    for (const auto& [id, flag] : {std::pair{PrecisionId::kFp16, "--fp16"}, std::pair{PrecisionId::kBf16, "--bf16"},
                                   std::pair{PrecisionId::kTf32, "--tf32"}, std::pair{PrecisionId::kInt8, "--int8"}}) {
      if (engine::mask_has(b.allowed, id)) args.push_back(flag);
    }
    if (b.builder_seed) args.insert(args.end(), {"--builder-seed", std::to_string(*b.builder_seed)});
    for (const auto& [layer, precision] : b.layer_precisions) {
      args.insert(args.end(), {"--layer-precisions", layer + ":" + std::string(engine::precision_name(precision))});
    }
    if (!b.layer_precisions.empty()) {
      args.insert(args.end(), {"--precision-constraints", std::string(engine::constraints_name(b.constraints))});
    }
  }
  std::string out;
  for (const std::string& a : args) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

}  // namespace

Status write_bundle(const std::filesystem::path& dir, const BundleContents& c) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot create the bundle folder: {}", dir.string(), ec.message());
  VN_RETURN_IF_NOT(!c.feeds.empty(), StatusCode::kInvalidArgument, "bundle: no inputs");

  PrepareOptions prep;
  prep.num_threads = c.threads;
  ref::ReferenceBackend reference;
  VN_RETURN_IF_ERROR(reference.prepare(c.model, prep));
  VN_ASSIGN_OR_RETURN(io::RunnerResults golden, run_all(reference, "ref", c.feeds));
  const std::shared_ptr<eut::EngineUnderTest> engine = c.engine ? c.engine : eut::builtin_engine();
  VN_ASSIGN_OR_RETURN(std::unique_ptr<eut::Build> build, engine->build(c.model, c.build, prep));
  VN_ASSIGN_OR_RETURN(io::RunnerResults failing, run_all(build->backend(), engine->name(), c.feeds));

  // The failure as the bundle reproduces it: the worst output of the first failing iteration.
  std::string failure;
  for (size_t i = 0; i < c.feeds.size() && failure.empty(); ++i) {
    const ResultsComparison cmp = compare_results(failing.iterations[i].outputs, golden.iterations[i].outputs, c.compare);
    for (const TensorComparison& t : cmp.tensors) {
      if (t.passed) continue;
      failure = fmt::format("iteration {}, output '{}': max abs error {:.5g}, max rel error {:.5g}, {} of {} elements "
                            "outside atol {:g} / rtol {:g}",
                            i, t.name, t.abs_max, t.rel_max, t.mismatch_count, t.count, t.tolerance.atol,
                            t.tolerance.rtol);
      break;
    }
  }
  VN_RETURN_IF_NOT(!failure.empty(), StatusCode::kInvalidArgument,
                   "bundle: the engine built for {} does not fail, so the bundle would not reproduce the failure",
                   dir.string());

  VN_RETURN_IF_ERROR(save_model(c.model, dir / "model.onnx"));
  VN_RETURN_IF_ERROR(io::save_feed_list(c.feeds, dir / "inputs.json"));
  std::vector<NamedTensor> inputs(c.feeds.front().begin(), c.feeds.front().end());
  std::vector<NamedTensor> outputs(golden.iterations.front().outputs.begin(), golden.iterations.front().outputs.end());
  VN_RETURN_IF_ERROR(io::save_test_data_set(dir / "test_data_set_0", inputs, outputs));
  VN_RETURN_IF_ERROR(io::save_run_results({golden}, dir / "reference_outputs.json"));
  VN_RETURN_IF_ERROR(io::save_run_results({failing}, dir / "failing_outputs.json"));
  std::string engine_files;
  if (const std::shared_ptr<const engine::Plan> plan = build->plan()) {
    VN_RETURN_IF_ERROR(engine::save_plan(*plan, dir / "plan.json"));
    engine_files = "`plan.json` (layers, fusions, precisions, tactics)";
  }
  if (const std::optional<engine::TacticReplay> replay = build->tactic_replay()) {
    VN_RETURN_IF_ERROR(engine::save_tactic_replay(*replay, dir / "tactics.json"));
    engine_files += std::string(engine_files.empty() ? "" : ", ") + "`tactics.json` (tactic replay)";
  }
  if (const Model* converted = build->converted_model()) {
    VN_RETURN_IF_ERROR(save_model(*converted, dir / "engine_model.onnx"));
    engine_files += std::string(engine_files.empty() ? "" : ", ") +
                    "`engine_model.onnx` (the model as Vernier converted it for the engine)";
  }
  for (const std::filesystem::path& artifact : build->artifacts()) {
    std::filesystem::create_directories(dir / "engine", ec);
    std::filesystem::copy_file(artifact, dir / "engine" / artifact.filename(),
                               std::filesystem::copy_options::overwrite_existing, ec);
    VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot copy into the bundle: {}", artifact.string(), ec.message());
    engine_files += fmt::format("{}`engine/{}`", engine_files.empty() ? "" : ", ", artifact.filename().string());
  }
  VN_ASSIGN_OR_RETURN(const std::string engine_name, engine->describe());
  std::string faults;
  for (const engine::FaultSpec& f : c.build.faults) faults += f.text + "\n";
  if (!faults.empty()) VN_RETURN_IF_ERROR(file_write_atomic(dir / "faults.txt", faults));

  const std::string tolerances = tolerance_flags(c.compare);
  const std::string run_args = fmt::format("run model.onnx --ref {} --load-inputs inputs.json {}",
                                           engine_flags(*engine, *build, c.build), tolerances);
  const std::string vernier_cmd = "vernier " + run_args;
  VN_RETURN_IF_ERROR(file_write_atomic(
      dir / "reproduce.sh",
      fmt::format("#!/bin/sh\n"
                  "# Reproduces the failure: exits 1 while the engine still disagrees with the reference, 0\n"
                  "# once it agrees, 2 when it cannot run. It runs the vernier that wrote it; VERNIER=/path/to/vernier\n"
                  "# runs another.\n"
                  "cd \"$(dirname \"$0\")\" || exit 2\n"
                  "vernier=$VERNIER\n"
                  "[ -n \"$vernier\" ] || vernier={}\n"
                  "case \"$vernier\" in\n"
                  "  */*) [ -x \"$vernier\" ] ;;\n"
                  "  *) command -v \"$vernier\" >/dev/null 2>&1 ;;\n"
                  "esac || {{\n"
                  "  echo \"reproduce.sh: no vernier at '$vernier'; set VERNIER=/path/to/vernier\" >&2\n"
                  "  exit 2\n"
                  "}}\n"
                  "exec \"$vernier\" {}\n",
                  shell_quote(this_vernier()), run_args)));
  std::filesystem::permissions(dir / "reproduce.sh", std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec,
                               std::filesystem::perm_options::add, ec);

  std::string nodes;
  for (size_t i = 0; i < c.model.graph.nodes.size(); ++i) {
    nodes += fmt::format("- `{}` ({})\n", node_label(c.model.graph, static_cast<int64_t>(i)), c.model.graph.nodes[i].op_type);
  }
  const std::string report = fmt::format(
      "# Accuracy failure report\n\n"
      "**Culprit:** {}\n\n"
      "**Failure:** {}\n\n"
      "**Engine:** {}\n\n"
      "## The failing model\n\n"
      "`model.onnx`, {} node(s):\n\n{}\n"
      "Inputs: `inputs.json` (Polygraphy feed list, {} iteration(s)) and `test_data_set_0/` (ONNX test "
      "folder with the reference outputs). Reference outputs: `reference_outputs.json`; the engine's: "
      "`failing_outputs.json`. Engine: {}{}.\n\n"
      "## Reproduce\n\n"
      "With Vernier (exits 1 while the failure reproduces): `sh reproduce.sh`, that is\n\n"
      "```sh\n{}\n```\n\n"
      "With Polygraphy and TensorRT:\n\n"
      "```sh\npolygraphy run model.onnx --onnxrt --trt --load-inputs inputs.json {}\n```\n\n"
      "## How triage got here\n\n{}",
      c.culprit.empty() ? "(not named)" : c.culprit, failure, engine_name, c.model.graph.nodes.size(), nodes,
      c.feeds.size(), engine_files.empty() ? std::string("(it tells nothing of its build)") : engine_files,
      faults.empty() ? "" : "; the injected faults are in `faults.txt`", vernier_cmd, tolerances, c.triage_path);
  return file_write_atomic(dir / "report.md", report);
}

}  // namespace vn::flow
