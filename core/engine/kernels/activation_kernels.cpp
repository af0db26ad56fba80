// SPDX-License-Identifier: Apache-2.0
// Activation layers (act__exact, act__fast), the activations fused into product epilogues, and the
// residual Add+Relu layer (eltwise__add_relu).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/engine/kernels/kernels.h"
#include "core/ops/kernel_util.h"
#include "core/ops/vector_math.h"

namespace vn::engine::kernels {
namespace {

// ---- Fast approximations ------------------------------------------------------------------------

/// exp(x) as 2^(x log2 e): the integer part goes into the exponent bits, the fraction through a
/// cubic fitted to 2^f on [0, 1) (relative error about 1.7e-4). Overflows to inf above 88.7 and
/// flushes to 0 below -87.3, as float exp does near there.
float fast_exp(float x) {
  const float t = x * 1.44269504f;
  if (std::isnan(t)) return t;
  if (t >= 128.0f) return std::numeric_limits<float>::infinity();
  if (t < -126.0f) return 0.0f;
  const float whole = std::floor(t);
  const float f = t - whole;
  const float p = 1.0f + f * (0.69503631f + f * (0.22830761f + f * 0.07632606f));
  const uint32_t bits = std::bit_cast<uint32_t>(p) + (static_cast<uint32_t>(static_cast<int32_t>(whole)) << 23);
  return std::bit_cast<float>(bits);
}

float fast_sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

float fast_tanh(float x) { return 2.0f * fast_sigmoid(2.0f * x) - 1.0f; }

/// GELU from its tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), with the fast tanh.
float fast_gelu(float x) { return 0.5f * x * (1.0f + fast_tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }

/// Abramowitz and Stegun 7.1.26 with the fast exp.
float fast_erf(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float y = 1.0f - poly * fast_exp(-a * a);
  return std::copysign(y, x);
}

float exact(ActivationFn fn, float alpha, float beta, float v) {
  switch (fn) {
    case ActivationFn::kNone:
      return v;
    case ActivationFn::kRelu:
      return v < 0.0f ? 0.0f : v;
    case ActivationFn::kLeakyRelu:
      return v < 0.0f ? v * alpha : v;
    case ActivationFn::kClip:
      return v < alpha ? alpha : (v > beta ? beta : v);
    case ActivationFn::kSigmoid:
      return ops::vmath::sigmoid(v);
    case ActivationFn::kTanh:
      return ops::vmath::tanh(v);
    case ActivationFn::kHardSigmoid: {
      const float h = alpha * v + beta;
      return h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h);
    }
    case ActivationFn::kHardSwish: {
      const float h = v / 6.0f + 0.5f;
      return v * (h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h));
    }
    case ActivationFn::kExp:
      return ops::vmath::exp(v);
    case ActivationFn::kErf:
      return ops::vmath::erf(v);
    case ActivationFn::kSiLU:
      return v * ops::vmath::sigmoid(v);
    case ActivationFn::kGelu:
      return 0.5f * v * (1.0f + ops::vmath::erf(v * 0.70710678f));
  }
  return v;
}

/// exact(kGelu) over v[0, n), erf through vector_math.h's arrays.
void gelu_values(float* v, int64_t n) {
  constexpr int64_t kBlock = 256;
  float t[kBlock];
  for (int64_t lo = 0; lo < n; lo += kBlock) {
    const int64_t m = std::min(kBlock, n - lo);
    for (int64_t i = 0; i < m; ++i) t[i] = v[lo + i] * 0.70710678f;
    ops::vmath::erf(t, t, m);
    for (int64_t i = 0; i < m; ++i) v[lo + i] = 0.5f * v[lo + i] * (1.0f + t[i]);
  }
}

float fast(ActivationFn fn, float v) {
  switch (fn) {
    case ActivationFn::kSigmoid:
      return fast_sigmoid(v);
    case ActivationFn::kTanh:
      return fast_tanh(v);
    case ActivationFn::kExp:
      return fast_exp(v);
    case ActivationFn::kErf:
      return fast_erf(v);
    case ActivationFn::kSiLU:
      return v * fast_sigmoid(v);
    case ActivationFn::kGelu:
      return fast_gelu(v);
    default:
      return exact(fn, 0.0f, 0.0f, v);
  }
}

class ActivationKernel final : public LayerKernel {
 public:
  explicit ActivationKernel(const KernelArgs& args) : args_(args) {}

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    const Tensor& x = *inputs[0];
    Result<Tensor> created = Tensor::create_for_overwrite(DType::kFloat32, x.shape());
    if (!created.ok()) return tagged(args_, created.status());
    Tensor y = std::move(*created);
    const float* px = x.data<float>();
    float* py = x.numel() > 0 ? y.mutable_data<float>() : nullptr;
    const bool fast = args_.tactic == TacticId::kActivationFast;
    // Each chunk copied and activated on its thread while in cache (a clone first copied all of
    // the input on one thread: Swin-T's GELU layers at 16 threads 5.5 ms against the reference's
    // 1.9 for the same ops).
    ops::parallel_chunks(args_.num_threads, x.numel(), [&](int64_t lo, int64_t hi) {
      std::copy(px + lo, px + hi, py + lo);
      if (fast) {
        activate_fast(args_.spec->activation, std::span<float>(py + lo, static_cast<size_t>(hi - lo)), 1);
      } else {
        activate_values(args_.spec->activation, py + lo, hi - lo);
      }
      round_in_place(std::span<float>(py + lo, static_cast<size_t>(hi - lo)), round_);
    });
    outputs[0] = std::move(y);
    return Status::OK();
  }

  bool rounds_outputs() const override { return round_ != DType::kFloat32; }

 private:
  KernelArgs args_;
  // The storage format each chunk is rounded to while in cache (KernelArgs::round_outputs; the
  // activations have no int8 tactic).
  DType round_ = args_.round_outputs && precision_of(args_.precision).storage != DType::kInt8
                     ? precision_of(args_.precision).storage
                     : DType::kFloat32;
};

class EltwiseKernel final : public LayerKernel {
 public:
  explicit EltwiseKernel(const KernelArgs& args) : args_(args) {}

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    const Node& add = anchor_node(args_);
    const Tensor& a = *inputs[static_cast<size_t>(input_index(*args_.spec, add.inputs[0]))];
    const Tensor& b = *inputs[static_cast<size_t>(input_index(*args_.spec, add.inputs[1]))];
    if (a.shape() != b.shape()) {
      return tagged(args_, make_error(StatusCode::kShapeMismatch, "the residual Add's operands differ: {} and {}",
                                      shape_to_string(a.shape()), shape_to_string(b.shape())));
    }
    // Every element is written below.
    Result<Tensor> created = Tensor::create_for_overwrite(DType::kFloat32, a.shape());
    if (!created.ok()) return tagged(args_, created.status());
    Tensor y = std::move(*created);
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = a.numel() > 0 ? y.mutable_data<float>() : nullptr;
    ops::parallel_chunks(
        args_.num_threads, a.numel(),
        [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) {
            const float s = pa[i] + pb[i];
            py[i] = s < 0.0f ? 0.0f : s;
          }
        },
        ops::kMemoryBoundGrain);
    outputs[0] = std::move(y);
    return Status::OK();
  }

 private:
  KernelArgs args_;
};

}  // namespace

void activate_values(const Activation& activation, float* v, int64_t n) {
  const float alpha = activation.alpha, beta = activation.beta;
  // One loop per function, the switch outside it: the piecewise-linear ones then vectorize; exp,
  // erf, tanh and the sigmoids take vector_math.h's arrays, which give exact()'s bits.
  const auto each = [&]<ActivationFn F>() {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) v[i] = exact(F, alpha, beta, v[i]);
  };
#if defined(__AVX2__)
  if (activation.fn == ActivationFn::kHardSwish) {
    // exact()'s HardSwish stays scalar and branchy (the compiler keeps float comparisons that may
    // trap out of a vector loop): 10% of MobileNetV3's engine run. The same values 8 at a time:
    // max(0, h) and min(1, c) in this operand order return h and c when they are NaN, as exact()
    // does.
    const __m256 six = _mm256_set1_ps(6.0f), half = _mm256_set1_ps(0.5f);
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256 x = _mm256_loadu_ps(v + i);
      const __m256 h = _mm256_add_ps(_mm256_div_ps(x, six), half);
      _mm256_storeu_ps(v + i, _mm256_mul_ps(x, _mm256_min_ps(one, _mm256_max_ps(zero, h))));
    }
    for (; i < n; ++i) v[i] = exact(ActivationFn::kHardSwish, alpha, beta, v[i]);
    return;
  }
#endif
  switch (activation.fn) {
    case ActivationFn::kNone:
      return;
    case ActivationFn::kRelu:
      return each.template operator()<ActivationFn::kRelu>();
    case ActivationFn::kLeakyRelu:
      return each.template operator()<ActivationFn::kLeakyRelu>();
    case ActivationFn::kClip:
      return each.template operator()<ActivationFn::kClip>();
    case ActivationFn::kSigmoid:
      return ops::vmath::sigmoid(v, v, n);
    case ActivationFn::kTanh:
      return ops::vmath::tanh(v, v, n);
    case ActivationFn::kHardSigmoid:
      return each.template operator()<ActivationFn::kHardSigmoid>();
    case ActivationFn::kHardSwish:
      return each.template operator()<ActivationFn::kHardSwish>();
    case ActivationFn::kExp:
      return ops::vmath::exp(v, v, n);
    case ActivationFn::kErf:
      return ops::vmath::erf(v, v, n);
    case ActivationFn::kSiLU:
      return ops::vmath::silu(v, v, n);
    case ActivationFn::kGelu:
      return gelu_values(v, n);
  }
}

void activate_exact(const Activation& activation, std::span<float> values, int threads) {
  float* v = values.data();
  ops::parallel_chunks(threads, static_cast<int64_t>(values.size()),
                       [&](int64_t lo, int64_t hi) { activate_values(activation, v + lo, hi - lo); });
}

void activate_fast(const Activation& activation, std::span<float> values, int threads) {
  const ActivationFn fn = activation.fn;
  const int64_t n = static_cast<int64_t>(values.size());
  float* v = values.data();
  ops::parallel_chunks(threads, n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) v[i] = fast(fn, v[i]);
  });
}

Result<std::unique_ptr<LayerKernel>> make_activation_kernel(const KernelArgs& args) {
  return std::unique_ptr<LayerKernel>(std::make_unique<ActivationKernel>(args));
}

Result<std::unique_ptr<LayerKernel>> make_eltwise_kernel(const KernelArgs& args) {
  return std::unique_ptr<LayerKernel>(std::make_unique<EltwiseKernel>(args));
}

}  // namespace vn::engine::kernels
