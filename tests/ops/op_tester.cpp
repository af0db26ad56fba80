// SPDX-License-Identifier: Apache-2.0
#include "tests/ops/op_tester.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <type_traits>

#include "core/ops/kernel_context.h"
#include "core/ops/op_registry.h"

namespace vn::ops::testing {

OpTester::OpTester(std::string op_type, int64_t opset, std::string domain) : opset_(opset) {
  node_.name = "test_" + op_type;
  node_.op_type = std::move(op_type);
  node_.domain = std::move(domain);
}

OpTester& OpTester::attr(Attribute attribute) {
  node_.attributes.push_back(std::move(attribute));
  return *this;
}

OpTester& OpTester::attr(std::string name, int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInt;
  a.i = value;
  return attr(std::move(a));
}

OpTester& OpTester::attr(std::string name, float value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kFloat;
  a.f = value;
  return attr(std::move(a));
}

OpTester& OpTester::attr(std::string name, std::string value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kString;
  a.s = std::move(value);
  return attr(std::move(a));
}

OpTester& OpTester::attr(std::string name, std::vector<int64_t> values) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInts;
  a.ints = std::move(values);
  return attr(std::move(a));
}

OpTester& OpTester::attr(std::string name, std::vector<float> values) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kFloats;
  a.floats = std::move(values);
  return attr(std::move(a));
}

OpTester& OpTester::attr(std::string name, std::vector<std::string> values) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kStrings;
  a.strings = std::move(values);
  return attr(std::move(a));
}

OpTester& OpTester::attr(std::string name, Tensor value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kTensor;
  a.t = std::move(value);
  return attr(std::move(a));
}

OpTester& OpTester::input(Tensor tensor) {
  node_.inputs.push_back(fmt::format("input{}", inputs_.size()));
  inputs_.push_back(std::move(tensor));
  return *this;
}

OpTester& OpTester::omitted_input() {
  node_.inputs.emplace_back();
  inputs_.emplace_back();
  return *this;
}

OpTester& OpTester::output(Tensor expected) {
  node_.outputs.push_back(fmt::format("output{}", expected_.size()));
  expected_.push_back(Expected{std::move(expected), true});
  return *this;
}

OpTester& OpTester::unchecked_output() {
  node_.outputs.push_back(fmt::format("output{}", expected_.size()));
  expected_.push_back(Expected{Tensor(), false});
  return *this;
}

OpTester& OpTester::omitted_output() {
  node_.outputs.emplace_back();
  expected_.push_back(Expected{Tensor(), false});
  return *this;
}

OpTester& OpTester::tolerance(double atol, double rtol) {
  custom_tolerance_ = true;
  atol_ = atol;
  rtol_ = rtol;
  return *this;
}

Status OpTester::execute(std::vector<Tensor>& outputs) {
  const KernelDef* def = reference_registry().find(node_.domain, node_.op_type, opset_);
  if (!def) {
    return make_error(StatusCode::kUnsupportedOp, "no reference kernel for {} at opset {}", node_.op_type, opset_);
  }
  std::vector<const Tensor*> in_ptrs;
  for (const Tensor& t : inputs_) in_ptrs.push_back(t.defined() ? &t : nullptr);
  outputs.assign(node_.outputs.size(), Tensor());
  KernelContext ctx(node_, 0, opset_, std::span<const Tensor* const>(in_ptrs), std::span<Tensor>(outputs),
                    threads_);
  Status status = def->fn(ctx);
  if (status.ok() && !ctx.attr_error().ok()) status = ctx.attr_error();
  if (status.ok()) status = check_all_read(ctx, def->since_version);
  return status;
}

std::vector<Tensor> OpTester::run() {
  std::vector<Tensor> before;
  for (const Tensor& t : inputs_) before.push_back(t.clone());
  std::vector<Tensor> outputs;
  const Status status = execute(outputs);
  if (!status.ok()) {
    ADD_FAILURE() << node_.op_type << "@" << opset_ << " failed: " << status_code_name(status.code()) << ": "
                  << status.to_string();
    return outputs;
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    EXPECT_TRUE(inputs_[i].same_as(before[i])) << node_.op_type << " modified input " << i;
  }
  for (size_t i = 0; i < expected_.size(); ++i) {
    const Expected& e = expected_[i];
    if (node_.outputs[i].empty()) continue;
    if (!outputs[i].defined()) {
      ADD_FAILURE() << node_.op_type << "@" << opset_ << " did not produce output " << i;
      continue;
    }
    if (!e.check) continue;
    double atol = atol_, rtol = rtol_;
    if (!custom_tolerance_) {
      atol = e.tensor.dtype() == DType::kFloat64 ? 1e-12 : 1e-6;
      rtol = e.tensor.dtype() == DType::kFloat64 ? 1e-10 : 1e-5;
    }
    const std::string diff = compare_tensors(e.tensor, outputs[i], atol, rtol);
    EXPECT_TRUE(diff.empty()) << node_.op_type << "@" << opset_ << " output " << i << ": " << diff;
  }
  return outputs;
}

void OpTester::expect_failure(StatusCode code, std::string_view substring) {
  // Error tests need not declare outputs; give the node its one mandatory output slot.
  if (expected_.empty()) unchecked_output();
  std::vector<Tensor> outputs;
  const Status status = execute(outputs);
  ASSERT_FALSE(status.ok()) << node_.op_type << "@" << opset_ << " succeeded but was expected to fail with '"
                            << substring << "'";
  EXPECT_EQ(status.code(), code) << status_code_name(status.code()) << " vs " << status_code_name(code) << ": "
                                 << status.to_string();
  EXPECT_NE(status.message().find(substring), std::string::npos)
      << "message '" << status.message() << "' does not contain '" << substring << "'";
  if (status.code() != StatusCode::kUnsupportedOp) {
    ASSERT_NE(status.node(), nullptr) << "error is not tagged with the node: " << status.to_string();
    EXPECT_EQ(status.node()->op_type, node_.op_type);
  }
}

std::vector<float> random_floats(size_t count, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<float> sweep_inputs(size_t random_count) {
  const float kMin = std::numeric_limits<float>::min();
  const float kMax = std::numeric_limits<float>::max();
  const float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,  -0.0f,        0.5f,   -0.5f, 1.0f,   -1.0f, 3.0f,
                          -3.0f, 10.0f,        -10.0f, 30.0f, -30.0f, 88.0f, -88.0f,
                          kMin,  kMin / 10.0f, kMax,   -kMax, kInf,   -kInf, std::numeric_limits<float>::quiet_NaN()};
  const std::vector<float> r = random_floats(random_count, 7767517u, -6.0f, 6.0f);
  v.insert(v.end(), r.begin(), r.end());
  return v;
}

void unary_sweep(const std::string& op_type, int64_t opset, const std::function<double(double)>& oracle,
                 const std::function<void(OpTester&)>& setup, double atol, double rtol) {
  const std::vector<float> x = sweep_inputs();
  std::vector<float> y;
  for (float v : x) y.push_back(static_cast<float>(oracle(static_cast<double>(v))));
  OpTester t(op_type, opset);
  if (setup) setup(t);
  t.input<float>({static_cast<int64_t>(x.size())}, x);
  t.output<float>({static_cast<int64_t>(y.size())}, y);
  t.tolerance(atol, rtol);
  t.run();
}

namespace {

template <typename T>
std::string compare_typed(const Tensor& expected, const Tensor& actual, double atol, double rtol) {
  const T* e = expected.data<T>();
  const T* a = actual.data<T>();
  std::string report;
  int64_t bad = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    bool match = false;
    if constexpr (std::is_floating_point_v<T>) {
      const double ev = e[i], av = a[i];
      if (std::isnan(ev) || std::isnan(av)) {
        match = std::isnan(ev) && std::isnan(av);
      } else if (std::isinf(ev) || std::isinf(av)) {
        match = ev == av;
      } else {
        match = std::abs(av - ev) <= atol + rtol * std::abs(ev);
      }
    } else {
      match = e[i] == a[i];
    }
    if (!match) {
      if (bad < 8) {
        if constexpr (std::is_same_v<T, std::string>) {
          report += fmt::format("\n  [{}] expected '{}', got '{}'", i, e[i], a[i]);
        } else if constexpr (std::is_floating_point_v<T>) {
          report += fmt::format("\n  [{}] expected {:.9g}, got {:.9g}", i, e[i], a[i]);
        } else {
          report +=
              fmt::format("\n  [{}] expected {}, got {}", i, static_cast<int64_t>(e[i]), static_cast<int64_t>(a[i]));
        }
      }
      ++bad;
    }
  }
  if (bad == 0) return "";
  return fmt::format("{} of {} elements differ (atol {}, rtol {}):{}", bad, expected.numel(), atol, rtol, report);
}

}  // namespace

std::string compare_tensors(const Tensor& expected, const Tensor& actual, double atol, double rtol) {
  if (expected.dtype() != actual.dtype()) {
    return fmt::format("dtype {} expected, got {}", dtype_name(expected.dtype()), dtype_name(actual.dtype()));
  }
  if (expected.shape() != actual.shape()) {
    return fmt::format("shape {} expected, got {}", shape_to_string(expected.shape()), shape_to_string(actual.shape()));
  }
  return dispatch_dtype(expected.dtype(), [&]<typename T>() -> std::string {
    if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
      return expected.same_as(actual) ? "" : "half-precision tensors differ";
    } else if constexpr (is_narrow_v<T>) {
      return expected.same_as(actual) ? "" : fmt::format("{} tensors differ", dtype_name(expected.dtype()));
    } else {
      return compare_typed<T>(expected, actual, atol, rtol);
    }
  });
}

}  // namespace vn::ops::testing
