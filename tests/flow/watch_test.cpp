// SPDX-License-Identifier: Apache-2.0
// What a triage tells its watcher (TriageConfig::watch) on the demo model: the model at once, the
// layer-wise comparison with digests and precisions, the extracted subgraph, each reduce iteration,
// and progress with counts (build 3 of 3, layer k of n, check k of at most m) that never claims
// fewer checks than it has run.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "core/data/synthetic.h"
#include "core/engine/fault.h"
#include "core/engine/plan.h"
#include "core/flow/flowchart.h"
#include "core/flow/session_file.h"
#include "core/flow/triage.h"
#include "core/ir/onnx_import.h"
#include "tests/util/process.h"

namespace vn::flow {
namespace {

const std::filesystem::path kSource(VN_SOURCE_DIR);

// Everything a watch received, in order.
struct Seen {
  std::vector<size_t> models;  ///< node count of every published model
  std::shared_ptr<const session::LayerwiseSession> layerwise;
  std::vector<ExtractWatch> extracts;
  std::vector<ReduceStartWatch> reduce_starts;
  std::vector<std::string> events;  ///< "check", "iteration" in the order they came
  std::vector<debug::ReduceProgress> iterations;
  std::optional<std::optional<debug::ReduceCandidate>> reduce_end;
  std::vector<ProbeProgress> progress;

  // The progress of `node`'s probe counted in `unit`.
  std::vector<ProbeProgress> counted(const std::string& node, ProgressUnit unit) const {
    std::vector<ProbeProgress> out;
    for (const ProbeProgress& p : progress) {
      if (p.node == node && p.unit == unit) out.push_back(p);
    }
    return out;
  }
};

TriageWatch watch(Seen& seen) {
  // The layer-wise comparison reports progress from its worker thread.
  auto mutex = std::make_shared<std::mutex>();
  TriageWatch w;
  w.model = [&seen](const Model& m) { seen.models.push_back(m.graph.nodes.size()); };
  w.layerwise = [&seen](std::shared_ptr<const session::LayerwiseSession> s, const std::string&) {
    seen.layerwise = std::move(s);
  };
  w.extract = [&seen](const ExtractWatch& e) { seen.extracts.push_back(e); };
  w.reduce_start = [&seen](const ReduceStartWatch& s) { seen.reduce_starts.push_back(s); };
  w.reduce_check = [&seen](const debug::ReduceCandidate&) { seen.events.push_back("check"); };
  w.reduce_iteration = [&seen](const debug::ReduceIteration& it, const debug::ReduceProgress& p) {
    seen.events.push_back(it.replayed ? "replayed" : "iteration");
    seen.iterations.push_back(p);
  };
  w.reduce_end = [&seen](const std::optional<debug::ReduceCandidate>& minimal) { seen.reduce_end = minimal; };
  w.progress = [&seen, mutex](const ProbeProgress& p) {
    std::lock_guard<std::mutex> lock(*mutex);
    seen.progress.push_back(p);
  };
  return w;
}

// The demo model with `fault`, every build alike, three builds; kept in `session` when given, and
// cancelled once `stop_at` was answered.
Result<TriageResult> triage_demo(const std::string& fault, const std::filesystem::path& workdir, Seen& seen,
                                 TriageSession* session = nullptr, const std::string& stop_at = "") {
  VN_ASSIGN_OR_RETURN(Flowchart chart, load_flowchart(kSource / "assets/flowchart/en.json"));
  TriageConfig c;
  VN_ASSIGN_OR_RETURN(c.model, load_model(kSource / "assets/models/demo.onnx"));
  VN_ASSIGN_OR_RETURN(c.synthetic_feeds, data::generate_feeds(c.model.graph, data::SyntheticOptions{}));
  c.build.deterministic = true;
  c.build.builder_seed = 1;
  VN_ASSIGN_OR_RETURN(engine::FaultSpec spec, engine::parse_fault(fault));
  c.build.faults.push_back(spec);
  c.threads = 1;
  c.builds = 3;
  c.workdir = workdir;
  c.watch = watch(seen);
  c.session = session;
  std::atomic<bool> cancel{false};
  auto observe = [&](const TriageStep& step, const FlowNode&) {
    if (step.node == stop_at) cancel = true;
  };
  return triage_headless(chart, std::move(c), observe, &cancel);
}

TEST(TriageWatch, TheDemoShowsItsModelComparisonAndExtractWithCounts) {
  test::TempDir dir;
  Seen seen;
  Result<TriageResult> result = triage_demo("layer=conv2,kind=scale,factor=1.5,fraction=0.1,seed=7", dir / "w", seen);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  ASSERT_EQ(result->culprit, "layer 'conv2'");

  // The model at the start, and again once sanitized.
  ASSERT_EQ(seen.models.size(), 2u);
  EXPECT_GT(seen.models.front(), 0u);

  // The comparison: every layer with the built-in engine's precision and tactic, the tensors with
  // what the Tensor screen shows of them, conv2 the first culprit.
  ASSERT_NE(seen.layerwise, nullptr);
  const session::LayerwiseSession& s = *seen.layerwise;
  EXPECT_EQ(s.model.graph.nodes.size(), seen.models.back());
  ASSERT_FALSE(s.comparison.layers.empty());
  ASSERT_EQ(s.layer_precision.size(), s.comparison.layers.size());
  ASSERT_EQ(s.layer_tactic.size(), s.comparison.layers.size());
  EXPECT_EQ(s.layer_precision.front(), "fp32");
  EXPECT_FALSE(s.layer_tactic.front().empty());
  ASSERT_FALSE(s.comparison.tensors.empty());
  for (const TensorComparison& t : s.comparison.tensors) EXPECT_NE(t.digest, nullptr) << t.name;
  ASSERT_TRUE(s.comparison.first_culprit.has_value());
  EXPECT_EQ(s.comparison.layers[*s.comparison.first_culprit].layer.name, "conv2");

  // The extracted layer and its verdict.
  ASSERT_EQ(seen.extracts.size(), 1u);
  EXPECT_EQ(seen.extracts[0].layer, "conv2");
  EXPECT_EQ(seen.extracts[0].nodes, std::vector<std::string>{"conv2"});
  EXPECT_EQ(seen.extracts[0].verdict, "bad");
  EXPECT_NE(seen.extracts[0].subgraph.find("conv2 (Conv)"), std::string::npos) << seen.extracts[0].subgraph;
  EXPECT_TRUE(seen.reduce_starts.empty());

  // Build 1, 2, 3 of 3; the estimate once the first build finished.
  const std::vector<ProbeProgress> builds = seen.counted("intermittent", ProgressUnit::kBuild);
  ASSERT_EQ(builds.size(), 4u);  // the stage, then each build's end
  for (size_t i = 0; i < builds.size(); ++i) {
    EXPECT_EQ(builds[i].done, static_cast<int64_t>(i));
    EXPECT_EQ(builds[i].total, 3);
    EXPECT_FALSE(builds[i].at_most);
    EXPECT_EQ(builds[i].remaining.has_value(), i > 0);
  }
  EXPECT_EQ(builds.back().remaining, 0.0);
  // Layer k of n, k growing to n, each naming the layer that comes next.
  const std::vector<ProbeProgress> layers = seen.counted("layerwise", ProgressUnit::kLayer);
  ASSERT_GE(layers.size(), 2u);
  EXPECT_EQ(layers.front().done, 0);
  EXPECT_EQ(layers.front().total, static_cast<int64_t>(s.comparison.layers.size()));
  EXPECT_EQ(layers.back().done, layers.back().total);
  for (size_t i = 1; i < layers.size(); ++i) EXPECT_GT(layers[i].done, layers[i - 1].done);
  EXPECT_EQ(layers.front().stage, "comparing layer by layer");
  // Elapsed time grows within the walk's probes.
  for (size_t i = 1; i < layers.size(); ++i) EXPECT_GE(layers[i].elapsed, layers[i - 1].elapsed);
  // The extract's one check.
  const std::vector<ProbeProgress> extract = seen.counted("extract", ProgressUnit::kCheck);
  ASSERT_EQ(extract.size(), 2u);
  EXPECT_EQ(extract.back().done, 1);
  EXPECT_EQ(extract.back().total, 1);
}

TEST(TriageWatch, AReductionShowsEveryIterationAndNeverFewerChecksThanItRan) {
  // conv2 fails only fused with relu2: marking every tensor hides it, so the walk reduces.
  test::TempDir dir;
  Seen seen;
  Result<TriageResult> result = triage_demo("layer=conv2,kind=scale,factor=1.5,when=fused", dir / "w", seen);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  ASSERT_EQ(result->culprit, "nodes 'conv2', 'relu2'");
  ASSERT_NE(seen.layerwise, nullptr);
  EXPECT_TRUE(seen.layerwise->comparison.passed());

  ASSERT_EQ(seen.reduce_starts.size(), 1u);
  const ReduceStartWatch& start = seen.reduce_starts[0];
  EXPECT_GT(start.total_nodes, 2);
  ASSERT_EQ(start.labels.size(), static_cast<size_t>(start.total_nodes));
  EXPECT_NE(std::find(start.labels.begin(), start.labels.end(), "conv2 (Conv)"), start.labels.end());
  EXPECT_TRUE(start.candidate_file.empty()) << "the built-in check reads no file";

  // Every check announced before its iteration; the counts follow the reducer's.
  ASSERT_FALSE(seen.iterations.empty());
  ASSERT_EQ(seen.events.size(), 2 * seen.iterations.size());
  for (size_t i = 0; i < seen.events.size(); ++i) EXPECT_EQ(seen.events[i], i % 2 ? "iteration" : "check");
  for (size_t i = 0; i < seen.iterations.size(); ++i) EXPECT_EQ(seen.iterations[i].checks_done, static_cast<int64_t>(i + 1));
  ASSERT_TRUE(seen.reduce_end.has_value());
  ASSERT_TRUE(seen.reduce_end->has_value());
  EXPECT_EQ((*seen.reduce_end)->nodes.size(), 2u);

  // Check k of at most m: the first without a bound; none with a bound below the check at hand.
  const std::vector<ProbeProgress> checks = seen.counted("reduce", ProgressUnit::kCheck);
  ASSERT_EQ(checks.size(), seen.iterations.size() + 1);  // the stage, then every check's start
  EXPECT_EQ(checks[1].done, 0);
  EXPECT_EQ(checks[1].total, 0);
  for (size_t i = 1; i < checks.size(); ++i) {
    EXPECT_TRUE(checks[i].at_most);
    EXPECT_EQ(checks[i].done, static_cast<int64_t>(i - 1));
    if (checks[i].total > 0) {
      EXPECT_GT(checks[i].total, checks[i].done) << "check " << i;
      EXPECT_GE(checks[i].total, static_cast<int64_t>(seen.iterations.size())) << "check " << i << ": at most a lie";
    }
    EXPECT_EQ(checks[i].remaining.has_value(), checks[i].done > 0 && checks[i].total > 0);
  }
}

TEST(TriageWatch, AResumedWalkShowsTheComparisonItsSessionKept) {
  test::TempDir dir;
  const std::string fault = "layer=conv2,kind=scale,factor=1.5,fraction=0.1,seed=7";
  {
    Result<Model> model = load_model(kSource / "assets/models/demo.onnx");
    ASSERT_TRUE(model.ok());
    Result<TriageSession> session =
        TriageSession::create(dir / "w", nlohmann::ordered_json::object(), engine::model_hash(*model));
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    Seen first;
    Result<TriageResult> stopped = triage_demo(fault, dir / "w", first, &*session, "layerwise");
    ASSERT_FALSE(stopped.ok());
    EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled);
  }
  Result<TriageSession> session = TriageSession::open(dir / "w");
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  Seen seen;
  Result<TriageResult> result = triage_demo(fault, dir / "w", seen, &*session);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(result->culprit, "layer 'conv2'");
  // The sanitized model, and the layers' errors with their ranks, before any probe runs again.
  ASSERT_EQ(seen.models.size(), 1u);
  ASSERT_NE(seen.layerwise, nullptr);
  const LayerwiseComparison& c = seen.layerwise->comparison;
  ASSERT_FALSE(c.layers.empty());
  EXPECT_TRUE(c.tensors.empty()) << "the session keeps the layers' errors, not the tensors'";
  ASSERT_TRUE(c.first_culprit.has_value());
  EXPECT_EQ(c.layers[*c.first_culprit].layer.name, "conv2");
  EXPECT_TRUE(seen.counted("layerwise", ProgressUnit::kLayer).empty()) << "not compared again";
}

}  // namespace
}  // namespace vn::flow
