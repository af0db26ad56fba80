// SPDX-License-Identifier: Apache-2.0
// Layer-wise comparison of the reference and the engine: pairing by name, streaming memory,
// local errors and the culprit they name, the first NaN/Inf layer, errors and cancellation.
#include "core/compare/layerwise.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "core/engine/engine_backend.h"
#include "core/ref/reference_backend.h"
#include "tests/engine/engine_test_util.h"

namespace vn {
namespace {

using engine::test::make_model;
using engine::test::random_tensor;

// A chain of `n` elementwise nodes on a [1, 64, 64, 64] tensor (1 MiB each): t0 = x * 1.01,
// t_i = Relu(t_{i-1}) or t_{i-1} + 0.5 alternating, the last one the graph output.
Model chain_model(int n) {
  std::string body;
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = i == n - 1 ? "y" : "t" + std::to_string(i);
    if (i % 2 == 0) {
      body += "  " + out + " = Relu(" + prev + ")\n";
    } else {
      body += "  " + out + " = Add(" + prev + ", half)\n";
    }
    prev = out;
  }
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 13]>
chain (float[1,64,64,64] x) => (float[1,64,64,64] y) {
  half = Constant <value = float {0.5}> ()
)" + body + "}\n";
  return make_model(text);
}

// The engine's name for the node producing `tensor`.
std::string producer(const Model& model, const std::string& tensor) {
  return node_label(model.graph, GraphIndex(model.graph).producer(tensor));
}

engine::EngineOptions engine_options(const std::vector<std::string>& faults) {
  engine::EngineOptions options;
  options.build.deterministic = true;
  for (const std::string& f : faults) {
    Result<engine::FaultSpec> spec = engine::parse_fault(f);
    EXPECT_TRUE(spec.ok()) << spec.status().to_string();
    if (spec.ok()) options.build.faults.push_back(*spec);
  }
  return options;
}

PrepareOptions marked_all() {
  PrepareOptions prep;
  prep.mark_all = true;
  return prep;
}

// A reference and an engine with `faults`, both prepared on `model` (every tensor marked unless
// told otherwise), and a feed for the chain models.
struct Pair {
  ref::ReferenceBackend ref;
  engine::EngineBackend eng;
  TensorMap feeds;

  explicit Pair(const Model& model, const std::vector<std::string>& faults = {}, uint32_t seed = 3,
                const PrepareOptions& ref_prep = marked_all(), const PrepareOptions& eng_prep = marked_all())
      : eng(engine_options(faults)), feeds{{"x", random_tensor({1, 64, 64, 64}, seed)}} {
    const Status r = ref.prepare(model, ref_prep);
    EXPECT_TRUE(r.ok()) << r.to_string();
    const Status e = eng.prepare(model, eng_prep);
    EXPECT_TRUE(e.ok()) << e.to_string();
  }
};

Result<LayerwiseComparison> compare(const Model& model, const std::vector<std::string>& faults, bool local) {
  Pair p(model, faults, 7);
  LayerwiseOptions options;
  options.local_errors = local;
  return compare_layerwise(p.ref, p.eng, p.feeds, options);
}

TEST(Layerwise, CleanEnginePassesEveryTensorPairedByName) {
  Model model = chain_model(8);
  Result<LayerwiseComparison> r = compare(model, {}, true);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->tensors.size(), 8u);
  EXPECT_TRUE(r->passed());
  EXPECT_EQ(r->tensors.front().name, "t0");
  EXPECT_EQ(r->tensors.back().name, "y");
  EXPECT_FALSE(r->first_culprit);
  EXPECT_FALSE(r->first_nonfinite);
  ASSERT_EQ(r->layers.size(), 8u);
  for (const LayerComparison& lc : r->layers) {
    ASSERT_EQ(lc.local.size(), 1u) << lc.layer.name;
    EXPECT_TRUE(lc.local[0].passed);
  }
}

TEST(Layerwise, LocalErrorsNameTheFaultyLayer) {
  Model model = chain_model(12);
  // The Add producing t5 scales its output by 1.001: every later tensor fails too.
  const std::string node = producer(model, "t5");
  Result<LayerwiseComparison> r = compare(model, {"layer=" + node + ",kind=scale,factor=1.001"}, true);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE(r->passed());
  ASSERT_TRUE(r->first_culprit);
  EXPECT_EQ(r->layers[*r->first_culprit].layer.outputs, std::vector<std::string>{"t5"});
  EXPECT_EQ(r->layers[*r->first_culprit].rank, 1);
  EXPECT_GT(r->layers[*r->first_culprit].local_excess, 1.0);
  // Downstream layers compute exactly what the reference computes from the same inputs.
  for (size_t j = *r->first_culprit + 1; j < r->layers.size(); ++j) {
    EXPECT_FALSE(r->layers[j].introduces) << r->layers[j].layer.name;
    EXPECT_LE(r->layers[j].local_excess, 1.0) << r->layers[j].layer.name;
    EXPECT_FALSE(r->layers[j].inputs_within) << r->layers[j].layer.name;
  }
  EXPECT_EQ(r->ranking().front(), *r->first_culprit);
}

TEST(Layerwise, AccumulatedErrorsAloneFindTheFirstFailingLayer) {
  Model model = chain_model(12);
  const std::string node = producer(model, "t8");
  Result<LayerwiseComparison> r = compare(model, {"layer=" + node + ",kind=offset,magnitude=0.01"}, false);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(r->first_culprit);
  EXPECT_EQ(r->layers[*r->first_culprit].layer.outputs, std::vector<std::string>{"t8"});
  EXPECT_EQ(r->layers[*r->first_culprit].local_excess, -1);
  EXPECT_TRUE(r->layers[*r->first_culprit].local.empty());
}

TEST(Layerwise, FirstNonFiniteLayerIsNamed) {
  Model model = chain_model(10);
  const std::string node = producer(model, "t3");
  Result<LayerwiseComparison> r = compare(model, {"layer=" + node + ",kind=nan"}, true);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(r->first_nonfinite);
  EXPECT_EQ(r->layers[*r->first_nonfinite].layer.outputs, std::vector<std::string>{"t3"});
  ASSERT_TRUE(r->first_culprit);
  EXPECT_EQ(*r->first_culprit, *r->first_nonfinite);
  EXPECT_TRUE(std::isinf(tolerance_excess(r->tensors[3])));
}

TEST(Layerwise, StreamingHoldsAFewTensorsNotTheWholeRun) {
  // 40 tensors of 1 MiB: keeping both runs' activations would take 80 MiB. Streamed, the runs
  // hold what one side produced ahead of the other and the pairs waiting to be compared, a few
  // MiB each (the reference's values for the layers run alone count once more).
  Model model = chain_model(40);
  for (bool local : {false, true}) {
    Result<LayerwiseComparison> r = compare(model, {}, local);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->tensors.size(), 40u);
    EXPECT_LE(r->peak_held_bytes, size_t{local ? 20 : 12} << 20) << "local=" << local;
    EXPECT_GE(r->peak_held_bytes, size_t{1} << 20) << "local=" << local;
  }
}

TEST(Layerwise, TheRunsGoSideBySideEachWithItsShareOfTheThreads) {
  // Both backends prepared for four threads, three to share: the reference runs on the calling
  // thread with two, the engine on another thread with one.
  Model model = chain_model(6);
  PrepareOptions four = marked_all();
  four.num_threads = 4;
  Pair p(model, {}, 3, four, four);
  LayerwiseOptions options;
  options.threads = 3;
  std::mutex mu;
  std::set<std::thread::id> ref_threads, test_threads;
  std::set<int> ref_omp, test_omp;
  options.on_tensor = [&](bool test, const std::string&, const Tensor&) {
    std::lock_guard<std::mutex> lock(mu);
    (test ? test_threads : ref_threads).insert(std::this_thread::get_id());
    (test ? test_omp : ref_omp).insert(omp_get_max_threads());
  };
  Result<LayerwiseComparison> r = compare_layerwise(p.ref, p.eng, p.feeds, options);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->tensors.size(), 6u);
  EXPECT_EQ(ref_threads, (std::set<std::thread::id>{std::this_thread::get_id()}));
  ASSERT_EQ(test_threads.size(), 1u);
  EXPECT_NE(*test_threads.begin(), std::this_thread::get_id());
  EXPECT_EQ(ref_omp, (std::set<int>{2}));
  EXPECT_EQ(test_omp, (std::set<int>{1}));
}

TEST(Layerwise, FoldedConstantsAreListedAfterTheLayersOutputs) {
  // The engine folds Transpose(W) and reports it before its first layer; the comparisons are
  // listed in the order the layers produced their outputs, the folded weights last.
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,64,64,64] x, float[64,64] w) => (float[1,64,64,64] y) {
  wt = Transpose(w)
  m = MatMul(x, wt)
  y = Relu(m)
}
)";
  Model model = make_model(text, {{"w", random_tensor({64, 64}, 9)}});
  Pair p(model);
  Result<LayerwiseComparison> r = compare_layerwise(p.ref, p.eng, p.feeds, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::vector<std::string> names;
  for (const TensorComparison& t : r->tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"m", "y", "wt"}));
}

TEST(Layerwise, ViewsOfTheModelsWeightsAreNotCountedAsHeld) {
  // Exporters write shared weights as Identity nodes of one initializer: the reference reports
  // the Identity's output as it runs, the engine folds it into a constant. It is the model's own
  // 1 MiB, held at no cost; still compared. Every other tensor is a few bytes.
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,1,1] x, float[1,64,64,64] w) => (float[1,1,1,1] y) {
  shared = Identity(w)
  t0 = ReduceMax(shared)
  y = Add(x, t0)
}
)";
  Model model = make_model(text, {{"w", random_tensor({1, 64, 64, 64}, 9)}});
  Pair p(model);
  p.feeds = TensorMap{{"x", random_tensor({1, 1, 1, 1}, 3)}};
  Result<LayerwiseComparison> r = compare_layerwise(p.ref, p.eng, p.feeds, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  bool compared = false;
  for (const TensorComparison& t : r->tensors) compared = compared || (t.name == "shared" && t.passed);
  EXPECT_TRUE(compared);
  EXPECT_LT(r->peak_held_bytes, size_t{1} << 10);
}

TEST(Layerwise, UnmarkedTensorsAreListedNeverPairedByPosition) {
  Model model = chain_model(6);
  PrepareOptions some;
  some.outputs = {"t2"};
  Pair p(model, {}, 3, marked_all(), some);
  Result<LayerwiseComparison> r = compare_layerwise(p.ref, p.eng, p.feeds, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::vector<std::string> compared;
  for (const TensorComparison& c : r->tensors) compared.push_back(c.name);
  EXPECT_EQ(compared, (std::vector<std::string>{"t2", "y"}));
  EXPECT_EQ(r->only_in_ref, (std::vector<std::string>{"t0", "t1", "t3", "t4"}));
  EXPECT_TRUE(r->only_in_test.empty());
}

TEST(Layerwise, OnTensorSeesEveryReturnedTensorOfBothSides) {
  Model model = chain_model(5);
  Pair p(model);
  TensorMap seen_ref, seen_test;
  LayerwiseOptions options;
  options.on_tensor = [&](bool test, const std::string& name, const Tensor& t) { (test ? seen_test : seen_ref).set(name, t); };
  ASSERT_TRUE(compare_layerwise(p.ref, p.eng, p.feeds, options).ok());
  EXPECT_EQ(seen_ref.size(), 5u);
  EXPECT_EQ(seen_test.size(), 5u);
  ASSERT_NE(seen_ref.find("y"), nullptr);
  EXPECT_TRUE(seen_ref.find("y")->same_as(*seen_test.find("y")));
}

TEST(Layerwise, LocalErrorsNeedABackendThatRunsLayersAlone) {
  Model model = chain_model(3);
  ref::ReferenceBackend a, b;
  ASSERT_TRUE(a.prepare(model, marked_all()).ok());
  ASSERT_TRUE(b.prepare(model, marked_all()).ok());
  TensorMap feeds{{"x", random_tensor({1, 64, 64, 64}, 3)}};
  LayerwiseOptions options;
  options.local_errors = true;
  Result<LayerwiseComparison> r = compare_layerwise(a, b, feeds, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  // Without local errors two references compare layer by layer, exactly.
  Result<LayerwiseComparison> plain = compare_layerwise(a, b, feeds, {});
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_TRUE(plain->passed());
  for (const TensorComparison& c : plain->tensors) EXPECT_EQ(c.abs_max, 0.0);
}

TEST(Layerwise, CancellationStopsBothRunsWithoutHanging) {
  Model model = chain_model(6);
  Pair p(model);
  std::atomic<bool> cancel{true};
  LayerwiseOptions options;
  options.cancel = &cancel;
  Result<LayerwiseComparison> r = compare_layerwise(p.ref, p.eng, p.feeds, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  // A bad feed fails the reference first; the engine must not wait for it forever.
  TensorMap bad{{"x", random_tensor({1, 64, 64, 32}, 3)}};
  Result<LayerwiseComparison> failed = compare_layerwise(p.ref, p.eng, bad, {});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kShapeMismatch);
}

// A backend under test that runs its layers slowly and cannot run any alone: the reference gets
// ahead and queues several layers to run alone before the first of them fails.
class SlowFailingAlone final : public Backend {
 public:
  std::string name() const override { return "slow"; }
  Support supports(const Node& node, int64_t opset) const override { return inner_.supports(node, opset); }
  const std::vector<LayerInfo>* layers() const override { return &layers_; }
  Result<std::vector<Tensor>> run_layer_alone(size_t index, std::span<const Tensor* const>) override {
    return make_error(StatusCode::kInternal, "layer {} cannot run alone", index);
  }

 protected:
  Status prepare_impl(const Model& model, const PrepareOptions& options) override {
    VN_ASSIGN_OR_RETURN(layers_, graph_layers(model.graph));
    return inner_.prepare(model, options);
  }
  Result<TensorMap> run_impl(const TensorMap& feeds, const RunOptions& options) override {
    RunOptions slow = options;
    slow.observer = [&](int64_t node, const Node& n, const TensorMap& produced) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return options.observer(node, n, produced);
    };
    return inner_.run(feeds, slow);
  }

 private:
  ref::ReferenceBackend inner_;
  std::vector<LayerInfo> layers_;
};

TEST(Layerwise, ALayerFailingAloneStopsTheComparisonWithLayersStillQueued) {
  // Tensors of a few bytes: the reference is never far enough ahead to wait, so every layer is
  // queued to run alone by the time the test reports its first.
  Model model = make_model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4] x) => (float[4] y) {
  a = Relu(x)
  b = Neg(a)
  c = Relu(b)
  y = Neg(c)
}
)");
  ref::ReferenceBackend ref;
  SlowFailingAlone test;
  ASSERT_TRUE(ref.prepare(model, marked_all()).ok());
  ASSERT_TRUE(test.prepare(model, marked_all()).ok());
  LayerwiseOptions options;
  options.local_errors = true;
  Result<LayerwiseComparison> r = compare_layerwise(ref, test, TensorMap{{"x", random_tensor({4}, 3)}}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("cannot run alone"), std::string::npos) << r.status().to_string();
}

TEST(Layerwise, FromSavedResultsRanksByAccumulatedError) {
  Model model = chain_model(6);
  TensorMap feeds{{"x", random_tensor({1, 64, 64, 64}, 5)}};
  const TensorMap ref = engine::test::run_reference(model, feeds, {"t0", "t1", "t2", "t3", "t4"});
  TensorMap test;
  for (const NamedTensor& t : ref) {
    Tensor copy = t.tensor.clone();
    // t3 onwards is off by 1e-3: t3 introduced it.
    if (t.name == "t3" || t.name == "t4" || t.name == "y") {
      for (float& v : copy.mutable_values<float>()) v += 1e-3f;
    }
    test.set(t.name, copy);
  }
  Result<LayerwiseComparison> r = compare_layerwise_results(test, ref, model.graph, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(r->first_culprit);
  EXPECT_EQ(r->layers[*r->first_culprit].layer.outputs, std::vector<std::string>{"t3"});
  EXPECT_FALSE(r->local_errors);
}

TEST(Layerwise, ToleranceExcessIsOneAtTheBoundary) {
  TensorComparison c;
  c.tolerance = {.atol = 1e-3, .rtol = 1e-2};
  c.passed = true;
  c.min_atol = 1e-3;
  c.min_rtol = 1e-1;
  EXPECT_DOUBLE_EQ(tolerance_excess(c), 1.0);
  c.min_atol = 4e-3;
  c.min_rtol = 3e-2;
  c.passed = false;
  EXPECT_DOUBLE_EQ(tolerance_excess(c), 3.0);
  c.mismatch = "shapes differ";
  EXPECT_TRUE(std::isinf(tolerance_excess(c)));
}

}  // namespace
}  // namespace vn
