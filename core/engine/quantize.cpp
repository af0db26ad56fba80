// SPDX-License-Identifier: Apache-2.0
#include "core/engine/quantize.h"

#include <algorithm>

namespace vn::engine {

float scale_from_amax(double amax) {
  if (!(amax > 0) || !std::isfinite(amax)) return 1.0f / static_cast<float>(kInt8Max);
  return static_cast<float>(amax / kInt8Max);
}

void fake_quantize_in_place(std::span<float> values, float scale) {
  for (float& v : values) v = scale * static_cast<float>(quantize_value(v, scale));
}

void quantize_to_int8(std::span<const float> values, float scale, int8_t* out) {
  for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<int8_t>(quantize_value(values[i], scale));
}

std::vector<float> per_channel_scales(std::span<const double> weights, int64_t channels) {
  std::vector<float> scales(static_cast<size_t>(channels));
  const size_t per_channel = channels > 0 ? weights.size() / static_cast<size_t>(channels) : 0;
  for (size_t c = 0; c < scales.size(); ++c) {
    double amax = 0;
    for (size_t i = 0; i < per_channel; ++i) amax = std::max(amax, std::abs(weights[c * per_channel + i]));
    scales[c] = scale_from_amax(amax);
  }
  return scales;
}

std::vector<int8_t> quantize_per_channel(std::span<const double> weights, std::span<const float> scales) {
  std::vector<int8_t> out(weights.size());
  const size_t per_channel = scales.empty() ? 0 : weights.size() / scales.size();
  for (size_t c = 0; c < scales.size(); ++c) {
    for (size_t i = 0; i < per_channel; ++i) {
      const size_t k = c * per_channel + i;
      out[k] = static_cast<int8_t>(quantize_value(static_cast<float>(weights[k]), scales[c]));
    }
  }
  return out;
}

}  // namespace vn::engine
