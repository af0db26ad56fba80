// SPDX-License-Identifier: Apache-2.0
#include "core/compare/compare_json.h"

#include <cmath>

namespace vn {
namespace {

nlohmann::ordered_json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

nlohmann::ordered_json tensor_comparison_json(const TensorComparison& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["passed"] = c.passed;
  if (!c.mismatch.empty()) j["mismatch"] = c.mismatch;
  j["tolerance"] = {{"atol", number(c.tolerance.atol)},
                    {"rtol", number(c.tolerance.rtol)},
                    {"check_error_stat", std::string(error_stat_name(c.tolerance.stat))},
                    {"quantile", number(c.tolerance.quantile)}};
  j["count"] = c.count;
  j["abs_error"] = {{"max", number(c.abs_max)},
                    {"mean", number(c.abs_mean)},
                    {"median", number(c.abs_median)},
                    {"quantile", number(c.abs_quantile)}};
  j["rel_error"] = {{"max", number(c.rel_max)},
                    {"mean", number(c.rel_mean)},
                    {"median", number(c.rel_median)},
                    {"quantile", number(c.rel_quantile)}};
  j["cosine"] = number(c.cosine);
  j["nmse"] = number(c.nmse);
  j["snr_db"] = number(c.snr_db);
  j["nan"] = {{"test", c.nan_test}, {"ref", c.nan_ref}};
  j["inf"] = {{"test", c.inf_test}, {"ref", c.inf_ref}};
  j["mismatch_count"] = c.mismatch_count;
  j["worst"] = {{"index", c.worst_index}, {"test", number(c.worst_test)}, {"ref", number(c.worst_ref)}};
  j["min_passing"] = {{"atol", number(c.min_atol)}, {"rtol", number(c.min_rtol)}};
  return j;
}

nlohmann::ordered_json results_comparison_json(const ResultsComparison& comparison) {
  nlohmann::ordered_json j;
  j["passed"] = comparison.passed();
  j["tensors"] = nlohmann::ordered_json::array();
  for (const TensorComparison& c : comparison.tensors) j["tensors"].push_back(tensor_comparison_json(c));
  j["only_in_test"] = comparison.only_in_test;
  j["only_in_ref"] = comparison.only_in_ref;
  return j;
}

}  // namespace vn
