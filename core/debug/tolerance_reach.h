// SPDX-License-Identifier: Apache-2.0
// What a check's tolerance can tell: where the tolerance came from, and the two ways it can say
// nothing about accuracy. Above the reference's largest magnitude, atol passes an output of zeros
// (and anything else that small), so a "pass" proves nothing; below the resolution of the
// precision the engine runs in, rounding one value can exceed both tolerances, so a "fail" may be
// rounding alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/compare/compare.h"
#include "core/engine/precision.h"
#include "core/ir/tensor.h"
#include "core/ir/tensor_map.h"

namespace vn::debug {

/// Where the default ("" key) tolerances of a comparison came from. Per-tensor tolerances
/// (`--atol out0:1e-3`) always come from the flags.
struct ToleranceOrigin {
  enum class Source : uint8_t {
    kDefault,  ///< Polygraphy's default, 1e-5
    kFlag,     ///< --atol / --rtol
    kPreset,   ///< the tolerance preset of the engine's precision (`preset`)
  };
  Source atol = Source::kDefault;
  Source rtol = Source::kDefault;
  engine::PrecisionId preset = engine::PrecisionId::kFp32;
};

/// "Polygraphy's default", "--atol/--rtol", "the fp16 preset", or for mixed sources
/// "atol: --atol; rtol: the fp16 preset".
std::string origin_text(const ToleranceOrigin& origin);
/// The origin of the tolerance of tensor `name` under `config`: the flags for a tensor with its
/// own tolerance, else `origin`.
ToleranceOrigin origin_for(const ToleranceOrigin& origin, const CompareConfig& config, std::string_view name);

/// The resolution of a precision: its epsilon (the spacing of its values at 1: 2^-23 for fp32,
/// 2^-10 for fp16 and tf32, 2^-7 for bf16), or for int8, whose grid is set per tensor, 1/127 of a
/// tensor's largest magnitude.
double precision_epsilon(engine::PrecisionId precision);

/// The magnitude above which rounding one value to `precision` can exceed both tolerances of `t`:
/// atol over half the epsilon, when rtol is below the relative rounding error (half the epsilon;
/// for int8 up to 1, a value half a step from zero rounding to zero or a step); infinite when it
/// is not (rounding alone never fails).
double rounding_fails_above(const Tolerance& t, engine::PrecisionId precision);

/// A sentence for any comparison at `t` with an engine in `precision` whose rounding alone can fail
/// it ("rtol 1e-05 is below fp16's rounding ..."); empty when rounding cannot.
std::string rounding_note(const Tolerance& t, engine::PrecisionId precision);

/// What a tolerance can tell on one compared tensor.
struct ToleranceReach {
  double ref_max_abs = 0;  ///< the largest finite |value| of the reference (0 when none)
  /// atol is at least ref_max_abs (> 0): an output of zeros passes, and so does any output within
  /// atol - ref_max_abs of zero, whatever its cosine.
  bool cannot_fail = false;
  /// Rounding one value to `precision` can exceed both tolerances: ref_max_abs is above
  /// rounding_fails_above.
  bool rounding_fails = false;
  engine::PrecisionId precision = engine::PrecisionId::kFp32;
  /// One sentence saying what it means for the check (English, with the numbers); empty when the
  /// tolerance can tell.
  std::string note;
};

/// The reach of the tolerance `c` was compared with on the tensor whose reference values are
/// `ref`, for an engine running in `precision`. A comparison that could not compare (`mismatch`)
/// or of non-float tensors has no note.
ToleranceReach tolerance_reach(const TensorComparison& c, const Tensor& ref, engine::PrecisionId precision);

/// The numbers of one output comparison of a check, for its evidence.
struct OutputNumbers {
  std::string name;
  bool passed = false;
  std::string mismatch;  ///< the comparison could not compare (dtype, shape)
  double max_abs_error = 0;
  double max_rel_error = 0;
  double cosine = 1;
  double atol = 0;
  double rtol = 0;
  std::string tolerance_from;  ///< origin_text of its tolerance; empty when unknown
  ToleranceReach reach;
  /// The share of the tolerance the worst element uses: the smallest passing atol over atol
  /// (above 1 fails; infinite for NaN or a mismatch).
  double used = 0;
};

/// The numbers of every output of every feed (`comparisons[i]` compares the outputs of feed i
/// with `ref_outputs[i]`), each with its reach; `origin` unset: the origin is not said.
std::vector<OutputNumbers> output_numbers(const std::vector<ResultsComparison>& comparisons,
                                          const std::vector<TensorMap>& ref_outputs, const CompareConfig& config,
                                          const std::optional<ToleranceOrigin>& origin, engine::PrecisionId precision);

/// The output a check is summed up by: the first failing one, else the one closest to failing
/// (the largest `used`). Null for an empty list.
const OutputNumbers* worst_output(const std::vector<OutputNumbers>& outputs);

/// "max abs error 0.52, max rel error 1.3, cosine 0.9981 (atol 1e-05, rtol 1e-05: Polygraphy's
/// default)" (a cosine within 5e-7 of 1 as "1 - 4.2e-07"), or the mismatch.
std::string numbers_text(const OutputNumbers& o);

}  // namespace vn::debug
