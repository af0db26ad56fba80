// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the reference kernel families: Eigen maps over tensor buffers, dtype dispatch
// over a kernel's supported types, arity checks and readers for integer list inputs (axes, pads).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/common/parallel.h"
#include "core/common/status.h"
#include "core/common/threads.h"
#include "core/ir/dtype.h"
#include "core/ir/tensor.h"
#include "core/ops/kernel_context.h"

namespace vn::ops {

/// Column vectors of T over a contiguous buffer, for elementwise work.
template <typename T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
/// Row-major matrices over a contiguous buffer, for GEMM.
template <typename T>
using MatrixMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

/// A compile-time list of element types a kernel supports.
template <typename... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
/// float, double and the signed integers.
using SignedTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
/// float, double and every integer width.
using NumericTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
/// NumericTypes plus bool.
using NumericBoolTypes =
    TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, bool>;
/// The types of the high-precision ONNX arithmetic ops (Add, MatMul, ...).
using ArithmeticTypes = TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>;
/// ArithmeticTypes plus float16 and bfloat16.
using ArithmeticHalfTypes = TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t, Eigen::half, Eigen::bfloat16>;
/// SignedTypes plus float16 and bfloat16.
using SignedHalfTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, Eigen::half, Eigen::bfloat16>;
/// float, double, float16 and bfloat16.
using RealFloatTypes = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
/// NumericTypes plus float16 and bfloat16.
using NumericHalfTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                                  uint64_t, Eigen::half, Eigen::bfloat16>;
/// NumericHalfTypes plus bool.
using NumericHalfBoolTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                                      uint64_t, Eigen::half, Eigen::bfloat16, bool>;

/// The type an elementwise kernel computes an element of T in: T itself for float and double;
/// float for float16 and bfloat16, whose result is then rounded once to T, as numpy's float16
/// loops do (they widen to float32, compute and round back; ml_dtypes' bfloat16 does the same).
/// Eigen's half and bfloat16 operators (+, -, *, /) compute this way too.
template <typename T>
using ComputeType = std::conditional_t<std::is_floating_point_v<T>, T, float>;

/// True for float16 and bfloat16, the element types stored narrower than they are computed in.
template <typename T>
inline constexpr bool kIsNarrowFloat = std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;
/// True for float, double, float16 and bfloat16.
template <typename T>
inline constexpr bool kIsRealFloat = std::is_floating_point_v<T> || kIsNarrowFloat<T>;
/// The type a kernel over T computes in: float for float16 and bfloat16, T itself otherwise
/// (integers included, unlike ComputeType).
template <typename T>
using WideType = std::conditional_t<kIsNarrowFloat<T>, float, T>;

/// The kUnsupportedDType error for `dtype` given the supported list, e.g.
/// "input of type int8 is not supported (supported: float32, float64)".
Status unsupported_dtype(const KernelContext& ctx, DType dtype, std::initializer_list<DType> supported);

/// Calls `f.template operator()<T>()` (which returns Status) for the T in `Ts` whose DType is
/// `dtype`; returns kUnsupportedDType listing the supported types when none matches.
template <typename... Ts, typename F>
Status dispatch_types(TypeList<Ts...>, const KernelContext& ctx, DType dtype, F&& f) {
  Status result;
  bool matched = false;
  (
      [&] {
        if (!matched && dtype == dtype_of<Ts>) {
          matched = true;
          result = f.template operator()<Ts>();
        }
      }(),
      ...);
  if (!matched) return unsupported_dtype(ctx, dtype, {dtype_of<Ts>...});
  return result;
}

/// For data-movement kernels, which only copy elements: calls `f.template operator()<U>()` with an
/// unsigned integer type U of the element's byte size (std::string for strings), so one
/// instantiation serves every dtype of that size, float16 and bfloat16 included.
template <typename F>
Status dispatch_by_size(DType dtype, F&& f) {
  if (dtype == DType::kString) return f.template operator()<std::string>();
  switch (dtype_size(dtype)) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
    default:
      break;
  }
  return make_error(StatusCode::kInternal, "no copy type for {}-byte elements", dtype_size(dtype));
}

/// The elements of `t` seen as U, where U is the type dispatch_by_size chose for its dtype.
template <typename U>
const U* raw_data(const Tensor& t) {
  return static_cast<const U*>(t.raw());
}
template <typename U>
U* raw_mutable_data(Tensor& t) {
  return static_cast<U*>(t.mutable_raw());
}

/// Checks that inputs 0..min_inputs-1 are present and that the node has at least `min_outputs`
/// output slots; fails with kInvalidModel naming the missing input.
Status check_arity(const KernelContext& ctx, size_t min_inputs, size_t min_outputs = 1);

/// True when output slot i exists and is named (ONNX leaves an unused optional output's name empty).
bool output_requested(const KernelContext& ctx, size_t i);

/// Reads input i as a list of int64 (Reshape's shape, Slice's starts, ...). The input must be an
/// integer tensor of rank 0 or 1; `what` names it in errors ("shape", "axes").
Result<std::vector<int64_t>> input_int64s(const KernelContext& ctx, size_t i, std::string_view what);
/// As input_int64s, but nullopt when input i is omitted.
Result<std::optional<std::vector<int64_t>>> optional_input_int64s(const KernelContext& ctx, size_t i,
                                                                  std::string_view what);

/// Normalizes each axis to [0, rank) and rejects out-of-range or repeated axes (kInvalidModel).
/// The result keeps the given order.
Result<std::vector<int64_t>> normalize_axes(const KernelContext& ctx, const std::vector<int64_t>& axes, int64_t rank);

/// Product of shape[begin, end).
int64_t shape_product(const Shape& shape, size_t begin, size_t end);

/// Converts a double to T like Cast does: integers truncate toward zero, NaN becomes 0 and
/// out-of-range values saturate (C++ leaves those conversions undefined).
template <typename T>
T saturate_cast(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

/// Integer arithmetic without signed-overflow UB: operands widen to this unsigned type, wrap
/// modulo 2^n, and narrow back (two's complement, as numpy and the ONNX reference behave).
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

/// Reads a scalar (rank 0, or one element) input as T after checking its dtype matches `dtype`.
template <typename T>
Result<T> input_scalar(const KernelContext& ctx, size_t i, std::string_view what) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != dtype_of<T>) {
    return ctx.fail(StatusCode::kInvalidModel, "{} must be {} like the data, got {}", what, dtype_name(dtype_of<T>),
                    dtype_name(t.dtype()));
  }
  if (t.numel() != 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "{} must be a scalar, got shape {}", what, shape_to_string(t.shape()));
  }
  return t.data<T>()[0];
}

/// Elements per thread below which parallel_chunks keeps the work on one thread, for kernels of a
/// few cycles per element (memory-bound): below about 64K elements, starting the threads costs
/// more than they save.
inline constexpr int64_t kMemoryBoundGrain = int64_t{1} << 15;
/// The same for kernels of tens of cycles per element or more (exp, division, libm calls): the
/// detection-head fixture's Sigmoid (61K elements) took 165 us on one thread, 100 on two.
inline constexpr int64_t kComputeBoundGrain = int64_t{1} << 12;

/// Multiply-adds per thread below which a product-like kernel (a convolution) uses fewer threads:
/// starting a thread and sharing out the work cost microseconds, which the small layers of a
/// mobile network (tens of microseconds of work) paid on every thread of a 16-core machine.
inline constexpr int64_t kProductGrain = int64_t{1} << 18;

/// Calls f(begin, end) on contiguous chunks covering [0, n) on up to `threads` threads when each
/// thread gets at least `grain` elements; otherwise calls f(0, n) once. There are up to four
/// chunks per thread, claimed in turn, so that a thread the OS holds back takes fewer of them.
template <typename F>
void parallel_chunks(int threads, int64_t n, F&& f, int64_t grain = kMemoryBoundGrain) {
  const int64_t team = std::clamp<int64_t>(n / grain, 1, capped_threads(threads));
  if (team <= 1) {
    f(int64_t{0}, n);
    return;
  }
  const int64_t chunks = std::clamp<int64_t>(n / grain, team, 4 * team);
  parallel_for(static_cast<int>(team), chunks, [&](int64_t c) { f(n * c / chunks, n * (c + 1) / chunks); });
}

}  // namespace vn::ops
