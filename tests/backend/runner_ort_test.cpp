// SPDX-License-Identifier: Apache-2.0
// The real `ort` runner (ONNX Runtime 1.30 through onnxruntime-node, installed by
// scripts/install-deps.sh) against the reference backend, in process and through `vernier run`,
// and a printed (never asserted) comparison of its costs with one process per inference.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "core/backend/runner_registry.h"
#include "core/ir/onnx_import.h"
#include "tests/backend/runner_test_util.h"

namespace vn {
namespace {

using engine::test::random_tensor;

const char* const kInstallHint =
    "\nThe ort runner needs Node.js and onnxruntime-node 1.30: run scripts/install-deps.sh, which installs "
    "onnxruntime-node into .deps/node.";

std::string demo_model() { return std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx"; }

RunnerOptions ort_options() {
  Result<RunnerCommand> command = resolve_runner("ort", std::string(VN_SOURCE_DIR) + "/assets");
  EXPECT_TRUE(command.ok()) << command.status().to_string();
  RunnerOptions options;
  if (command.ok()) options.command = *command;
  return options;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

TEST(OrtRunner, MatchesTheReferenceOnTheDemoModelTensorByTensor) {
  Result<Model> model = load_model(demo_model());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const TensorMap feeds{{"image", random_tensor({1, 3, 32, 32}, 21)}};
  auto client = std::make_shared<RunnerClient>(ort_options());
  const Status started = client->start();
  ASSERT_TRUE(started.ok()) << started.to_string() << kInstallHint;
  EXPECT_EQ(client->hello().runner, "ort");
  EXPECT_EQ(client->hello().version, "1.30.0");
  EXPECT_TRUE(client->hello().capabilities.intermediate_tensors);
  EXPECT_FALSE(client->hello().capabilities.lowers_precision);
  EXPECT_FALSE(client->hello().capabilities.builds_vary);

  for (bool mark_all : {false, true}) {
    SCOPED_TRACE(mark_all ? "mark all" : "graph outputs");
    RunnerBackend backend(client, {});
    PrepareOptions prep;
    prep.mark_all = mark_all;
    prep.num_threads = 1;
    Status prepared = backend.prepare(*model, prep);
    ASSERT_TRUE(prepared.ok()) << prepared.to_string() << kInstallHint;
    Result<TensorMap> out = backend.run(feeds);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    std::vector<std::string> names = backend.output_names();
    const TensorMap expected = engine::test::run_reference(*model, feeds, names);
    ASSERT_EQ(out->size(), mark_all ? 10u : 1u);
    for (const NamedTensor& t : expected) {
      ASSERT_NE(out->find(t.name), nullptr) << t.name << " was not returned";
      EXPECT_LE(test::excess_error(*out->find(t.name), t.tensor, 1e-5), 1e-5) << t.name;
    }
  }
  EXPECT_EQ(client->starts(), 1);
}

TEST(OrtRunner, EveryNumpyDtypeTravelsUnchanged) {
  // An Identity per dtype: what comes back is bit for bit what went in, through both .npy codecs.
  const std::vector<std::string> types = {"float",  "double", "float16", "int8",   "uint8",  "int16",
                                          "uint16", "int32",  "int64",   "uint32", "uint64", "bool"};
  std::string inputs, outputs, nodes;
  for (size_t i = 0; i < types.size(); ++i) {
    inputs += fmt::format("{}{}[2,3] in{}", i ? ", " : "", types[i], i);
    outputs += fmt::format("{}{}[2,3] out{}", i ? ", " : "", types[i], i);
    nodes += fmt::format("  out{} = Identity(in{})\n", i, i);
  }
  Model model = engine::test::make_model(
      fmt::format("<ir_version: 8, opset_import: [\"\" : 13]>\nall ({}, float s) => ({}, float t) {{\n{}  t = Identity(s)\n}}\n",
                  inputs, outputs, nodes));
  TensorMap feeds;
  for (size_t i = 0; i < model.graph.inputs.size(); ++i) {
    const ValueInfo& in = model.graph.inputs[i];
    Result<Tensor> t = tensor_cast(random_tensor(in.static_shape(), static_cast<uint32_t>(i), -100, 100), *in.dtype);
    ASSERT_TRUE(t.ok());
    feeds.set(in.name, *t);
  }
  RunnerBackend backend(std::make_shared<RunnerClient>(ort_options()), {});
  Status prepared = backend.prepare(model, {});
  ASSERT_TRUE(prepared.ok()) << prepared.to_string() << kInstallHint;
  Result<TensorMap> out = backend.run(feeds);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), feeds.size());
  for (size_t i = 0; i < feeds.size(); ++i) {
    EXPECT_TRUE((*out)[i].tensor.same_as(feeds[i].tensor)) << (*out)[i].name << " " << dtype_name(feeds[i].tensor.dtype());
  }
}

TEST(OrtRunner, OptionsAreHonouredAndUnknownOnesRefused) {
  Result<Model> model = load_model(demo_model());
  ASSERT_TRUE(model.ok());
  auto client = std::make_shared<RunnerClient>(ort_options());
  RunnerBackendOptions plain;
  plain.options = {{"opt_level", "disabled"}, {"intra_op_threads", "1"}, {"providers", "cpu"}};
  RunnerBackend backend(client, plain);
  Status prepared = backend.prepare(*model, {});
  ASSERT_TRUE(prepared.ok()) << prepared.to_string() << kInstallHint;
  ASSERT_TRUE(backend.run({{"image", random_tensor({1, 3, 32, 32}, 2)}}).ok());

  RunnerBackendOptions bogus;
  bogus.options = {{"opt-level", "all"}};
  RunnerBackend refused(client, bogus);
  Status s = refused.prepare(*model, {});
  EXPECT_EQ(s.code(), StatusCode::kExternalFailure);
  EXPECT_NE(s.message().find("load failed: unknown option 'opt-level'"), std::string::npos) << s.message();
  EXPECT_EQ(client->starts(), 1) << "an error reply keeps the runner";
}

TEST(OrtRunner, VernierRunComparesItWithTheReference) {
  test::ProcessResult r = test::run_vernier({"run", demo_model(), "--ref", "--engine-runner", "ort"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << kInstallHint;
  EXPECT_NE(r.out.find("ort-runner-N1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Built the model on ort 1.30.0 (runner ort)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASSED"), std::string::npos) << r.out;

  // Layer-wise, the runner first: every tensor compared, the reference second.
  r = test::run_vernier({"run", demo_model(), "--engine-runner", "ort", "--runner-option", "opt_level=basic", "--ref",
                         "--mark-all", "--runner-timeout", "60"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ref-runner-N1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Comparing layer-wise with ort-runner-N0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASSED"), std::string::npos) << r.out;

  // ONNX Runtime runs the file it is given: Vernier converts the model to float16 for it, and the
  // comparison takes the fp16 preset.
  r = test::run_vernier({"run", demo_model(), "--ref", "--engine-runner", "ort", "--fp16"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("(converted by Vernier to the precision asked for)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Tolerance preset for an engine with fp16 layers"), std::string::npos) << r.out;
  // bf16 has no conversion: refused by name, not run in float32.
  r = test::run_vernier({"run", demo_model(), "--ref", "--engine-runner", "ort", "--bf16"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--bf16: runner 'ort' runs the ONNX file it is given"), std::string::npos) << r.err;
}

TEST(OrtRunner, TimingSanityPrintedNotAsserted) {
  Result<Model> model = load_model(demo_model());
  ASSERT_TRUE(model.ok());
  const TensorMap feeds{{"image", random_tensor({1, 3, 32, 32}, 4)}};
  constexpr int kRuns = 20;
  // One process per inference, as `--external` pays: start, hello, load, run, exit.
  std::vector<double> per_process;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    RunnerBackend backend(std::make_shared<RunnerClient>(ort_options()), {});
    Status prepared = backend.prepare(*model, {});
    ASSERT_TRUE(prepared.ok()) << prepared.to_string() << kInstallHint;
    ASSERT_TRUE(backend.run(feeds).ok());
    per_process.push_back(ms_since(start));
  }
  // One process for all: the runs alone.
  RunnerBackend backend(std::make_shared<RunnerClient>(ort_options()), {});
  ASSERT_TRUE(backend.prepare(*model, {}).ok());
  std::vector<double> per_run;
  for (int i = 0; i < kRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(backend.run(feeds).ok());
    per_run.push_back(ms_since(start));
  }
  std::sort(per_process.begin(), per_process.end());
  std::sort(per_run.begin(), per_run.end());
  const double process_ms = per_process[per_process.size() / 2], run_ms = per_run[per_run.size() / 2];
  std::printf("[timing] ort runner on demo.onnx: a process per inference %.1f ms (median of 5), "
              "a run on the persistent runner %.2f ms (median of %d): %.0fx\n",
              process_ms, run_ms, kRuns, process_ms / run_ms);
}

}  // namespace
}  // namespace vn
