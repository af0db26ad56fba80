// SPDX-License-Identifier: Apache-2.0
#include "core/engine/fault.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <utility>

#include "core/common/hash.h"
#include "core/engine/tactic_registry.h"

namespace vn::engine {
namespace {

constexpr std::array<std::pair<FaultKind, std::string_view>, 7> kKinds{{
    {FaultKind::kScale, "scale"},
    {FaultKind::kOffset, "offset"},
    {FaultKind::kNoise, "noise"},
    {FaultKind::kZero, "zero"},
    {FaultKind::kNan, "nan"},
    {FaultKind::kInf, "inf"},
    {FaultKind::kBiasDrop, "bias-drop"},
}};

constexpr std::array<std::pair<FaultCondition, std::string_view>, 5> kConditions{{
    {FaultCondition::kAlways, "always"},
    {FaultCondition::kChannelsNotMultipleOf8, "channels-not-multiple-of-8"},
    {FaultCondition::kChannelsMultipleOf8, "channels-multiple-of-8"},
    {FaultCondition::kReducedPrecision, "reduced-precision"},
    {FaultCondition::kFused, "fused"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <typename T>
std::string names_of(const T& table) {
  std::string out;
  for (const auto& [value, name] : table) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}


// A uniform double in [0, 1) from 53 random bits.
double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

}  // namespace

Result<FaultSpec> parse_fault(std::string_view text) {
  FaultSpec f;
  f.text = std::string(text);
  f.seed = fnv1a(text);
  auto fail = [&](const std::string& why) {
    return make_error(StatusCode::kInvalidArgument, "--inject-fault '{}': {}", text, why);
  };
  auto number = [&](std::string_view key, std::string_view value, double& out) -> Status {
    const std::string v(value);
    char* end = nullptr;
    out = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(out)) {
      return fail(fmt::format("{}={} is not a finite number", key, value));
    }
    return Status::OK();
  };
  bool has_kind = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string_view item = trim(text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos));
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return fail(fmt::format("'{}' is not key=value", item));
    const std::string key = lower(trim(item.substr(0, eq)));
    const std::string_view value = trim(item.substr(eq + 1));
    if (value.empty()) return fail(fmt::format("{} has no value", key));
    if (key == "layer") {
      f.layer = std::string(value);
    } else if (key == "tactic") {
      if (!find_tactic(value)) {
        std::string names;
        for (const TacticInfo& t : all_tactics()) names += (names.empty() ? "" : ", ") + std::string(t.name);
        return fail(fmt::format("unknown tactic '{}' (expected one of {})", value, names));
      }
      f.tactic = std::string(value);
    } else if (key == "kind") {
      const std::string k = lower(value);
      bool found = false;
      for (const auto& [kind, name] : kKinds) {
        if (name == k) {
          f.kind = kind;
          found = true;
        }
      }
      if (!found) return fail(fmt::format("unknown kind '{}' (expected {})", value, names_of(kKinds)));
      has_kind = true;
    } else if (key == "factor") {
      VN_RETURN_IF_ERROR(number(key, value, f.factor));
    } else if (key == "magnitude") {
      VN_RETURN_IF_ERROR(number(key, value, f.magnitude));
    } else if (key == "fraction") {
      VN_RETURN_IF_ERROR(number(key, value, f.fraction));
      if (!(f.fraction > 0 && f.fraction <= 1)) return fail(fmt::format("fraction={} is not in (0, 1]", value));
    } else if (key == "when") {
      const std::string w = lower(value);
      bool found = false;
      for (const auto& [cond, name] : kConditions) {
        if (name == w) {
          f.when = cond;
          found = true;
        }
      }
      if (!found) return fail(fmt::format("unknown condition '{}' (expected {})", value, names_of(kConditions)));
    } else if (key == "seed") {
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), f.seed);
      if (ec != std::errc() || ptr != value.data() + value.size()) {
        return fail(fmt::format("seed={} is not a non-negative integer", value));
      }
    } else if (key == "missing") {
      if (value != "ignore" && value != "error") return fail(fmt::format("missing={}: expected ignore or error", value));
      f.ignore_if_absent = value == "ignore";
    } else {
      return fail(
          fmt::format("unknown key '{}' (expected layer, tactic, kind, factor, magnitude, fraction, when, "
                      "seed, missing)",
                      key));
    }
  }
  if (f.layer.empty() == f.tactic.empty()) return fail("name exactly one target: layer=NAME or tactic=NAME");
  if (!has_kind) return fail(fmt::format("kind= is required ({})", names_of(kKinds)));
  return f;
}

bool fault_condition_holds(const FaultSpec& fault, const Shape& output_shape, PrecisionId precision,
                           size_t member_nodes) {
  const int64_t channels = output_shape.empty() ? 1 : (output_shape.size() == 1 ? output_shape[0] : output_shape[1]);
  switch (fault.when) {
    case FaultCondition::kAlways:
      return true;
    case FaultCondition::kChannelsNotMultipleOf8:
      return channels % 8 != 0;
    case FaultCondition::kChannelsMultipleOf8:
      return channels % 8 == 0;
    case FaultCondition::kReducedPrecision:
      return precision_of(precision).storage != DType::kFloat32;
    case FaultCondition::kFused:
      return member_nodes > 1;
  }
  return false;
}

void apply_fault(const FaultSpec& fault, std::span<float> values) {
  if (fault.kind == FaultKind::kBiasDrop) return;
  const uint64_t select_seed = splitmix64(fault.seed ^ 0x5eedull);
  for (size_t i = 0; i < values.size(); ++i) {
    if (fault.fraction < 1 && unit(splitmix64(select_seed + i)) >= fault.fraction) continue;
    float& v = values[i];
    switch (fault.kind) {
      case FaultKind::kScale:
        v = static_cast<float>(v * fault.factor);
        break;
      case FaultKind::kOffset:
        v = static_cast<float>(v + fault.magnitude);
        break;
      case FaultKind::kNoise: {
        // Box-Muller on two independent draws for element i.
        const double u1 = 1.0 - unit(splitmix64(fault.seed + 2 * i));
        const double u2 = unit(splitmix64(fault.seed + 2 * i + 1));
        const double n = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
        v = static_cast<float>(v + fault.magnitude * n);
        break;
      }
      case FaultKind::kZero:
        v = 0.0f;
        break;
      case FaultKind::kNan:
        v = std::numeric_limits<float>::quiet_NaN();
        break;
      case FaultKind::kInf:
        v = std::numeric_limits<float>::infinity();
        break;
      case FaultKind::kBiasDrop:
        break;
    }
  }
}

}  // namespace vn::engine
