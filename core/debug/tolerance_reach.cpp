// SPDX-License-Identifier: Apache-2.0
#include "core/debug/tolerance_reach.h"

#include <cmath>
#include <limits>

#include <Eigen/Core>
#include <fmt/format.h>

namespace vn::debug {
namespace {

std::string source_text(ToleranceOrigin::Source source, engine::PrecisionId preset, std::string_view flag) {
  switch (source) {
    case ToleranceOrigin::Source::kDefault:
      return "Polygraphy's default";
    case ToleranceOrigin::Source::kFlag:
      return std::string(flag);
    case ToleranceOrigin::Source::kPreset:
      return fmt::format("the {} preset", engine::precision_name(preset));
  }
  return {};
}

// The largest finite |value| of a float tensor; 0 for other dtypes or when none is finite.
double max_finite_magnitude(const Tensor& t) {
  if (!t.defined() || !dtype_is_float(t.dtype())) return 0;
  double m = 0;
  dispatch_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      const T* v = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double x = std::fabs(static_cast<double>(v[i]));
        if (std::isfinite(x) && x > m) m = x;
      }
    }
  });
  return m;
}

}  // namespace

std::string origin_text(const ToleranceOrigin& origin) {
  if (origin.atol == origin.rtol) {
    return origin.atol == ToleranceOrigin::Source::kFlag ? "--atol/--rtol"
                                                         : source_text(origin.atol, origin.preset, "");
  }
  return fmt::format("atol: {}; rtol: {}", source_text(origin.atol, origin.preset, "--atol"),
                     source_text(origin.rtol, origin.preset, "--rtol"));
}

ToleranceOrigin origin_for(const ToleranceOrigin& origin, const CompareConfig& config, std::string_view name) {
  ToleranceOrigin o = origin;
  if (config.atol.find(name) != config.atol.end() && !name.empty()) o.atol = ToleranceOrigin::Source::kFlag;
  if (config.rtol.find(name) != config.rtol.end() && !name.empty()) o.rtol = ToleranceOrigin::Source::kFlag;
  return o;
}

double precision_epsilon(engine::PrecisionId precision) {
  switch (precision) {
    case engine::PrecisionId::kFp32:
      return std::ldexp(1.0, -23);
    case engine::PrecisionId::kTf32:
    case engine::PrecisionId::kFp16:
    case engine::PrecisionId::kFp16Strict:
      return std::ldexp(1.0, -10);
    case engine::PrecisionId::kBf16:
      return std::ldexp(1.0, -7);
    case engine::PrecisionId::kInt8:
      return 1.0 / 127.0;
  }
  return 0;
}

double rounding_fails_above(const Tolerance& t, engine::PrecisionId precision) {
  const double eps = precision_epsilon(precision);
  // Rounding to the nearest value moves it by at most half the spacing there: half the epsilon of
  // itself for a float format; half a step of the tensor's grid (a 127th of its range) for int8,
  // which is all of a value half a step from zero.
  const double rel_rounding = precision == engine::PrecisionId::kInt8 ? 1.0 : eps / 2;
  if (t.rtol >= rel_rounding) return std::numeric_limits<double>::infinity();
  return t.atol / (eps / 2);
}

std::string rounding_note(const Tolerance& t, engine::PrecisionId precision) {
  const double above = rounding_fails_above(t, precision);
  if (!std::isfinite(above)) return {};
  const double eps = precision_epsilon(precision);
  if (precision == engine::PrecisionId::kInt8) {
    return fmt::format(
        "atol {:.3g} and rtol {:.3g} are below int8's rounding (a step is 1/127 of a tensor's range): "
        "a tensor with values above {:.3g} can fail from rounding alone, so a layer named for it may "
        "only round",
        t.atol, t.rtol, above);
  }
  return fmt::format(
      "rtol {:.3g} is below {}'s rounding (epsilon {:.3g}, so up to {:.3g} of a value): a tensor with "
      "values above {:.3g} can fail from rounding alone, so a layer named for it may only round",
      t.rtol, engine::precision_name(precision), eps, eps / 2, above);
}

ToleranceReach tolerance_reach(const TensorComparison& c, const Tensor& ref, engine::PrecisionId precision) {
  ToleranceReach r;
  r.precision = precision;
  if (!c.mismatch.empty() || !ref.defined() || !dtype_is_float(ref.dtype())) return r;
  r.ref_max_abs = max_finite_magnitude(ref);
  const double atol = c.tolerance.atol, rtol = c.tolerance.rtol, m = r.ref_max_abs;
  const double eps = precision_epsilon(precision);
  const bool int8 = precision == engine::PrecisionId::kInt8;
  const double abs_rounding = eps / 2 * m;
  const std::string name = fmt::format("'{}'", c.name);
  const std::string_view precision_name = engine::precision_name(precision);
  if (m > 0 && atol >= m) {
    r.cannot_fail = true;
    r.note = fmt::format(
        "atol {:.3g} is not below the largest magnitude of the reference of {} ({:.3g}): an output of zeros passes, "
        "as does any within {:.3g} of zero whatever its cosine, so this tolerance cannot tell a wrong output of that "
        "size from the right one",
        atol, name, m, atol - m);
  } else if (m > rounding_fails_above(c.tolerance, precision)) {
    r.rounding_fails = true;
    r.note = int8 ? fmt::format(
                        "rounding alone can fail this tolerance: int8's step is 1/127 of a tensor's range, "
                        "so rounding moves the values of {} (largest {:.3g}) by up to {:.3g}, above atol "
                        "{:.3g}, and small values by up to all of themselves, above rtol {:.3g}",
                        name, m, abs_rounding, atol, rtol)
                  : fmt::format(
                        "rounding alone can fail this tolerance: {}'s epsilon is {:.3g}, so rounding moves "
                        "a value by up to {:.3g} of itself, above rtol {:.3g}, and the largest of {} ({:.3g}) "
                        "by up to {:.3g}, above atol {:.3g}",
                        precision_name, eps, eps / 2, rtol, name, m, abs_rounding, atol);
  }
  return r;
}

std::vector<OutputNumbers> output_numbers(const std::vector<ResultsComparison>& comparisons,
                                          const std::vector<TensorMap>& ref_outputs, const CompareConfig& config,
                                          const std::optional<ToleranceOrigin>& origin, engine::PrecisionId precision) {
  std::vector<OutputNumbers> out;
  for (size_t i = 0; i < comparisons.size(); ++i) {
    for (const TensorComparison& c : comparisons[i].tensors) {
      OutputNumbers o;
      o.name = c.name;
      o.passed = c.passed;
      o.mismatch = c.mismatch;
      o.max_abs_error = c.abs_max;
      o.max_rel_error = c.rel_max;
      o.cosine = c.cosine;
      o.atol = c.tolerance.atol;
      o.rtol = c.tolerance.rtol;
      if (origin) o.tolerance_from = origin_text(origin_for(*origin, config, c.name));
      const Tensor* ref = i < ref_outputs.size() ? ref_outputs[i].find(c.name) : nullptr;
      if (ref != nullptr) o.reach = tolerance_reach(c, *ref, precision);
      o.used = !c.mismatch.empty()    ? std::numeric_limits<double>::infinity()
               : c.tolerance.atol > 0 ? c.min_atol / c.tolerance.atol
                                      : (c.passed ? 0.0 : std::numeric_limits<double>::infinity());
      out.push_back(std::move(o));
    }
  }
  return out;
}

const OutputNumbers* worst_output(const std::vector<OutputNumbers>& outputs) {
  const OutputNumbers* worst = nullptr;
  for (const OutputNumbers& o : outputs) {
    if (!o.passed) return &o;
    if (worst == nullptr || o.used > worst->used) worst = &o;
  }
  return worst;
}

std::string numbers_text(const OutputNumbers& o) {
  if (!o.mismatch.empty()) return o.mismatch;
  // A cosine that rounds to 1 but is not says how far below it is.
  std::string cosine = fmt::format("{:.6g}", o.cosine);
  if (cosine == "1" && o.cosine < 1) cosine = fmt::format("1 - {:.2g}", 1 - o.cosine);
  return fmt::format("max abs error {:.5g}, max rel error {:.5g}, cosine {} (atol {:.5g}, rtol {:.5g}{})",
                     o.max_abs_error, o.max_rel_error, cosine, o.atol, o.rtol,
                     o.tolerance_from.empty() ? "" : ": " + o.tolerance_from);
}

}  // namespace vn::debug
