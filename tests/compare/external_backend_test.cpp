// SPDX-License-Identifier: Apache-2.0
// The external-engine protocol, driven by a runner script of the tests' own that runs Vernier
// itself (optionally with a fault) as the "other engine", and by runners that misbehave.
#include "core/backend/external_backend.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>

#include "core/compare/layerwise.h"
#include "core/ir/onnx_export.h"
#include "core/ref/reference_backend.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using engine::test::make_model;
using engine::test::random_tensor;

Model small_model() {
  return make_model(R"(<ir_version: 8, opset_import: ["" : 13]>
small (float[2,16] x) => (float[2,16] y) {
  a = Relu(x)
  b = Sigmoid(a)
  c = Mul(b, x)
  y = Add(c, a)
}
)");
}

// The runner: $RUNNER_MODE picks a misbehaviour; otherwise it runs `vernier run` with
// $RUNNER_BACKEND (default --ref) on the protocol's files.
std::filesystem::path write_runner(const test::TempDir& dir) {
  const std::filesystem::path path = dir / "runner.sh";
  test::write_file(path, std::string(R"(#!/bin/sh
model=$1 inputs=$2 outputs=$3 mark=$4
case "${RUNNER_MODE:-ok}" in
  crash) kill -SEGV $$ ;;
  hang) sleep 30 ;;
  fail) echo "engine exploded: no tactic for layer c" >&2; exit 3 ;;
  none) exit 0 ;;
  garbage) printf '{"lst": 5' > "$outputs"; exit 0 ;;
esac
exec )") + VN_BINARY_DIR + R"(/tui/vernier run "$model" ${RUNNER_BACKEND:---ref} --load-inputs "$inputs" \
  --save-outputs "$outputs" --outputs $(cat "$mark") > /dev/null
)");
  return path;
}

struct Fixture {
  test::TempDir dir;
  Model model = small_model();
  TensorMap feeds{{"x", random_tensor({2, 16}, 11)}};
  std::string command() const { return "sh " + write_runner(dir).string() + " {model} {inputs} {outputs} {mark}"; }
};

Result<TensorMap> run_external(Fixture& f, const std::string& mode, double timeout = 0, bool mark_all = false) {
  setenv("RUNNER_MODE", mode.c_str(), 1);
  ExternalOptions options;
  options.command = f.command();
  options.timeout_s = timeout;
  ExternalBackend backend(options);
  PrepareOptions prep;
  prep.mark_all = mark_all;
  VN_RETURN_IF_ERROR(backend.prepare(f.model, prep));
  return backend.run(f.feeds);
}

TEST(ExternalBackend, ReturnsWhatTheRunnerComputed) {
  Fixture f;
  Result<TensorMap> out = run_external(f, "ok", 0, /*mark_all=*/true);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const TensorMap expected = engine::test::run_reference(f.model, f.feeds, {"a", "b", "c"});
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[0].name, "y");
  for (const NamedTensor& t : expected) {
    ASSERT_NE(out->find(t.name), nullptr) << t.name;
    EXPECT_TRUE(out->find(t.name)->same_as(t.tensor)) << t.name;
  }
}

TEST(ExternalBackend, StreamsIntoALayerwiseComparisonThatFindsTheFault) {
  Fixture f;
  setenv("RUNNER_MODE", "ok", 1);
  setenv("RUNNER_BACKEND", "--engine --deterministic --inject-fault layer=Mul_2,kind=offset,magnitude=0.01", 1);
  ExternalOptions options;
  options.command = f.command();
  ExternalBackend ext(options);
  ref::ReferenceBackend ref;
  PrepareOptions prep;
  prep.mark_all = true;
  ASSERT_TRUE(ext.prepare(f.model, prep).ok());
  ASSERT_TRUE(ref.prepare(f.model, prep).ok());
  Result<LayerwiseComparison> r = compare_layerwise(ref, ext, f.feeds, {});
  unsetenv("RUNNER_BACKEND");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->tensors.size(), 4u);
  ASSERT_TRUE(r->first_culprit);
  EXPECT_EQ(r->layers[*r->first_culprit].layer.outputs, std::vector<std::string>{"c"});
}

TEST(ExternalBackend, ACrashIsReportedWithItsSignal) {
  Fixture f;
  Result<TensorMap> out = run_external(f, "crash");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kExternalFailure);
  EXPECT_NE(out.status().message().find("SIGSEGV"), std::string::npos) << out.status().message();
}

TEST(ExternalBackend, AHangIsKilledAtTheTimeout) {
  Fixture f;
  const auto start = std::chrono::steady_clock::now();
  Result<TensorMap> out = run_external(f, "hang", 0.5);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("timed out after 0.5 s"), std::string::npos) << out.status().message();
  EXPECT_LT(seconds, 10.0);
}

TEST(ExternalBackend, AFailureQuotesTheEndOfStderr) {
  Fixture f;
  Result<TensorMap> out = run_external(f, "fail");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("exit code 3"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("engine exploded: no tactic for layer c"), std::string::npos);
}

TEST(ExternalBackend, MissingOrMalformedOutputsAreErrors) {
  Fixture f;
  Result<TensorMap> none = run_external(f, "none");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("wrote no outputs"), std::string::npos) << none.status().message();
  Result<TensorMap> garbage = run_external(f, "garbage");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("unreadable outputs"), std::string::npos) << garbage.status().message();
}

TEST(ExternalBackend, TheCommandMustSayWhereOutputsGo) {
  ExternalBackend backend(ExternalOptions{.command = "true {model} {inputs}"});
  Model model = small_model();
  Status st = backend.prepare(model, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("{outputs}"), std::string::npos);
}

TEST(ExternalBackend, PlaceholdersBecomeQuotedPaths) {
  EXPECT_EQ(expand_external_command("run {model} -i {inputs} -o {outputs} -m {mark} {model}", "/a b/m.onnx", "/t/in",
                                    "/t/o'ut", "/t/mark"),
            "run '/a b/m.onnx' -i '/t/in' -o '/t/o'\\''ut' -m '/t/mark' '/a b/m.onnx'");
}

}  // namespace
}  // namespace vn
