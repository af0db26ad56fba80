// SPDX-License-Identifier: Apache-2.0
// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis` (default
// 1) and normalized over everything from `axis` on; from opset 13 only the single `axis` (default
// -1) is.
//
// float16 and bfloat16 take the steps of ONNX's reference (numpy on arrays of the element type),
// each rounded to it: d = x - max, e = exp(d), s = sum(e), y = e / s, and LogSoftmax log(y). The
// sum is numpy's: float16 along the contiguous last axis is its pairwise float32 sum rounded once;
// along another axis, and for bfloat16 (ml_dtypes' loop), each addition rounds.
//
// float32 takes exp from vector_math.h (correctly rounded in practice, where glibc's expf is off by
// one unit in the last place in 4 of 10^5 inputs) and its quotient from vmath::divide (bit for bit
// the double division); along the last axis the maximum and the double sum run in 8 lanes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/vector_math.h"

namespace vn::ops {
namespace {

/// The maximum of x[0, n) as `v > m ? v : m` from -inf takes it (NaN never wins). vmath::max's
/// lanes may keep another of +0 and -0 than one loop does, so a zero maximum is taken again in one
/// loop (LogSoftmax's x - max keeps the sign).
float row_max(const float* x, int64_t n) {
  float mx = vmath::max(x, n);
  if (mx == 0.0f) {
    mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  }
  return mx;
}

/// The sum of e[0, n) in double: element j goes to lane j % 8 of the first n - n % 8, the lanes
/// add as ((0+4) + (1+5)) + ((2+6) + (3+7)), then the rest in order.
double row_sum(const float* e, int64_t n) {
  double lane[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int l = 0; l < 8; ++l) lane[l] += static_cast<double>(e[j + l]);
  }
  double sum = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
  for (; j < n; ++j) sum += static_cast<double>(e[j]);
  return sum;
}

/// softmax_rows for float: the same steps, each a pass over the row (see the file comment). A row's
/// quotients are taken in the loop that exponentiates the next row.
template <bool kLog>
void softmax_rows_float(const float* x, float* y, int64_t rows, int64_t len) {
  // LogSoftmax keeps its exponentials apart: it reads x after them, and y may be x.
  std::vector<float> e(kLog ? static_cast<size_t>(len) : 0);
  double pending = 0.0;  // the sum of the previous row, whose exponentials its output holds
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    const float mx = row_max(xr, len);
    if constexpr (kLog) {
      vmath::exp_shifted(xr, mx, e.data(), len);
      const double log_sum = std::log(row_sum(e.data(), len));
      for (int64_t j = 0; j < len; ++j) yr[j] = static_cast<float>(static_cast<double>(xr[j] - mx) - log_sum);
    } else {
      if (r == 0) {
        vmath::exp_shifted(xr, mx, yr, len);
      } else {
        vmath::exp_shifted_divide(xr, mx, yr, len, yr - len, pending, yr - len);
      }
      pending = row_sum(yr, len);
    }
  }
  if (!kLog && rows > 0) vmath::divide(y + (rows - 1) * len, pending, y + (rows - 1) * len, len);
}

/// softmax_blocks for inner == 1 (the last axis, as attention's): `rows` contiguous rows of
/// `len`. For double, each element goes through the same operations in the same order as in
/// softmax_blocks, so the results are bit-identical; only the loops are simpler (no per-column
/// buffers to reload). float sums in softmax_rows_float's lanes.
template <typename T, bool kLog>
void softmax_rows(const T* x, T* y, int64_t rows, int64_t len) {
  if constexpr (std::is_same_v<T, float>) {
    softmax_rows_float<kLog>(x, y, rows, len);
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * len;
      T* yr = y + r * len;
      T mx = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < len; ++j) mx = xr[j] > mx ? xr[j] : mx;
      double sum = 0.0;
      for (int64_t j = 0; j < len; ++j) {
        const T e = std::exp(xr[j] - mx);
        sum += static_cast<double>(e);
        if constexpr (!kLog) yr[j] = e;
      }
      if constexpr (kLog) {
        const double log_sum = std::log(sum);
        for (int64_t j = 0; j < len; ++j) yr[j] = static_cast<T>(static_cast<double>(xr[j] - mx) - log_sum);
      } else {
        for (int64_t j = 0; j < len; ++j) yr[j] = static_cast<T>(static_cast<double>(yr[j]) / sum);
      }
    }
  }
}

/// Normalizes `outer` blocks, each a row-major (len, inner) matrix, over its `len` axis.
template <typename T, bool kLog>
void softmax_blocks(const T* x, T* y, int64_t outer, int64_t len, int64_t inner) {
  if (inner == 1) {
    softmax_rows<T, kLog>(x, y, outer, len);
    return;
  }
  std::vector<T> mx(static_cast<size_t>(inner));
  std::vector<double> sum(static_cast<size_t>(inner));
  std::vector<T> e(static_cast<size_t>(inner));  // the exponentials of one row
  for (int64_t o = 0; o < outer; ++o) {
    const T* xb = x + o * len * inner;
    T* yb = y + o * len * inner;
    std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t j = 0; j < len; ++j) {
      for (int64_t i = 0; i < inner; ++i) mx[i] = xb[j * inner + i] > mx[i] ? xb[j * inner + i] : mx[i];
    }
    // Subtracting the maximum keeps exp in range; the sum is accumulated in double so that long
    // rows of float32 do not lose the small terms.
    for (int64_t j = 0; j < len; ++j) {
      const T* xj = xb + j * inner;
      T* yj = yb + j * inner;
      if constexpr (std::is_same_v<T, float>) {
        for (int64_t i = 0; i < inner; ++i) e[i] = xj[i] - mx[i];
        vmath::exp(e.data(), e.data(), inner);
      } else {
        for (int64_t i = 0; i < inner; ++i) e[i] = std::exp(xj[i] - mx[i]);
      }
      for (int64_t i = 0; i < inner; ++i) {
        sum[i] += static_cast<double>(e[i]);
        if constexpr (!kLog) yj[i] = e[i];
      }
    }
    for (int64_t j = 0; j < len; ++j) {
      for (int64_t i = 0; i < inner; ++i) {
        if constexpr (kLog) {
          yb[j * inner + i] = static_cast<T>(static_cast<double>(xb[j * inner + i] - mx[i]) - std::log(sum[i]));
        } else {
          yb[j * inner + i] = static_cast<T>(static_cast<double>(yb[j * inner + i]) / sum[i]);
        }
      }
    }
  }
}

/// numpy's pairwise sum of x[0..n) in float32 (its float16 add reduction): blocks of up to 128
/// values summed in 8 interleaved partial sums, longer runs split in halves at a multiple of 8.
float numpy_pairwise_sum(const float* x, int64_t n) {
  if (n < 8) {
    float r = 0.0f;
    for (int64_t i = 0; i < n; ++i) r += x[i];
    return r;
  }
  if (n <= 128) {
    float r[8];
    for (int64_t j = 0; j < 8; ++j) r[j] = x[j];
    int64_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int64_t j = 0; j < 8; ++j) r[j] += x[i + j];
    }
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += x[i];
    return res;
  }
  int64_t half = n / 2;
  half -= half % 8;
  return numpy_pairwise_sum(x, half) + numpy_pairwise_sum(x + half, n - half);
}

/// softmax_blocks for float16 and bfloat16, step by step as the file comment says.
template <typename T, bool kLog>
void softmax_blocks_narrow(const T* x, T* y, int64_t outer, int64_t len, int64_t inner) {
  const auto r = [](float v) { return static_cast<float>(static_cast<T>(v)); };
  std::vector<float> e(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* xc = x + o * len * inner + i;
      T* yc = y + o * len * inner + i;
      float mx = -std::numeric_limits<float>::infinity();
      bool nan = false;
      for (int64_t j = 0; j < len; ++j) {
        const float v = static_cast<float>(xc[j * inner]);
        nan = nan || std::isnan(v);
        mx = v > mx ? v : mx;
      }
      if (nan) mx = std::numeric_limits<float>::quiet_NaN();  // numpy's max propagates NaN
      for (int64_t j = 0; j < len; ++j) e[j] = r(std::exp(r(static_cast<float>(xc[j * inner]) - mx)));
      float sum = 0.0f;
      if (std::is_same_v<T, Eigen::half> && inner == 1) {
        sum = r(numpy_pairwise_sum(e.data(), len));
      } else {
        for (int64_t j = 0; j < len; ++j) sum = r(sum + e[j]);
      }
      for (int64_t j = 0; j < len; ++j) {
        const float q = r(e[j] / sum);
        yc[j * inner] = static_cast<T>(kLog ? std::log(q) : q);
      }
    }
  }
}

template <bool kLog>
Status softmax_run(KernelContext& ctx, int64_t outer, int64_t len, int64_t inner) {
  const Tensor& x = ctx.input(0);
  return dispatch_types(RealFloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    // Every path reads a row (a column of a block) of x before it writes that row of y, so y may
    // take x's buffer when nothing reads x after this node (the Whisper encoder's 6x1500x1500
    // scores: a fresh 54 MB output took 20-25 ms of the node's time).
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_elementwise(0, x.dtype(), x.shape()));
    if (x.numel() == 0) return Status::OK();
    // Blocks are independent: split across threads, each computed exactly as on one thread (the
    // Whisper encoder's 6x1500x1500 attention Softmax took 0.8 s on one thread).
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    const int64_t block = len * inner;
    const int64_t grain = std::max<int64_t>(1, kComputeBoundGrain / std::max<int64_t>(block, 1));
    parallel_chunks(ctx.num_threads(), outer, [&](int64_t begin, int64_t end) {
      if constexpr (kIsNarrowFloat<T>) {
        softmax_blocks_narrow<T, kLog>(px + begin * block, py + begin * block, end - begin, len, inner);
      } else {
        softmax_blocks<T, kLog>(px + begin * block, py + begin * block, end - begin, len, inner);
      }
    }, grain);
    return Status::OK();
  });
}

// Opset 1 and 11: coerce to 2-D (prod(dims[:axis]), prod(dims[axis:])).
template <bool kLog>
Status softmax_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 1), rank));
  const auto a = static_cast<size_t>(axis);
  return softmax_run<kLog>(ctx, shape_product(x.shape(), 0, a), shape_product(x.shape(), a, x.shape().size()), 1);
}

// Opset 13: normalize along one axis.
template <bool kLog>
Status softmax_13(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank()));
  const auto a = static_cast<size_t>(axis);
  return softmax_run<kLog>(ctx, shape_product(x.shape(), 0, a), x.dim(axis),
                           shape_product(x.shape(), a + 1, x.shape().size()));
}

/// Hardmax: 1 at the first maximum of each (len) column of `outer` (len, inner) blocks, else 0.
/// A NaN counts as the maximum, as in numpy.argmax.
template <typename T>
void hardmax_blocks(const T* x, T* y, int64_t outer, int64_t len, int64_t inner) {
  std::vector<int64_t> best(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* xb = x + o * len * inner;
    T* yb = y + o * len * inner;
    std::fill(best.begin(), best.end(), 0);
    for (int64_t j = 1; j < len; ++j) {
      for (int64_t i = 0; i < inner; ++i) {
        const T cur = xb[best[i] * inner + i];
        const T v = xb[j * inner + i];
        if (!Eigen::numext::isnan(cur) && (v > cur || Eigen::numext::isnan(v))) best[i] = j;
      }
    }
    if (len > 0) {
      for (int64_t i = 0; i < inner; ++i) yb[best[i] * inner + i] = T(1);
    }
  }
}

Status hardmax_run(KernelContext& ctx, int64_t outer, int64_t len, int64_t inner) {
  const Tensor& x = ctx.input(0);
  return dispatch_types(RealFloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (x.numel() > 0) hardmax_blocks<T>(x.data<T>(), y->mutable_data<T>(), outer, len, inner);
    return Status::OK();
  });
}

Status hardmax_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 1), x.rank()));
  const auto a = static_cast<size_t>(axis);
  return hardmax_run(ctx, shape_product(x.shape(), 0, a), shape_product(x.shape(), a, x.shape().size()), 1);
}

Status hardmax_13(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank()));
  const auto a = static_cast<size_t>(axis);
  return hardmax_run(ctx, shape_product(x.shape(), 0, a), x.dim(axis),
                     shape_product(x.shape(), a + 1, x.shape().size()));
}

}  // namespace

void register_softmax_ops(OpRegistry& registry) {
  for (int64_t v : {1, 11}) {
    registry.add("Softmax", v, softmax_1<false>);
    registry.add("LogSoftmax", v, softmax_1<true>);
  }
  registry.add("Softmax", 13, softmax_13<false>);
  registry.add("LogSoftmax", 13, softmax_13<true>);
  for (int64_t v : {1, 11}) registry.add("Hardmax", v, hardmax_1);
  registry.add("Hardmax", 13, hardmax_13);
}

}  // namespace vn::ops
