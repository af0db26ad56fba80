// SPDX-License-Identifier: Apache-2.0
// int8 products with a constant B in builds without the int8 product (kernels.h, Int8Panels): B
// kept once in int8, in sgemm.h's panel layout, and widened to float32 a few panels at a time for
// the float kernel, whose sums of up to kFloatExactDepth int8 products are exact.
#include <algorithm>
#include <vector>

#include "core/common/parallel.h"
#include "core/common/threads.h"
#include "core/engine/kernels/kernels.h"
#include "core/ops/kernel_util.h"
#include "core/ops/scratch.h"
#include "core/ops/sgemm.h"

namespace vn::engine::kernels {
namespace {

// Floats of B widened at once per task: 256 KiB, in L2 while the rows of A pass.
constexpr int64_t kWidenFloats = int64_t{1} << 16;
// Float sums of a chunk of rows at most (128 KiB), and row blocks per chunk at most.
constexpr int64_t kPartFloats = int64_t{1} << 15;
constexpr int64_t kMostChunkBlocks = 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Int8Panels pack_int8_panels(const int8_t* b, int64_t k, int64_t n) {
  Int8Panels out;
  out.k = k;
  out.n = n;
  const int64_t panels = ceil_div(n, ops::kPackCols);
  out.values.assign(static_cast<size_t>(panels * k * ops::kPackCols), 0);
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t j0 = p * ops::kPackCols, cols = std::min(ops::kPackCols, n - j0);
    for (int64_t r = 0; r < k; ++r) {
      std::copy_n(b + r * n + j0, cols, out.values.begin() + (p * k + r) * ops::kPackCols);
    }
  }
  return out;
}

void matmul_int8_panels(const float* a, const Int8Panels& b, float* y, int64_t m, int threads,
                        const ops::Int8Finish* finish) {
  const int64_t k = b.k, n = b.n;
  if (m == 0 || n == 0) return;
  // Slices of even depth, each within kFloatExactDepth: their float sums are the exact integers.
  const int64_t slices = std::max<int64_t>(1, ceil_div(k, kFloatExactDepth));
  const int64_t depth = std::max<int64_t>(1, ceil_div(k, slices));
  const int64_t panels = ceil_div(n, ops::kPackCols);
  const int64_t group = std::clamp<int64_t>(kWidenFloats / (depth * ops::kPackCols), 1, panels);
  const int64_t groups = ceil_div(panels, group);
  const int team = threads_for_work(threads, m * n * std::max<int64_t>(k, 1), ops::kProductGrain);
  // Rows split too where the panels make fewer than four tasks a thread: a shallow B fits in one
  // group (ConvNeXt-T's 96 x 384 over 3136 rows ran on one of two threads). Each part is whole
  // row blocks and widens its group's panels again, a small cost beside its rows' products.
  const int64_t blocks = ceil_div(m, ops::kPackRows);
  const int64_t parts = team == 1 ? 1 : std::clamp<int64_t>(ceil_div(4 * team, groups), 1, blocks);
  // One slice's float sums are y's values: the float kernel writes them there. Deeper products
  // add their slices' sums in int32 (every element written by the first slice: no zero fill).
  CallBuffer<int32_t> acc(slices > 1 ? m * n : 0);
  parallel_for(team, groups * parts, [&](int64_t task) {
    const int64_t p0 = task / parts * group, p1 = std::min(panels, p0 + group);
    const int64_t part = task % parts;
    const int64_t i0 = blocks * part / parts * ops::kPackRows;
    const int64_t i1 = std::min(m, blocks * (part + 1) / parts * ops::kPackRows);
    const int64_t j0 = p0 * ops::kPackCols, cols = std::min(n, p1 * ops::kPackCols) - j0;
    // Rows of A per product, in whole blocks of kPackRows: few enough that their sums stay in L2
    // beside the widened panels, to be added, converted and finished there.
    const int64_t chunk =
        std::clamp<int64_t>(kPartFloats / cols / ops::kPackRows, 1, kMostChunkBlocks) * ops::kPackRows;
    ops::Scratch<float> wide(static_cast<size_t>((p1 - p0) * depth * ops::kPackCols), ops::ScratchSlot::kGemmB);
    ops::Scratch<float> sums(static_cast<size_t>(slices > 1 ? std::min(chunk, i1 - i0) * cols : 0),
                             ops::ScratchSlot::kTile);
    int64_t k0 = 0;
    do {  // once when k is 0: the sums are zero
      const int64_t kc = std::min(depth, k - k0);
      for (int64_t p = p0; p < p1; ++p) {
        const int8_t* src = b.values.data() + (p * k + k0) * ops::kPackCols;
        std::copy_n(src, kc * ops::kPackCols, wide.data() + (p - p0) * kc * ops::kPackCols);
      }
      const bool last = k0 + kc >= k;
      for (int64_t r0 = i0; r0 < i1; r0 += chunk) {
        const int64_t rows = std::min(chunk, i1 - r0);
        if (slices == 1) {
          ops::sgemm_packed(rows, cols, kc, a + r0 * k, k, wide.data(), nullptr, y + r0 * n + j0, n);
        } else {
          ops::sgemm_packed(rows, cols, kc, a + r0 * k + k0, k, wide.data(), nullptr, sums.data(), cols);
          for (int64_t r = 0; r < rows; ++r) {
            int32_t* sr = acc.get() + (r0 + r) * n + j0;
            const float* pr = sums.data() + r * cols;
            if (k0 == 0) {
              for (int64_t c = 0; c < cols; ++c) sr[c] = static_cast<int32_t>(pr[c]);
            } else if (!last) {
              for (int64_t c = 0; c < cols; ++c) sr[c] += static_cast<int32_t>(pr[c]);
            } else {
              float* yr = y + (r0 + r) * n + j0;
              for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(sr[c] + static_cast<int32_t>(pr[c]));
            }
          }
        }
        if (last && finish != nullptr) (*finish)(r0, r0 + rows, j0, j0 + cols);
      }
      k0 += kc;
    } while (k0 < k);
  });
}

}  // namespace vn::engine::kernels
