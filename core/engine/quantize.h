// SPDX-License-Identifier: Apache-2.0
// Symmetric int8 quantization as the engine's int8 layers do it: per-tensor activation scales,
// per-output-channel weight scales, integers in [-128, 127] with zero point 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace vn::engine {

/// Per-tensor int8 scales of activations, by tensor name: a value x is stored as
/// round(x / scale) clamped to [-128, 127].
using ScaleTable = std::map<std::string, float>;

inline constexpr int32_t kInt8Min = -128;
inline constexpr int32_t kInt8Max = 127;

/// The scale that maps [-amax, amax] onto [-127, 127]: amax / 127. A zero, negative or non-finite
/// amax (a tensor that is always 0, or that overflowed) gives the scale of amax = 1, so that
/// quantization stays defined.
float scale_from_amax(double amax);

/// round(x / scale), ties to even as ONNX QuantizeLinear rounds, saturated to [-128, 127]; NaN
/// quantizes to 0 (an integer format has no NaN). `scale` must be positive.
inline int32_t quantize_value(float x, float scale) {
  const float q = std::nearbyint(x / scale);
  if (!(q == q)) return 0;
  if (q <= static_cast<float>(kInt8Min)) return kInt8Min;
  if (q >= static_cast<float>(kInt8Max)) return kInt8Max;
  return static_cast<int32_t>(q);
}

/// Replaces every value by its int8 grid value scale * quantize_value(x, scale): what a tensor
/// stored in int8 reads back as.
void fake_quantize_in_place(std::span<float> values, float scale);

/// Quantizes values to int8 with one scale.
void quantize_to_int8(std::span<const float> values, float scale, int8_t* out);
/// The integers of quantize_to_int8 as floats (exact): the operand of an int8 product summed in
/// float32 (exact while every partial sum stays within 2^24).
void quantize_to_float(std::span<const float> values, float scale, float* out);
/// quantize_to_float for values on the int8 grid of `scale` already, each the float32 product of
/// `scale` and an integer of [-128, 127] as fake_quantize_in_place leaves them (what an int8 layer
/// of the engine hands the next): the same integers, read off with one multiplication by
/// 1 / scale, whose error (a few 2^-24 of at most 128) cannot move the rounding to the nearest.
void grid_to_float(std::span<const float> values, float scale, float* out);
/// What an int8 kernel reads of an input it quantizes itself: grid_to_float when the values lie
/// on the grid of `scale` already (`on_grid`, LayerKernel::run_on_grid), else quantize_to_float.
inline void input_integers(std::span<const float> values, float scale, float* out, bool on_grid) {
  if (on_grid) {
    grid_to_float(values, scale, out);
  } else {
    quantize_to_float(values, scale, out);
  }
}

/// Per-output-channel weight scales of `weights` viewed as `channels` rows of equal length
/// (row-major): max |w| of each row / 127 (see scale_from_amax for all-zero rows).
std::vector<float> per_channel_scales(std::span<const double> weights, int64_t channels);

/// Quantizes `weights` viewed as `channels` rows with one scale per row (per_channel_scales).
std::vector<int8_t> quantize_per_channel(std::span<const double> weights, std::span<const float> scales);

}  // namespace vn::engine
