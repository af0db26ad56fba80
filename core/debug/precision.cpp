// SPDX-License-Identifier: Apache-2.0
#include "core/debug/precision.h"

#include <fmt/format.h>

#include <algorithm>

namespace vn::debug {
namespace {

bool is_float(DType dtype) { return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

}  // namespace

std::vector<PrecisionCandidate> precision_candidates(const engine::Plan& plan, std::vector<ExcludedLayer>* excluded) {
  std::vector<PrecisionCandidate> out;
  for (const engine::PlanLayer& layer : plan.layers) {
    const auto bad = std::find_if(layer.output_desc.begin(), layer.output_desc.end(),
                                  [](const engine::TensorDesc& d) { return !is_float(d.dtype); });
    if (bad == layer.output_desc.end()) {
      out.push_back({layer.nodes.empty() ? layer.name : layer.nodes.front(), layer.name});
    } else if (excluded) {
      const size_t i = static_cast<size_t>(bad - layer.output_desc.begin());
      excluded->push_back(
          {layer.name, fmt::format("output '{}' is {}, not floating point",
                                   i < layer.outputs.size() ? layer.outputs[i] : "?", dtype_name(bad->dtype))});
    }
  }
  return out;
}

std::vector<PrecisionCandidate> precision_candidates(const std::vector<eut::BuiltLayer>& layers,
                                                     engine::PrecisionId higher, std::vector<ExcludedLayer>* excluded) {
  std::vector<PrecisionCandidate> out;
  const std::string_view high = engine::precision_name(higher);
  for (const eut::BuiltLayer& layer : layers) {
    if (!layer.precision.empty() && layer.precision != high) {
      out.push_back({layer.name, layer.name});
    } else if (excluded) {
      excluded->push_back({layer.name, layer.precision.empty()
                                           ? std::string("the engine does not tell its precision")
                                           : fmt::format("runs in {} already", high)});
    }
  }
  return out;
}

Result<PrecisionResult> search_precision(const std::vector<std::string>& candidates,
                                         const PrecisionSearchOptions& options, const PrecisionCheckFn& check) {
  PrecisionResult result;
  const int64_t total = static_cast<int64_t>(candidates.size());
  // The K layers marked: the first K, or the last K, kept in network order either way.
  auto layers_for = [&](int64_t k) {
    if (options.direction == PrecisionDirection::kForward) {
      return std::vector<std::string>(candidates.begin(), candidates.begin() + k);
    }
    return std::vector<std::string>(candidates.end() - k, candidates.end());
  };
  auto run = [&](const std::string& phase, std::vector<std::string> marked) -> Result<bool> {
    VN_ASSIGN_OR_RETURN(CheckResult r, check(marked));
    result.steps.push_back({phase, std::move(marked), std::move(r)});
    if (options.on_step) options.on_step(result.steps.back());
    return result.steps.back().result.verdict == Verdict::kGood;
  };
  const std::string phase = options.mode == PrecisionMode::kBisect ? "bisect" : "linear";

  std::optional<int64_t> found;
  if (options.mode == PrecisionMode::kLinear) {
    for (int64_t k = 0; k <= total && !found; ++k) {
      VN_ASSIGN_OR_RETURN(bool passed, run(phase, layers_for(k)));
      if (passed) found = k;
    }
  } else {
    VN_ASSIGN_OR_RETURN(bool zero, run(phase, {}));
    if (zero) {
      found = 0;
    } else if (total > 0) {
      VN_ASSIGN_OR_RETURN(bool all, run(phase, layers_for(total)));
      if (all) {
        int64_t bad = 0, good = total;
        while (good - bad > 1) {
          const int64_t k = bad + (good - bad) / 2;
          VN_ASSIGN_OR_RETURN(bool passed, run(phase, layers_for(k)));
          (passed ? good : bad) = k;
        }
        found = good;
      }
    }
  }
  if (!found) return result;
  result.k = found;
  result.prefix = layers_for(*found);
  result.layers = result.prefix;
  if (!options.minimize || result.layers.size() < 2) return result;

  // The boundary layer (the K-th counted from the search's start) is needed: the K - 1 others
  // alone failed. Every other one is tried without, farthest from the boundary first.
  const std::string boundary =
      options.direction == PrecisionDirection::kForward ? result.prefix.back() : result.prefix.front();
  std::vector<std::string> order = result.prefix;
  if (options.direction == PrecisionDirection::kReverse) std::reverse(order.begin(), order.end());
  for (const std::string& layer : order) {
    if (layer == boundary) continue;
    std::vector<std::string> without;
    for (const std::string& l : result.layers) {
      if (l != layer) without.push_back(l);
    }
    VN_ASSIGN_OR_RETURN(bool passed, run("minimize", without));
    if (passed) result.layers = std::move(without);
  }
  return result;
}

}  // namespace vn::debug
