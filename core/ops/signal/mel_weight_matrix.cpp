// SPDX-License-Identifier: Apache-2.0
// MelWeightMatrix (opset 17): a [dft_length / 2 + 1, num_mel_bins] matrix of triangular filters
// evenly spaced on the mel scale (mel = 2595 log10(1 + hz / 700)) between lower_edge_hertz and
// upper_edge_hertz, following ONNX's reference (onnx/backend/test/case/node/melweightmatrix.py):
// num_mel_bins + 2 edges are mapped to DFT bins with floor((dft_length + 1) * hz / sample_rate).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Result<double> scalar_input(const KernelContext& ctx, size_t i, std::string_view what) {
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "{} must hold one value, got shape {}", what,
                    shape_to_string(t.shape()));
  }
  Result<std::vector<double>> v = tensor_to_doubles(t);
  if (!v.ok())
    return ctx.fail(StatusCode::kUnsupportedDType, "{} must be numeric, got {}", what, dtype_name(t.dtype()));
  return (*v)[0];
}

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

Status mel_weight_matrix(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 5));
  for (size_t i = 0; i < 3; ++i) {
    if (!dtype_is_integer(ctx.input(i).dtype())) {
      return ctx.fail(StatusCode::kUnsupportedDType,
                      "num_mel_bins, dft_length and sample_rate must be integers, got {}",
                      dtype_name(ctx.input(i).dtype()));
    }
  }
  VN_ASSIGN_OR_RETURN(double mel_bins_d, scalar_input(ctx, 0, "num_mel_bins"));
  VN_ASSIGN_OR_RETURN(double dft_length_d, scalar_input(ctx, 1, "dft_length"));
  VN_ASSIGN_OR_RETURN(double sample_rate, scalar_input(ctx, 2, "sample_rate"));
  VN_ASSIGN_OR_RETURN(double lower_hz, scalar_input(ctx, 3, "lower_edge_hertz"));
  VN_ASSIGN_OR_RETURN(double upper_hz, scalar_input(ctx, 4, "upper_edge_hertz"));
  if (mel_bins_d < 1 || dft_length_d < 1 || sample_rate < 1 || mel_bins_d > 1e7 || dft_length_d > 1e9) {
    return ctx.fail(StatusCode::kInvalidModel,
                    "num_mel_bins ({}), dft_length ({}) and sample_rate ({}) must be positive", mel_bins_d,
                    dft_length_d, sample_rate);
  }
  if (!(lower_hz >= 0 && lower_hz <= upper_hz && std::isfinite(upper_hz))) {
    return ctx.fail(StatusCode::kInvalidModel, "edges must satisfy 0 <= lower_edge_hertz ({}) <= upper_edge_hertz ({})",
                    lower_hz, upper_hz);
  }
  const auto mel_bins = static_cast<int64_t>(mel_bins_d);
  const auto dft_length = static_cast<int64_t>(dft_length_d);
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  const int64_t code = ctx.attr_int("output_datatype", 1);
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int32_t>(code));
  if (!dtype)
    return ctx.fail(StatusCode::kUnsupportedDType, "output_datatype {} is not a supported ONNX data type", code);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, *dtype, {spectrogram_bins, mel_bins}));
  // Filter edges: num_mel_bins + 2 points, mel_step = mel range / (num_mel_bins + 2) as in the
  // reference, converted to DFT bin indices.
  const double low_mel = hz_to_mel(lower_hz), high_mel = hz_to_mel(upper_hz);
  const double mel_step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edges(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = mel_to_hz(static_cast<double>(i) * mel_step + low_mel);
    edges[static_cast<size_t>(i)] =
        static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / sample_rate));
  }
  std::vector<double> w(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
  auto at = [&](int64_t bin, int64_t mel) -> double* {
    if (bin < 0 || bin >= spectrogram_bins) return nullptr;
    return &w[static_cast<size_t>(bin * mel_bins + mel)];
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = edges[static_cast<size_t>(i)], mid = edges[static_cast<size_t>(i) + 1],
                  hi = edges[static_cast<size_t>(i) + 2];
    if (mid == lo) {
      if (double* p = at(mid, i)) *p = 1.0;
    } else {
      for (int64_t j = lo; j <= mid; ++j) {
        if (double* p = at(j, i)) *p = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
      }
    }
    for (int64_t j = mid; j < hi; ++j) {
      if (double* p = at(j, i)) *p = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
    }
  }
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
  return dispatch_types(Types{}, ctx, *dtype, [&]<typename T>() {
    T* py = y->mutable_data<T>();
    for (size_t i = 0; i < w.size(); ++i) py[i] = static_cast<T>(w[i]);
    return Status::OK();
  });
}

}  // namespace

void register_mel_weight_matrix_ops(OpRegistry& registry) { registry.add("MelWeightMatrix", 17, mel_weight_matrix); }

}  // namespace vn::ops
