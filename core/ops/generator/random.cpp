// SPDX-License-Identifier: Apache-2.0
// Random generators: RandomUniform, RandomNormal, their *Like forms, Bernoulli and Multinomial.
// ONNX leaves the generator implementation-defined, so values never match another runtime's; what
// the reference guarantees is reproducibility: a node draws from a 64-bit Mersenne Twister seeded
// with its `seed` attribute or, without one, with its node index, and the same model and inputs
// give the same values on every run and platform (no std:: distributions, whose algorithms vary
// between standard libraries).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

class Generator {
 public:
  explicit Generator(const KernelContext& ctx) {
    uint64_t seed = static_cast<uint64_t>(ctx.node_index());
    if (ctx.has_attr("seed")) {
      const float s = ctx.attr_float("seed", 0.0f);
      uint32_t bits;
      std::memcpy(&bits, &s, sizeof bits);
      seed = bits;
    }
    engine_.seed(seed);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  /// Standard normal (Box-Muller, one value per pair of uniforms).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1], so the log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  std::mt19937_64 engine_;
};

using RandomTypes = TypeList<float, double, Eigen::half, Eigen::bfloat16>;

/// The output dtype from the `dtype` attribute, or `fallback` when it is absent.
Result<DType> output_dtype(const KernelContext& ctx, DType fallback) {
  if (!ctx.has_attr("dtype")) return fallback;
  const int64_t code = ctx.attr_int("dtype", 1);
  const std::optional<DType> d = dtype_from_onnx(static_cast<int32_t>(code));
  if (!d) return ctx.fail(StatusCode::kUnsupportedDType, "dtype {} is not a supported ONNX data type", code);
  return *d;
}

Result<Shape> shape_attr(const KernelContext& ctx) {
  if (!ctx.has_attr("shape")) return ctx.fail(StatusCode::kInvalidModel, "attribute shape is required");
  return Shape(ctx.attr_ints("shape"));
}

/// Fills output 0 of `shape` and `dtype` with uniform (`normal` false) or normal samples.
Status fill_random(KernelContext& ctx, const Shape& shape, DType dtype, bool normal) {
  if (ctx.output_count() < 1) return ctx.fail(StatusCode::kInvalidModel, "has no output");
  const double a = normal ? ctx.attr_float("mean", 0.0f) : ctx.attr_float("low", 0.0f);
  const double b = normal ? ctx.attr_float("scale", 1.0f) : ctx.attr_float("high", 1.0f);
  VN_RETURN_IF_ERROR(dispatch_types(RandomTypes{}, ctx, dtype, [&]<typename T>() { return Status::OK(); }));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, shape));
  Generator gen(ctx);
  return dispatch_types(RandomTypes{}, ctx, dtype, [&]<typename T>() {
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    for (int64_t i = 0; i < y->numel(); ++i) {
      py[i] = static_cast<T>(normal ? a + b * gen.normal() : a + (b - a) * gen.uniform());
    }
    return Status::OK();
  });
}

Status random_uniform(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(Shape shape, shape_attr(ctx));
  VN_ASSIGN_OR_RETURN(DType dtype, output_dtype(ctx, DType::kFloat32));
  return fill_random(ctx, shape, dtype, false);
}

Status random_normal(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(Shape shape, shape_attr(ctx));
  VN_ASSIGN_OR_RETURN(DType dtype, output_dtype(ctx, DType::kFloat32));
  return fill_random(ctx, shape, dtype, true);
}

Status random_uniform_like(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(DType dtype, output_dtype(ctx, ctx.input(0).dtype()));
  return fill_random(ctx, ctx.input(0).shape(), dtype, false);
}

Status random_normal_like(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(DType dtype, output_dtype(ctx, ctx.input(0).dtype()));
  return fill_random(ctx, ctx.input(0).shape(), dtype, true);
}

// Bernoulli-15: 1 with probability input[i], else 0, in `dtype` (default: the input's type).
Status bernoulli(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& p = ctx.input(0);
  if (!dtype_is_float(p.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "input must hold float probabilities, got {}",
                    dtype_name(p.dtype()));
  }
  VN_ASSIGN_OR_RETURN(DType dtype, output_dtype(ctx, p.dtype()));
  VN_ASSIGN_OR_RETURN(std::vector<double> probs, tensor_to_doubles(p));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, p.shape()));
  Generator gen(ctx);
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                         uint16_t, uint32_t, uint64_t, bool>;
  return dispatch_types(Types{}, ctx, dtype, [&]<typename T>() {
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    for (size_t i = 0; i < probs.size(); ++i) py[i] = static_cast<T>(gen.uniform() < probs[i] ? 1 : 0);
    return Status::OK();
  });
}

// Multinomial-7: sample_size class indices per row of unnormalized log-probabilities.
Status multinomial(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2 || !dtype_is_float(x.dtype())) {
    return ctx.fail(StatusCode::kShapeMismatch, "input must be a float [batch_size, class_size] tensor, got {} {}",
                    dtype_name(x.dtype()), shape_to_string(x.shape()));
  }
  const int64_t samples = ctx.attr_int("sample_size", 1);
  if (samples < 0) return ctx.fail(StatusCode::kInvalidModel, "sample_size must be non-negative, got {}", samples);
  VN_ASSIGN_OR_RETURN(DType dtype, output_dtype(ctx, DType::kInt32));
  if (dtype != DType::kInt32 && dtype != DType::kInt64) {
    return unsupported_dtype(ctx, dtype, {DType::kInt32, DType::kInt64});
  }
  const int64_t batch = x.dim(0), classes = x.dim(1);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, {batch, samples}));
  if (y->numel() == 0) return Status::OK();
  if (classes == 0) return ctx.fail(StatusCode::kShapeMismatch, "class_size is 0; there is nothing to sample");
  VN_ASSIGN_OR_RETURN(std::vector<double> logits, tensor_to_doubles(x));
  Generator gen(ctx);
  std::vector<double> cumulative(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    const double* row = logits.data() + b * classes;
    const double peak = *std::max_element(row, row + classes);
    double total = 0.0;
    for (int64_t k = 0; k < classes; ++k) {
      total += std::exp(row[k] - peak);  // softmax numerators, shifted by the maximum for stability
      cumulative[static_cast<size_t>(k)] = total;
    }
    for (int64_t s = 0; s < samples; ++s) {
      const double u = gen.uniform() * total;
      const auto k = std::min<int64_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin(),
                                       classes - 1);
      if (dtype == DType::kInt32) {
        y->mutable_data<int32_t>()[b * samples + s] = static_cast<int32_t>(k);
      } else {
        y->mutable_data<int64_t>()[b * samples + s] = k;
      }
    }
  }
  return Status::OK();
}

}  // namespace

void register_random_ops(OpRegistry& registry) {
  // Version 22 of each only added bfloat16 outputs.
  for (int64_t v : {15, 22}) registry.add("Bernoulli", v, bernoulli);
  for (int64_t v : {7, 22}) registry.add("Multinomial", v, multinomial);
  for (int64_t v : {1, 22}) {
    registry.add("RandomNormal", v, random_normal);
    registry.add("RandomNormalLike", v, random_normal_like);
    registry.add("RandomUniform", v, random_uniform);
    registry.add("RandomUniformLike", v, random_uniform_like);
  }
}

}  // namespace vn::ops
