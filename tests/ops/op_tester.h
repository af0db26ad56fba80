// SPDX-License-Identifier: Apache-2.0
// ORT-style single-op tester for the reference kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"

namespace vn::ops::testing {

/// Builds one node, feeds it inputs, runs the reference kernel registered for (domain, op, opset)
/// through a KernelContext and checks the outputs. Recipe:
///
///   OpTester t("Clip", 11);
///   t.input<float>({3}, {-6, 0, 6});
///   t.input<float>({}, {-5});
///   t.input<float>({}, {5});
///   t.output<float>({3}, {-5, 0, 5});
///   t.run();
///
/// The opset is always explicit: a moving "latest" default would silently drop coverage of older
/// kernel versions (the ORT op_tester.h rationale). Inputs and outputs are positional; omitted
/// optional ones keep their slot with an empty name, as in ONNX.
///
/// Comparison: integers and bools exactly; floats with |actual - expected| <= atol + rtol·|expected|
/// (defaults: float32 atol 1e-6, rtol 1e-5; float64 atol 1e-12, rtol 1e-10), NaN matching NaN and
/// infinities matching exactly. run() also checks that the kernel left its inputs unmodified and
/// that it recorded no attribute error.
class OpTester {
 public:
  OpTester(std::string op_type, int64_t opset, std::string domain = "");

  OpTester& attr(std::string name, int64_t value);
  OpTester& attr(std::string name, int value) { return attr(std::move(name), static_cast<int64_t>(value)); }
  OpTester& attr(std::string name, float value);
  OpTester& attr(std::string name, std::string value);
  OpTester& attr(std::string name, const char* value) { return attr(std::move(name), std::string(value)); }
  OpTester& attr(std::string name, std::vector<int64_t> values);
  OpTester& attr(std::string name, std::vector<float> values);
  OpTester& attr(std::string name, std::vector<std::string> values);
  OpTester& attr(std::string name, Tensor value);
  /// Adds a fully specified attribute (e.g. one of the wrong type, for error tests).
  OpTester& attr(Attribute attribute);
  /// Threads the kernel may use (KernelContext::num_threads); 1 unless set.
  OpTester& threads(int count) {
    threads_ = count;
    return *this;
  }

  template <typename T>
  OpTester& input(Shape shape, const std::vector<T>& values) {
    return input(Tensor::from_vector<T>(std::move(shape), values));
  }
  OpTester& input(Tensor tensor);
  /// An omitted optional input (empty name in the node).
  OpTester& omitted_input();

  template <typename T>
  OpTester& output(Shape shape, const std::vector<T>& values) {
    return output(Tensor::from_vector<T>(std::move(shape), values));
  }
  OpTester& output(Tensor expected);
  /// A named output whose value is not checked (only that the kernel produced it).
  OpTester& unchecked_output();
  /// An optional output left unnamed; the kernel must not be required to fill it.
  OpTester& omitted_output();
  /// Overrides the float tolerance for every output.
  OpTester& tolerance(double atol, double rtol);

  /// Runs the kernel and adds a gtest failure for a missing kernel, an error Status, a modified
  /// input or an output mismatch. Returns the produced outputs (empty tensors on failure).
  std::vector<Tensor> run();
  /// Runs the kernel and expects it to fail with `code` and a message containing `substring`, and
  /// the error to be tagged with the node. A node with no declared outputs gets one unchecked output.
  void expect_failure(StatusCode code, std::string_view substring);

  const Node& node() const { return node_; }

 private:
  struct Expected {
    Tensor tensor;  // undefined for unchecked/omitted outputs
    bool check = false;
  };

  /// Looks up and runs the kernel; fills `outputs`. A lookup failure is a kUnsupportedOp Status.
  Status execute(std::vector<Tensor>& outputs);

  Node node_;
  int64_t opset_;
  std::vector<Tensor> inputs_;  // undefined for omitted inputs
  std::vector<Expected> expected_;
  bool custom_tolerance_ = false;
  int threads_ = 1;
  double atol_ = 0.0;
  double rtol_ = 0.0;
};

/// Seeded uniform random values in [lo, hi), for tests that compare against an in-test oracle.
std::vector<float> random_floats(size_t count, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

/// The float32 edge-value set for elementwise sweeps: ±0, ±0.5, ±1, ±3, ±10, ±30, ±88, FLT_MIN, a
/// denormal, ±FLT_MAX, ±inf and NaN, followed by `random_count` seeded values in [-6, 6).
std::vector<float> sweep_inputs(size_t random_count = 64);

/// Runs a unary float32 op over sweep_inputs() and compares with `oracle` evaluated in double.
/// `setup` may add attributes to the tester before the run.
void unary_sweep(const std::string& op_type, int64_t opset, const std::function<double(double)>& oracle,
                 const std::function<void(OpTester&)>& setup = {}, double atol = 1e-6, double rtol = 1e-5);

/// Compares two tensors like OpTester::run does; returns "" when they match, else a description
/// of the first mismatches.
std::string compare_tensors(const Tensor& expected, const Tensor& actual, double atol, double rtol);

}  // namespace vn::ops::testing
