// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the attention kernels (Attention, FlexAttention): the softmax of one row of
// scores as ONNX's reference computes it, step by step.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/ops/float_steps.h"

namespace vn::ops {

/// Softmax of x[0..n) in place, as the steps max, exp(x - max), sum and divide, each rounded by
/// `round` (step_round of the softmax's precision). A NaN anywhere makes the row NaN, and a row
/// that is -inf everywhere becomes NaN (0/0), as in ONNX's reference; callers that define another
/// value for such rows replace it.
inline void softmax_row(double* x, int64_t n, StepRound round) {
  double mx = -INFINITY;
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) {
    if (std::isnan(x[j])) nan = true;
    if (x[j] > mx) mx = x[j];
  }
  if (nan) mx = NAN;
  double sum = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    x[j] = round(std::exp(round(x[j] - mx)));
    sum += x[j];
  }
  sum = round(sum);
  for (int64_t j = 0; j < n; ++j) x[j] = round(x[j] / sum);
}

}  // namespace vn::ops
