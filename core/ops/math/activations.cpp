// SPDX-License-Identifier: Apache-2.0
// Activations: Relu, LeakyRelu, PRelu, ThresholdedRelu, Sigmoid, Tanh, Clip, Elu, Celu, Selu,
// HardSigmoid, HardSwish, Softplus, Softsign, Shrink.
// Comparisons are written so that NaN inputs propagate to the output, as numpy does. float16 and
// bfloat16 compute in float and round once (unary_widened), as numpy's float16 loops do.
#include <cmath>
#include <limits>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/vector_math.h"

namespace vn::ops {
namespace {

template <typename T>
T clamp_nan(T v, T lo, T hi) {
  // Written as two comparisons, not std::clamp: NaN fails both and passes through, and lo > hi
  // yields hi as numpy.clip and ONNX Clip-13 specify.
  T r = v < lo ? lo : v;
  return r > hi ? hi : r;
}

Status relu(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(SignedHalfTypes{}, ctx, ctx.input(0).dtype(),
                        [&]<typename T>() { return unary_scalar<T>(ctx, [](T v) { return v < T(0) ? T(0) : v; }); });
}

Status leaky_relu(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const float alpha = ctx.attr_float("alpha", 0.01f);
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    using C = ComputeType<T>;
    const C a = static_cast<C>(alpha);
    return unary_widened<T>(ctx, [a](C v) { return v < C(0) ? a * v : v; });
  });
}

Status sigmoid(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  return dispatch_types(RealFloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    if constexpr (kIsNarrowFloat<T>) {
      // The split form below, in float, rounded once.
      return unary_widened<T>(ctx, [](float v) {
        const float e = std::exp(-std::abs(v));
        return v >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
      }, kComputeBoundGrain);
    } else {
      // Every element written; not x's buffer, which the steps below read after writing y.
      VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), x.shape()));
      const T* px = x.data<T>();
      T* py = x.numel() > 0 ? y->mutable_data<T>() : nullptr;
      parallel_chunks(ctx.num_threads(), x.numel(), [&](int64_t lo, int64_t hi) {
        const ConstArrayMap<T> xv(px + lo, hi - lo);
        ArrayMap<T> yv(py + lo, hi - lo);
        // Split form: exp is only taken of -|x|, so it never overflows, and for x < 0 the result is
        // e/(1+e) rather than 1 - 1/(1+e), which would cancel to 0 for large negative x.
        if constexpr (std::is_same_v<T, float>) {
          // exp correctly rounded (vector_math.h), subnormals included: no edge to redo.
          vmath::sigmoid(px + lo, py + lo, hi - lo);
          return;
        }
        // Eigen's vectorized exp is within an ulp or two of std::exp.
        yv = (-xv.abs()).exp();
        // Eigen's exp clamps its argument at the edge of the normal range (about -87 in float),
        // where std::exp goes on into the subnormals: those few elements are redone exactly.
        constexpr T kEdge = std::is_same_v<T, float> ? T(87) : T(708);
        // One division, of a numerator chosen first: the same values as choosing between 1 / (1 +
        // e) and e / (1 + e), in vectors (Eigen's select of two quotients ran one element at a
        // time, 5 ns each: 38% of EfficientNetV2-S's run). The edge is looked for in the same loop.
        int edge = 0;
        for (int64_t i = lo; i < hi; ++i) {
          const T e = py[i];
          edge |= px[i] < -kEdge;
          py[i] = (px[i] >= T(0) ? T(1) : e) / (T(1) + e);
        }
        if (edge == 0) return;
        for (int64_t i = lo; i < hi; ++i) {
          if (px[i] < -kEdge) py[i] = std::exp(px[i]) / (T(1) + std::exp(px[i]));
        }
      }, kComputeBoundGrain);
      return Status::OK();
    }
  });
}

Status tanh_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    // float32 and the types that widen to it take vmath::tanh, correctly rounded in practice (glibc's
    // tanhf is off by an ulp on 2.8% of floats: bench_vector_math) and vectorized.
    if constexpr (std::is_same_v<T, float>) {
      return unary_float_arrays(ctx, [](const float* x, float* y, int64_t n) { vmath::tanh(x, y, n); });
    } else if constexpr (std::is_same_v<WideType<T>, float>) {
      return unary_widened<T>(ctx, [](float v) { return vmath::tanh(v); }, kComputeBoundGrain);
    } else {
      return unary_widened<T>(ctx, [](auto v) { return std::tanh(v); }, kComputeBoundGrain);
    }
  });
}

template <typename T>
Status clip_with(KernelContext& ctx, T lo, T hi) {
  return unary_scalar<T>(ctx, [lo, hi](T v) { return clamp_nan(v, lo, hi); });
}

// Clip-1: optional min/max attributes without defaults.
Status clip_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    const T lo =
        ctx.has_attr("min") ? static_cast<T>(ctx.attr_float("min", 0.0f)) : -std::numeric_limits<T>::infinity();
    const T hi = ctx.has_attr("max") ? static_cast<T>(ctx.attr_float("max", 0.0f)) : std::numeric_limits<T>::infinity();
    return clip_with<T>(ctx, lo, hi);
  });
}

// Clip-6: min/max attributes defaulting to ∓FLT_MAX (∓inf in float16 and bfloat16).
Status clip_6(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    const T lo = static_cast<T>(ctx.attr_float("min", std::numeric_limits<float>::lowest()));
    const T hi = static_cast<T>(ctx.attr_float("max", std::numeric_limits<float>::max()));
    return clip_with<T>(ctx, lo, hi);
  });
}

// Clip-11+: min and max are optional scalar inputs of the data's type.
Status clip_11(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(NumericHalfTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() -> Status {
    // No bound, no clipping: a float ±inf stays infinite.
    T lo = kIsRealFloat<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    T hi = kIsRealFloat<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    if (ctx.has_input(1)) {
      VN_ASSIGN_OR_RETURN(lo, input_scalar<T>(ctx, 1, "min"));
    }
    if (ctx.has_input(2)) {
      VN_ASSIGN_OR_RETURN(hi, input_scalar<T>(ctx, 2, "max"));
    }
    return clip_with<T>(ctx, lo, hi);
  });
}

Status elu(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const float alpha = ctx.attr_float("alpha", 1.0f);
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    using C = ComputeType<T>;
    const C a = static_cast<C>(alpha);
    // expm1 keeps full relative precision for small negative x, where exp(x) - 1 cancels.
    return unary_scalar<T>(ctx, [a](T x) {
      const C v = static_cast<C>(x);
      return static_cast<T>(v > C(0) ? v : a * std::expm1(v));
    }, kComputeBoundGrain);
  });
}

Status selu(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const float alpha = ctx.attr_float("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.attr_float("gamma", 1.05070102214813232421875f);
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    using C = ComputeType<T>;
    const C a = static_cast<C>(alpha);
    const C g = static_cast<C>(gamma);
    return unary_widened<T>(ctx, [a, g](C v) { return g * (v > C(0) ? v : a * std::expm1(v)); }, kComputeBoundGrain);
  });
}

Status hard_sigmoid(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const float alpha = ctx.attr_float("alpha", 0.2f);
  const float beta = ctx.attr_float("beta", 0.5f);
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    using C = ComputeType<T>;
    const C a = static_cast<C>(alpha);
    const C b = static_cast<C>(beta);
    return unary_widened<T>(ctx, [a, b](C v) { return clamp_nan(a * v + b, C(0), C(1)); });
  });
}

/// ONNX HardSwish: x * max(0, min(1, x/6 + 1/2)), written piecewise so that x = -inf gives the
/// limit 0 instead of the -inf * 0 = NaN of the literal product.
template <typename C>
C hard_swish_value(C v) {
  return v <= C(-3) ? C(0) : (v >= C(3) ? v : v * (v / C(6) + C(0.5)));
}

/// hard_swish_value over [lo, hi). The compiler keeps a division under a branch scalar (it may
/// trap), 1.5 ns an element: MobileNetV3's 21 HardSwish were 7.7% of its run. In float, vectors
/// compute the middle piece for every element and then choose, the same values.
template <typename T>
void hard_swish_range(const T* x, T* y, int64_t lo, int64_t hi) {
  int64_t i = lo;
#if defined(__AVX2__)
  if constexpr (std::is_same_v<T, float>) {
    const __m256 six = _mm256_set1_ps(6.0f), half = _mm256_set1_ps(0.5f);
    const __m256 three = _mm256_set1_ps(3.0f), minus_three = _mm256_set1_ps(-3.0f);
    for (; i + 8 <= hi; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      const __m256 middle = _mm256_mul_ps(v, _mm256_add_ps(_mm256_div_ps(v, six), half));
      // Ordered comparisons: NaN takes the middle piece, NaN, as the scalar form does.
      const __m256 upper = _mm256_blendv_ps(middle, v, _mm256_cmp_ps(v, three, _CMP_GE_OQ));
      _mm256_storeu_ps(y + i, _mm256_andnot_ps(_mm256_cmp_ps(v, minus_three, _CMP_LE_OQ), upper));
    }
  }
#endif
  for (; i < hi; ++i) y[i] = hard_swish_value(x[i]);
}

Status hard_swish(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  return dispatch_types(RealFloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    if constexpr (kIsNarrowFloat<T>) {
      return unary_widened<T>(ctx, [](float v) { return hard_swish_value(v); });
    } else {
      VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_elementwise(0, x.dtype(), x.shape()));
      if (x.numel() == 0) return Status::OK();
      const T* px = x.data<T>();
      T* py = y->mutable_data<T>();
      parallel_chunks(ctx.num_threads(), x.numel(), [&](int64_t lo, int64_t hi) { hard_swish_range(px, py, lo, hi); });
      return Status::OK();
    }
  });
}

Status softplus(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    using C = ComputeType<T>;
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, no lost digits for small.
    return unary_widened<T>(
        ctx, [](C v) { return (v > C(0) ? v : C(0)) + std::log1p(std::exp(-std::abs(v))); }, kComputeBoundGrain);
  });
}

Status softsign(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    using C = ComputeType<T>;
    // x / (1 + |x|) tends to ±1 at ±inf; the literal quotient would be inf/inf = NaN there.
    return unary_widened<T>(ctx, [](C v) { return std::isinf(v) ? std::copysign(C(1), v) : v / (C(1) + std::abs(v)); });
  });
}

Status thresholded_relu(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const float alpha = ctx.attr_float("alpha", 1.0f);
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    using C = ComputeType<T>;
    const C a = static_cast<C>(alpha);
    return unary_widened<T>(ctx, [a](C v) { return v > a || std::isnan(v) ? v : C(0); });
  });
}

Status celu(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const float alpha = ctx.attr_float("alpha", 1.0f);
  if (alpha == 0.0f) return ctx.fail(StatusCode::kInvalidModel, "alpha must be non-zero (Celu divides x by it)");
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    using C = ComputeType<T>;
    const C a = static_cast<C>(alpha);
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), with expm1 for small |x / alpha|. float16
    // and bfloat16 round once, at the end: what ONNX 1.23's expected values hold (not the rounding
    // of each step of Celu's function body).
    return unary_scalar<T>(ctx, [a](T x) {
      const C v = static_cast<C>(x);
      const C neg = a * std::expm1(v / a);
      return static_cast<T>((v > C(0) ? v : C(0)) + (neg < C(0) ? neg : C(0)));
    });
  });
}

Status shrink(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const double lambd = ctx.attr_float("lambd", 0.5f);
  const double bias = ctx.attr_float("bias", 0.0f);
  return dispatch_types(NumericHalfTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    // Evaluated in double and converted back, so integer inputs compare against the float
    // thresholds exactly and the shifted value saturates instead of overflowing.
    return unary_scalar<T>(ctx, [lambd, bias](T v) {
      const double x = static_cast<double>(v);
      if (x < -lambd) return saturate_cast<T>(x + bias);
      if (x > lambd) return saturate_cast<T>(x - bias);
      return std::isnan(x) ? v : T(0);
    });
  });
}

struct PReluOp {
  template <typename T>
  T operator()(T x, T slope) const {
    if constexpr (std::is_integral_v<T>) {
      if (x >= T(0)) return x;
      return static_cast<T>(static_cast<WrapType<T>>(x) * static_cast<WrapType<T>>(slope));
    } else {
      return x < T(0) ? slope * x : x;  // float16 and bfloat16 multiply in float, rounding once
    }
  }
};

template <typename Types>
Status prelu_with(KernelContext& ctx, const Tensor& slope) {
  const Tensor& x = ctx.input(0);
  if (slope.dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "slope ({}) must have the type of X ({})", dtype_name(slope.dtype()),
                    dtype_name(x.dtype()));
  }
  return dispatch_types(Types{}, ctx, x.dtype(),
                        [&]<typename T>() { return binary_broadcast<T, T, T>(ctx, x, slope, PReluOp{}); });
}

// PRelu-1 and -6 (Caffe2 semantics): the slope is a single value, one value per channel (dim 1),
// or a tensor of X's shape.
Status prelu_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  if (slope.numel() == 1) return prelu_with<RealFloatTypes>(ctx, slope.reshaped({}));
  if (slope.shape() == x.shape()) return prelu_with<RealFloatTypes>(ctx, slope);
  if (x.rank() >= 2 && slope.rank() == 1 && slope.dim(0) == x.dim(1)) {
    Shape per_channel(static_cast<size_t>(x.rank() - 1), 1);
    per_channel[0] = x.dim(1);
    return prelu_with<RealFloatTypes>(ctx, slope.reshaped(per_channel));
  }
  return ctx.fail(StatusCode::kShapeMismatch,
                  "slope of shape {} must have one element, one per channel of X {}, or X's shape",
                  shape_to_string(slope.shape()), shape_to_string(x.shape()));
}

// PRelu-7 and later: the slope broadcasts to X unidirectionally.
template <typename Types>
Status prelu_7(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  if (!broadcasts_to(slope.shape(), x.shape())) {
    return ctx.fail(StatusCode::kShapeMismatch, "slope of shape {} does not broadcast to X's shape {}",
                    shape_to_string(slope.shape()), shape_to_string(x.shape()));
  }
  return prelu_with<Types>(ctx, slope);
}

}  // namespace

void register_activation_ops(OpRegistry& registry) {
  for (int64_t v : {1, 6, 13, 14}) registry.add("Relu", v, relu);
  for (int64_t v : {1, 6, 16}) registry.add("LeakyRelu", v, leaky_relu);
  for (int64_t v : {1, 6, 13}) registry.add("Sigmoid", v, sigmoid);
  for (int64_t v : {1, 6, 13}) registry.add("Tanh", v, tanh_kernel);
  registry.add("Clip", 1, clip_1);
  registry.add("Clip", 6, clip_6);
  for (int64_t v : {11, 12, 13}) registry.add("Clip", v, clip_11);
  // Version 22 of Elu, Selu, HardSigmoid, HardSwish, Softplus, Softsign and ThresholdedRelu, and
  // Celu-28, only added types; every version takes float16 and bfloat16.
  for (int64_t v : {1, 6, 22}) registry.add("Elu", v, elu);
  for (int64_t v : {1, 6, 22}) registry.add("Selu", v, selu);
  for (int64_t v : {1, 6, 22}) registry.add("HardSigmoid", v, hard_sigmoid);
  for (int64_t v : {14, 22}) registry.add("HardSwish", v, hard_swish);
  for (int64_t v : {1, 22}) registry.add("Softplus", v, softplus);
  for (int64_t v : {1, 22}) registry.add("Softsign", v, softsign);
  for (int64_t v : {10, 22}) registry.add("ThresholdedRelu", v, thresholded_relu);
  for (int64_t v : {12, 28}) registry.add("Celu", v, celu);
  registry.add("Shrink", 9, shrink);
  for (int64_t v : {1, 6}) registry.add("PRelu", v, prelu_1);
  registry.add("PRelu", 7, prelu_7<RealFloatTypes>);
  for (int64_t v : {9, 16}) registry.add("PRelu", v, prelu_7<ArithmeticHalfTypes>);
}

}  // namespace vn::ops
