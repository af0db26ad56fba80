// SPDX-License-Identifier: Apache-2.0
// Triage sessions: the state file round-trips, and a walk stopped (cancelled) after any step and
// resumed from its state ends exactly as an uninterrupted walk, without probing an answered step
// or asking the decide hook again about it.
#include "core/flow/session_file.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>

#include "core/data/synthetic.h"
#include "core/engine/fault.h"
#include "core/engine/plan.h"
#include "core/flow/flowchart.h"
#include "core/ir/onnx_import.h"
#include "tests/util/process.h"

namespace vn::flow {
namespace {

const std::filesystem::path kSource(VN_SOURCE_DIR);

TEST(TriageSession, StateRoundTripsThroughItsFile) {
  test::TempDir dir;
  Result<TriageSession> created = TriageSession::create(dir / "w", {{"args", {"m.onnx", "--headless"}}}, "abc");
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  TriageSession& s = *created;
  s.start_at("sanitize");
  TriageStep step{"sanitize", std::nullopt, "10 node(s)", {{"nodes_before", 10}}};
  step.seconds = 0.5;
  s.record_step(step, "reduce", {{"feeds", "synthetic"}});
  debug::ReduceIteration it;
  it.key = "_N0_ddmin";
  it.phase = "ddmin";
  it.candidate.nodes = {1, 2};
  it.result.verdict = debug::Verdict::kBad;
  it.result.reason = "1 of 1 output(s) fail";
  s.record_iteration("reduce", it, 1.5, 1, 1);
  ASSERT_TRUE(s.save().ok());

  Result<TriageSession> opened = TriageSession::open(dir / "w");
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  EXPECT_TRUE(opened->resumed());
  EXPECT_EQ(opened->run(), 2);
  EXPECT_EQ(opened->model_hash(), "abc");
  EXPECT_EQ(opened->command()["args"][1], "--headless");
  ASSERT_EQ(opened->path().size(), 1u);
  EXPECT_EQ(opened->path()[0].summary, "10 node(s)");
  EXPECT_EQ(opened->path()[0].evidence["nodes_before"], 10);
  EXPECT_TRUE(opened->path()[0].resumed);
  EXPECT_EQ(opened->next(), "reduce");
  EXPECT_EQ(opened->walk()["feeds"], "synthetic");
  ASSERT_TRUE(opened->reduce().has_value());
  const debug::DebugReplay replay = opened->reduce()->replay();
  ASSERT_NE(replay.find("_N0_ddmin"), nullptr);
  EXPECT_EQ(replay.find("_N0_ddmin")->verdict, debug::Verdict::kBad);
  EXPECT_EQ(opened->reduce()->iterations[0].run, 1);
}

TEST(TriageSession, RefusesWhatIsNotASession) {
  test::TempDir dir;
  EXPECT_EQ(TriageSession::open(dir.path()).status().code(), StatusCode::kInvalidArgument);
  std::ofstream(dir / "session.json") << R"({"format": "something else"})";
  const Status bad = TriageSession::open(dir.path()).status();
  EXPECT_EQ(bad.code(), StatusCode::kIoError);
  EXPECT_NE(bad.message().find("session.json"), std::string::npos) << bad.message();
}

// The evidence without its timings ("seconds"), which differ from run to run.
nlohmann::ordered_json untimed(nlohmann::ordered_json j) {
  if (j.is_object()) {
    j.erase("seconds");
    for (auto& [key, value] : j.items()) value = untimed(value);
  } else if (j.is_array()) {
    for (auto& value : j) value = untimed(value);
  }
  return j;
}

struct Walked {
  TriageResult result;
  int probed = 0;  ///< steps probed by this run (not restored)
  int asked = 0;   ///< questions put to the decide hook
};

class ResumedWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Flowchart> loaded = load_flowchart(kSource / "assets/flowchart/en.json");
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    chart_ = std::move(*loaded);
    Result<Model> model = load_model(kSource / "assets/models/demo.onnx");
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    model_ = std::move(*model);
  }

  TriageConfig config(const std::filesystem::path& workdir) const {
    TriageConfig c;
    c.model = model_;
    Result<std::vector<TensorMap>> feeds = data::generate_feeds(model_.graph, data::SyntheticOptions{});
    EXPECT_TRUE(feeds.ok());
    c.synthetic_feeds = std::move(*feeds);
    c.build.deterministic = true;
    Result<engine::FaultSpec> fault = engine::parse_fault("layer=conv2,kind=scale,factor=1.5,when=fused");
    EXPECT_TRUE(fault.ok());
    c.build.faults.push_back(*fault);
    c.compare.atol[""] = 1e-5;
    c.compare.rtol[""] = 1e-5;
    c.threads = 1;
    c.builds = 2;
    c.workdir = workdir;
    return c;
  }

  // Walks with a session in `workdir` (resumed when `resume`), cancelling once `stop_after` steps
  // have been answered by this run (never when negative). The decide hook follows every proposal.
  Result<Walked> walk(const std::filesystem::path& workdir, bool resume, int stop_after) {
    Result<TriageSession> session = resume ? TriageSession::open(workdir)
                                           : TriageSession::create(workdir, nlohmann::ordered_json::object(),
                                                                   engine::model_hash(model_));
    if (!session.ok()) return session.status();
    Walked walked;
    std::atomic<bool> cancel{false};
    TriageConfig c = config(workdir);
    c.session = &*session;
    c.decide = [&](const FlowNode& node, const TriageStep& proposed) {
      ++walked.asked;
      if (on_decide) on_decide(node);
      return *proposed.answer ? Decision::kYes : Decision::kNo;
    };
    auto observe = [&](const TriageStep& step, const FlowNode&) {
      if (step.resumed) return;
      if (++walked.probed == stop_after) cancel = true;
    };
    VN_ASSIGN_OR_RETURN(walked.result, triage_headless(chart_, std::move(c), observe, &cancel));
    return walked;
  }

  Flowchart chart_;
  Model model_;
  /// Called by the decide hook before it answers (a test's snapshot of the work folder).
  std::function<void(const FlowNode&)> on_decide;
};

TEST_F(ResumedWalk, EndsAsAnUninterruptedWalkAndProbesNothingTwice) {
  test::TempDir dir;
  Result<Walked> whole = walk(dir / "whole", false, -1);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  ASSERT_EQ(whole->result.outcome, "localized");
  const size_t steps = whole->result.path.size();
  ASSERT_GE(steps, 5u);
  // Stopped after each step in turn, then resumed to the end.
  for (size_t stop = 1; stop < steps; ++stop) {
    SCOPED_TRACE(stop);
    const std::filesystem::path workdir = dir / fmt::format("stop{}", stop);
    Result<Walked> first = walk(workdir, false, static_cast<int>(stop));
    ASSERT_FALSE(first.ok());
    EXPECT_EQ(first.status().code(), StatusCode::kCancelled);
    Result<Walked> rest = walk(workdir, true, -1);
    ASSERT_TRUE(rest.ok()) << rest.status().to_string();
    // Every step answered once over both runs, each question asked once.
    EXPECT_EQ(stop + static_cast<size_t>(rest->probed), steps);
    EXPECT_EQ(rest->result.outcome, whole->result.outcome);
    EXPECT_EQ(rest->result.culprit, whole->result.culprit);
    ASSERT_EQ(rest->result.path.size(), steps);
    int questions = 0;
    for (size_t i = 0; i < steps; ++i) {
      EXPECT_EQ(rest->result.path[i].node, whole->result.path[i].node);
      EXPECT_EQ(rest->result.path[i].answer, whole->result.path[i].answer);
      EXPECT_EQ(untimed(rest->result.path[i].evidence), untimed(whole->result.path[i].evidence)) << i;
      // (The end's summary names the work folder.)
      if (i + 1 < steps) {
        EXPECT_EQ(rest->result.path[i].summary, whole->result.path[i].summary) << i;
      }
      EXPECT_EQ(rest->result.path[i].resumed, i < stop);
      questions += rest->result.path[i].answer.has_value() && i >= stop ? 1 : 0;
    }
    EXPECT_EQ(rest->asked, questions);
  }
}

TEST_F(ResumedWalk, AQuestionAwaitingItsAnswerIsAskedAgainWithoutProbing) {
  test::TempDir dir;
  // The work folder as it is while the decide hook waits on the layer-wise question: what a crash
  // at that moment leaves.
  on_decide = [&](const FlowNode& node) {
    if (node.id == "layerwise") std::filesystem::copy(dir / "w", dir / "crashed", std::filesystem::copy_options::recursive);
  };
  Result<Walked> whole = walk(dir / "w", false, -1);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  on_decide = nullptr;
  const nlohmann::json state = nlohmann::json::parse(test::read_file(dir / "crashed/session.json"));
  ASSERT_EQ(state["pending"]["node"], "layerwise");
  Result<Walked> rest = walk(dir / "crashed", true, -1);
  ASSERT_TRUE(rest.ok()) << rest.status().to_string();
  EXPECT_EQ(rest->result.outcome, whole->result.outcome);
  EXPECT_EQ(rest->result.culprit, whole->result.culprit);
  // layerwise and reduce are asked; layerwise keeps the measurement of the run that probed it.
  EXPECT_EQ(rest->asked, 2);
  ASSERT_EQ(rest->result.path.size(), whole->result.path.size());
  const TriageStep& layerwise = rest->result.path[3];
  EXPECT_EQ(layerwise.node, "layerwise");
  EXPECT_EQ(layerwise.seconds, state["pending"]["seconds"].get<double>());
  EXPECT_EQ(untimed(layerwise.evidence), untimed(whole->result.path[3].evidence));
}

}  // namespace
}  // namespace vn::flow
