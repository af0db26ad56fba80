// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the engine tests: models from ONNX text with seeded random weights, reference
// runs, and tolerances derived from the precision under test.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/compare/compare.h"
#include "core/engine/precision.h"
#include "core/engine/tactic_registry.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"

namespace vn::engine::test {

/// A float32 tensor of `shape` with values uniform in [lo, hi), from a fixed-seed generator.
inline Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  for (float& v : t.mutable_values<float>()) {
    v = lo + (hi - lo) * static_cast<float>(rng() >> 8) * 0x1p-24f;
  }
  return t;
}

/// Parses `text` (ONNX text syntax) and turns the graph inputs named in `weights` into
/// initializers with those values, so tests can declare weights by type in the text and fill
/// them with random values.
inline Model make_model(std::string_view text, const std::map<std::string, Tensor>& weights = {}) {
  Result<Model> m = parse_model_text(text);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  if (!m.ok()) return Model();
  Graph& g = m->graph;
  for (const auto& [name, tensor] : weights) {
    std::erase_if(g.inputs, [&](const ValueInfo& v) { return v.name == name; });
    g.initializers.push_back({name, tensor});
  }
  return std::move(m).value();
}

/// Runs the reference backend, returning `outputs` (graph outputs when empty).
inline TensorMap run_reference(const Model& model, const TensorMap& feeds, std::vector<std::string> outputs = {}) {
  ref::ReferenceBackend ref;
  PrepareOptions options;
  options.outputs = std::move(outputs);
  Status st = ref.prepare(model, options);
  EXPECT_TRUE(st.ok()) << st.to_string();
  Result<TensorMap> out = ref.run(feeds);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? std::move(out).value() : TensorMap();
}

/// The tolerance of an int8 layer whose output scale is `output_scale` (one int8 step): half a
/// step from requantizing the output, plus the rounding of the input (half a step of its scale)
/// and of the weights (half a step of their channel's) summed over the dot product, which on
/// these data stays within a few steps; relative error alone means little near zero.
inline Tolerance int8_tolerance(float output_scale) { return {4.0 * output_scale, 2e-2}; }

/// The tolerance a correct kernel meets against the float32 reference under `precision`, on
/// data of magnitude about 1 and dot products up to ~150 terms: float32 reorders sums; tf32 and
/// fp16 round operands to 10 mantissa bits (2^-11 relative), bf16 to 7 (2^-8), and fp16_strict
/// also rounds every running sum to float16; int8 is int8_tolerance for outputs of range 1 (use
/// int8_tolerance with the real output scale).
inline Tolerance precision_tolerance(PrecisionId precision) {
  switch (precision) {
    case PrecisionId::kFp32:
      return {1e-4, 1e-4};
    case PrecisionId::kTf32:
    case PrecisionId::kFp16:
      return {1e-2, 1e-2};
    case PrecisionId::kFp16Strict:
      return {5e-2, 2e-2};
    case PrecisionId::kBf16:
      return {8e-2, 4e-2};
    case PrecisionId::kInt8:
      return int8_tolerance(1.0f / 127);
  }
  return {};
}

/// The tolerance of `tactic` under `precision`: the precision's, widened for tactics whose
/// approximations are coarser than float32 rounding.
inline Tolerance tactic_tolerance(TacticId tactic, PrecisionId precision) {
  Tolerance t = precision_tolerance(precision);
  if (tactic == TacticId::kActivationFast) {
    t.atol = std::max(t.atol, 5e-3);
    t.rtol = std::max(t.rtol, 5e-3);
  }
  return t;
}

/// Expects `test` to match `ref` within `tolerance`; `what` describes the configuration.
inline void expect_close(const Tensor& test, const Tensor& ref, const Tolerance& tolerance, const std::string& what) {
  const TensorComparison c = compare_tensors("out", test, ref, tolerance, false);
  EXPECT_TRUE(c.passed) << what << ": " << (c.mismatch.empty() ? "" : c.mismatch + "; ") << "max abs " << c.abs_max
                        << " (worst element " << c.worst_index << ": " << c.worst_test << " vs " << c.worst_ref
                        << "), max rel " << c.rel_max << ", tolerance atol " << tolerance.atol << " rtol "
                        << tolerance.rtol;
}

}  // namespace vn::engine::test
