// SPDX-License-Identifier: Apache-2.0
#include "core/ops/float_steps.h"

#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

double keep(double x) { return x; }
// Through float first: numpy computes a float16 step in float32 and rounds that to float16, and
// the double of an exact step rounds to the same float32.
double to_half(double x) { return static_cast<double>(static_cast<float>(Eigen::half(static_cast<float>(x)))); }
double to_bfloat16(double x) {
  return static_cast<double>(static_cast<float>(Eigen::bfloat16(static_cast<float>(x))));
}

}  // namespace

bool is_real_float(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

Result<std::vector<double>> float_input(const KernelContext& ctx, size_t i, std::string_view what) {
  const Tensor& t = ctx.input(i);
  if (!is_real_float(t.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "{} must be float16, bfloat16, float32 or float64, got {}", what,
                    dtype_name(t.dtype()));
  }
  return tensor_to_doubles(t);
}

Status set_float_output(KernelContext& ctx, size_t i, DType dtype, const Shape& shape, std::span<const double> values) {
  VN_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_for_overwrite(i, dtype, shape));
  if (static_cast<size_t>(out->numel()) != values.size()) {
    return ctx.fail(StatusCode::kInternal, "output {} has {} elements but {} values were computed", i, out->numel(),
                    values.size());
  }
  return dispatch_types(RealFloatTypes{}, ctx, dtype, [&]<typename T>() -> Status {
    T* p = out->numel() > 0 ? out->mutable_data<T>() : nullptr;
    for (size_t k = 0; k < values.size(); ++k) {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        p[k] = static_cast<T>(values[k]);
      } else {
        p[k] = T(static_cast<float>(values[k]));
      }
    }
    return Status::OK();
  });
}

StepRound step_round(DType dtype) {
  if (dtype == DType::kFloat16) return to_half;
  if (dtype == DType::kBFloat16) return to_bfloat16;
  return keep;
}

std::optional<DType> float_dtype_from_onnx(int64_t onnx_type) {
  const std::optional<DType> d = dtype_from_onnx(static_cast<int32_t>(onnx_type));
  if (d && is_real_float(*d)) return d;
  return std::nullopt;
}

}  // namespace vn::ops
