// SPDX-License-Identifier: Apache-2.0
// The smooth activations of transformer-era models: Gelu-20, Mish-18/22, Swish-24 and SwiGLU-28,
// on float16, bfloat16, float32 and float64.
//   Gelu:   0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
//           0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   Mish:   x tanh(softplus(x)), softplus(x) = log(1 + e^x)
//   Swish:  x sigmoid(alpha x)
//   SwiGLU: Swish(A) * B for A and B of one shape (no broadcasting), with Swish's alpha
// Each is computed in double and rounded once to the element type (for float16 SwiGLU, this is
// what ONNX 1.23's own expected values hold, not the rounding of each step of the function body).
// float32 Gelu (approximate="none") takes vector_math.h's gelu_erf: the same double formula with
// its erf, and x / sqrt 2 as x times 1 / sqrt 2.
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/float_steps.h"
#include "core/ops/elementwise.h"
#include "core/ops/kernel_util.h"
#include "core/ops/vector_math.h"

namespace vn::ops {
namespace {

/// Output 0 = f(x) over input 0 of any float type, computed in double and rounded once.
template <typename F>
Status float_unary(KernelContext& ctx, F&& f) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(std::vector<double> v, float_input(ctx, 0, "X"));
  for (double& e : v) e = f(e);
  return set_float_output(ctx, 0, x.dtype(), x.shape(), v);
}

/// log(1 + e^x) without overflow for large x or lost digits for small.
double softplus(double x) { return (x > 0.0 ? x : 0.0) + std::log1p(std::exp(-std::abs(x))); }

/// x sigmoid(alpha x), with the exponential taken only of a non-positive number.
double swish_of(double x, double alpha) {
  const double z = alpha * x;
  const double e = std::exp(-std::abs(z));
  return x * (z >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e));
}

Status gelu(KernelContext& ctx) {
  const std::string approximate = ctx.attr_string("approximate", "none");
  if (approximate == "none") {
    VN_RETURN_IF_ERROR(check_arity(ctx, 1));
    if (ctx.input(0).dtype() == DType::kFloat32) {
      return unary_float_arrays(ctx, [](const float* x, float* y, int64_t n) { vmath::gelu_erf(x, y, n); });
    }
    return float_unary(ctx, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); });
  }
  if (approximate == "tanh") {
    // The constants are float32 in ONNX's definition.
    const double c0 = static_cast<float>(0.044715);
    const double k = std::sqrt(static_cast<double>(static_cast<float>(2.0 / std::numbers::pi)));
    return float_unary(ctx, [c0, k](double x) { return 0.5 * x * (1.0 + std::tanh(k * (x + c0 * x * x * x))); });
  }
  return ctx.fail(StatusCode::kInvalidModel, "approximate must be \"none\" or \"tanh\", got \"{}\"", approximate);
}

Status mish(KernelContext& ctx) {
  return float_unary(ctx, [](double x) { return x * std::tanh(softplus(x)); });
}

Status swish(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0f);
  return float_unary(ctx, [alpha](double x) { return swish_of(x, alpha); });
}

Status swiglu(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) {
    return ctx.fail(StatusCode::kShapeMismatch, "A ({} {}) and B ({} {}) must have one shape and type",
                    dtype_name(a.dtype()), shape_to_string(a.shape()), dtype_name(b.dtype()), shape_to_string(b.shape()));
  }
  const double alpha = ctx.attr_float("alpha", 1.0f);
  VN_ASSIGN_OR_RETURN(std::vector<double> av, float_input(ctx, 0, "A"));
  VN_ASSIGN_OR_RETURN(std::vector<double> bv, float_input(ctx, 1, "B"));
  for (size_t i = 0; i < av.size(); ++i) av[i] = swish_of(av[i], alpha) * bv[i];
  return set_float_output(ctx, 0, a.dtype(), a.shape(), av);
}

}  // namespace

void register_smooth_activation_ops(OpRegistry& registry) {
  registry.add("Gelu", 20, gelu);
  // Mish-22 only added bfloat16.
  for (int64_t v : {18, 22}) registry.add("Mish", v, mish);
  registry.add("Swish", 24, swish);
  registry.add("SwiGLU", 28, swiglu);
}

}  // namespace vn::ops
