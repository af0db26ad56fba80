// SPDX-License-Identifier: Apache-2.0
// Every registered kernel, fed inputs a malformed model could produce (omitted required inputs,
// scalars, empty tensors, wrong element types), must answer with a Status and never abort: an
// abort here kills the whole test binary.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/ops/kernel_context.h"
#include "core/ops/op_registry.h"

namespace vn::ops {
namespace {

/// Runs `def` on `inputs` (nullptr = omitted) with `outputs` output slots; returns the Status.
Status run_kernel(const KernelDef& def, const std::vector<const Tensor*>& inputs, size_t outputs,
                  const std::vector<Attribute>& attributes = {}) {
  Node node;
  node.attributes = attributes;
  node.name = "robustness";
  node.op_type = def.op_type;
  for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(inputs[i] ? "in" + std::to_string(i) : "");
  for (size_t i = 0; i < outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  std::vector<Tensor> out(outputs);
  KernelContext ctx(node, 3, def.since_version, std::span<const Tensor* const>(inputs), std::span<Tensor>(out));
  Status status = def.fn(ctx);
  if (!status.ok()) {
    EXPECT_NE(status.node(), nullptr) << def.op_type << "@" << def.since_version << ": " << status.to_string();
    if (status.node()) {
      EXPECT_EQ(status.node()->index, 3) << def.op_type;
    }
  }
  return status;
}

TEST(Robustness, OmittedFirstInputIsAnError) {
  for (const KernelDef& def : reference_registry().all()) {
    SCOPED_TRACE(def.op_type + "@" + std::to_string(def.since_version));
    const Status status = run_kernel(def, {nullptr}, 1);
    EXPECT_FALSE(status.ok());
  }
}

TEST(Robustness, NoOutputSlotsIsAnError) {
  const Tensor x = Tensor::from_vector<float>({2}, {1, 2});
  for (const KernelDef& def : reference_registry().all()) {
    SCOPED_TRACE(def.op_type + "@" + std::to_string(def.since_version));
    const Status status = run_kernel(def, {&x, &x, &x, &x, &x}, 0);
    EXPECT_FALSE(status.ok());
  }
}

TEST(Robustness, OddInputsNeverAbort) {
  const std::vector<Tensor> samples = {
      Tensor::scalar<float>(1.0f),
      Tensor::scalar<int64_t>(-1),
      Tensor::scalar<bool>(true),
      Tensor::from_vector<float>({0}, {}),
      Tensor::from_vector<int64_t>({0}, {}),
      Tensor::from_vector<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6}),
      Tensor::from_vector<int64_t>({3}, {2, -1, 0}),
      Tensor::from_vector<std::string>({2}, {"a", "b"}),
      Tensor(DType::kFloat16, {2, 2}),
      Tensor::from_vector<double>({2, 1, 3, 1}, {1, 2, 3, 4, 5, 6}),
  };
  int ran = 0;
  for (const KernelDef& def : reference_registry().all()) {
    SCOPED_TRACE(def.op_type + "@" + std::to_string(def.since_version));
    for (const Tensor& first : samples) {
      for (size_t arity = 1; arity <= 5; ++arity) {
        for (const Tensor& rest : samples) {
          std::vector<const Tensor*> inputs(arity, &rest);
          inputs[0] = &first;
          // Statuses may be OK or errors; what matters is that every call returns.
          (void)run_kernel(def, inputs, 2);
          ++ran;
        }
      }
    }
  }
  EXPECT_GT(ran, 0);
}

Attribute ints_attr(std::string name, std::vector<int64_t> values) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInts;
  a.ints = std::move(values);
  return a;
}

Attribute int_attr(std::string name, int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInt;
  a.i = value;
  return a;
}

TEST(Robustness, HostileAttributesNeverAbort) {
  const std::vector<Attribute> hostile = {
      int_attr("axis", 100),
      int_attr("axis", -100),
      int_attr("to", 999),
      int_attr("group", 0),
      int_attr("group", -3),
      int_attr("keepdims", 0),
      int_attr("allowzero", 1),
      int_attr("start", 7),
      ints_attr("axes", {100}),
      ints_attr("axes", {0, 0}),
      ints_attr("perm", {5}),
      ints_attr("kernel_shape", {0}),
      ints_attr("kernel_shape", {2, 2}),
      ints_attr("strides", {0, 0}),
      ints_attr("dilations", {-1, 1}),
      ints_attr("pads", {-1, -1, -1, -1}),
      ints_attr("pads", {100, 100, 100, 100}),
      ints_attr("split", {-1, 3}),
      ints_attr("shape", {-2}),
      ints_attr("starts", {5}),
      int_attr("alpha", 1),  // wrong type for a float attribute
  };
  const std::vector<Tensor> samples = {
      Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4}),
      Tensor::from_vector<int64_t>({2}, {1, 1}),
      Tensor::scalar<float>(0.5f),
  };
  for (const KernelDef& def : reference_registry().all()) {
    SCOPED_TRACE(def.op_type + "@" + std::to_string(def.since_version));
    for (const Attribute& attribute : hostile) {
      for (const Tensor& first : samples) {
        for (size_t arity = 1; arity <= 3; ++arity) {
          std::vector<const Tensor*> inputs(arity, &samples[1]);
          inputs[0] = &first;
          (void)run_kernel(def, inputs, 2, {attribute});
        }
      }
    }
  }
}

}  // namespace
}  // namespace vn::ops
