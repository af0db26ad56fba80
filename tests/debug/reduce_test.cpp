// SPDX-License-Identifier: Apache-2.0
// The reducer's candidates (boundaries, feeds from every reference run, validity, frozen shape
// tensors) and its searches (checks needed, fused failures, replays), on small models. Searches
// are driven by oracles that fail exactly the candidates holding the faulty nodes, which is what
// an engine fault does (the fixture reductions in reduce_models.cpp use the real engine).
#include "core/debug/reduce.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/debug/ddmin_bound.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"

namespace vn::debug {
namespace {

// A chain of `n` float nodes, each scaling by 1.01: t0 = x*s, t1 = t0*s, ...
Model chain(int n) {
  std::string body = "  s = Constant <value = float {1.01}> ()\n";
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = i + 1 == n ? "y" : "t" + std::to_string(i);
    body += "  " + out + " = Mul(" + prev + ", s)\n";
    prev = out;
  }
  auto model = parse_model_text("<ir_version: 8, opset_import: [\"\" : 13]>\nchain (float[2,3] x) => (float[2,3] y) {\n" +
                                body + "}\n");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(model).value();
}

// Residual blocks with a shape computation: a = x*2; b = Relu(a); c = b + x; shape(c) feeds a
// Reshape of c; y = Sigmoid(r).
Model branchy() {
  auto model = parse_model_text(R"(<ir_version: 8, opset_import: ["" : 13]>
branchy (float[2,3] x) => (float[2,3] y) {
  two = Constant <value = float {2.0}> ()
  a = Mul(x, two)
  b = Relu(a)
  c = Add(b, x)
  shape = Shape(c)
  r = Reshape(c, shape)
  y = Sigmoid(r)
}
)");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(model).value();
}

TensorMap feed(float base) {
  return TensorMap{{"x", Tensor::from_vector<float>({2, 3}, {base, -base, 2 * base, 0.5f, -1, 3})}};
}

int64_t node_named(const Reducer& r, const std::string& op) {
  const auto& nodes = r.model().graph.nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].op_type == op) return static_cast<int64_t>(i);
  }
  return -1;
}

// Bad exactly when the candidate holds every node of `faulty`; counts the checks.
struct Oracle {
  std::vector<int64_t> faulty;
  int calls = 0;
  ReduceOracle fn() {
    return [this](const ReduceCandidate& c, const std::string&) -> Result<CheckResult> {
      ++calls;
      CheckResult r;
      const bool holds = std::all_of(faulty.begin(), faulty.end(), [&](int64_t k) {
        return std::find(c.nodes.begin(), c.nodes.end(), k) != c.nodes.end();
      });
      r.verdict = holds ? Verdict::kBad : Verdict::kGood;
      return r;
    };
  }
};

TEST(Reduce, BoundaryInputsCarryEveryFeedsReferenceValues) {
  auto r = Reducer::create(branchy(), {feed(1), feed(4)}, 1);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->node_count(), 6);  // the Constant is an initializer now
  const ReduceCandidate relu = r->candidate_of({node_named(*r, "Relu")});
  EXPECT_EQ(relu.inputs, std::vector<std::string>{"a"});
  EXPECT_EQ(relu.outputs, std::vector<std::string>{"b"});
  const std::vector<TensorMap> feeds = r->build_feeds(relu);
  ASSERT_EQ(feeds.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const float base = i == 0 ? 1.0f : 4.0f;
    const Tensor* a = feeds[i].find("a");
    ASSERT_NE(a, nullptr);
    EXPECT_FLOAT_EQ(a->data<float>()[0], 2 * base);  // a = 2x of that feed, not of the first
    EXPECT_FLOAT_EQ(a->data<float>()[2], 4 * base);
  }
  const std::vector<TensorMap> expected = r->reference_outputs(relu);
  EXPECT_FLOAT_EQ(expected[1].find("b")->data<float>()[0], 8.0f);
  EXPECT_FLOAT_EQ(expected[1].find("b")->data<float>()[1], 0.0f);
}

TEST(Reduce, OutputsAreTheTensorsThatFlowOut) {
  auto r = Reducer::create(branchy(), {feed(1)}, 1);
  ASSERT_TRUE(r.ok());
  // a feeds Relu inside and nothing outside; b flows out to Add.
  const ReduceCandidate mul_relu = r->candidate_of({node_named(*r, "Mul"), node_named(*r, "Relu")});
  EXPECT_EQ(mul_relu.outputs, std::vector<std::string>{"b"});
  EXPECT_EQ(mul_relu.inputs, std::vector<std::string>{"x"});
  // c is read inside (by Shape) and outside (by Reshape): still an output.
  const ReduceCandidate add_shape = r->candidate_of({node_named(*r, "Add"), node_named(*r, "Shape")});
  EXPECT_NE(std::find(add_shape.outputs.begin(), add_shape.outputs.end(), "c"), add_shape.outputs.end());
}

TEST(Reduce, EveryCandidateIsAValidModel) {
  auto r = Reducer::create(branchy(), {feed(1), feed(2)}, 1);
  ASSERT_TRUE(r.ok());
  const int64_t n = r->node_count();
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t b = a; b < n; ++b) {
      std::vector<int64_t> nodes;
      for (int64_t v = a; v <= b; ++v) nodes.push_back(v);
      const ReduceCandidate c = r->candidate_of(nodes);
      auto model = r->build_model(c);
      ASSERT_TRUE(model.ok()) << model.status().to_string();
      for (const ValueInfo& v : model->graph.inputs) EXPECT_TRUE(v.dtype && v.has_static_shape()) << v.name;
      for (const ValueInfo& v : model->graph.outputs) EXPECT_TRUE(v.dtype && v.has_static_shape()) << v.name;
      auto bytes = serialize_model(*model);
      ASSERT_TRUE(bytes.ok());
      auto loaded = load_model_from_bytes(*bytes, "");  // through the ONNX checker
      EXPECT_TRUE(loaded.ok()) << "[" << a << ", " << b << "]: " << loaded.status().to_string();
    }
  }
}

TEST(Reduce, ShapeTensorsTheSameInEveryFeedAreFrozen) {
  auto r = Reducer::create(branchy(), {feed(1), feed(2)}, 1);
  ASSERT_TRUE(r.ok());
  const ReduceCandidate reshape = r->candidate_of({node_named(*r, "Reshape")});
  EXPECT_EQ(reshape.inputs, (std::vector<std::string>{"c", "shape"}));
  auto model = r->build_model(reshape);
  ASSERT_TRUE(model.ok());
  ASSERT_EQ(model->graph.inputs.size(), 1u);
  EXPECT_EQ(model->graph.inputs[0].name, "c");
  EXPECT_NE(model->graph.find_initializer("shape"), nullptr);
}

TEST(Reduce, DdminFindsOneNodeOfAChainInLogChecks) {
  auto r = Reducer::create(chain(100), {feed(1)}, 1);
  ASSERT_TRUE(r.ok());
  for (int64_t k : {0, 1, 37, 64, 98, 99}) {
    Oracle oracle{{k}};
    DebugReplay replay;
    ReduceOptions options;
    options.mode = ReduceMode::kDdmin;
    auto result = r->reduce(options, replay, oracle.fn(), nullptr);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->minimal.nodes, std::vector<int64_t>{k});
    EXPECT_LE(result->checks, 7 + 1) << k;  // ceil(log2 100) + the node alone
    EXPECT_EQ(result->checks, oracle.calls);
  }
}

TEST(Reduce, DdminsChecksLeftBoundWhatComesWhateverTheVerdicts) {
  // Faults in one node, in pairs, and oracles answering at random (seeded): at every check the
  // checks done plus the bound it reports cover every check the reduction made.
  auto r = Reducer::create(chain(12), {feed(1)}, 1);
  ASSERT_TRUE(r.ok());
  std::vector<ReduceOracle> oracles;
  std::vector<Oracle> faulty = {Oracle{{0}}, Oracle{{5}}, Oracle{{11}}, Oracle{{3, 4}}, Oracle{{2, 9}}};
  for (Oracle& o : faulty) oracles.push_back(o.fn());
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    oracles.push_back([state = seed](const ReduceCandidate&, const std::string&) mutable -> Result<CheckResult> {
      state = state * 1664525u + 1013904223u;
      CheckResult c;
      c.verdict = (state >> 16) & 1 ? Verdict::kBad : Verdict::kGood;
      return c;
    });
  }
  for (size_t i = 0; i < oracles.size(); ++i) {
    std::vector<ReduceProgress> seen;
    DebugReplay replay;
    ReduceOptions options;
    options.mode = ReduceMode::kDdmin;
    auto result = r->reduce(options, replay, oracles[i], [&](const ReduceIteration&, const ReduceProgress& p) {
      seen.push_back(p);
      return Status::OK();
    });
    ASSERT_TRUE(result.ok());
    for (const ReduceProgress& p : seen) {
      ASSERT_GE(p.checks_left, 0) << "12 nodes are within the table";
      EXPECT_GE(p.checks_done + p.checks_left, result->checks) << "oracle " << i << ", check " << p.checks_done;
    }
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back().checks_done, result->checks);
  }
  // Worst cases the table holds: a pair needs at most 2 checks, three nodes 7; none for one node,
  // and no bound past the table.
  const DdminBound bound(2000);
  EXPECT_EQ(bound.checks(1, 2), 0);
  EXPECT_EQ(bound.checks(2, 2), 2);
  EXPECT_EQ(bound.checks(3, 2), 7);
  EXPECT_EQ(bound.checks(DdminBound::kLimit + 1, 2), std::nullopt);
  EXPECT_EQ(bound.after(3, DdminBound::kLimit + 1), -1);
}

TEST(Reduce, BisectMatchesPolygraphysMarkersOnAChain) {
  auto r = Reducer::create(chain(100), {feed(1)}, 1);
  ASSERT_TRUE(r.ok());
  for (int64_t k : {0, 50, 99}) {
    Oracle oracle{{k}};
    DebugReplay replay;
    auto result = r->reduce(ReduceOptions{}, replay, oracle.fn(), nullptr);
    ASSERT_TRUE(result.ok());
    // Polygraphy never tests marker 0 of the outputs phase, so a fault there ends as 2 nodes.
    EXPECT_EQ(result->minimal.nodes.size(), k == 0 ? 2u : 1u) << k;
    EXPECT_NE(std::find(result->minimal.nodes.begin(), result->minimal.nodes.end(), k), result->minimal.nodes.end());
    EXPECT_LE(result->checks, 2 * 7) << k;
  }
}

TEST(Reduce, FailuresNeedingTwoNodesKeepBoth) {
  // A fused pattern: only candidates holding both nodes fail.
  auto r = Reducer::create(chain(40), {feed(1)}, 1);
  ASSERT_TRUE(r.ok());
  for (ReduceMode mode : {ReduceMode::kBisect, ReduceMode::kLinear, ReduceMode::kDdmin}) {
    Oracle oracle{{20, 21}};
    DebugReplay replay;
    ReduceOptions options;
    options.mode = mode;
    auto result = r->reduce(options, replay, oracle.fn(), nullptr);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->minimal.nodes, (std::vector<int64_t>{20, 21})) << reduce_mode_name(mode);
    ASSERT_TRUE(result->min_good.has_value());
    EXPECT_EQ(result->min_good->nodes.size(), 1u);  // one of the pair alone passes
  }
}

TEST(Reduce, AReplayDrivesTheSameSearchWithoutChecks) {
  auto r = Reducer::create(branchy(), {feed(1)}, 1);
  ASSERT_TRUE(r.ok());
  for (ReduceMode mode : {ReduceMode::kBisect, ReduceMode::kLinear, ReduceMode::kDdmin}) {
    Oracle oracle{{node_named(*r, "Relu")}};
    DebugReplay replay;
    ReduceOptions options;
    options.mode = mode;
    auto first = r->reduce(options, replay, oracle.fn(), nullptr);
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(static_cast<int64_t>(replay.size()), first->checks);
    ReduceOracle forbidden = [](const ReduceCandidate&, const std::string& key) -> Result<CheckResult> {
      ADD_FAILURE() << "checked " << key << " again";
      return CheckResult{};
    };
    std::vector<std::string> keys;
    auto again = r->reduce(options, replay, forbidden, [&](const ReduceIteration& it, const ReduceProgress&) {
      EXPECT_TRUE(it.replayed);
      keys.push_back(it.key);
      return Status::OK();
    });
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->checks, 0);
    EXPECT_EQ(again->minimal, first->minimal);
    EXPECT_EQ(keys.size(), replay.size());
  }
}

TEST(Reduce, UnresolvedChecksAreNotFailures) {
  auto r = Reducer::create(chain(16), {feed(1)}, 1);
  ASSERT_TRUE(r.ok());
  // Every candidate crashes the check, except that those holding node 9 fail.
  ReduceOracle oracle = [](const ReduceCandidate& c, const std::string&) -> Result<CheckResult> {
    CheckResult result;
    result.verdict = std::find(c.nodes.begin(), c.nodes.end(), 9) != c.nodes.end() ? Verdict::kBad : Verdict::kUnresolved;
    return result;
  };
  DebugReplay replay;
  ReduceOptions options;
  options.mode = ReduceMode::kDdmin;
  auto result = r->reduce(options, replay, oracle, nullptr);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->minimal.nodes, std::vector<int64_t>{9});
  EXPECT_FALSE(result->min_good.has_value());  // nothing passed
}

TEST(Reduce, NeedsFeeds) { EXPECT_FALSE(Reducer::create(chain(3), {}, 1).ok()); }

}  // namespace
}  // namespace vn::debug
