// SPDX-License-Identifier: Apache-2.0
// Conv and ConvInteger for 1-D, 2-D and 3-D inputs with groups (depthwise
// included), strides, dilations, explicit pads and auto_pad. For Conv each (image, group) is one
// GEMM: W_g (M/g × C/g·K) times the im2col matrix (C/g·K × output positions), computed tile by
// tile of output positions. In float32 the tiles are written straight into the packed layout of
// sgemm.h's kernel; in the other types Eigen multiplies them. 1×1 convolutions without stride or
// padding skip im2col and multiply the input directly. Convolutions with one input channel per
// group (depthwise) sum their windows directly: in float32 also those with few channels per group
// (conv_direct.h).
#include "core/ops/nn/conv.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/common/parallel.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/nn/conv_direct.h"
#include "core/ops/nn/conv_im2col.h"
#include "core/ops/nn/conv_regions.h"
#include "core/ops/nn/conv_tiling.h"
#include "core/ops/scratch.h"
#include "core/ops/sgemm.h"
#include "core/ops/sgemm_driver.h"
#include "core/ops/spatial.h"

namespace vn::ops {
namespace {

/// Validated shapes of one Conv/ConvInteger node.
struct ConvPlan {
  int64_t group = 1, n = 0, c = 0, m = 0;
  Shape kernel, in, out_shape;
  WindowGeometry geo;
};

/// Checks X (N, C, D...) against W (M, C/group, k...) and computes the output geometry. Element
/// types are the caller's to check.
Result<ConvPlan> conv_plan(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  if (x.rank() < 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...) with at least one spatial dim, got {}",
                    shape_to_string(x.shape()));
  }
  if (w.rank() != x.rank()) {
    return ctx.fail(StatusCode::kShapeMismatch, "W {} must have the rank of X {}", shape_to_string(w.shape()),
                    shape_to_string(x.shape()));
  }
  const size_t spatial = static_cast<size_t>(x.rank() - 2);
  if (spatial > 3) {
    return ctx.fail(StatusCode::kUnsupportedAttr, "{}-D convolution is not supported (1-D to 3-D are)", spatial);
  }
  ConvPlan p;
  p.group = ctx.attr_int("group", 1);
  p.n = x.dim(0);
  p.c = x.dim(1);
  p.m = w.dim(0);
  if (p.group < 1 || p.group > std::max<int64_t>(p.c, 1)) {
    return ctx.fail(StatusCode::kInvalidModel, "group {} must be in [1, C = {}]", p.group, p.c);
  }
  if (w.dim(1) * p.group != p.c) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "X has {} input channels but W {} with group={} expects W[1]*group = {}", p.c,
                    shape_to_string(w.shape()), p.group, w.dim(1) * p.group);
  }
  if (p.m % p.group != 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "W has {} output channels, not divisible by group={}", p.m, p.group);
  }
  p.kernel.assign(w.shape().begin() + 2, w.shape().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != p.kernel) {
    return ctx.fail(StatusCode::kShapeMismatch, "kernel_shape attribute disagrees with W's spatial dims {}",
                    shape_to_string(p.kernel));
  }
  p.in.assign(x.shape().begin() + 2, x.shape().end());
  VN_ASSIGN_OR_RETURN(p.geo, window_geometry(ctx, p.in, p.kernel, false, true));
  p.out_shape = {p.n, p.m};
  p.out_shape.insert(p.out_shape.end(), p.geo.out.begin(), p.geo.out.end());
  return p;
}

// Packed im2col panels are kept up to this size: a tile's panels reach 1-2 MiB on deep layers
// (ResNet-18's 14 x 14 ones: 2304 rows of 7 panels), which were faulted in anew at every call.
constexpr size_t kKeptPanelBytes = size_t{4} << 20;
// Packed or transformed weights are kept up to this size.
constexpr size_t kKeptWeightBytes = size_t{16} << 20;
// Output channels (per group) below which the AVX2 kernel multiplies a 1x1 convolution's input
// planes as they lie rather than packing them (conv_packed).
constexpr int64_t kPointwiseRows = 640;
// Output channels whose weights a transform sees at once, when they are not packed for all tiles
// (whole row blocks of the product).
constexpr int64_t kTransformRows = 5 * kPackRows;

/// C (m x n, rows ldc apart) = A (m x k) * B (k x n), row-major, on the calling thread, through
/// Eigen (the types other than float32, which run on packed operands).
template <typename T>
void matmul(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<Mat, 0, Stride> cm(c, m, n, Stride(ldc));
  cm.noalias() =
      Eigen::Map<const Mat, 0, Stride>(a, m, k, Stride(lda)) * Eigen::Map<const Mat, 0, Stride>(b, k, n, Stride(ldb));
}

/// Depthwise-style convolution (one input channel per group): each output channel is a direct sum
/// over its input plane's window, without im2col. Parallel over (image, output channel).
template <typename T>
void conv_depthwise(const ConvPlan& p, const T* px, const T* pw, const T* pb, T* py, int threads) {
  const WindowGeometry g = lift_to_3d(p.geo);
  const int64_t mg = p.m / p.group;
  const int64_t k_size = shape_numel(p.kernel);
  const int64_t in_size = shape_numel(p.in);
  const int64_t out_size = shape_numel(p.geo.out);
  const int64_t out_h = g.out[1], out_w = g.out[2];
  const int64_t sw = g.strides[2];
  parallel_for(threads, p.n * p.m, [&](int64_t task) {
    const int64_t img = task / p.m, oc = task % p.m;
    const T* xc = px + (img * p.c + oc / mg) * in_size;
    const T* wc = pw + oc * k_size;
    T* y = py + task * out_size;
    std::fill_n(y, out_size, pb ? pb[oc] : T(0));
    for (int64_t od = 0; od < g.out[0]; ++od) {
      for (int64_t oh = 0; oh < out_h; ++oh) {
        T* yr = y + (od * out_h + oh) * out_w;
        for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
          const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
            const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            const T* src = xc + (id * g.in[1] + ih) * g.in[2];
            for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
              const T wv = wc[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
              const int64_t off_w = kw * g.dilations[2] - g.pads_begin[2];
              const auto [lo, hi] = outputs_inside(off_w, sw, g.in[2], out_w);
              if (sw == 1) {
                const T* s = src + off_w;
                for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * s[ow];
              } else {
                for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * src[ow * sw + off_w];
              }
            }
          }
        }
      }
    }
  });
}

/// y = conv(x, w) (+ bias when pb is non-null) for dense buffers laid out as the plan says, on up
/// to `threads` threads, for the types other than float32: Eigen's GEMM on im2col tiles (the
/// tiles, and with few of them blocks of output channels, shared among the threads). Blocks of one
/// tile share its im2col, made first by all threads (channel ranges of it).
template <typename T>
void conv_compute(const ConvPlan& p, const T* px, const T* pw, const T* pb, T* py, int threads) {
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  if (cg == 1 && std::is_floating_point_v<T>) {
    conv_depthwise(p, px, pw, pb, py, threads);
    return;
  }
  const WindowGeometry g3 = lift_to_3d(p.geo);
  const int64_t k_size = shape_numel(p.kernel);
  const int64_t rows = cg * k_size;
  const int64_t in_size = shape_numel(p.in);
  const int64_t out_size = shape_numel(p.geo.out);
  bool pointwise = k_size == 1;
  for (size_t i = 0; i < p.geo.rank(); ++i) {
    pointwise = pointwise && p.geo.strides[i] == 1 && p.geo.pads_begin[i] == 0 && p.geo.pads_end[i] == 0;
  }
  const ConvTiling t = conv_tiling(p.n * p.group, p.m / p.group, rows, out_size, sizeof(T), threads, 16);
  const bool shared = t.blocks > 1 && !pointwise;
  const int64_t chunks = shared ? std::min<int64_t>(cg, 4 * threads) : 0;
  std::optional<Scratch<T>> shared_scratch;
  if (shared) {
    // Kept as conv_packed keeps its shared panels.
    shared_scratch.emplace(static_cast<size_t>(t.planes * rows * t.tile), ScratchSlot::kSharedPanels,
                           kKeptPanelBytes * static_cast<size_t>(t.planes));
  }
  T* shared_col = shared ? shared_scratch->data() : nullptr;
  if (shared) {
    parallel_for(threads, t.planes * chunks, [&](int64_t job) {
      const int64_t plane = job / chunks, part = job % chunks;
      const auto [img, gi, c0, c1, width] = t.plane(plane, p.group, out_size);
      const int64_t ch0 = cg * part / chunks, ch1 = cg * (part + 1) / chunks;
      im2col_tile(px + (img * p.c + gi * cg + ch0) * in_size, ch1 - ch0, g3, c0, c0 + width,
                  shared_col + plane * rows * t.tile + ch0 * k_size * width);
    });
  }
  parallel_loop(threads, t.tasks, [&](LoopIndices& tasks) {
    // Made on the thread's first task: a thread that comes when all are taken needs none.
    std::optional<Scratch<T>> col_scratch;
    T* col = nullptr;
    for (int64_t task; tasks.next(task);) {
      if (!pointwise && !shared && !col_scratch) {
        col = col_scratch.emplace(static_cast<size_t>(rows * t.tile), ScratchSlot::kTile).data();
      }
      const int64_t plane = task / t.blocks, r0 = task % t.blocks * t.block, m_rows = std::min(t.block, mg - r0);
      const auto [img, gi, c0, c1, width] = t.plane(plane, p.group, out_size);
      if (m_rows <= 0) continue;
      const T* xg = px + (img * p.c + gi * cg) * in_size;
      const T* w0 = pw + (gi * mg + r0) * rows;
      T* y0 = py + (img * p.m + gi * mg + r0) * out_size + c0;
      if (pointwise) {
        matmul(m_rows, width, rows, w0, rows, xg + c0, out_size, y0, out_size);
      } else if (shared) {
        matmul(m_rows, width, rows, w0, rows, shared_col + plane * rows * t.tile, width, y0, out_size);
      } else {
        im2col_tile(xg, cg, g3, c0, c0 + width, col);
        matmul(m_rows, width, rows, w0, rows, col, width, y0, out_size);
      }
      if (pb) {
        for (int64_t r = 0; r < m_rows; ++r) ArrayMap<T>(y0 + r * out_size, width) += pb[gi * mg + r0 + r];
      }
    }
  });
}

/// Whether `p` reads one input position into one output position through a single tap, without
/// groups: a product of each image's channel vector by W.
bool single_position(const ConvPlan& p) {
  if (p.group != 1 || shape_numel(p.in) != 1 || shape_numel(p.geo.out) != 1 || shape_numel(p.kernel) != 1) {
    return false;
  }
  return std::all_of(p.geo.pads_begin.begin(), p.geo.pads_begin.end(), [](int64_t v) { return v == 0; });
}

/// conv_compute for float32: the same tasks, on packed operands (sgemm.h). Each task writes its
/// tile's im2col straight into packed panels (or reads the panels all threads made, when the
/// tile's output channels are cut into blocks); a 1x1 convolution without stride or padding reads
/// its input planes where they lie instead (sgemm_direct_b, the same bits). Weights in a constant
/// of the model (`w_constant`, no transform) are read packed from packed_weights; others are
/// packed once, by all threads, when more than one tile reads them, and with one tile per group
/// read where they lie, or, under a transform, packed a task's block at a time. The bias comes in
/// with the products. Calls `finish` on each task's block of y once it is done and returns true;
/// the paths without tasks (direct sums, boxes of live taps, single positions) return false
/// without calling it.
bool conv_packed(const ConvPlan& p, const float* px, const float* pw, const float* pb, float* py, int threads,
                 const std::function<void(std::span<float>)>* transform, const ConvFinish* finish = nullptr,
                 const Tensor* w_constant = nullptr, Narrow kept_as = Narrow::kNone) {
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  threads = threads_for_work(threads, p.n * p.m * cg * shape_numel(p.kernel) * shape_numel(p.geo.out), kProductGrain);
  if (conv_direct_suits(p.group, cg, mg, p.kernel, p.geo.dilations)) {
    // Few channels per group: weights few enough to transform all at once.
    std::vector<float> transformed;
    if (transform) {
      transformed.assign(pw, pw + p.m * cg * shape_numel(p.kernel));
      (*transform)(transformed);
      pw = transformed.data();
    }
    conv_direct(p.geo, p.n, p.c, p.m, p.group, px, pw, pb, py, threads);
    return false;
  }
  if (conv_float32_by_regions(p.geo, p.n, p.c, p.m, p.group, px, pw, pb, py, threads, transform, w_constant,
                              kept_as)) {
    return false;
  }
  if (single_position(p)) {
    // Each image's output is W times its input vector (a squeeze-excitation block's 1x1
    // convolutions of pooled channels): as a product of images x channels by W's rows, which
    // sgemm takes as dot products when there are few images, rather than as one position padded
    // to a panel of 32. The bias comes after the sums.
    const GemmShape shape{false, true, p.n, p.m, p.c, p.c, p.c, p.m};
    sgemm(shape, px, pw, py, threads, transform, w_constant, kept_as);
    if (pb) {
      for (int64_t img = 0; img < p.n; ++img) {
        for (int64_t j = 0; j < p.m; ++j) py[img * p.m + j] += pb[j];
      }
    }
    return false;
  }
  const WindowGeometry g3 = lift_to_3d(p.geo);
  const int64_t k_size = shape_numel(p.kernel);
  const int64_t rows = cg * k_size;
  const int64_t in_size = shape_numel(p.in);
  const int64_t out_size = shape_numel(p.geo.out);
  const ConvTiling t = conv_tiling(p.n * p.group, p.m / p.group, rows, out_size, sizeof(float), threads, kPackCols);
  const int64_t group_weights = packed_a_size(mg, rows);
  const int64_t row_blocks = (mg + kPackRows - 1) / kPackRows;
  const int64_t panels = packed_b_size(rows, t.tile);
  // Constant weights are packed once and kept (packed_weights), else packed here by all threads
  // when more than one tile reads them.
  const std::shared_ptr<const float[]> kept =
      w_constant && !transform ? packed_weights().conv_weights(*w_constant, pw, p.group, mg, rows, threads) : nullptr;
  // Rounded constant weights are kept in 16 bits (kept_as) and widened where they were packed and
  // rounded at every call: all at once when several tiles read them, else a task's chunk of rows
  // at a time.
  const std::shared_ptr<const uint16_t[]> kept_rounded =
      w_constant && transform && kept_as != Narrow::kNone
          ? packed_weights().rounded_conv_weights(*w_constant, pw, p.group, mg, rows, kept_as, *transform, threads)
          : nullptr;
  const bool pack_all = !kept && p.n * t.tiles > 1;
  // A 1x1 convolution without stride or padding multiplies its input planes as they lie: its
  // im2col would be a copy of them. On the AVX2 kernel only up to kPointwiseRows output channels:
  // with more, the kernel's reads of packed panels gain more than the copy costs (Zen 3: 256 ->
  // 1024 channels over 14 x 14 1.07-1.13x faster packed, 160 -> 960 over 7 x 7 1.2x), with fewer
  // the copy costs more (64 -> 24 over 56 x 56 2.1x slower packed, 64 -> 256 1.15x, 512 -> 128
  // over 28 x 28 1.2x). The bits are the same.
  bool pointwise = k_size == 1 && (sgemm_uses_avx512() || mg < kPointwiseRows);
  for (size_t i = 0; i < p.geo.rank(); ++i) {
    pointwise = pointwise && p.geo.strides[i] == 1 && p.geo.pads_begin[i] == 0 && p.geo.pads_end[i] == 0;
  }
  std::optional<Scratch<float>> packed_scratch;
  if (pack_all) {
    packed_scratch.emplace(static_cast<size_t>(p.group * group_weights), ScratchSlot::kWeights, kKeptWeightBytes);
  }
  const float* packed = kept ? kept.get() : pack_all ? packed_scratch->data() : nullptr;
  const bool shared = t.blocks > 1 && !pointwise;
  const int64_t chunks = shared ? std::min<int64_t>(cg, 4 * threads) : 0;
  std::optional<Scratch<float>> shared_scratch;
  if (shared) {
    // Kept up to kKeptPanelBytes a plane, as each thread keeps its own tile's panels: freed at
    // every call, the panels of Inception-v3's 35 x 35 layers on 16 threads (8 planes of 1200
    // rows by 160 columns, 6 MiB) were faulted in anew at every call, 1.5 ms a layer against 0.75
    // on 4 threads (a virtual machine, where page faults cost most).
    shared_scratch.emplace(static_cast<size_t>(t.planes * panels), ScratchSlot::kSharedPanels,
                           kKeptPanelBytes * static_cast<size_t>(t.planes));
  }
  float* shared_panels = shared ? shared_scratch->data() : nullptr;
  // The weights' packing and the shared im2col panels, as one loop of jobs: the packing's first.
  const int64_t pack_jobs = pack_all ? p.group * row_blocks : 0;
  const int64_t panel_jobs = shared ? t.planes * chunks : 0;
  parallel_for(threads, pack_jobs + panel_jobs, [&](int64_t job) {
    if (job < pack_jobs) {
      const int64_t gi = job / row_blocks, blk = job % row_blocks;
      float* group_packed = packed_scratch->data() + gi * group_weights;
      if (kept_rounded) {
        const int64_t at = gi * group_weights + blk * rows * kPackRows;
        widen(kept_as, kept_rounded.get() + at, rows * kPackRows, packed_scratch->data() + at);
        return;
      }
      pack_a(mg, rows, pw + gi * mg * rows, rows, blk, blk + 1, group_packed);
      if (transform) (*transform)(std::span<float>(group_packed + blk * rows * kPackRows, rows * kPackRows));
      return;
    }
    const int64_t plane = (job - pack_jobs) / chunks, part = (job - pack_jobs) % chunks;
    const auto [img, gi, c0, c1, width] = t.plane(plane, p.group, out_size);
    const int64_t ch0 = cg * part / chunks, ch1 = cg * (part + 1) / chunks;
    im2col_panels(px + (img * p.c + gi * cg + ch0) * in_size, ch1 - ch0, g3, c0, c0 + width, ch0 * k_size, rows,
                  shared_panels + plane * panels);
  });
  parallel_loop(threads, t.tasks, [&](LoopIndices& tasks) {
    // Made on the thread's first task: a thread that comes when all are taken needs none. Under a
    // transform with one tile per group, a task's weights are packed and transformed a chunk of
    // rows at a time, just before the chunk's products.
    std::optional<Scratch<float>> col_scratch;
    std::optional<Scratch<float>> chunk_scratch;
    const int64_t chunk_rows = std::min(t.block, kTransformRows);
    for (int64_t task; tasks.next(task);) {
      if (!col_scratch && !shared && !pointwise) {
        col_scratch.emplace(static_cast<size_t>(panels), ScratchSlot::kTile, kKeptPanelBytes);
      }
      if (!chunk_scratch && transform && !packed) {
        chunk_scratch.emplace(static_cast<size_t>(chunk_rows * rows), ScratchSlot::kWeights, kKeptWeightBytes);
      }
      const int64_t plane = task / t.blocks, r0 = task % t.blocks * t.block, m_rows = std::min(t.block, mg - r0);
      const auto [img, gi, c0, c1, width] = t.plane(plane, p.group, out_size);
      if (m_rows <= 0) continue;
      const float* xg = px + (img * p.c + gi * cg) * in_size;
      const float* b = pointwise ? xg + c0 : shared_panels + plane * panels;
      if (!shared && !pointwise) {
        im2col_panels(xg, cg, g3, c0, c0 + width, 0, rows, col_scratch->data());
        b = col_scratch->data();
      }
      // rows_ of C from A (packed when lda is 0), B packed, or the input's planes as they lie.
      const auto product = [&](int64_t rows_, const float* a, int64_t lda, const float* bias_, float* c) {
        if (pointwise) {
          sgemm_direct_b(rows_, width, rows, a, lda, b, in_size, bias_, c, out_size);
        } else {
          sgemm_packed(rows_, width, rows, a, lda, b, bias_, c, out_size);
        }
      };
      const float* bias = pb ? pb + gi * mg + r0 : nullptr;
      float* y0 = py + (img * p.m + gi * mg + r0) * out_size + c0;
      if (packed) {
        // r0 is a multiple of kPackRows: its block starts r0 * rows floats in.
        product(m_rows, packed + gi * group_weights + r0 * rows, 0, bias, y0);
      } else if (transform) {
        for (int64_t i = 0; i < m_rows; i += chunk_rows) {
          const int64_t n_rows = std::min(chunk_rows, m_rows - i);
          const int64_t blocks = (n_rows + kPackRows - 1) / kPackRows;
          if (kept_rounded) {
            // Rows r0 + i on start a whole block (chunk_rows is a multiple of kPackRows or all of
            // the task's rows): packed, they are the next blocks * kPackRows * rows values.
            widen(kept_as, kept_rounded.get() + gi * group_weights + (r0 + i) * rows, blocks * kPackRows * rows,
                  chunk_scratch->data());
          } else {
            pack_a(n_rows, rows, pw + (gi * mg + r0 + i) * rows, rows, 0, blocks, chunk_scratch->data());
            (*transform)(std::span<float>(chunk_scratch->data(), blocks * kPackRows * rows));
          }
          product(n_rows, chunk_scratch->data(), 0, bias ? bias + i : nullptr, y0 + i * out_size);
        }
      } else {
        product(m_rows, pw + (gi * mg + r0) * rows, rows, bias, y0);
      }
      if (finish) (*finish)(img, gi * mg + r0, m_rows, c0, width);
    }
  });
  return true;
}

}  // namespace

void conv_float32(const WindowGeometry& geo, int64_t n, int64_t c, int64_t m, int64_t group, const float* x,
                  const float* w, const float* bias, float* y, int threads,
                  const std::function<void(std::span<float>)>* transform, const ConvFinish* finish,
                  const Tensor* w_constant, Narrow kept_as) {
  ConvPlan p;
  p.group = group, p.n = n, p.c = c, p.m = m;
  p.kernel = geo.kernel;
  p.in = geo.in;
  p.geo = geo;
  if (conv_packed(p, x, w, bias, y, threads, transform, finish, w_constant, kept_as) || !finish) return;
  // The paths without tasks: blocks of whole output planes of one image, about 4K values each (a
  // squeeze-excitation's 1x1 outputs: a call per value cost more than its product).
  const int64_t out_size = shape_numel(geo.out);
  const int64_t per_block = std::clamp<int64_t>(4096 / std::max<int64_t>(out_size, 1), 1, std::max<int64_t>(m, 1));
  const int64_t blocks = (m + per_block - 1) / per_block;
  parallel_for(threads, n * blocks, [&](int64_t i) {
    const int64_t c0 = i % blocks * per_block;
    (*finish)(i / blocks, c0, std::min(per_block, m - c0), 0, out_size);
  });
}

namespace {

/// Conv on float16 or bfloat16: the float32 convolution of the exactly widened operands, each
/// output (sum and bias) rounded once to the element type. ONNX's reference (numpy's float16
/// matmul) also sums the exact products in float32, in another order, but rounds the sum before
/// adding the bias in float16: the two can differ by one unit in the last place (README, Known
/// limits).
Status conv_rounded(KernelContext& ctx, const ConvPlan& plan, const Tensor& x, const Tensor& w, const Tensor* bias) {
  VN_ASSIGN_OR_RETURN(Tensor xf, tensor_cast(x, DType::kFloat32));
  VN_ASSIGN_OR_RETURN(Tensor wf, tensor_cast(w, DType::kFloat32));
  Tensor bf;
  if (bias) {
    VN_ASSIGN_OR_RETURN(bf, tensor_cast(*bias, DType::kFloat32));
  }
  Tensor yf(DType::kFloat32, plan.out_shape);
  if (yf.numel() > 0) {
    conv_packed(plan, xf.data<float>(), wf.data<float>(), bias ? bf.data<float>() : nullptr, yf.mutable_data<float>(),
                ctx.num_threads(), nullptr);
  }
  VN_ASSIGN_OR_RETURN(Tensor y, tensor_cast(yf, x.dtype()));
  ctx.set_output(0, std::move(y));
  return Status::OK();
}

Status conv(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  VN_ASSIGN_OR_RETURN(ConvPlan plan, conv_plan(ctx, x, w));
  if (w.dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "W ({}) must have the type of X ({})", dtype_name(w.dtype()),
                    dtype_name(x.dtype()));
  }
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (bias && (bias->shape() != Shape{plan.m} || bias->dtype() != x.dtype())) {
    return ctx.fail(StatusCode::kShapeMismatch, "B must be a 1-D {} tensor of {} elements, got {} {}",
                    dtype_name(x.dtype()), plan.m, dtype_name(bias->dtype()), shape_to_string(bias->shape()));
  }
  return dispatch_types(RealFloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    if constexpr (!std::is_floating_point_v<T>) {
      return conv_rounded(ctx, plan, x, w, bias);
    } else {
      VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), plan.out_shape));
      if (y->numel() == 0) return Status::OK();
      if constexpr (std::is_same_v<T, float>) {
        if (const KernelContext::OutputEpilogue* epilogue = ctx.output_epilogue(*y)) {
          // Each finished block of y, channels of `width` positions each, while in cache.
          float* py = y->mutable_data<float>();
          const int64_t out_size = shape_numel(plan.geo.out);
          const ConvFinish finish = [&](int64_t img, int64_t channel0, int64_t channels, int64_t col0, int64_t width) {
            epilogue->apply(py, (img * plan.m + channel0) * out_size + col0, channels, out_size, width);
          };
          conv_float32(plan.geo, plan.n, plan.c, plan.m, plan.group, x.data<float>(), w.data<float>(),
                       bias ? bias->data<float>() : nullptr, py, ctx.num_threads(), nullptr, &finish,
                       ctx.constant_input(1));
          ctx.mark_epilogue_applied();
          return Status::OK();
        }
        conv_packed(plan, x.data<T>(), w.data<T>(), bias ? bias->data<T>() : nullptr, y->mutable_data<T>(),
                    ctx.num_threads(), nullptr, nullptr, ctx.constant_input(1));
      } else {
        conv_compute<T>(plan, x.data<T>(), w.data<T>(), bias ? bias->data<T>() : nullptr, y->mutable_data<T>(),
                        ctx.num_threads());
      }
      return Status::OK();
    }
  });
}

// ---- ConvInteger -------------------------------------------------------------------------------

/// `t` (int8 or uint8) minus its zero point(s) as int32: `zp` is null (zero), a scalar, or (when
/// `per_row` > 0) one value per leading-dim slice of `t`.
Result<std::vector<int32_t>> centered_int32(const KernelContext& ctx, const Tensor& t, const Tensor* zp,
                                            int64_t per_row, std::string_view what) {
  if (t.dtype() != DType::kInt8 && t.dtype() != DType::kUInt8) {
    return unsupported_dtype(ctx, t.dtype(), {DType::kInt8, DType::kUInt8});
  }
  std::vector<int32_t> zero(1, 0);
  if (zp) {
    if (zp->dtype() != t.dtype()) {
      return ctx.fail(StatusCode::kInvalidModel, "{} zero point ({}) must have the type of {} ({})", what,
                      dtype_name(zp->dtype()), what, dtype_name(t.dtype()));
    }
    const bool scalar = zp->numel() == 1 && zp->rank() <= 1;
    const bool per = per_row > 0 && zp->rank() == 1 && zp->dim(0) == per_row;
    if (!scalar && !per) {
      return ctx.fail(StatusCode::kShapeMismatch, "{} zero point of shape {} must be a scalar{}", what,
                      shape_to_string(zp->shape()),
                      per_row > 0 ? fmt::format(" or a 1-D tensor of {} elements", per_row) : std::string());
    }
    VN_ASSIGN_OR_RETURN(std::vector<int64_t> z, tensor_to_int64s(*zp));
    zero.assign(z.begin(), z.end());
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> v, tensor_to_int64s(t));
  std::vector<int32_t> out(v.size());
  const size_t row = zero.size() > 1 ? v.size() / zero.size() : v.size() + 1;
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<int32_t>(v[i] - zero[zero.size() > 1 ? i / row : 0]);
  return out;
}

// ConvInteger-10: Conv of (x - x_zero_point) and (w - w_zero_point) in int32. Padding reads as
// the zero point, i.e. 0 after centering. w_zero_point may be per output channel.
Status conv_integer(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  VN_ASSIGN_OR_RETURN(ConvPlan plan, conv_plan(ctx, x, w));
  VN_ASSIGN_OR_RETURN(std::vector<int32_t> xc,
                      centered_int32(ctx, x, ctx.has_input(2) ? &ctx.input(2) : nullptr, 0, "x"));
  VN_ASSIGN_OR_RETURN(std::vector<int32_t> wc,
                      centered_int32(ctx, w, ctx.has_input(3) ? &ctx.input(3) : nullptr, plan.m, "w"));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt32, plan.out_shape));
  if (y->numel() == 0) return Status::OK();
  conv_compute<int32_t>(plan, xc.data(), wc.data(), nullptr, y->mutable_data<int32_t>(), ctx.num_threads());
  return Status::OK();
}

}  // namespace

void register_conv_ops(OpRegistry& registry) {
  // Conv-22 and ConvTranspose-22 only added bfloat16.
  for (int64_t v : {1, 11, 22}) registry.add("Conv", v, conv);
  registry.add("ConvInteger", 10, conv_integer);
}

}  // namespace vn::ops
