// SPDX-License-Identifier: Apache-2.0
// Normalizations: BatchNormalization, InstanceNormalization, LayerNormalization,
// MeanVarianceNormalization, LpNormalization and LRN.
//
// BatchNormalization: Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (dim 1). In
// inference mode the optional statistics outputs of opsets 1-9 (running and saved mean/var) are
// filled with the running statistics passed in, which inference leaves unchanged. Opset 14+
// training_mode=1 normalizes with the batch statistics and returns the updated running ones.
//
// Statistics (means, variances, norms, window sums) are accumulated in double, and variances are
// taken around the mean, E[(x - mean)^2], rather than as E[x^2] - mean^2, which cancels.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// Mean and biased variance of each of the `count` groups of a tensor, where group g holds the
/// elements at g's offsets: `blocks` runs of `len` contiguous elements each, the runs `stride`
/// apart. Computed in double with the two-pass formula, each pass in eight interleaved partial
/// sums (element i of a run into sum i mod 8): independent additions rather than one chain
/// (ConvNeXt-T's LayerNormalizations at one thread 8.9 -> 4.4 ms), and in double the order moves
/// the result by about an ulp of a double.
template <typename T>
void group_stats(const T* x, int64_t len, int64_t blocks, int64_t stride, double& mean, double& var) {
  const int64_t n = len * blocks;
  const auto sum_runs = [&](auto&& term) {
    double part[8] = {};
    for (int64_t b = 0; b < blocks; ++b) {
      const T* run = x + b * stride;
      int64_t i = 0;
      for (; i + 8 <= len; i += 8) {
        for (int j = 0; j < 8; ++j) part[j] += term(run[i + j]);
      }
      for (; i < len; ++i) part[i % 8] += term(run[i]);
    }
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  };
  const double sum = sum_runs([](T v) { return static_cast<double>(v); });
  mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  const double m = mean;
  const double sq = sum_runs([m](T v) {
    const double d = static_cast<double>(v) - m;
    return d * d;
  });
  var = n > 0 ? sq / static_cast<double>(n) : 0.0;
}

/// BatchNormalization-14/15 with training_mode=1: Y uses the batch mean and biased variance per
/// channel; outputs 1 and 2 are the running statistics updated with `momentum`,
/// running = input * momentum + batch * (1 - momentum), in the type of input_mean/input_var.
Status batch_norm_training(KernelContext& ctx, const std::vector<double> (&params)[4], double epsilon) {
  const Tensor& x = ctx.input(0);
  const int64_t channels = x.dim(1);
  const int64_t batch = x.dim(0);
  const int64_t inner = shape_product(x.shape(), 2, x.shape().size());
  if (batch * inner == 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "training_mode=1 needs a non-empty batch to compute statistics, got {}",
                    shape_to_string(x.shape()));
  }
  const double momentum = ctx.attr_float("momentum", 0.9f);
  std::vector<double> mean(static_cast<size_t>(channels)), var(static_cast<size_t>(channels));
  VN_RETURN_IF_ERROR(dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t c = 0; c < channels; ++c) {
      const auto ci = static_cast<size_t>(c);
      group_stats(px + c * inner, inner, batch, channels * inner, mean[ci], var[ci]);
      const double factor = params[0][ci] / std::sqrt(var[ci] + epsilon);
      for (int64_t n = 0; n < batch; ++n) {
        const int64_t off = (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          py[off + i] = static_cast<T>((static_cast<double>(px[off + i]) - mean[ci]) * factor + params[1][ci]);
        }
      }
    }
    return Status::OK();
  }));
  const std::vector<double>* batch_stats[] = {&mean, &var};
  for (size_t o = 1; o <= 2; ++o) {
    if (!output_requested(ctx, o)) continue;
    const Tensor& running = ctx.input(o + 2);
    VN_RETURN_IF_ERROR(dispatch_types(FloatTypes{}, ctx, running.dtype(), [&]<typename T>() -> Status {
      VN_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(o, running.dtype(), running.shape()));
      T* po = out->mutable_data<T>();
      for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
        po[c] = static_cast<T>(params[o + 1][c] * momentum + (*batch_stats[o - 1])[c] * (1.0 - momentum));
      }
      return Status::OK();
    }));
  }
  return Status::OK();
}

template <int64_t kSince>
Status batch_norm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 5));
  const Tensor& x = ctx.input(0);
  if constexpr (kSince < 9) {
    if (ctx.attr_int("spatial", 1) != 1) {
      return ctx.fail(StatusCode::kUnsupportedAttr,
                      "spatial=0 (per-activation statistics) is not supported; only spatial=1 is");
    }
  }
  bool training = false;
  if constexpr (kSince >= 14) training = ctx.attr_int("training_mode", 0) != 0;
  if (x.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, ...), got {}", shape_to_string(x.shape()));
  }
  const int64_t channels = x.dim(1);
  const char* names[] = {"scale", "B", "mean", "var"};
  std::vector<double> params[4];
  for (size_t i = 0; i < 4; ++i) {
    const Tensor& p = ctx.input(i + 1);
    if (p.shape() != Shape{channels}) {
      return ctx.fail(StatusCode::kShapeMismatch, "{} must have shape ({},) for {} channels, got {}", names[i],
                      channels, channels, shape_to_string(p.shape()));
    }
    // Opset 15 lets scale/B and mean/var have types other than X's; reading them as double covers
    // every combination.
    Result<std::vector<double>> values = tensor_to_doubles(p);
    if (!values.ok() || !dtype_is_float(p.dtype())) {
      return ctx.fail(StatusCode::kUnsupportedDType, "{} must be a float tensor, got {}", names[i],
                      dtype_name(p.dtype()));
    }
    params[i] = std::move(values).value();
  }
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  const int64_t batch = x.dim(0);
  const int64_t inner = shape_product(x.shape(), 2, x.shape().size());
  if (training) return batch_norm_training(ctx, params, epsilon);
  // The spec uses momentum only to update the running statistics in training mode; exporters
  // (torch 1.13 at opset 15+) write it on inference nodes too, where it changes nothing.
  ctx.ignore_attrs({"momentum"});
  VN_RETURN_IF_ERROR(dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    // Each element from x's at its index: x's buffer when nothing else reads it.
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_elementwise(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    std::vector<T> factor(static_cast<size_t>(channels)), mean(factor.size()), shift(factor.size());
    for (size_t c = 0; c < factor.size(); ++c) {
      factor[c] = static_cast<T>(params[0][c] / std::sqrt(params[3][c] + epsilon));
      mean[c] = static_cast<T>(params[2][c]);
      shift[c] = static_cast<T>(params[1][c]);
    }
    // Planes (one channel of one sample) are independent: split across threads, each computed
    // exactly as on one thread. DenseNet's unfolded BatchNormalizations were 18% of its run on one
    // thread and did not scale with --threads.
    const int64_t grain = std::max<int64_t>(1, kMemoryBoundGrain / std::max<int64_t>(inner, 1));
    parallel_chunks(
        ctx.num_threads(), batch * channels,
        [&](int64_t begin, int64_t end) {
          for (int64_t plane = begin; plane < end; ++plane) {
            const auto c = static_cast<size_t>(plane % channels);
            const int64_t off = plane * inner;
            ArrayMap<T>(py + off, inner) = (ConstArrayMap<T>(px + off, inner) - mean[c]) * factor[c] + shift[c];
          }
        },
        grain);
    return Status::OK();
  }));
  // Statistics outputs: (running) mean and var, then saved mean and var (opsets < 14 only).
  const size_t stats[] = {3, 4, 3, 4};
  for (size_t o = 1; o < ctx.output_count() && o <= 4; ++o) {
    if (output_requested(ctx, o)) ctx.set_output(o, ctx.input(stats[o - 1]));
  }
  return Status::OK();
}

/// Reads a float parameter tensor (scale, B) as doubles after checking its shape.
Result<std::vector<double>> float_param(const KernelContext& ctx, size_t i, std::string_view name,
                                        const Shape& expected) {
  const Tensor& p = ctx.input(i);
  if (p.shape() != expected) {
    return ctx.fail(StatusCode::kShapeMismatch, "{} must have shape {}, got {}", name, shape_to_string(expected),
                    shape_to_string(p.shape()));
  }
  if (!dtype_is_float(p.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "{} must be a float tensor, got {}", name, dtype_name(p.dtype()));
  }
  return tensor_to_doubles(p);
}

// ---- InstanceNormalization ---------------------------------------------------------------------

Status instance_norm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "input must be (N, C, D1, ...) with at least one spatial dim, got {}",
                    shape_to_string(x.shape()));
  }
  const int64_t channels = x.dim(1);
  VN_ASSIGN_OR_RETURN(std::vector<double> scale, float_param(ctx, 1, "scale", {channels}));
  VN_ASSIGN_OR_RETURN(std::vector<double> bias, float_param(ctx, 2, "B", {channels}));
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  const int64_t inner = shape_product(x.shape(), 2, x.shape().size());
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t plane = 0; plane < x.dim(0) * channels; ++plane) {
      const auto c = static_cast<size_t>(plane % channels);
      double mean = 0.0, var = 0.0;
      group_stats(px + plane * inner, inner, 1, 0, mean, var);
      const double factor = scale[c] / std::sqrt(var + epsilon);
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = plane * inner + i;
        py[at] = static_cast<T>((static_cast<double>(px[at]) - mean) * factor + bias[c]);
      }
    }
    return Status::OK();
  });
}

// ---- LayerNormalization ------------------------------------------------------------------------

/// `t` (Scale or B) broadcast to `target` (X's dims from `axis` on) as doubles.
Result<std::vector<double>> broadcast_param(const KernelContext& ctx, const Tensor& t, std::string_view name,
                                            const Shape& target) {
  if (!broadcasts_to(t.shape(), target)) {
    return ctx.fail(StatusCode::kShapeMismatch, "{} of shape {} does not broadcast to the normalized shape {}", name,
                    shape_to_string(t.shape()), shape_to_string(target));
  }
  if (!dtype_is_float(t.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "{} must be a float tensor, got {}", name, dtype_name(t.dtype()));
  }
  VN_ASSIGN_OR_RETURN(Tensor dense, Tensor::create(t.dtype(), target));
  VN_RETURN_IF_ERROR(broadcast_copy(t, dense));
  return tensor_to_doubles(dense);
}

// LayerNormalization-17: normalizes over the dims from `axis` on. The optional outputs Mean and
// InvStdDev have X's shape with those dims set to 1 and the stash_type (float32).
Status layer_norm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank()));
  const int64_t stash_type = ctx.attr_int("stash_type", 1);
  if (stash_type != 1) {
    return ctx.fail(StatusCode::kUnsupportedAttr,
                    "stash_type {} is not supported; only 1 (float32 statistics) is (the reference computes them in "
                    "double and stores float32)",
                    stash_type);
  }
  const auto a = static_cast<size_t>(axis);
  const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  const int64_t outer = shape_product(x.shape(), 0, a);
  const int64_t inner = shape_numel(norm_shape);
  VN_ASSIGN_OR_RETURN(std::vector<double> scale, broadcast_param(ctx, ctx.input(1), "Scale", norm_shape));
  std::vector<double> bias;
  if (ctx.has_input(2)) {
    VN_ASSIGN_OR_RETURN(bias, broadcast_param(ctx, ctx.input(2), "B", norm_shape));
  }
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  Shape stat_shape = x.shape();
  std::fill(stat_shape.begin() + axis, stat_shape.end(), 1);
  float* mean_out = nullptr;
  float* inv_out = nullptr;
  if (output_requested(ctx, 1)) {
    VN_ASSIGN_OR_RETURN(Tensor * m, ctx.allocate_output(1, DType::kFloat32, stat_shape));
    mean_out = m->numel() > 0 ? m->mutable_data<float>() : nullptr;
  }
  if (output_requested(ctx, 2)) {
    VN_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output(2, DType::kFloat32, stat_shape));
    inv_out = s->numel() > 0 ? s->mutable_data<float>() : nullptr;
  }
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    // Every row is written whole below.
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    const double* sc = scale.data();
    const double* bs = bias.empty() ? nullptr : bias.data();
    const int threads = threads_for_work(ctx.num_threads(), outer * inner, kComputeBoundGrain);
    parallel_for(threads, outer, [&](int64_t o) {
      double mean = 0.0, var = 0.0;
      group_stats(px + o * inner, inner, 1, 0, mean, var);
      const double inv_std = 1.0 / std::sqrt(var + epsilon);
      const T* xr = px + o * inner;
      T* yr = py + o * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double v = (static_cast<double>(xr[i]) - mean) * inv_std * sc[i];
        yr[i] = static_cast<T>(bs ? v + bs[i] : v);
      }
      if (mean_out) mean_out[o] = static_cast<float>(mean);
      if (inv_out) inv_out[o] = static_cast<float>(inv_std);
    });
    return Status::OK();
  });
}

// ---- MeanVarianceNormalization -----------------------------------------------------------------

// MVN-9/13: Y = (X - mean) / (sqrt(var) + 1e-9) over `axes` (default [0, 2, 3]); the epsilon is
// the one in ONNX's function body for the op.
Status mean_variance_norm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, normalize_axes(ctx, ctx.attr_ints("axes", {0, 2, 3}), x.rank()));
  Shape kept = x.shape();
  for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
  const int64_t groups = shape_numel(kept);
  const int64_t count = groups > 0 ? x.numel() / groups : 0;
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::OK();
    // Gather the groups' sums through a strided loop: operand 1 maps each element to its group.
    const Shape strides[] = {contiguous_strides(x.shape()), broadcast_strides(kept, x.shape())};
    const StridedLoop loop(x.shape(), strides);
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    const int64_t n = loop.row_size();
    const int64_t sg = loop.inner_stride(1);
    std::vector<double> mean(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
    loop.for_each_row([&](int64_t, const int64_t* off) {
      for (int64_t i = 0; i < n; ++i) mean[static_cast<size_t>(off[1] + i * sg)] += static_cast<double>(px[off[0] + i]);
    });
    for (double& m : mean) m /= static_cast<double>(count);
    loop.for_each_row([&](int64_t, const int64_t* off) {
      for (int64_t i = 0; i < n; ++i) {
        const auto g = static_cast<size_t>(off[1] + i * sg);
        const double d = static_cast<double>(px[off[0] + i]) - mean[g];
        sq[g] += d * d;
      }
    });
    for (double& v : sq) v = std::sqrt(v / static_cast<double>(count)) + 1e-9;
    loop.for_each_row([&](int64_t, const int64_t* off) {
      for (int64_t i = 0; i < n; ++i) {
        const auto g = static_cast<size_t>(off[1] + i * sg);
        py[off[0] + i] = static_cast<T>((static_cast<double>(px[off[0] + i]) - mean[g]) / sq[g]);
      }
    });
    return Status::OK();
  });
}

// ---- LpNormalization ---------------------------------------------------------------------------

// LpNormalization-1: x / ||x||_p along `axis` for p = 1 or 2. A zero vector stays zero (ONNX
// Runtime's choice) instead of becoming 0/0 = NaN.
Status lp_norm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank()));
  const int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) return ctx.fail(StatusCode::kInvalidModel, "p must be 1 or 2, got {}", p);
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = shape_product(x.shape(), 0, a);
  const int64_t len = x.dim(axis);
  const int64_t inner = shape_product(x.shape(), a + 1, x.shape().size());
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        double norm = 0.0;
        for (int64_t j = 0; j < len; ++j) {
          const double v = static_cast<double>(px[base + j * inner]);
          norm += p == 1 ? std::abs(v) : v * v;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int64_t j = 0; j < len; ++j) {
          const double v = static_cast<double>(px[base + j * inner]);
          py[base + j * inner] = static_cast<T>(norm == 0.0 ? v : v / norm);
        }
      }
    }
    return Status::OK();
  });
}

// ---- LRN ---------------------------------------------------------------------------------------

// LRN-1/13: Y = X / (bias + alpha / size * sum of X^2 over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
Status lrn(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (!ctx.has_attr("size")) return ctx.fail(StatusCode::kInvalidModel, "attribute size is required");
  const int64_t size = ctx.attr_int("size", 1);
  if (size < 1) return ctx.fail(StatusCode::kInvalidModel, "size must be positive, got {}", size);
  if (x.rank() < 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...) with at least one spatial dim, got {}",
                    shape_to_string(x.shape()));
  }
  const double alpha = ctx.attr_float("alpha", 1e-4f);
  const double beta = ctx.attr_float("beta", 0.75f);
  const double bias = ctx.attr_float("bias", 1.0f);
  const int64_t channels = x.dim(1);
  const int64_t inner = shape_product(x.shape(), 2, x.shape().size());
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t n = 0; n < x.dim(0); ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t lo = std::max<int64_t>(0, c - before);
        const int64_t hi = std::min<int64_t>(channels - 1, c + after);
        for (int64_t i = 0; i < inner; ++i) {
          double sq = 0.0;
          for (int64_t k = lo; k <= hi; ++k) {
            const double v = static_cast<double>(px[(n * channels + k) * inner + i]);
            sq += v * v;
          }
          const int64_t at = (n * channels + c) * inner + i;
          py[at] = static_cast<T>(static_cast<double>(px[at]) /
                                  std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_normalization_ops(OpRegistry& registry) {
  registry.add("BatchNormalization", 1, batch_norm<1>);
  registry.add("BatchNormalization", 6, batch_norm<6>);
  registry.add("BatchNormalization", 7, batch_norm<7>);
  registry.add("BatchNormalization", 9, batch_norm<9>);
  registry.add("BatchNormalization", 14, batch_norm<14>);
  registry.add("BatchNormalization", 15, batch_norm<15>);
  // InstanceNormalization-22 and LpNormalization-22 only added bfloat16.
  for (int64_t v : {1, 6, 22}) registry.add("InstanceNormalization", v, instance_norm);
  registry.add("LayerNormalization", 17, layer_norm);
  for (int64_t v : {9, 13}) registry.add("MeanVarianceNormalization", v, mean_variance_norm);
  for (int64_t v : {1, 22}) registry.add("LpNormalization", v, lp_norm);
  for (int64_t v : {1, 13}) registry.add("LRN", v, lrn);
}

}  // namespace vn::ops
