// SPDX-License-Identifier: Apache-2.0
// Fourier transforms: DFT (17, and 20 with the axis as an input) along one signal axis (real
// [..., 1] or complex [..., 2] input, forward or inverse, optionally one-sided, where the inverse
// of one-sided bins is numpy's irfft) and STFT (framed, optionally windowed DFTs of a batch of 1-D
// signals). Direct O(n^2) transforms in double precision with exactly reduced
// twiddle indices, so results agree with numpy.fft to double rounding.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string_view>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// e^{-2 pi i j / n} for j in [0, n) (the sign flips for the inverse transform).
struct Twiddles {
  std::vector<double> cos, sin;
  explicit Twiddles(int64_t n) : cos(static_cast<size_t>(n)), sin(static_cast<size_t>(n)) {
    for (int64_t j = 0; j < n; ++j) {
      const double a = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
      cos[static_cast<size_t>(j)] = std::cos(a);
      sin[static_cast<size_t>(j)] = std::sin(a);
    }
  }
};

/// out[k] = sum_{t < used} in[t] e^{-+2 pi i k t / n} for k < bins; `in` is interleaved complex
/// with stride `in_stride` complex elements, `out` interleaved with stride `out_stride`.
void dft_1d(const double* in, int64_t in_stride, int64_t used, int64_t n, int64_t bins, bool inverse,
            const Twiddles& tw, double* out, int64_t out_stride) {
  const double sign = inverse ? 1.0 : -1.0;
  const double norm = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0.0, im = 0.0;
    int64_t j = 0;  // k * t mod n, advanced by k each step
    for (int64_t t = 0; t < used; ++t) {
      const double xr = in[t * in_stride * 2], xi = in[t * in_stride * 2 + 1];
      const double c = tw.cos[static_cast<size_t>(j)], s = sign * tw.sin[static_cast<size_t>(j)];
      re += xr * c - xi * s;
      im += xr * s + xi * c;
      j += k;
      if (j >= n) j -= n;
    }
    out[k * out_stride * 2] = re * norm;
    out[k * out_stride * 2 + 1] = im * norm;
  }
}

/// The input as interleaved complex doubles (imaginary parts 0 for a real [..., 1] input).
Result<std::vector<double>> as_complex(const Tensor& x) {
  VN_ASSIGN_OR_RETURN(std::vector<double> v, tensor_to_doubles(x));
  if (x.dim(x.rank() - 1) == 2) return v;
  std::vector<double> c(v.size() * 2, 0.0);
  for (size_t i = 0; i < v.size(); ++i) c[2 * i] = v[i];
  return c;
}

/// Stores interleaved complex doubles into a float tensor of the same element count.
Status store(KernelContext& ctx, const std::vector<double>& values, Tensor* y) {
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
  return dispatch_types(Types{}, ctx, y->dtype(), [&]<typename T>() {
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    for (size_t i = 0; i < values.size(); ++i) py[i] = static_cast<T>(values[i]);
    return Status::OK();
  });
}

Status check_signal(const KernelContext& ctx, const Tensor& x, int64_t min_rank, std::string_view layout) {
  if (!dtype_is_float(x.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "input must be a float tensor, got {}", dtype_name(x.dtype()));
  }
  if (x.rank() < min_rank || (x.dim(x.rank() - 1) != 1 && x.dim(x.rank() - 1) != 2)) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "input must be {} with a last dimension of 1 (real) or 2 (complex), got {}", layout,
                    shape_to_string(x.shape()));
  }
  return Status::OK();
}

Result<int64_t> scalar_int(const KernelContext& ctx, size_t i, std::string_view what) {
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> v, input_int64s(ctx, i, what));
  if (v.size() != 1) return ctx.fail(StatusCode::kShapeMismatch, "{} must hold one value, got {}", what, v.size());
  return v[0];
}

/// The inverse of a one-sided spectrum (numpy.fft.irfft): `in` holds bins [0, m) of a Hermitian
/// spectrum of length n (zero beyond m, bins past n / 2 unused) and `out` the n real samples.
/// As numpy does, the imaginary parts of bin 0 and (n even) bin n / 2 are ignored.
void irfft_1d(const double* in, int64_t in_stride, int64_t m, int64_t n, const Twiddles& tw, double* out,
              int64_t out_stride) {
  const int64_t half = n / 2;
  for (int64_t t = 0; t < n; ++t) {
    double acc = m > 0 ? in[0] : 0.0;
    int64_t j = t;  // k * t mod n
    for (int64_t k = 1; k <= half && k < m; ++k, j = (j + t) % n) {
      const double xr = in[k * in_stride * 2], xi = in[k * in_stride * 2 + 1];
      const double c = tw.cos[static_cast<size_t>(j)], s = tw.sin[static_cast<size_t>(j)];
      // Bin k and its mirror n - k add up to 2 Re(X e^{+i theta}); the Nyquist bin has no mirror.
      acc += 2 * k == n ? xr * c : 2 * (xr * c - xi * s);
    }
    out[t * out_stride] = acc / static_cast<double>(n);
  }
}

/// DFT-17 (axis attribute, default 1) and DFT-20 (`kAxisInput`: axis as optional input 2, default
/// -2). The axis may be any but the last, complex one; negative counts from the back. Forward or
/// inverse (scaled by 1 / n); onesided = 1 keeps the first n / 2 + 1 bins of a real input's
/// transform, or with inverse = 1 takes such bins and returns the n real samples (irfft).
template <bool kAxisInput>
Status dft(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_RETURN_IF_ERROR(check_signal(ctx, x, 2, "[batch, signal dims..., 1 or 2]"));
  const int64_t rank = x.rank();
  int64_t axis = kAxisInput ? -2 : ctx.attr_int("axis", 1);
  if constexpr (kAxisInput) {
    if (ctx.has_input(2)) {
      VN_ASSIGN_OR_RETURN(axis, scalar_int(ctx, 2, "axis"));
    }
  }
  const int64_t given_axis = axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank - 2) {
    return ctx.fail(StatusCode::kInvalidModel, "axis {} must name a dimension other than the last, in [{}, {}]",
                    given_axis, -rank, rank - 2);
  }
  const bool inverse = ctx.attr_int("inverse", 0) != 0;
  const bool onesided = ctx.attr_int("onesided", 0) != 0;
  const bool complex_in = x.dim(rank - 1) == 2;
  if (onesided && complex_in && !inverse) {
    return ctx.fail(StatusCode::kInvalidModel, "onesided = 1 needs a real input for a forward transform");
  }
  const bool irfft = onesided && inverse;
  const int64_t n_in = x.dim(axis);
  // irfft's default length is that of the spectrum the n_in one-sided bins come from.
  int64_t n = irfft ? 2 * (n_in - 1) : n_in;
  if (ctx.has_input(1)) {
    VN_ASSIGN_OR_RETURN(n, scalar_int(ctx, 1, "dft_length"));
    if (n < 1 || n > (int64_t{1} << 31))
      return ctx.fail(StatusCode::kInvalidModel, "dft_length {} must be positive", n);
  }
  if (n <= 0) return ctx.fail(StatusCode::kShapeMismatch, "the transformed axis {} is too short", axis);
  const int64_t bins = irfft ? n : onesided ? n / 2 + 1 : n;
  Shape out_shape = x.shape();
  out_shape[static_cast<size_t>(axis)] = bins;
  out_shape.back() = irfft ? 1 : 2;
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
  if (y->numel() == 0) return Status::OK();
  VN_ASSIGN_OR_RETURN(std::vector<double> in, as_complex(x));
  std::vector<double> out(static_cast<size_t>(y->numel()));
  const Twiddles tw(n);
  const int64_t outer = shape_product(x.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = shape_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size() - 1);
  const int64_t used = std::min(n, n_in);  // zero-padded beyond the input, truncated below it
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double* src = in.data() + ((o * n_in) * inner + i) * 2;
      if (irfft) {
        irfft_1d(src, inner, n_in, n, tw, out.data() + (o * bins) * inner + i, inner);
      } else {
        dft_1d(src, inner, used, n, bins, inverse, tw, out.data() + ((o * bins) * inner + i) * 2, inner);
      }
    }
  }
  return store(ctx, out, y);
}

Status stft(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_RETURN_IF_ERROR(check_signal(ctx, x, 3, "[batch, signal_length, 1 or 2]"));
  if (x.rank() != 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "signal must be [batch, signal_length, 1 or 2], got {}",
                    shape_to_string(x.shape()));
  }
  VN_ASSIGN_OR_RETURN(int64_t step, scalar_int(ctx, 1, "frame_step"));
  if (step < 1) return ctx.fail(StatusCode::kInvalidModel, "frame_step must be positive, got {}", step);
  std::vector<double> window;
  int64_t n = -1;
  if (ctx.has_input(2)) {
    const Tensor& w = ctx.input(2);
    if (w.rank() != 1 || !dtype_is_float(w.dtype())) {
      return ctx.fail(StatusCode::kShapeMismatch, "window must be a 1-D float tensor, got {} {}", dtype_name(w.dtype()),
                      shape_to_string(w.shape()));
    }
    VN_ASSIGN_OR_RETURN(window, tensor_to_doubles(w));
    n = w.dim(0);
  }
  if (ctx.has_input(3)) {
    VN_ASSIGN_OR_RETURN(int64_t length, scalar_int(ctx, 3, "frame_length"));
    if (n >= 0 && length != n) {
      return ctx.fail(StatusCode::kShapeMismatch, "frame_length {} differs from the window length {}", length, n);
    }
    n = length;
  }
  if (n < 0) return ctx.fail(StatusCode::kInvalidModel, "one of window and frame_length must be given");
  const int64_t batch = x.dim(0), length = x.dim(1);
  if (n < 1 || n > length) {
    return ctx.fail(StatusCode::kShapeMismatch, "frame length {} must be in [1, signal length {}]", n, length);
  }
  const bool onesided = ctx.attr_int("onesided", 1) != 0;
  if (onesided && x.dim(2) == 2) return ctx.fail(StatusCode::kUnsupportedAttr, "onesided = 1 needs a real signal");
  const int64_t frames = 1 + (length - n) / step;
  const int64_t bins = onesided ? n / 2 + 1 : n;
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {batch, frames, bins, 2}));
  if (y->numel() == 0) return Status::OK();
  VN_ASSIGN_OR_RETURN(std::vector<double> in, as_complex(x));
  std::vector<double> out(static_cast<size_t>(y->numel()));
  std::vector<double> frame(static_cast<size_t>(n * 2));
  const Twiddles tw(n);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      const double* src = in.data() + (b * length + f * step) * 2;
      for (int64_t t = 0; t < n; ++t) {
        const double w = window.empty() ? 1.0 : window[static_cast<size_t>(t)];
        frame[static_cast<size_t>(2 * t)] = src[2 * t] * w;
        frame[static_cast<size_t>(2 * t + 1)] = src[2 * t + 1] * w;
      }
      dft_1d(frame.data(), 1, n, n, bins, false, tw, out.data() + (b * frames + f) * bins * 2, 1);
    }
  }
  return store(ctx, out, y);
}

}  // namespace

void register_dft_ops(OpRegistry& registry) {
  registry.add("DFT", 17, dft<false>);
  registry.add("DFT", 20, dft<true>);
  registry.add("STFT", 17, stft);
}

}  // namespace vn::ops
