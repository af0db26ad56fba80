// SPDX-License-Identifier: Apache-2.0
// Col2Im (opset 18): the inverse of im2col over any number r of spatial dimensions. Input
// (N, C * prod(block_shape), L) holds, for each of the L sliding-block positions, the block's
// values channel-major; each is added into the image (N, C, image_shape...) at
// position * stride - pad_begin + block_offset * dilation, and values falling in the padding are
// dropped (PyTorch's col2im, which ONNX follows). Sums accumulate in double.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 31;

/// Reads an r-element attribute with every value at least `min`, or `fallback` when absent.
Result<std::vector<int64_t>> spatial_attr(const KernelContext& ctx, std::string_view name, size_t r, int64_t fallback,
                                          int64_t min) {
  std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(r, fallback));
  if (v.size() != r) return ctx.fail(StatusCode::kInvalidModel, "{} must have {} values, got {}", name, r, v.size());
  for (int64_t x : v) {
    // The bound keeps the position arithmetic below far from overflow.
    if (x < min || x > kMaxExtent) {
      return ctx.fail(StatusCode::kInvalidModel, "{} values must be in [{}, {}], got {}", name, min, kMaxExtent, x);
    }
  }
  return v;
}

Status col2im(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> image, input_int64s(ctx, 1, "image_shape"));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> block, input_int64s(ctx, 2, "block_shape"));
  const size_t r = image.size();
  if (r == 0 || block.size() != r) {
    return ctx.fail(StatusCode::kInvalidModel, "image_shape ({} values) and block_shape ({}) must have one length >= 1",
                    r, block.size());
  }
  for (size_t i = 0; i < r; ++i) {
    if (image[i] < 1 || block[i] < 1 || image[i] > kMaxExtent || block[i] > kMaxExtent) {
      return ctx.fail(StatusCode::kInvalidModel, "image_shape and block_shape must be in [1, {}], got {} and {}",
                      kMaxExtent, image[i], block[i]);
    }
  }
  if (!dtype_is_float(x.dtype())) {
    return unsupported_dtype(ctx, x.dtype(), {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, spatial_attr(ctx, "dilations", r, 1, 1));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatial_attr(ctx, "strides", r, 1, 1));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, spatial_attr(ctx, "pads", 2 * r, 0, 0));
  if (x.rank() != 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "input must be 3-D (N, C * prod(block_shape), L), got shape {}",
                    shape_to_string(x.shape()));
  }
  int64_t block_size = 1;
  for (int64_t b : block) {
    block_size *= b;
    // Beyond dimension 1 it cannot divide it (and the product stays far from overflow).
    if (block_size > x.dim(1)) break;
  }
  if (block_size > x.dim(1) || x.dim(1) % block_size != 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "input dimension 1 ({}) is not a multiple of prod(block_shape) = {}",
                    x.dim(1), block_size);
  }
  // The number of block positions along each dimension, as a convolution's output size.
  std::vector<int64_t> positions(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t span = image[i] + pads[i] + pads[i + r] - dilations[i] * (block[i] - 1) - 1;
    positions[i] = span < 0 ? 0 : span / strides[i] + 1;
    if (positions[i] < 1) {
      return ctx.fail(StatusCode::kShapeMismatch, "no block of size {} fits image dimension {} of size {}", block[i], i,
                      image[i]);
    }
  }
  int64_t length = 1;
  for (int64_t p : positions) length = std::min(length * p, kMaxExtent * 2);
  if (x.dim(2) != length) {
    return ctx.fail(StatusCode::kShapeMismatch, "input dimension 2 must be the number of block positions ({}), got {}",
                    fmt::join(positions, " x "), x.dim(2));
  }
  const int64_t n = x.dim(0), c = x.dim(1) / block_size;
  Shape out_shape = {n, c};
  out_shape.insert(out_shape.end(), image.begin(), image.end());
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), out_shape));
  VN_ASSIGN_OR_RETURN(std::vector<double> xs, tensor_to_doubles(x));
  const int64_t image_size = shape_product(image, 0, r);
  std::vector<double> acc(static_cast<size_t>(n * c * image_size), 0.0);
  std::vector<int64_t> k_idx(r), p_idx(r);
  for (int64_t plane = 0; plane < n * c; ++plane) {
    for (int64_t k = 0; k < block_size; ++k) {
      for (int64_t rem = k, i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
        k_idx[static_cast<size_t>(i)] = rem % block[static_cast<size_t>(i)];
        rem /= block[static_cast<size_t>(i)];
      }
      const double* col = xs.data() + static_cast<size_t>((plane * block_size + k) * length);
      for (int64_t p = 0; p < length; ++p) {
        for (int64_t rem = p, i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
          p_idx[static_cast<size_t>(i)] = rem % positions[static_cast<size_t>(i)];
          rem /= positions[static_cast<size_t>(i)];
        }
        int64_t at = 0;
        bool inside = true;
        for (size_t i = 0; i < r && inside; ++i) {
          const int64_t pos = p_idx[i] * strides[i] - pads[i] + k_idx[i] * dilations[i];
          inside = pos >= 0 && pos < image[i];
          at = at * image[i] + pos;
        }
        if (inside) acc[static_cast<size_t>(plane * image_size + at)] += col[p];
      }
    }
  }
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    for (size_t i = 0; i < acc.size(); ++i) py[i] = static_cast<T>(acc[i]);
    return Status::OK();
  });
}

}  // namespace

void register_col2im_ops(OpRegistry& registry) { registry.add("Col2Im", 18, col2im); }

}  // namespace vn::ops
