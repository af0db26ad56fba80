// SPDX-License-Identifier: Apache-2.0
// Undo in a triage walk: the decide hook takes answers back, the walk goes back to the earlier
// question and asks it again from the evidence its probe gathered (no probe runs again), what
// later probes were handed is as it was there, the steps after it are taken again from their
// records when the walk retraces its way, and the session file keeps it all for a resume.
#include <gtest/gtest.h>

#include <atomic>
#include <map>

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

// One question put to the decide hook: the node and the proposal as the walk gave it.
struct Asked {
  std::string node;
  TriageStep proposed;
};

struct Walked {
  Result<TriageResult> result = Status(StatusCode::kInternal, "not walked");
  std::vector<Asked> asked;
  std::vector<TriageUndo> undos;
};

class UndoWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Flowchart> loaded = load_flowchart(kSource / "assets/flowchart/en.json");
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    chart_ = std::move(*loaded);
    Result<Model> model = load_model(kSource / "assets/models/demo.onnx");
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    model_ = std::move(*model);
  }

  // The demo scenario: conv2 scales a tenth of its outputs in every build; the walk goes
  // real_data (no), intermittent (no), layerwise (yes), extract (yes), minimal.
  TriageConfig config(const std::filesystem::path& workdir) const {
    TriageConfig c;
    c.model = model_;
    Result<std::vector<TensorMap>> feeds = data::generate_feeds(model_.graph, data::SyntheticOptions{});
    EXPECT_TRUE(feeds.ok());
    c.synthetic_feeds = std::move(*feeds);
    c.build.deterministic = true;
    c.build.builder_seed = 1;
    Result<engine::FaultSpec> fault = engine::parse_fault("layer=conv2,kind=scale,factor=1.5,fraction=0.1,seed=7");
    EXPECT_TRUE(fault.ok());
    c.build.faults.push_back(*fault);
    c.threads = 1;
    c.builds = 2;
    c.workdir = workdir;
    return c;
  }

  // Walks with a session in `workdir` (resumed when `resume`); `script` answers each question
  // (given the node and how many times it was asked before), the proposal when it returns nullopt.
  Walked walk(const std::filesystem::path& workdir, bool resume,
              const std::function<std::optional<Decision>(const std::string& node, int times)>& script,
              bool with_session = true) {
    Walked walked;
    Result<TriageSession> session =
        resume ? TriageSession::open(workdir)
               : TriageSession::create(workdir, nlohmann::ordered_json::object(), engine::model_hash(model_));
    if (!session.ok()) {
      walked.result = session.status();
      return walked;
    }
    TriageConfig c = config(workdir);
    if (with_session) c.session = &*session;
    std::map<std::string, int> times;
    c.decide = [&](const FlowNode& node, const TriageStep& proposed) {
      walked.asked.push_back({node.id, proposed});
      const std::optional<Decision> d = script(node.id, times[node.id]++);
      return d ? *d : (*proposed.answer ? Decision::kYes : Decision::kNo);
    };
    c.on_undo = [&](const TriageUndo& undo) { walked.undos.push_back(undo); };
    walked.result = triage_headless(chart_, std::move(c), nullptr, &cancel_);
    return walked;
  }

  static std::vector<std::string> nodes(const std::vector<Asked>& asked) {
    std::vector<std::string> n;
    for (const Asked& a : asked) n.push_back(a.node);
    return n;
  }

  Flowchart chart_;
  Model model_;
  std::atomic<bool> cancel_{false};
};

TEST_F(UndoWalk, TwoUndosGoBackTwoQuestionsAndTheRetracedWalkProbesNothingAgain) {
  test::TempDir dir;
  const Walked whole = walk(dir / "whole", false, [](const std::string&, int) { return std::nullopt; });
  ASSERT_TRUE(whole.result.ok()) << whole.result.status().to_string();
  ASSERT_EQ(whole.result->outcome, "localized");

  // At extract, u: back to layerwise; there, u again: back to intermittent; then the proposals.
  const Walked undone = walk(dir / "w", false, [](const std::string& node, int times) -> std::optional<Decision> {
    if ((node == "extract" && times == 0) || (node == "layerwise" && times == 1)) return Decision::kUndo;
    return std::nullopt;
  });
  ASSERT_TRUE(undone.result.ok()) << undone.result.status().to_string();
  EXPECT_EQ(nodes(undone.asked), (std::vector<std::string>{"real_data", "intermittent", "layerwise", "extract",
                                                           "layerwise", "intermittent", "layerwise", "extract"}));
  // Each question asked again carries the measurement of its first (and only) probe.
  for (size_t i = 4; i < undone.asked.size(); ++i) {
    const Asked& again = undone.asked[i];
    const auto first =
        std::find_if(undone.asked.begin(), undone.asked.end(), [&](const Asked& a) { return a.node == again.node; });
    EXPECT_EQ(again.proposed.seconds, first->proposed.seconds) << again.node;
    EXPECT_EQ(again.proposed.evidence, first->proposed.evidence) << again.node;
    EXPECT_EQ(again.proposed.answer, first->proposed.answer) << again.node;
  }
  ASSERT_EQ(undone.undos.size(), 2u);
  EXPECT_EQ(undone.undos[0].at, "extract");
  ASSERT_EQ(undone.undos[0].undone.size(), 1u);
  EXPECT_EQ(undone.undos[0].undone[0].node, "layerwise");
  EXPECT_EQ(undone.undos[1].at, "layerwise");
  ASSERT_EQ(undone.undos[1].undone.size(), 1u);
  EXPECT_EQ(undone.undos[1].undone[0].node, "intermittent");
  EXPECT_EQ(undone.undos[1].undone[0].answer, std::optional<bool>(false));

  // The walk ends as the uninterrupted one, its counters included: the undone probes are not
  // counted twice, and the retraced steps are marked as taken again.
  const TriageResult& r = *undone.result;
  EXPECT_EQ(r.outcome, whole.result->outcome);
  EXPECT_EQ(r.culprit, whole.result->culprit);
  ASSERT_EQ(r.path.size(), whole.result->path.size());
  for (size_t i = 0; i < r.path.size(); ++i) {
    EXPECT_EQ(r.path[i].node, whole.result->path[i].node);
    EXPECT_EQ(r.path[i].answer, whole.result->path[i].answer) << i;
    EXPECT_EQ(r.path[i].checks, whole.result->path[i].checks) << i;
    EXPECT_EQ(r.path[i].builds, whole.result->path[i].builds) << i;
    EXPECT_EQ(untimed(r.path[i].evidence), untimed(whole.result->path[i].evidence)) << i;
    EXPECT_EQ(r.path[i].redone, r.path[i].node == "layerwise" || r.path[i].node == "extract") << r.path[i].node;
  }
  EXPECT_TRUE(std::filesystem::exists(r.bundle / "model.onnx"));

  // The session file keeps the undos; the report says them.
  const nlohmann::json state = nlohmann::json::parse(test::read_file(dir / "w/session.json"));
  ASSERT_EQ(state["undos"].size(), 2u);
  EXPECT_EQ(state["undos"][0]["at"], "extract");
  EXPECT_EQ(state["undos"][0]["back_to"], "layerwise");
  EXPECT_EQ(state["undos"][1]["back_to"], "intermittent");
  EXPECT_EQ(state["undos"][1]["undone"][0]["answer"], false);
  EXPECT_FALSE(state.contains("redo"));
  EXPECT_EQ(triage_report(r, chart_)["undos"].size(), 2u);
}

TEST_F(UndoWalk, AnotherAnswerAfterAnUndoProbesAnewWithTheHandOnOfThatQuestion) {
  test::TempDir dir;
  // extract proposes yes (conv2 fails alone: culprit and failing case set); no overrides it and
  // the reduction runs, pinning its own culprit and failing case; at reduce, u goes back to
  // extract, asked from its evidence; yes ends there. The culprit and the bundle must be
  // extract's, restored from the session, not the reduction's left in memory.
  const Walked walked = walk(dir / "w", false, [](const std::string& node, int times) -> std::optional<Decision> {
    if (node == "extract" && times == 0) return Decision::kNo;
    if (node == "reduce") return Decision::kUndo;
    if (node == "extract") return Decision::kYes;
    return std::nullopt;
  });
  ASSERT_TRUE(walked.result.ok()) << walked.result.status().to_string();
  EXPECT_EQ(nodes(walked.asked),
            (std::vector<std::string>{"real_data", "intermittent", "layerwise", "extract", "reduce", "extract"}));
  ASSERT_EQ(walked.undos.size(), 1u);
  EXPECT_EQ(walked.undos[0].undone.front().node, "extract");
  EXPECT_TRUE(walked.undos[0].undone.front().overridden);
  const TriageResult& r = *walked.result;
  EXPECT_EQ(r.outcome, "localized");
  EXPECT_EQ(r.culprit, "layer 'conv2'");
  std::vector<std::string> path;
  for (const TriageStep& s : r.path) path.push_back(s.node);
  EXPECT_EQ(path,
            (std::vector<std::string>{"sanitize", "real_data", "intermittent", "layerwise", "extract", "minimal"}));
  EXPECT_FALSE(r.path[4].overridden);
  // The bundle holds extract's one-node subgraph.
  Result<Model> bundled = load_model(r.bundle / "model.onnx");
  ASSERT_TRUE(bundled.ok()) << bundled.status().to_string();
  ASSERT_EQ(bundled->graph.nodes.size(), 1u);
  EXPECT_EQ(bundled->graph.nodes[0].name, "conv2");

  // Answered differently, the question probes what follows anew: nothing is taken again.
  const Walked other = walk(dir / "other", false, [](const std::string& node, int times) -> std::optional<Decision> {
    if (node == "extract" && times == 0) return Decision::kUndo;
    if (node == "layerwise" && times == 1) return Decision::kNo;
    return std::nullopt;
  });
  ASSERT_TRUE(other.result.ok()) << other.result.status().to_string();
  EXPECT_EQ(nodes(other.asked),
            (std::vector<std::string>{"real_data", "intermittent", "layerwise", "extract", "layerwise", "reduce"}));
  for (const TriageStep& s : other.result->path) EXPECT_FALSE(s.redone) << s.node;
  EXPECT_EQ(other.result->outcome, "localized");
  EXPECT_NE(other.result->culprit, "layer 'conv2'");  // the reduction's nodes
}

TEST_F(UndoWalk, NothingToUndoAsksTheSameQuestionAgain) {
  test::TempDir dir;
  for (const bool with_session : {true, false}) {
    SCOPED_TRACE(with_session);
    // u at the first question (with a session), and anywhere without one: the same question
    // comes back, and no undo is reported.
    const Walked walked = walk(
        dir / (with_session ? "s" : "n"), false,
        [&](const std::string& node, int times) -> std::optional<Decision> {
          if (times == 0 && (node == "real_data" || (!with_session && node == "layerwise"))) {
            return Decision::kUndo;
          }
          return std::nullopt;
        },
        with_session);
    ASSERT_TRUE(walked.result.ok()) << walked.result.status().to_string();
    EXPECT_TRUE(walked.undos.empty());
    EXPECT_EQ(walked.asked[0].node, "real_data");
    EXPECT_EQ(walked.asked[1].node, "real_data");
    EXPECT_EQ(walked.asked[0].proposed.seconds, walked.asked[1].proposed.seconds);
    EXPECT_EQ(walked.result->outcome, "localized");
  }
}

TEST_F(UndoWalk, AResumeAfterAnUndoContinuesAtTheQuestionAskedAgain) {
  test::TempDir dir;
  // The work folder as a crash leaves it while the question an undo went back to waits.
  const Walked first = walk(dir / "w", false, [&](const std::string& node, int times) -> std::optional<Decision> {
    if (node == "extract" && times == 0) return Decision::kUndo;
    if (node == "layerwise" && times == 1) {
      std::filesystem::copy(dir / "w", dir / "crashed", std::filesystem::copy_options::recursive);
    }
    return std::nullopt;
  });
  ASSERT_TRUE(first.result.ok()) << first.result.status().to_string();
  const nlohmann::json state = nlohmann::json::parse(test::read_file(dir / "crashed/session.json"));
  EXPECT_EQ(state["pending"]["node"], "layerwise");
  EXPECT_EQ(state["next"], "layerwise");
  ASSERT_EQ(state["redo"].size(), 1u);
  EXPECT_EQ(state["redo"][0]["node"], "extract");
  EXPECT_EQ(state["undos"].size(), 1u);
  EXPECT_EQ(state["path"].size(), 3u);  // sanitize, real_data, intermittent

  const Walked rest = walk(dir / "crashed", true, [](const std::string&, int) { return std::nullopt; });
  ASSERT_TRUE(rest.result.ok()) << rest.result.status().to_string();
  // layerwise is asked again and extract taken from its record, neither probed.
  EXPECT_EQ(nodes(rest.asked), (std::vector<std::string>{"layerwise", "extract"}));
  EXPECT_EQ(rest.asked[0].proposed.seconds, state["pending"]["seconds"].get<double>());
  EXPECT_EQ(rest.asked[1].proposed.seconds, state["redo"][0]["seconds"].get<double>());
  EXPECT_TRUE(rest.asked[1].proposed.redone);
  EXPECT_EQ(rest.result->outcome, first.result->outcome);
  EXPECT_EQ(rest.result->culprit, first.result->culprit);
  ASSERT_EQ(rest.result->path.size(), first.result->path.size());
  for (size_t i = 0; i < rest.result->path.size(); ++i) {
    EXPECT_EQ(rest.result->path[i].node, first.result->path[i].node);
    EXPECT_EQ(untimed(rest.result->path[i].evidence), untimed(first.result->path[i].evidence)) << i;
  }
  EXPECT_EQ(rest.result->undos.size(), 1u);
  EXPECT_TRUE(rest.result->path[4].redone);
  // The session file keeps which steps were taken again.
  const nlohmann::json ended = nlohmann::json::parse(test::read_file(dir / "w/session.json"));
  EXPECT_FALSE(ended["path"][3].value("redone", false));
  EXPECT_TRUE(ended["path"][4].value("redone", false));
}

TEST_F(UndoWalk, ACancelWhileAQuestionWaitsLeavesItUnanswered) {
  test::TempDir dir;
  // Cancelled (the UI quit) while the layer-wise question waits: the hook's return is no answer.
  const Walked first = walk(dir / "w", false, [&](const std::string& node, int) -> std::optional<Decision> {
    if (node == "layerwise") cancel_ = true;
    return std::nullopt;
  });
  ASSERT_FALSE(first.result.ok());
  EXPECT_EQ(first.result.status().code(), StatusCode::kCancelled);
  const nlohmann::json state = nlohmann::json::parse(test::read_file(dir / "w/session.json"));
  EXPECT_EQ(state["pending"]["node"], "layerwise");
  EXPECT_EQ(state["path"].size(), 3u);
  cancel_ = false;
  const Walked rest = walk(dir / "w", true, [](const std::string&, int) { return std::nullopt; });
  ASSERT_TRUE(rest.result.ok()) << rest.result.status().to_string();
  EXPECT_EQ(nodes(rest.asked), (std::vector<std::string>{"layerwise", "extract"}));
  EXPECT_EQ(rest.result->outcome, "localized");
}

}  // namespace
}  // namespace vn::flow
