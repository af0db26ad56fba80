// SPDX-License-Identifier: Apache-2.0
// Shared by the runner tests: the fake runner (tests/backend/runners/fake_runner.py) and its model.
#pragma once

#include <cmath>
#include <memory>
#include <string>

#include "core/backend/runner_backend.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/process.h"

namespace vn::test {

inline Model small_runner_model() {
  return engine::test::make_model(R"(<ir_version: 8, opset_import: ["" : 13]>
small (float[2,16] x) => (float[2,16] y) {
  a = Relu(x)
  b = Sigmoid(a)
  c = Mul(b, x)
  y = Add(c, a)
}
)");
}

inline std::string fake_runner_script() { return std::string(VN_SOURCE_DIR) + "/tests/backend/runners/fake_runner.py"; }

/// Options that start the fake runner in `mode`; with `once`, it misbehaves only while that file
/// does not exist.
inline RunnerOptions fake_runner(const std::string& mode, const std::filesystem::path& once = {}) {
  RunnerOptions options;
  options.command.name = "fake";
  options.command.spec = "fake";
  options.command.argv = {VN_PYTHON, fake_runner_script()};
  options.command.env = {{"FAKE_MODE", mode}, {"FAKE_ONCE", once.string()}};
  options.hello_timeout_s = 30;
  options.load_timeout_s = 30;
  options.run_timeout_s = 30;
  return options;
}

/// The largest |a - b| - rtol * |b| over two float32 tensors of one shape (<= atol means close).
inline double excess_error(const Tensor& a, const Tensor& b, double rtol) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape() || a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    worst = std::max(worst, std::abs(x - y) - rtol * std::abs(y));
  }
  return worst;
}

}  // namespace vn::test
