// SPDX-License-Identifier: Apache-2.0
// Window functions of opset 17: HannWindow, HammingWindow and BlackmanWindow, generalized cosine
// windows w[n] = a0 - a1 cos(2 pi n / N') + a2 cos(4 pi n / N') with N' = size (periodic, the
// default) or size - 1 (symmetric). Evaluated in double and stored as `output_datatype`.
#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status cosine_window(KernelContext& ctx, double a0, double a1, double a2) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> size_v, input_int64s(ctx, 0, "size"));
  if (size_v.size() != 1)
    return ctx.fail(StatusCode::kShapeMismatch, "size must hold one value, got {}", size_v.size());
  const int64_t size = size_v[0];
  if (size < 0) return ctx.fail(StatusCode::kInvalidModel, "size must be non-negative, got {}", size);
  const int64_t code = ctx.attr_int("output_datatype", 1);
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int32_t>(code));
  if (!dtype)
    return ctx.fail(StatusCode::kUnsupportedDType, "output_datatype {} is not a supported ONNX data type", code);
  const bool periodic = ctx.attr_int("periodic", 1) != 0;
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, *dtype, {size}));
  const double denom = static_cast<double>(periodic ? size : size - 1);
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                         uint16_t, uint32_t, uint64_t>;
  return dispatch_types(Types{}, ctx, *dtype, [&]<typename T>() {
    T* py = size > 0 ? y->mutable_data<T>() : nullptr;
    for (int64_t n = 0; n < size; ++n) {
      // The symmetric formula is 0/0 for a one-point window; numpy and PyTorch return [1] there.
      const double phase = 2.0 * std::numbers::pi * static_cast<double>(n) / denom;
      const double w = denom > 0 ? a0 - a1 * std::cos(phase) + a2 * std::cos(2.0 * phase) : 1.0;
      if constexpr (std::is_integral_v<T>) {
        py[n] = saturate_cast<T>(w);
      } else {
        py[n] = static_cast<T>(w);
      }
    }
    return Status::OK();
  });
}

Status hann_window(KernelContext& ctx) { return cosine_window(ctx, 0.5, 0.5, 0.0); }
// ONNX HammingWindow uses a0 = 25/46, a1 = 21/46 (not the rounded 0.54/0.46).
Status hamming_window(KernelContext& ctx) { return cosine_window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0); }
Status blackman_window(KernelContext& ctx) { return cosine_window(ctx, 0.42, 0.5, 0.08); }

}  // namespace

void register_window_ops(OpRegistry& registry) {
  registry.add("BlackmanWindow", 17, blackman_window);
  registry.add("HammingWindow", 17, hamming_window);
  registry.add("HannWindow", 17, hann_window);
}

}  // namespace vn::ops
