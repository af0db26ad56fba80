// SPDX-License-Identifier: Apache-2.0
// Transpose: a copy with the input's strides permuted (default: reversed dims). Axes of size 1 are
// dropped and output axes that stay adjacent in the input merged, then one of three copies runs:
// rows that stay contiguous (the output's last axis is the input's) are copied whole; when the
// input's contiguous axis moves inward of the output's last one (NCHW to NHWC, attention's keys
// turned), the two form a 2-D transpose done in tiles of 8 x 8, so that both sides are read and
// written in runs (4-byte elements through AVX2 shuffles where the build has them); anything else
// (strings) goes element by element.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// The output's shape and each output axis's stride in the input, with axes of size 1 dropped and
/// each output axis merged into the one before it where the input holds them adjacent in the
/// same order. Addresses every element as the unreduced pair does.
void coalesce(Shape& shape, Shape& strides) {
  Shape s, st;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!s.empty() && st.back() == strides[i] * shape[i]) {
      s.back() *= shape[i];
      st.back() = strides[i];
    } else {
      s.push_back(shape[i]);
      st.push_back(strides[i]);
    }
  }
  shape = std::move(s);
  strides = std::move(st);
}

/// dst[i * ldd + j] = src[i + j * lds] for i in [0, 8), j in [0, 8).
template <typename U>
void tile8(const U* src, int64_t lds, U* dst, int64_t ldd) {
#ifdef __AVX2__
  if constexpr (sizeof(U) == 4 && std::is_trivially_copyable_v<U>) {
    // Bit moves only (no arithmetic), so any 4-byte element passes through as it is.
    const auto* s = reinterpret_cast<const float*>(src);
    auto* d = reinterpret_cast<float*>(dst);
    __m256 r[8], t[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(s + k * lds);
    for (int k = 0; k < 8; k += 2) {
      t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
      t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
      r[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
      r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
      r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
      r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int k = 0; k < 4; ++k) {
      _mm256_storeu_ps(d + k * ldd, _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
      _mm256_storeu_ps(d + (k + 4) * ldd, _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
    }
    return;
  }
#endif
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 8; ++j) dst[i * ldd + j] = src[i + j * lds];
  }
}

/// dst[i * ldd + j] = src[i + j * lds] for i in [i0, i1), j in [0, cols): whole 8 x 8 tiles, then
/// the edges element by element.
template <typename U>
void transpose_2d(const U* src, int64_t lds, U* dst, int64_t ldd, int64_t i0, int64_t i1, int64_t cols) {
  const int64_t i8 = i0 + (i1 - i0) / 8 * 8, j8 = cols / 8 * 8;
  for (int64_t i = i0; i < i8; i += 8) {
    for (int64_t j = 0; j < j8; j += 8) tile8(src + i + j * lds, lds, dst + i * ldd + j, ldd);
    for (int64_t ii = i; ii < i + 8; ++ii) {
      for (int64_t j = j8; j < cols; ++j) dst[ii * ldd + j] = src[ii + j * lds];
    }
  }
  for (int64_t i = i8; i < i1; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[i * ldd + j] = src[i + j * lds];
  }
}

/// y = x transposed, `shape` and `strides` coalesced (the output's shape, each axis's stride in
/// x), on up to `threads` threads.
template <typename U>
void transpose_copy(const U* px, U* py, const Shape& shape, const Shape& strides, int threads) {
  const size_t rank = shape.size();
  const int64_t numel = shape_numel(shape);
  if (rank == 0 || numel == 0) {
    if (numel == 1) py[0] = px[0];
    return;
  }
  const int64_t cols = shape[rank - 1], s = strides[rank - 1];
  // The output axis that reads x's contiguous axis, when the output's last one does not.
  size_t q = rank;
  for (size_t a = 0; a + 1 < rank; ++a) {
    if (strides[a] == 1) q = a;
  }
  if constexpr (std::is_trivially_copyable_v<U>) {
    if (s == 1) {
      // Whole rows: every output axis but the last one walks the rows.
      const Shape operand_strides[] = {strides};
      const StridedLoop loop(shape, operand_strides);
      const int64_t n = loop.row_size();
      parallel_chunks(
          threads, loop.rows(),
          [&](int64_t first, int64_t last) {
            loop.for_rows(first, last, [&](int64_t dense, const int64_t* off) {
              std::memcpy(py + dense, px + off[0], static_cast<size_t>(n) * sizeof(U));
            });
          },
          std::max<int64_t>(1, kMemoryBoundGrain / std::max<int64_t>(n, 1)));
      return;
    }
    if (q < rank) {
      // Axes q and rank - 1 form a 2-D transpose (x's rows of shape[q] contiguous values, `s`
      // apart) repeated over the other axes; a task is one repetition's band of 8-row tiles.
      const Shape out_strides = contiguous_strides(shape);
      const int64_t ldd = out_strides[q];
      Shape batch = {1}, batch_in = {0}, batch_out = {0};
      for (size_t a = 0; a + 1 < rank; ++a) {
        if (a == q) continue;
        batch.push_back(shape[a]);
        batch_in.push_back(strides[a]);
        batch_out.push_back(out_strides[a]);
      }
      const Shape operand_strides[] = {batch_in, batch_out};
      const StridedLoop loop(batch, operand_strides);
      const int64_t rows = shape[q];
      const int64_t band = std::clamp<int64_t>(kMemoryBoundGrain / std::max<int64_t>(cols, 1) / 8 * 8, 8, 256);
      const int64_t bands = (rows + band - 1) / band;
      const int64_t per_row = loop.row_size();
      parallel_chunks(
          threads, loop.rows() * per_row * bands,
          [&](int64_t first, int64_t last) {
            for (int64_t task = first; task < last; ++task) {
              const int64_t rep = task / bands, b = task % bands;
              loop.for_rows(rep / per_row, rep / per_row + 1, [&](int64_t, const int64_t* off) {
                const int64_t r = rep % per_row;
                transpose_2d(px + off[0] + r * loop.inner_stride(0), s, py + off[1] + r * loop.inner_stride(1), ldd,
                             b * band, std::min(rows, (b + 1) * band), cols);
              });
            }
          },
          std::max<int64_t>(1, kMemoryBoundGrain / std::max<int64_t>(band * cols, 1)));
      return;
    }
  }
  const Shape operand_strides[] = {strides};
  const StridedLoop loop(shape, operand_strides);
  const int64_t n = loop.row_size();
  const int64_t step = loop.inner_stride(0);
  parallel_chunks(
      threads, loop.rows(),
      [&](int64_t first, int64_t last) {
        loop.for_rows(first, last, [&](int64_t dense, const int64_t* off) {
          const U* src = px + off[0];
          U* dst = py + dense;
          for (int64_t i = 0; i < n; ++i) dst[i] = src[i * step];
        });
      },
      std::max<int64_t>(1, kMemoryBoundGrain / std::max<int64_t>(n, 1)));
}

Status transpose(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  const auto rank = static_cast<size_t>(x.rank());
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (ctx.has_attr("perm")) perm = ctx.attr_ints("perm");
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (size_t i = 0; valid && i < rank; ++i) {
    valid = perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(perm[i])];
    if (valid) seen[static_cast<size_t>(perm[i])] = true;
  }
  if (!valid) {
    std::string list;
    for (int64_t p : perm) list += (list.empty() ? "" : ", ") + std::to_string(p);
    return ctx.fail(StatusCode::kInvalidModel, "perm [{}] is not a permutation of the {} axes of input {}", list, rank,
                    shape_to_string(x.shape()));
  }
  const Shape in_strides = contiguous_strides(x.shape());
  Shape out_shape(rank);
  Shape strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = x.dim(perm[i]);
    strides[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), out_shape));
  if (y->numel() == 0) return Status::OK();
  Shape shape = out_shape;
  coalesce(shape, strides);
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    transpose_copy(raw_data<U>(x), raw_mutable_data<U>(*y), shape, strides, ctx.num_threads());
    return Status::OK();
  });
}

}  // namespace

void register_transpose_ops(OpRegistry& registry) {
  // 21, 23, 24 and 25 only added element types Vernier refuses when it reads them.
  for (int64_t v : {1, 13, 21, 23, 24, 25}) registry.add("Transpose", v, transpose);
}

}  // namespace vn::ops
