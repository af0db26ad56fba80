// SPDX-License-Identifier: Apache-2.0
// Models the debug tools' tests share.
#pragma once

#include "tests/engine/engine_test_util.h"

namespace vn::test {

/// Three MatMul layers on X (float[4,64], values in [0, 1) as synthetic data has them):
///   mm_a  = Relu(X W1)          -> a, about 0..8
///   mm_big = a W2  = Y1         -> about 1e5 with W2 in [4000, 8000): overflows float16 (max 65504)
///   mm_c  = Tanh(a W3) = Y2     -> in (-1, 1)
/// In float16 Y1 is infinite; with mm_big alone in float32 both outputs meet the fp16 tolerance
/// preset (1e-2), since float16 rounding of `a` only moves Y1 by about 5e-4 relative.
inline Model fp16_overflow_model() {
  Model m = engine::test::make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "overflow (float[4,64] X, float[64,32] W1, float[32,16] W2, float[32,8] W3) => (float[4,16] Y1, float[4,8] Y2) "
      "{ p = MatMul(X, W1)  a = Relu(p)  Y1 = MatMul(a, W2)  q = MatMul(a, W3)  Y2 = Tanh(q) }",
      {{"W1", engine::test::random_tensor({64, 32}, 11)},
       {"W2", engine::test::random_tensor({32, 16}, 12, 4000.0f, 8000.0f)},
       {"W3", engine::test::random_tensor({32, 8}, 13)}});
  const char* names[] = {"mm_a", "relu_a", "mm_big", "mm_c", "tanh_c"};
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) m.graph.nodes[i].name = names[i];
  return m;
}

}  // namespace vn::test
