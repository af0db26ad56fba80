// SPDX-License-Identifier: Apache-2.0
// The engine's own layers take only the op versions and attributes they implement
// (core/engine/native_ops.h); anything else runs on its reference kernel, so the engine inherits
// the reference's exactness or its refusal.
#include <gtest/gtest.h>

#include <string>

#include "core/engine/engine_backend.h"
#include "core/engine/native_ops.h"
#include "core/ir/onnx_schema.h"
#include "tests/engine/engine_test_util.h"

namespace vn::engine {
namespace {

using test::make_model;
using test::random_tensor;

TEST(NativeOps, EveryEntryNamesOnnxVersionsAndAttributes) {
  for (const NativeOp& n : native_ops()) {
    const auto versions = onnx_schema_versions("", n.op);
    ASSERT_FALSE(versions.empty()) << n.op;
    bool min_found = false, max_found = false;
    for (const OnnxSchema& s : versions) {
      min_found |= s.since_version == n.min_version;
      max_found |= s.since_version == n.max_version;
    }
    EXPECT_TRUE(min_found && max_found) << n.op << " " << n.min_version << "-" << n.max_version;
    std::string_view attrs = n.attributes;
    while (!attrs.empty()) {
      const size_t comma = attrs.find(',');
      const std::string_view name = attrs.substr(0, comma);
      bool defined = false;
      for (const OnnxSchema& s : versions) {
        if (s.since_version >= n.min_version && s.since_version <= n.max_version) defined |= s.has_attribute(name);
      }
      EXPECT_TRUE(defined) << n.op << " lists '" << name << "', which none of its versions defines";
      if (comma == std::string_view::npos) break;
      attrs.remove_prefix(comma + 1);
    }
  }
}

/// Builds `model` deterministically on the engine, runs `feeds` and returns output `name` and the
/// kind of the layer that produced it.
std::pair<Tensor, LayerKind> run_engine(const Model& model, const TensorMap& feeds, const std::string& name) {
  EngineOptions options;
  options.build.deterministic = true;
  EngineBackend engine(options);
  Status st = engine.prepare(model, PrepareOptions{});
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return {};
  Result<TensorMap> out = engine.run(feeds);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  LayerKind kind = LayerKind::kGeneric;
  for (const PlanLayer& l : engine.plan()->layers) {
    for (const std::string& o : l.outputs) {
      if (o == name) kind = l.kind;
    }
  }
  const Tensor* y = out.ok() ? out->find(name) : nullptr;
  return {y ? *y : Tensor(), kind};
}

TEST(NativeOps, AnAttributeNoLayerReadsIsRefusedNotIgnored) {
  // A Relu carrying an attribute (possible in a model loaded without validation): the Relu layer
  // does not take it, and its reference kernel refuses it.
  Model model = make_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3] x) => (float[2,3] y) {
      y = Relu(x)
    })");
  Attribute alpha;
  alpha.name = "alpha";
  alpha.type = AttrType::kFloat;
  alpha.f = 0.1f;
  model.graph.nodes[0].attributes.push_back(alpha);
  EngineOptions options;
  options.build.deterministic = true;
  EngineBackend engine(options);
  // The build times the layer's kernel, which refuses the node there.
  const Status st = engine.prepare(model, PrepareOptions{});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("attribute 'alpha' of Relu-14 is not implemented"), std::string::npos)
      << st.to_string();
}

TEST(NativeOps, AveragePoolWithDilationsRunsOnItsReferenceKernel) {
  const Model model = make_model(R"(
    <ir_version: 8, opset_import: ["" : 19]>
    g (float[1,2,6,6] x) => (float[1,2,4,4] y) {
      y = AveragePool<kernel_shape=[2,2], dilations=[2,2]>(x)
    })");
  const TensorMap feeds{{"x", random_tensor({1, 2, 6, 6}, 2)}};
  const auto [y, kind] = run_engine(model, feeds, "y");
  EXPECT_EQ(kind, LayerKind::kGeneric);
  test::expect_close(y, *test::run_reference(model, feeds).find("y"), {0, 0}, "AveragePool-19");
}

TEST(NativeOps, ReduceMean18WithAnAxesInputStillFormsTheLayerNormPattern) {
  // The LayerNorm pattern of exporters at opset 18: axes as a constant input.
  const Model model = make_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2,8] x, int64[1] axes) => (float[2,8] y) {
      m = ReduceMean(x, axes)
      d = Sub(x, m)
      two = Constant<value = float {2.0}>()
      p = Pow(d, two)
      v = ReduceMean(p, axes)
      eps = Constant<value = float {1e-5}>()
      ve = Add(v, eps)
      s = Sqrt(ve)
      y = Div(d, s)
    })",
                                 {{"axes", Tensor::from_vector<int64_t>({1}, {-1})}});
  const TensorMap feeds{{"x", random_tensor({2, 8}, 3)}};
  const auto [y, kind] = run_engine(model, feeds, "y");
  EXPECT_EQ(kind, LayerKind::kLayerNorm);
  test::expect_close(y, *test::run_reference(model, feeds).find("y"), {1e-5, 1e-5}, "LayerNorm pattern");
}

TEST(NativeOps, OpsAfterOpset17RunOnTheirReferenceKernelsInTheEngine) {
  // Ops the engine has no layer for (AffineGrid-20, GridSample-22, CumProd-26,
  // SoftmaxCrossEntropyLoss-13, Mod-28) build as generic layers and agree with the reference.
  const Model model = make_model(R"(
    <ir_version: 8, opset_import: ["" : 28]>
    g (float[1,2,4,4] x, float[1,2,3] theta) => (float[4] loss, float[4,4] m) {
      size = Constant<value = int64[4] {1, 2, 4, 4}>()
      grid = AffineGrid(theta, size)
      s = GridSample<mode = "cubic", padding_mode = "border">(x, grid)
      axis = Constant<value = int64 {3}>()
      c = CumProd(s, axis)
      shape = Constant<value = int64[2] {8, 4}>()
      r = Reshape(c, shape)
      start = Constant<value = int64[1] {0}>()
      stop = Constant<value = int64[1] {4}>()
      half = Slice(r, start, stop)
      labels = Constant<value = int64[4] {1, 0, 3, 2}>()
      loss, logp = SoftmaxCrossEntropyLoss<reduction = "none">(half, labels)
      two = Constant<value = float {2.0}>()
      m = Mod(logp, two)
    })");
  const TensorMap feeds{{"x", random_tensor({1, 2, 4, 4}, 5)},
                        {"theta", Tensor::from_vector<float>({1, 2, 3}, {0.9f, 0.1f, 0.05f, -0.1f, 1.1f, 0.0f})}};
  const TensorMap want = test::run_reference(model, feeds);
  for (const char* name : {"loss", "m"}) {
    const auto [got, kind] = run_engine(model, feeds, name);
    EXPECT_EQ(kind, LayerKind::kGeneric) << name;
    test::expect_close(got, *want.find(name), {0, 0}, name);
  }
}

TEST(NativeOps, AVersionNoKernelImplementsIsRefusedByTheEngineToo) {
  const Model model = make_model(R"(
    <ir_version: 8, opset_import: ["" : 20]>
    g (uint8[16] x) => (uint8[2, 2, 3] y) {
      y = ImageDecoder(x)
    })");
  EngineBackend engine;
  const Status st = engine.prepare(model, PrepareOptions{});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ImageDecoder-20 (opset 20) is not implemented"),
            std::string::npos)
      << st.to_string();
}

}  // namespace
}  // namespace vn::engine
