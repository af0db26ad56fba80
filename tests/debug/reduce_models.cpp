// SPDX-License-Identifier: Apache-2.0
// Reduces faults planted in single nodes of real models with every mode and the built-in check,
// prints a table of checks used and nodes kept, and fails when a reduction misses the faulty node
// or keeps more than 3 nodes, or when ddmin needs more checks than bisect in all. ctest runs it on a sample of nodes; `--all` (the bench_reduce target)
// plants a fault in every node. Linear mode runs on the first --linear-cases faults only (it needs
// about 1.5 N checks per fault).
//
// usage: vn_reduce_models [--all] [--cases N] [--linear-cases N] MODEL_DIR...
//   MODEL_DIR holds model.onnx and input.npz (the tests/models fixtures).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/data/feeds.h"
#include "core/debug/builtin_check.h"
#include "core/debug/reduce.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"

namespace {

using vn::debug::ReduceMode;

struct Outcome {
  int64_t checks = 0;
  size_t nodes = 0;
  bool contains = false;
};

int64_t ceil_log2(int64_t n) {
  int64_t bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  return bits;
}

int run(int argc, char** argv) {
  bool all = false;
  int cases = 8, linear_cases = 2;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--all") {
      all = true;
    } else if (arg == "--cases" && i + 1 < argc) {
      cases = std::atoi(argv[++i]);
    } else if (arg == "--linear-cases" && i + 1 < argc) {
      linear_cases = std::atoi(argv[++i]);
    } else {
      dirs.push_back(arg);
    }
  }
  if (dirs.empty()) {
    std::fprintf(stderr, "usage: vn_reduce_models [--all] [--cases N] [--linear-cases N] MODEL_DIR...\n");
    return 2;
  }
  int failures = 0;
  int64_t total_bisect = 0, total_ddmin = 0, total_polygraphy_bound = 0;
  fmt::print("{:<22} {:<38} {:>5} | {:>15} | {:>15} | {:>15} | {:>11}\n", "model", "faulty node", "N",
             "bisect chk/kept", "linear chk/kept", "ddmin chk/kept", "2*ceil(lg N)");
  for (const std::string& dir : dirs) {
    auto model = vn::load_model(dir + "/model.onnx");
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.status().to_string().c_str());
      return 2;
    }
    auto feeds = vn::data::load_feeds({dir + "/input.npz"}, model->graph);
    if (!feeds.ok()) {
      std::fprintf(stderr, "%s\n", feeds.status().to_string().c_str());
      return 2;
    }
    auto reducer = vn::debug::Reducer::create(std::move(*model), std::move(*feeds), 0);
    if (!reducer.ok()) {
      std::fprintf(stderr, "%s\n", reducer.status().to_string().c_str());
      return 2;
    }
    const vn::Graph& graph = reducer->model().graph;
    const int64_t n = reducer->node_count();
    const std::vector<vn::TensorMap> whole_feeds = reducer->build_feeds(reducer->whole());

    // Candidates for a fault: nodes with a float output.
    std::vector<int64_t> float_nodes;
    for (int64_t v = 0; v < n; ++v) {
      const auto& outputs = graph.nodes[static_cast<size_t>(v)].outputs;
      if (outputs.empty()) continue;
      const vn::Tensor* t = nullptr;
      for (const auto& f : reducer->reference_outputs(vn::debug::ReduceCandidate{{v}, {}, {outputs[0]}})) t = f.find(outputs[0]);
      if (t && vn::dtype_is_float(t->dtype())) float_nodes.push_back(v);
    }
    std::vector<int64_t> chosen;
    if (all || static_cast<int>(float_nodes.size()) <= cases) {
      chosen = float_nodes;
    } else {
      for (int i = 0; i < cases; ++i) {
        chosen.push_back(float_nodes[static_cast<size_t>(i) * (float_nodes.size() - 1) / static_cast<size_t>(cases - 1)]);
      }
    }
    std::vector<double> check_seconds;
    size_t visible = 0;
    for (size_t c = 0; c < chosen.size(); ++c) {
      const int64_t k = chosen[c];
      const std::string name = vn::node_label(graph, k);
      vn::debug::BuiltinCheck check;
      check.engine.build.deterministic = true;
      // fp32 accumulation order alone moves deep ResNet activations past 1e-5 (engine tactics vs
      // the reference); the planted faults scale a node's output by 1.5.
      check.compare.atol[""] = 1e-3;
      check.compare.rtol[""] = 1e-3;
      auto fault = vn::engine::parse_fault(fmt::format("layer={},kind=scale,factor=1.5", name));
      if (!fault.ok()) {
        std::fprintf(stderr, "%s\n", fault.status().to_string().c_str());
        return 2;
      }
      check.engine.build.faults.push_back(*fault);
      vn::debug::ReduceOracle oracle = [&](const vn::debug::ReduceCandidate& candidate,
                                           const std::string&) -> vn::Result<vn::debug::CheckResult> {
        VN_ASSIGN_OR_RETURN(vn::Model m, reducer->build_model(candidate));
        const std::vector<vn::TensorMap> expected = reducer->reference_outputs(candidate);
        VN_ASSIGN_OR_RETURN(vn::debug::BuiltinCheckDetail detail,
                            vn::debug::run_builtin_check(m, reducer->build_feeds(candidate), check, &expected));
        check_seconds.push_back(detail.result.seconds);
        return detail.result;
      };
      auto reduce = [&](ReduceMode mode) -> vn::Result<Outcome> {
        vn::debug::DebugReplay replay;
        vn::debug::ReduceOptions options;
        options.mode = mode;
        VN_ASSIGN_OR_RETURN(vn::debug::ReduceResult r, reducer->reduce(options, replay, oracle, nullptr));
        Outcome o;
        o.checks = r.checks;
        o.nodes = r.failed_any ? r.minimal.nodes.size() : 0;
        o.contains = r.failed_any && std::find(r.minimal.nodes.begin(), r.minimal.nodes.end(), k) != r.minimal.nodes.end();
        // The result must be a valid model: save it and load it back through the ONNX checker.
        if (r.failed_any) {
          VN_ASSIGN_OR_RETURN(vn::Model m, reducer->build_model(r.minimal));
          VN_ASSIGN_OR_RETURN(std::string bytes, vn::serialize_model(m));
          VN_RETURN_IF_ERROR(vn::load_model_from_bytes(bytes, "").status());
        }
        return o;
      };
      // A fault the outputs do not show (a scaled input to LayerNormalization, which normalizes the
      // scale away) cannot be reduced; every search assumes the whole model fails. The table says
      // so, and most planted faults must be visible.
      {
        const vn::debug::ReduceCandidate whole_model = reducer->whole();
        auto whole_check = oracle(whole_model, "");
        if (!whole_check.ok()) {
          std::fprintf(stderr, "%s: %s\n", name.c_str(), whole_check.status().to_string().c_str());
          return 2;
        }
        if (whole_check->verdict != vn::debug::Verdict::kBad) {
          fmt::print("{:<22} {:<38} {:>5} | fault not visible in the outputs\n", dir.substr(dir.rfind('/') + 1),
                     name.substr(0, 38), n);
          continue;
        }
      }
      auto whole = reduce(ReduceMode::kDdmin);
      if (!whole.ok()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), whole.status().to_string().c_str());
        return 2;
      }
      ++visible;
      const Outcome ddmin = *whole;
      auto bisect = reduce(ReduceMode::kBisect);
      std::optional<Outcome> linear;
      const bool run_linear = static_cast<int>(c) < linear_cases;
      if (run_linear) {
        auto l = reduce(ReduceMode::kLinear);
        if (!l.ok()) {
          std::fprintf(stderr, "%s\n", l.status().to_string().c_str());
          return 2;
        }
        linear = *l;
      }
      if (!bisect.ok()) {
        std::fprintf(stderr, "%s\n", bisect.status().to_string().c_str());
        return 2;
      }
      auto cell = [](const std::optional<Outcome>& o) {
        return o ? fmt::format("{:>6} / {:<6}", o->checks, o->nodes) : fmt::format("{:^15}", "-");
      };
      fmt::print("{:<22} {:<38} {:>5} | {} | {} | {} | {:>11}\n", dir.substr(dir.rfind('/') + 1), name.substr(0, 38), n,
                 cell(*bisect), cell(linear), cell(ddmin), 2 * ceil_log2(n));
      for (const auto& [mode, o] : {std::pair{"bisect", std::optional<Outcome>(*bisect)}, std::pair{"linear", linear},
                                    std::pair{"ddmin", std::optional<Outcome>(ddmin)}}) {
        if (!o) continue;
        if (!o->contains || o->nodes > 3) {
          fmt::print("  FAIL: {} kept {} node(s){}\n", mode, o->nodes, o->contains ? "" : " without the faulty node");
          ++failures;
        }
      }
      if (ddmin.nodes > bisect->nodes) {
        fmt::print("  FAIL: ddmin kept more nodes than bisect\n");
        ++failures;
      }
      total_bisect += bisect->checks;
      total_ddmin += ddmin.checks;
      total_polygraphy_bound += 2 * ceil_log2(n);
    }
    std::sort(check_seconds.begin(), check_seconds.end());
    fmt::print("{}: {} of {} planted faults visible; built-in check median {:.3f} s over {} checks\n",
               dir.substr(dir.rfind('/') + 1), visible, chosen.size(),
               check_seconds.empty() ? 0.0 : check_seconds[check_seconds.size() / 2], check_seconds.size());
    if (visible * 4 < chosen.size() * 3) {
      fmt::print("  FAIL: fewer than 3 in 4 planted faults are visible\n");
      ++failures;
    }
  }
  fmt::print("checks in all: bisect {}, ddmin {}, 2*ceil(log2 N) summed {}\n", total_bisect,
             total_ddmin, total_polygraphy_bound);
  if (total_ddmin > total_bisect) {
    fmt::print("FAIL: ddmin used more checks than bisect\n");
    ++failures;
  }
  fmt::print("{}\n", failures == 0 ? "PASSED" : fmt::format("FAILED: {} problem(s)", failures));
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
