// SPDX-License-Identifier: Apache-2.0
// float16 and bfloat16 tensors for the reference kernels' tests.
#pragma once

#include <utility>
#include <vector>

#include <Eigen/Core>

#include "core/ir/tensor.h"

namespace vn::ops::testing {

/// A tensor of H (Eigen::half or Eigen::bfloat16) holding `values` rounded to H; tests write
/// values that H holds exactly. OpTester compares such outputs bit for bit.
template <typename H>
Tensor narrow_tensor(Shape shape, const std::vector<float>& values) {
  std::vector<H> v;
  for (float f : values) v.push_back(H(f));
  return Tensor::from_vector<H>(std::move(shape), v);
}

}  // namespace vn::ops::testing
