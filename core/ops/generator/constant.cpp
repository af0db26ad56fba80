// SPDX-License-Identifier: Apache-2.0
// Generators: Constant (value and, from opset 12, value_float(s)/value_int(s)/value_string(s)),
// ConstantOfShape and Range.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status constant(KernelContext& ctx) {
  if (ctx.output_count() < 1) return ctx.fail(StatusCode::kInvalidModel, "has no output");
  static constexpr const char* kValueAttrs[] = {"value",      "value_float",  "value_floats",  "value_int",
                                                "value_ints", "value_string", "value_strings", "sparse_value"};
  int present = 0;
  for (const char* name : kValueAttrs) present += ctx.has_attr(name) ? 1 : 0;
  if (present != 1) {
    return ctx.fail(StatusCode::kInvalidModel, "exactly one value attribute must be set, found {}", present);
  }
  if (ctx.has_attr("sparse_value")) {
    return ctx.fail(StatusCode::kUnsupportedAttr, "sparse_value constants are not supported; densify the model");
  }
  if (ctx.has_attr("value")) {
    const Tensor* t = ctx.attr_tensor("value");
    if (!t || !t->defined()) return ctx.fail(StatusCode::kInvalidModel, "attribute value is not a tensor");
    // The attribute's storage is shared; kernels never write their inputs, so no copy is needed.
    ctx.set_output(0, *t);
    return Status::OK();
  }
  if (ctx.has_attr("value_float")) {
    ctx.set_output(0, Tensor::scalar<float>(ctx.attr_float("value_float", 0.0f)));
  } else if (ctx.has_attr("value_floats")) {
    std::vector<float> v = ctx.attr_floats("value_floats");
    ctx.set_output(0, Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v));
  } else if (ctx.has_attr("value_int")) {
    ctx.set_output(0, Tensor::scalar<int64_t>(ctx.attr_int("value_int", 0)));
  } else if (ctx.has_attr("value_ints")) {
    std::vector<int64_t> v = ctx.attr_ints("value_ints");
    ctx.set_output(0, Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
  } else if (ctx.has_attr("value_string")) {
    ctx.set_output(0, Tensor::scalar<std::string>(ctx.attr_string("value_string", "")));
  } else {
    const Attribute* a = ctx.attr("value_strings");
    if (a->type != AttrType::kStrings) {
      return ctx.fail(StatusCode::kInvalidModel, "attribute value_strings is of type {}, expected strings",
                      attr_type_name(a->type));
    }
    ctx.set_output(0, Tensor::from_vector<std::string>({static_cast<int64_t>(a->strings.size())}, a->strings));
  }
  return Status::OK();
}

Status constant_of_shape(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, input_int64s(ctx, 0, "input"));
  for (int64_t d : shape) {
    if (d < 0) return ctx.fail(StatusCode::kInvalidModel, "shape has negative dimension {}", d);
  }
  Tensor value = Tensor::scalar<float>(0.0f);
  if (ctx.has_attr("value")) {
    const Tensor* t = ctx.attr_tensor("value");
    if (!t || !t->defined() || t->numel() != 1) {
      return ctx.fail(StatusCode::kInvalidModel, "attribute value must be a one-element tensor");
    }
    value = *t;
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, value.dtype(), shape));
  return dispatch_by_size(value.dtype(), [&]<typename U>() {
    const U v = raw_data<U>(value)[0];
    U* py = raw_mutable_data<U>(*y);
    std::fill_n(py, y->numel(), v);
    return Status::OK();
  });
}

/// Range-11, and Range-27 (`kStash`), which adds float16 and bfloat16 computed in the float type
/// its stash_type names (float32 by default, or float64), each value rounded once to the output.
template <bool kStash>
Status range(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const DType dtype = ctx.input(0).dtype();
  bool stash_double = false;
  if constexpr (kStash) {
    const int64_t stash = ctx.attr_int("stash_type", 1);
    if (stash != 1 && stash != 11) {
      return ctx.fail(StatusCode::kUnsupportedAttr, "stash_type {} is not float32 (1) or float64 (11)", stash);
    }
    stash_double = stash == 11;
  }
  using Types =
      std::conditional_t<kStash, TypeList<float, double, int16_t, int32_t, int64_t, Eigen::half, Eigen::bfloat16>,
                         TypeList<float, double, int16_t, int32_t, int64_t>>;
  return dispatch_types(Types{}, ctx, dtype, [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(T start, input_scalar<T>(ctx, 0, "start"));
    VN_ASSIGN_OR_RETURN(T limit, input_scalar<T>(ctx, 1, "limit"));
    VN_ASSIGN_OR_RETURN(T delta, input_scalar<T>(ctx, 2, "delta"));
    if (delta == T(0)) return ctx.fail(StatusCode::kInvalidModel, "delta is 0");
    int64_t count = 0;
    if constexpr (std::is_integral_v<T>) {
      // Exact ceil((limit - start) / delta) on magnitudes in unsigned arithmetic, which holds any
      // int64 difference without overflow.
      const auto s64 = static_cast<int64_t>(start), l64 = static_cast<int64_t>(limit),
                 d64 = static_cast<int64_t>(delta);
      if ((l64 > s64 && d64 > 0) || (l64 < s64 && d64 < 0)) {
        const uint64_t span = l64 > s64 ? static_cast<uint64_t>(l64) - static_cast<uint64_t>(s64)
                                        : static_cast<uint64_t>(s64) - static_cast<uint64_t>(l64);
        const uint64_t step = d64 > 0 ? static_cast<uint64_t>(d64) : uint64_t{0} - static_cast<uint64_t>(d64);
        count = static_cast<int64_t>((span - 1) / step + 1);
      }
    } else {
      const double c =
          std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
      if (!std::isfinite(c) || c > 4.6e18) {
        return ctx.fail(StatusCode::kInvalidModel, "range from {} to {} by {} has no representable length",
                        static_cast<double>(start), static_cast<double>(limit), static_cast<double>(delta));
      }
      count = c > 0 ? static_cast<int64_t>(c) : 0;
    }
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, {count}));
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    // ONNX Range: output[i] = start + i * delta (integers wrap like the other integer ops).
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_integral_v<T>) {
        py[i] = static_cast<T>(static_cast<WrapType<T>>(start) +
                               static_cast<WrapType<T>>(static_cast<WrapType<T>>(i) * static_cast<WrapType<T>>(delta)));
      } else if constexpr (std::is_floating_point_v<T>) {
        py[i] = start + static_cast<T>(i) * delta;
      } else if (stash_double) {
        py[i] = static_cast<T>(static_cast<double>(start) + static_cast<double>(i) * static_cast<double>(delta));
      } else {
        py[i] = static_cast<T>(static_cast<float>(start) + static_cast<float>(i) * static_cast<float>(delta));
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_constant_ops(OpRegistry& registry) {
  // Constant 19 to 25 and ConstantOfShape 20 to 25 only added element types (float8, int4,
  // float4, float8e8m0, int2; ConstantOfShape-20 also bfloat16), which Vernier refuses when it
  // reads the value.
  for (int64_t v : {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}) registry.add("Constant", v, constant);
  for (int64_t v : {9, 20, 21, 23, 24, 25}) registry.add("ConstantOfShape", v, constant_of_shape);
  registry.add("Range", 11, range<false>);
  registry.add("Range", 27, range<true>);
}

}  // namespace vn::ops
