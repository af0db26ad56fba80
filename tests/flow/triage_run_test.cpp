// SPDX-License-Identifier: Apache-2.0
// A triage run called directly (no process): the work folder chosen or refused, the demo's planted
// fault walked to its bundle with report.json written, and the ended session resumed.
#include "core/flow/triage_run.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/data/synthetic.h"
#include "core/engine/fault.h"
#include "core/ir/onnx_import.h"
#include "tests/util/process.h"

namespace vn::flow {
namespace {

const std::string kSource = VN_SOURCE_DIR;

// Runs the rest of the test in `dir` and returns to the folder it was in at the end.
class InFolder {
 public:
  explicit InFolder(const std::filesystem::path& dir) : before_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~InFolder() { std::filesystem::current_path(before_); }

 private:
  std::filesystem::path before_;
};

TEST(TriageWorkdir, AFreshFolderIsNumberedAndAnEarlierTriageIsKept) {
  test::TempDir dir;
  InFolder here(dir.path());
  Result<std::filesystem::path> first = triage_workdir("", false);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(*first, "vernier_triage");
  std::filesystem::create_directory("vernier_triage");
  EXPECT_EQ(*triage_workdir("", false), "vernier_triage_2");

  test::write_file(dir / "vernier_triage/report.json", "{}");
  Result<std::filesystem::path> refused = triage_workdir("vernier_triage", false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("--resume vernier_triage"), std::string::npos);
  EXPECT_EQ(*triage_workdir("vernier_triage", true), "vernier_triage") << "a resume or --force may reuse it";
}

// The demo scenario's triage: the demo model with a fault in conv2, headless.
TriageRunConfig demo_run(const std::filesystem::path& workdir) {
  TriageRunConfig run;
  TriageConfig& config = run.triage;
  Result<Model> model = load_model(kSource + "/assets/models/demo.onnx");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model->graph, {});
  EXPECT_TRUE(feeds.ok());
  config.synthetic_feeds = std::move(*feeds);
  config.model = std::move(*model);
  config.build.deterministic = true;
  config.build.builder_seed = 1;
  Result<engine::FaultSpec> fault = engine::parse_fault("layer=conv2,kind=scale,factor=1.5,fraction=0.1,seed=7");
  EXPECT_TRUE(fault.ok());
  config.build.faults.push_back(*fault);
  config.threads = 1;
  config.workdir = workdir;
  run.command = {{"args", {"demo.onnx"}}, {"cwd", workdir.parent_path().string()}};
  return run;
}

TEST(TriageRun, TheDemoFaultIsLocalizedAndTheReportWritten) {
  test::TempDir dir;
  Result<Flowchart> chart = load_flowchart(kSource + "/assets/flowchart/en.json");
  ASSERT_TRUE(chart.ok()) << chart.status().to_string();
  const std::filesystem::path workdir = dir / "triage";
  std::vector<std::string> observed;
  bool started = false;
  TriageRunHooks hooks;
  hooks.on_start = [&](const TriageSession& session) {
    started = true;
    EXPECT_FALSE(session.resumed());
    EXPECT_EQ(session.workdir(), workdir);
  };
  hooks.observe = [&](const TriageStep& step, const FlowNode&) { observed.push_back(step.node); };
  Result<TriageRunResult> result = run_triage_session(*chart, demo_run(workdir), hooks);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_TRUE(started);
  EXPECT_EQ(result->result.outcome, "localized");
  EXPECT_EQ(result->result.culprit, "layer 'conv2'");
  EXPECT_TRUE(result->failing);
  EXPECT_EQ(result->path, "sanitize > real_data (no) > intermittent (no) > layerwise (yes) > extract (yes) > minimal");
  EXPECT_EQ(observed.size(), result->result.path.size());
  EXPECT_GT(result->builds, 0);
  EXPECT_GT(result->checks, 0);
  EXPECT_FALSE(result->resumed);
  EXPECT_EQ(result->runs, 1);
  EXPECT_EQ(result->report, workdir / "report.json");
  const nlohmann::json report = nlohmann::json::parse(test::read_file(result->report));
  EXPECT_EQ(report.at("outcome"), "localized");
  EXPECT_EQ(report.at("culprit"), "layer 'conv2'");
  EXPECT_TRUE(std::filesystem::exists(result->result.bundle / "model.onnx"));
  EXPECT_TRUE(TriageSession::exists(workdir));

  // The ended session, resumed, gives its result again without probing anything.
  Result<TriageSession> session = TriageSession::open(workdir);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  TriageRunConfig again = demo_run(workdir);
  again.resumed = std::move(*session);
  int restored = 0;
  hooks.on_start = [&](const TriageSession& s) { EXPECT_TRUE(s.resumed()); };
  hooks.observe = [&](const TriageStep& step, const FlowNode&) { restored += step.resumed ? 1 : 0; };
  Result<TriageRunResult> resumed = run_triage_session(*chart, std::move(again), hooks);
  ASSERT_TRUE(resumed.ok()) << resumed.status().to_string();
  EXPECT_TRUE(resumed->resumed);
  EXPECT_EQ(resumed->runs, 2);
  EXPECT_EQ(resumed->path, result->path);
  EXPECT_EQ(resumed->result.culprit, result->result.culprit);
  EXPECT_GT(restored, 0);
}

TEST(TriageRun, ACustomWalkIsUsedAndItsCancellationIsAnError) {
  test::TempDir dir;
  Result<Flowchart> chart = load_flowchart(kSource + "/assets/flowchart/en.json");
  ASSERT_TRUE(chart.ok());
  TriageRunHooks hooks;
  bool walked = false;
  hooks.walk = [&](const Flowchart&, TriageConfig config, const TriageObserver&) -> Result<TriageResult> {
    walked = true;
    EXPECT_NE(config.session, nullptr) << "the walk is kept in the run's session";
    return Status(StatusCode::kCancelled, "cancelled");
  };
  Result<TriageRunResult> result = run_triage_session(*chart, demo_run(dir / "triage"), hooks);
  EXPECT_TRUE(walked);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(std::filesystem::exists(dir / "triage/report.json"));
}

}  // namespace
}  // namespace vn::flow
