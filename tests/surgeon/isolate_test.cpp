// SPDX-License-Identifier: Apache-2.0
// Isolated-layers models: fed with the reference's own intermediate tensors, every isolated node
// reproduces its original output bit for bit, whole or in chunks.
#include "core/surgeon/isolate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "core/data/synthetic.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/process.h"

namespace vn::surgeon {
namespace {

using engine::test::make_model;
using engine::test::random_tensor;
using ::testing::HasSubstr;

const std::string kDemo = std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx";

// Two branches joining, a Constant, an If whose branches read outer values and an initializer, and
// a tensor already named like an isolated input.
constexpr std::string_view kBranchy = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x, bool c, float[2,3] w) => (float[2,6] e, float[2,3] f, float[2,3] h) {
  a = Relu(x)
  k = Constant <value = float[3] {0.5, -1, 2}> ()
  b = Mul(x, k)
  s = Sigmoid(b)
  cc = Add(a, s)
  d = Mul(a, cc)
  e = Concat <axis = 1> (cc, d)
  f = If (c) <then_branch = t () => (float[2,3] o) { o = Sub(d, a) },
              else_branch = el () => (float[2,3] p) { p = Add(d, w) }>
  a__in = Tanh(x)
  h = Mul(a__in, a)
}
)ONNX";

// Every tensor of a reference run of `model` on `feeds`, the feeds included.
TensorMap reference_tensors(const Model& model, const TensorMap& feeds) {
  ref::ReferenceBackend ref;
  PrepareOptions prep;
  prep.mark_all = true;
  EXPECT_TRUE(ref.prepare(model, prep).ok());
  Result<TensorMap> out = ref.run(feeds);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  TensorMap all = feeds;
  if (out.ok()) {
    for (const NamedTensor& t : *out) all.set(t.name, t.tensor);
  }
  return all;
}

// Runs `isolated` (after a save and a reload: the checker sees it) on the reference's tensors and
// expects every output to equal its original bit for bit. Returns the originals covered.
std::set<std::string> expect_reproduces(const IsolatedModel& isolated, const TensorMap& reference,
                                        const test::TempDir& dir, const std::string& file) {
  std::set<std::string> covered;
  const std::filesystem::path path = dir / file;
  Status saved = save_model(isolated.model, path);
  EXPECT_TRUE(saved.ok()) << saved.to_string();
  Result<Model> loaded = load_model(path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  if (!loaded.ok()) return covered;
  Result<TensorMap> feeds = isolated_feeds(isolated, reference);
  EXPECT_TRUE(feeds.ok()) << feeds.status().to_string();
  const TensorMap got = engine::test::run_reference(*loaded, *feeds);
  for (const IsolatedValue& out : isolated.outputs) {
    const Tensor* g = got.find(out.name);
    const Tensor* want = reference.find(out.original);
    EXPECT_TRUE(g && want && g->same_as(*want)) << out.name << " vs " << out.original;
    covered.insert(out.original);
  }
  return covered;
}

TEST(Isolate, TheBranchyModelReproducesEveryTensorExactly) {
  const Model model = make_model(kBranchy, {{"w", random_tensor({2, 3}, 4)}});
  const TensorMap feeds{{"x", random_tensor({2, 3}, 1)}, {"c", Tensor::scalar<bool>(false)}};
  const TensorMap reference = reference_tensors(model, feeds);
  Result<IsolatedModel> iso = isolate_nodes(model, {});
  ASSERT_TRUE(iso.ok()) << iso.status().to_string();
  EXPECT_EQ(iso->nodes.size(), 9u);  // every node but the Constant
  const Graph& g = iso->model.graph;
  // The Constant is copied, the initializer stays an initializer, x is fed once.
  EXPECT_EQ(g.nodes.front().op_type, "Constant");
  EXPECT_NE(g.find_initializer("w"), nullptr);
  size_t x_inputs = 0;
  for (const ValueInfo& v : g.inputs) x_inputs += v.name == "x__in" ? 1 : 0;
  EXPECT_EQ(x_inputs, 1u);
  // 'a__in' is taken by the model's own tensor, so a's input is another name.
  std::map<std::string, std::string> input_of;
  for (const IsolatedValue& f : iso->feeds) input_of[f.original] = f.name;
  EXPECT_EQ(input_of["a"], "a__in_1");
  EXPECT_EQ(input_of["a__in"], "a__in__in");
  // The If reads d and a inside its branches: they are inputs, renamed in the bodies.
  const IsolatedNode& if_node = iso->nodes[6];
  ASSERT_EQ(if_node.outputs.size(), 1u);
  EXPECT_EQ(if_node.outputs[0].name, "f__local");
  std::set<std::string> if_inputs;
  for (const IsolatedValue& v : if_node.inputs) if_inputs.insert(v.original);
  EXPECT_EQ(if_inputs, (std::set<std::string>{"c", "d", "a"}));
  const Node& if_copy = g.nodes[g.nodes.size() - 3];
  ASSERT_EQ(if_copy.op_type, "If");
  EXPECT_EQ(if_copy.attr("then_branch")->g->nodes[0].inputs, (std::vector<std::string>{"d__in", "a__in_1"}));
  EXPECT_EQ(if_copy.attr("else_branch")->g->nodes[0].inputs, (std::vector<std::string>{"d__in", "w"}));

  test::TempDir dir;
  const std::set<std::string> covered = expect_reproduces(*iso, reference, dir, "iso.onnx");
  EXPECT_EQ(covered, (std::set<std::string>{"a", "b", "s", "cc", "d", "e", "f", "a__in", "h"}));
  // The other branch too.
  const TensorMap other{{"x", random_tensor({2, 3}, 2)}, {"c", Tensor::scalar<bool>(true)}};
  expect_reproduces(*iso, reference_tensors(model, other), dir, "iso2.onnx");
}

TEST(Isolate, TheDemoModelReproducesEveryLayerExactly) {
  Result<Model> model = load_model(kDemo);
  ASSERT_TRUE(model.ok());
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model->graph, {});
  ASSERT_TRUE(feeds.ok());
  const TensorMap reference = reference_tensors(*model, feeds->front());
  Result<IsolatedModel> iso = isolate_nodes(*model, {});
  ASSERT_TRUE(iso.ok()) << iso.status().to_string();
  EXPECT_TRUE(iso->known_bytes);
  test::TempDir dir;
  EXPECT_EQ(expect_reproduces(*iso, reference, dir, "demo_iso.onnx").size(), model->graph.nodes.size());
}

TEST(Isolate, ChunksStayWithinTheBudgetAndTogetherCoverEveryNode) {
  Result<Model> model = load_model(kDemo);
  ASSERT_TRUE(model.ok());
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model->graph, {});
  ASSERT_TRUE(feeds.ok());
  const TensorMap reference = reference_tensors(*model, feeds->front());
  constexpr uint64_t kBudget = 48 * 1024;  // conv1's input and output alone take 44 KiB
  Result<std::vector<IsolatedModel>> chunks = isolate_in_chunks(*model, {}, kBudget);
  ASSERT_TRUE(chunks.ok()) << chunks.status().to_string();
  EXPECT_GT(chunks->size(), 2u);
  std::set<int64_t> nodes;
  std::set<std::string> covered;
  test::TempDir dir;
  for (size_t i = 0; i < chunks->size(); ++i) {
    const IsolatedModel& c = (*chunks)[i];
    EXPECT_TRUE(c.known_bytes);
    if (c.nodes.size() > 1) {
      EXPECT_LE(c.bytes, kBudget) << "chunk " << i;
    }
    for (const IsolatedNode& n : c.nodes) EXPECT_TRUE(nodes.insert(n.node).second) << "node " << n.node << " twice";
    const std::set<std::string> got = expect_reproduces(c, reference, dir, fmt::format("chunk{}.onnx", i));
    covered.insert(got.begin(), got.end());
  }
  EXPECT_EQ(nodes.size(), model->graph.nodes.size());
  EXPECT_EQ(covered.size(), model->graph.nodes.size());
  // A budget every node exceeds: one node per model.
  Result<std::vector<IsolatedModel>> tiny = isolate_in_chunks(*model, {}, 1);
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->size(), model->graph.nodes.size());
}

TEST(Isolate, UntypedValuesTakeTheTypesOfAReferenceRun) {
  Model model = make_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) {
  a = Relu(x)
  y = Neg(a)
}
)ONNX");
  model.graph.value_info.clear();
  Result<IsolatedModel> bad = isolate_nodes(model, {});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(bad.status().message(), HasSubstr("no type known for 'a' (of node 'Relu_0')"));
  const TensorMap reference = reference_tensors(model, {{"x", random_tensor({2, 3}, 1)}});
  IsolateOptions options;
  options.known = value_types_of(reference);
  Result<IsolatedModel> iso = isolate_nodes(model, options);
  ASSERT_TRUE(iso.ok()) << iso.status().to_string();
  test::TempDir dir;
  EXPECT_EQ(expect_reproduces(*iso, reference, dir, "typed.onnx").size(), 2u);

  options.nodes = {1, 1};
  EXPECT_THAT(isolate_nodes(model, options).status().message(), HasSubstr("node index 1 is listed twice"));
  options.nodes = {5};
  EXPECT_THAT(isolate_nodes(model, options).status().message(), HasSubstr("out of range"));
  EXPECT_THAT(isolated_feeds(*iso, {}).status().message(), HasSubstr("the reference results have no tensor 'x'"));
}

}  // namespace
}  // namespace vn::surgeon
