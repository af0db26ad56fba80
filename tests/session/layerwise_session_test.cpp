// SPDX-License-Identifier: Apache-2.0
// The browser's `:set atol` and `:export` work on a finished layer-wise session: the demo with a
// fault in conv2 compared again under a tolerance that admits it, and its layer table written.
#include "core/session/layerwise_session.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/data/synthetic.h"
#include "core/engine/fault.h"
#include "core/ir/onnx_import.h"
#include "core/session/job.h"

namespace vn::session {
namespace {

// Runs `work` as a job and returns its result.
template <class T>
Result<T> run_job(std::function<Result<T>(JobContext&)> work, std::vector<std::string>* log = nullptr) {
  auto job = Job<T>::start(std::move(work));
  job->wait();
  if (log) *log = job->progress()->log;
  if (auto result = job->result()) return *result;
  return job->progress()->status;
}

// The demo model with a fault planted in conv2, compared layer-wise on the built-in engine.
Result<std::unique_ptr<LayerwiseRunner>> faulty_demo_runner() {
  Result<Model> model = load_model(std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx");
  if (!model.ok()) return model.status();
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model->graph, {});
  if (!feeds.ok()) return feeds.status();
  LayerwiseSessionOptions options;
  options.engine.build.deterministic = true;
  Result<engine::FaultSpec> fault = engine::parse_fault("layer=conv2,kind=scale,factor=1.5");
  if (!fault.ok()) return fault.status();
  options.engine.build.faults.push_back(*fault);
  return LayerwiseRunner::build(std::move(*model), feeds->front(), options);
}

Result<LayerwiseSession> faulty_demo() {
  VN_ASSIGN_OR_RETURN(std::unique_ptr<LayerwiseRunner> runner, faulty_demo_runner());
  return run_job<LayerwiseSession>([&](JobContext& ctx) { return runner->run(CompareConfig{}, ctx); });
}

TEST(LayerwiseSession, ComparedAgainUnderALooserToleranceItPasses) {
  // What the browser's `:set atol` does: the same prepared backends run again under another
  // tolerance.
  Result<std::unique_ptr<LayerwiseRunner>> runner = faulty_demo_runner();
  ASSERT_TRUE(runner.ok()) << runner.status().to_string();
  Result<LayerwiseSession> strict =
      run_job<LayerwiseSession>([&](JobContext& ctx) { return (*runner)->run(CompareConfig{}, ctx); });
  ASSERT_TRUE(strict.ok()) << strict.status().to_string();
  EXPECT_FALSE(strict->comparison.passed());
  CompareConfig loose;
  loose.atol[""] = 100;
  loose.rtol[""] = 100;
  Result<LayerwiseSession> again = run_job<LayerwiseSession>([&](JobContext& ctx) { return (*runner)->run(loose, ctx); });
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_TRUE(again->comparison.passed());
  ASSERT_EQ(again->comparison.layers.size(), strict->comparison.layers.size());
}

TEST(LayerwiseSession, TheLayerTableIsExportedAsTabSeparatedValues) {
  Result<LayerwiseSession> done = faulty_demo();
  ASSERT_TRUE(done.ok()) << done.status().to_string();
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "vn_layer_table_test.tsv";
  ASSERT_TRUE(export_layer_table(*done, path).ok());
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::filesystem::remove(path);
  ASSERT_EQ(lines.size(), done->comparison.layers.size() + 1);
  EXPECT_EQ(lines[0], "layer\top\trank\taccumulated_excess\tlocal_excess");
  bool culprit = false;
  for (size_t i = 1; i < lines.size(); ++i) culprit = culprit || lines[i].rfind("conv2\tConv\t1\t", 0) == 0;
  EXPECT_TRUE(culprit) << "conv2 ranks first";
  const Status refused = export_layer_table(*done, "/no/such/folder/table.tsv");
  EXPECT_EQ(refused.code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace vn::session
