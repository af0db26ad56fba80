// SPDX-License-Identifier: Apache-2.0
#include "core/ops/sgemm_driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "core/common/parallel.h"
#include "core/common/threads.h"
#include "core/ops/scratch.h"
#include "core/ops/sgemm.h"

namespace vn::ops {
namespace {

// Products with fewer rows run as rows of dot products or of scaled rows of B: packing B would
// copy it for a handful of rows (an LSTM step, a classifier), which costs more than the product.
constexpr int64_t kFewRows = 4;
// Multiply-adds below which a product with few rows stays on one thread.
constexpr int64_t kFewRowsWork = int64_t{1} << 15;
// Row blocks per task before the threads ask for more tasks: 192 rows of A's depth slice (192 KiB
// at a depth of 256) stay in L2 while the column panels pass. Up to a quarter more stay in one
// task rather than making a task of the few left over, which would read all of B again for them
// (ViT's 197 tokens were 192 + 5 rows: the 5-row task took a tenth of a MatMul's time).
constexpr int64_t kTaskBlocks = 192 / kPackRows;
constexpr int64_t kMostTaskBlocks = kTaskBlocks + kTaskBlocks / 4;
// Multiply-adds below which a task is not split further for the threads.
constexpr int64_t kTaskWork = int64_t{1} << 18;
// Packed operands up to this size stay on their thread for the next product (attention's many
// small products would otherwise fault in fresh pages each time); larger ones are freed after it
// (scratch.h).
constexpr size_t kKeptBytes = size_t{4} << 20;
// Kept rounded panels are widened this many floats at a time (at least one panel): 256 KiB, in L2
// while the task's row blocks pass.
constexpr int64_t kWidenFloats = int64_t{1} << 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Panel `p` of op(B) into `dst` in sgemm.h's layout (k x kPackCols, columns past n zero).
void pack_b_panel(const GemmShape& s, const float* b, int64_t p, float* dst) {
  const int64_t j0 = p * kPackCols;
  const int64_t cols = std::min(kPackCols, s.n - j0);
  if (!s.trans_b) {
    for (int64_t kk = 0; kk < s.k; ++kk) {
      const float* src = b + kk * s.ldb + j0;
      float* row = dst + kk * kPackCols;
      std::copy_n(src, cols, row);
      std::fill(row + cols, row + kPackCols, 0.0f);
    }
    return;
  }
  // B is n x k: column j of op(B) is row j of B, read along k.
  for (int64_t j = 0; j < kPackCols; ++j) {
    if (j < cols) {
      const float* src = b + (j0 + j) * s.ldb;
      for (int64_t kk = 0; kk < s.k; ++kk) dst[kk * kPackCols + j] = src[kk];
    } else {
      for (int64_t kk = 0; kk < s.k; ++kk) dst[kk * kPackCols + j] = 0.0f;
    }
  }
}

/// Row block `blk` of op(A) where A is stored k x m (trans_a), in sgemm.h's packed layout.
void pack_a_transposed_block(const GemmShape& s, const float* a, int64_t blk, float* packed) {
  float* dst = packed + blk * s.k * kPackRows;
  const int64_t i0 = blk * kPackRows;
  const int64_t rows = std::min(kPackRows, s.m - i0);
  for (int64_t kk = 0; kk < s.k; ++kk) {
    const float* src = a + kk * s.lda + i0;
    float* out = dst + kk * kPackRows;
    std::copy_n(src, rows, out);
    std::fill(out + rows, out + kPackRows, 0.0f);
  }
}

/// Element (i, kk) of op(A).
inline float a_at(const GemmShape& s, const float* a, int64_t i, int64_t kk) {
  return s.trans_a ? a[kk * s.lda + i] : a[i * s.lda + kk];
}

/// The eight lanes of a few-rows dot product added pairwise, in the one order both loops use.
inline float lane_tree(const float* acc) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/// Columns [j0, j1) of C's rows for the products with few rows. Each element is summed in k
/// order from zero: row i of C accumulates A(i, kk) times row kk of op(B); with trans_b a row of
/// op(B) is a column of B, so each element is a dot product of two contiguous rows, summed in
/// eight interleaved partial sums (element kk into sum kk mod 8) added pairwise at the end.
void few_rows(const GemmShape& s, const float* a, const float* b, float* c, int64_t j0, int64_t j1) {
  if (!s.trans_b) {
    // All rows at each step of k, so that B is read once.
    for (int64_t i = 0; i < s.m; ++i) std::fill(c + i * s.ldc + j0, c + i * s.ldc + j1, 0.0f);
    for (int64_t kk = 0; kk < s.k; ++kk) {
      const float* br = b + kk * s.ldb;
      for (int64_t i = 0; i < s.m; ++i) {
        const float av = a_at(s, a, i, kk);
        float* cr = c + i * s.ldc;
        for (int64_t j = j0; j < j1; ++j) cr[j] += av * br[j];
      }
    }
    return;
  }
  for (int64_t i = 0; i < s.m; ++i) {
    float* cr = c + i * s.ldc;
    const bool contiguous_a = !s.trans_a;
    int64_t j = j0;
#if defined(__AVX2__) && defined(__FMA__)
    if (contiguous_a) {
      // Four columns at a time: four chains of multiply-adds that do not wait on each other (one
      // column alone waited on every multiply-add's latency: an LSTM step's 2048 x 512 product in
      // 0.16 ms). Each column's sums are the loop's below, lane for lane and in the same order.
      const float* ar = a + i * s.lda;
      for (; j + 4 <= j1; j += 4) {
        const float* br = b + j * s.ldb;
        __m256 v0 = _mm256_setzero_ps(), v1 = v0, v2 = v0, v3 = v0;
        int64_t kk = 0;
        for (; kk + 8 <= s.k; kk += 8) {
          const __m256 av = _mm256_loadu_ps(ar + kk);
          v0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(br + kk), v0);
          v1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(br + s.ldb + kk), v1);
          v2 = _mm256_fmadd_ps(av, _mm256_loadu_ps(br + 2 * s.ldb + kk), v2);
          v3 = _mm256_fmadd_ps(av, _mm256_loadu_ps(br + 3 * s.ldb + kk), v3);
        }
        alignas(32) float acc[4][8];
        _mm256_store_ps(acc[0], v0);
        _mm256_store_ps(acc[1], v1);
        _mm256_store_ps(acc[2], v2);
        _mm256_store_ps(acc[3], v3);
        for (int q = 0; q < 4; ++q) {
          for (int64_t t = kk; t < s.k; ++t) acc[q][t % 8] += ar[t] * br[q * s.ldb + t];
          cr[j + q] = lane_tree(acc[q]);
        }
      }
    }
#endif
    for (; j < j1; ++j) {
      const float* br = b + j * s.ldb;
      float acc[8] = {};
      int64_t kk = 0;
      if (contiguous_a) {
        const float* ar = a + i * s.lda;
        for (; kk + 8 <= s.k; kk += 8) {
          for (int l = 0; l < 8; ++l) acc[l] += ar[kk + l] * br[kk + l];
        }
      }
      for (; kk < s.k; ++kk) acc[kk % 8] += a_at(s, a, i, kk) * br[kk];
      cr[j] = lane_tree(acc);
    }
  }
}

/// How one chunk of the product's columns (row blocks x column panels) is cut into tasks for
/// `threads` threads.
struct Tasks {
  int64_t blocks, panels;        // of the chunk
  int64_t row_chunk, col_chunk;  // row blocks and panels per task
  int64_t row_tasks() const { return ceil_div(blocks, row_chunk); }
  int64_t count() const { return row_tasks() * ceil_div(panels, col_chunk); }
  /// The first row and the count of rows of `task` in a product of m rows: whole blocks of
  /// kPackRows when A is packed (its layout), else the row tasks' shares of m as even as they can
  /// be (none over row_chunk blocks' rows), so that no task is left a handful of rows for which it
  /// reads all of its panels of B (sgemm_packed evens out its blocks the same way).
  std::pair<int64_t, int64_t> rows_of(int64_t task, int64_t m, bool packed_a) const {
    const int64_t r = task % row_tasks();
    if (packed_a) {
      const int64_t i0 = r * row_chunk * kPackRows;
      return {i0, std::min(row_chunk * kPackRows, m - i0)};
    }
    const int64_t i0 = r * m / row_tasks();
    return {i0, (r + 1) * m / row_tasks() - i0};
  }
};

Tasks plan_tasks(int64_t m, int64_t panels, int64_t k, int threads) {
  Tasks t{ceil_div(m, kPackRows), panels, 0, 0};
  t.row_chunk = t.blocks <= kMostTaskBlocks ? t.blocks : kTaskBlocks;
  t.col_chunk = t.panels;
  // Halve the larger side of a task until each thread has two, while a task keeps enough work.
  while (t.count() < 2 * threads) {
    Tasks next = t;
    if (t.col_chunk > 1 && (t.col_chunk * kPackCols >= t.row_chunk * kPackRows || t.row_chunk == 1)) {
      next.col_chunk = ceil_div(t.col_chunk, 2);
    } else if (t.row_chunk > 1) {
      next.row_chunk = ceil_div(t.row_chunk, 2);
    } else {
      break;
    }
    if (next.row_chunk * kPackRows * next.col_chunk * kPackCols * k < kTaskWork) break;
    t = next;
  }
  return t;
}

/// A GemmFinish for the blocks sgemm_packed reports within a task's part of C, which starts at
/// row i0 and column j0 of the product.
struct TaskFinish {
  const GemmFinish* finish;
  int64_t i0, j0;
  TileFinish tile;

  TaskFinish(const GemmFinish* f, int64_t row0, int64_t col0) : finish(f), i0(row0), j0(col0), tile{&call, this} {}
  TaskFinish(const TaskFinish&) = delete;
  TaskFinish& operator=(const TaskFinish&) = delete;
  /// What sgemm_packed takes: null without a finish.
  const TileFinish* get() const { return finish != nullptr ? &tile : nullptr; }

  static void call(void* context, int64_t i, int64_t rows, int64_t j, int64_t cols) {
    const auto* t = static_cast<const TaskFinish*>(context);
    (*t->finish)(t->i0 + i, t->i0 + i + rows, t->j0 + j, t->j0 + j + cols);
  }
};

/// The product on the calling thread and up to `threads` more (1: the calling thread only).
void product(const GemmShape& s, const float* a, const float* b, float* c, int threads,
             const PanelTransform* transform_b, const Tensor* b_constant, Narrow kept_as, const GemmFinish* finish) {
  if (s.m <= 0 || s.n <= 0) return;
  if (s.k <= 0) {
    for (int64_t i = 0; i < s.m; ++i) std::fill_n(c + i * s.ldc, s.n, 0.0f);
    if (finish != nullptr) (*finish)(0, s.m, 0, s.n);
    return;
  }
  if (s.m <= kFewRows && !transform_b) {
    // Column chunks of whole cache lines, one per thread when there is work enough. These
    // products read all of B for a few multiply-adds per element: chunk t is thread t's own
    // (parallel.h), so its part of B stays in its cache from one call to the next (an LSTM's
    // steps) unless the thread lags and another takes it.
    const int64_t chunks = std::clamp<int64_t>(std::min(s.m * s.n * s.k / kFewRowsWork, s.n / 16), 1, threads);
    const int64_t step = ceil_div(ceil_div(s.n, chunks), 16) * 16;
    parallel_for(static_cast<int>(chunks), ceil_div(s.n, step), [&](int64_t chunk) {
      const int64_t j0 = chunk * step, j1 = std::min(s.n, (chunk + 1) * step);
      few_rows(s, a, b, c, j0, j1);
      if (finish != nullptr) (*finish)(0, s.m, j0, j1);
    });
    return;
  }
  const int64_t panels = ceil_div(s.n, kPackCols);
  const int64_t blocks = ceil_div(s.m, kPackRows);
  const int team = static_cast<int>(std::min<int64_t>(threads, plan_tasks(s.m, panels, s.k, threads).count()));
  // A constant B's panels are packed once and kept (PackedWeights); any other B is packed a chunk
  // of columns at a time, small enough to stay on the thread for the next product: packing all
  // of a large B into fresh memory cost more in page faults than the product itself (BERT's 768 x
  // 3072 weights with few rows).
  const std::shared_ptr<const float[]> kept_panels =
      b_constant && !transform_b ? packed_weights().panels(*b_constant, s, b, team) : nullptr;
  const float* kept = kept_panels.get();
  // Rounded constants are kept in 16 bits and widened by each task, its panels a few at a time:
  // the same float32 panels as packing and rounding B here, for half the kept bytes.
  const std::shared_ptr<const uint16_t[]> kept_rounded =
      b_constant && transform_b && kept_as != Narrow::kNone
          ? packed_weights().rounded_panels(*b_constant, s, b, kept_as, *transform_b, team)
          : nullptr;
  const int64_t chunk_panels =
      kept ? panels
           : std::clamp<int64_t>(static_cast<int64_t>(kKeptBytes / 2 / sizeof(float)) / (s.k * kPackCols), 1, panels);
  std::optional<Scratch<float>> packed_b;
  if (!kept && !kept_rounded)
    packed_b.emplace(static_cast<size_t>(chunk_panels * s.k * kPackCols), ScratchSlot::kGemmB, kKeptBytes);
  std::optional<Scratch<float>> packed_a;
  if (s.trans_a) packed_a.emplace(static_cast<size_t>(packed_a_size(s.m, s.k)), ScratchSlot::kGemmA, kKeptBytes);
  float* pa = s.trans_a ? packed_a->data() : nullptr;
  if (pa) parallel_for(team, blocks, [&](int64_t blk) { pack_a_transposed_block(s, a, blk, pa); });
  if (kept_rounded) {
    const Tasks t = plan_tasks(s.m, panels, s.k, team);
    const int64_t panel_floats = s.k * kPackCols;
    const int64_t widen_panels = std::max<int64_t>(1, kWidenFloats / panel_floats);
    parallel_for(team, t.count(), [&](int64_t task) {
      const auto [i0, rows] = t.rows_of(task, s.m, pa != nullptr);
      const int64_t p0 = task / t.row_tasks() * t.col_chunk, p1 = std::min(panels, p0 + t.col_chunk);
      Scratch<float> widened(static_cast<size_t>(std::min(widen_panels, p1 - p0) * panel_floats), ScratchSlot::kGemmB,
                             kKeptBytes);
      for (int64_t p = p0; p < p1; p += widen_panels) {
        const int64_t count = std::min(widen_panels, p1 - p);
        widen(kept_as, kept_rounded.get() + p * panel_floats, count * panel_floats, widened.data());
        const int64_t j0 = p * kPackCols;
        // Packed A's block i0 / kPackRows starts i0 * k floats in.
        const float* ta = pa ? pa + i0 * s.k : a + i0 * s.lda;
        const TaskFinish done(finish, i0, j0);
        sgemm_packed(rows, std::min(count * kPackCols, s.n - j0), s.k, ta, pa ? 0 : s.lda, widened.data(), nullptr,
                     c + i0 * s.ldc + j0, s.ldc, done.get());
      }
    });
    return;
  }
  for (int64_t first = 0; first < panels; first += chunk_panels) {
    const int64_t count = std::min(chunk_panels, panels - first);
    const Tasks t = plan_tasks(s.m, count, s.k, team);
    const float* pb = kept ? kept + first * s.k * kPackCols : packed_b->data();
    if (!kept) {
      float* chunk = packed_b->data();
      parallel_for(team, count, [&](int64_t p) {
        float* panel = chunk + p * s.k * kPackCols;
        pack_b_panel(s, b, first + p, panel);
        if (transform_b) (*transform_b)(std::span<float>(panel, static_cast<size_t>(s.k * kPackCols)));
      });
    }
    parallel_for(team, t.count(), [&](int64_t task) {
      const auto [i0, rows] = t.rows_of(task, s.m, pa != nullptr);
      const int64_t p0 = task / t.row_tasks() * t.col_chunk;
      const int64_t j0 = (first + p0) * kPackCols;
      const int64_t cols = std::min(std::min(t.col_chunk, count - p0) * kPackCols, s.n - j0);
      // Packed A's block i0 / kPackRows starts i0 * k floats in.
      const float* ta = pa ? pa + i0 * s.k : a + i0 * s.lda;
      const TaskFinish done(finish, i0, j0);
      sgemm_packed(rows, cols, s.k, ta, pa ? 0 : s.lda, pb + p0 * s.k * kPackCols, nullptr, c + i0 * s.ldc + j0, s.ldc,
                   done.get());
    });
  }
}

}  // namespace

void sgemm(const GemmShape& shape, const float* a, const float* b, float* c, int threads,
           const PanelTransform* transform_b, const Tensor* b_constant, Narrow kept_as, const GemmFinish* finish) {
  product(shape, a, b, c, capped_threads(threads), transform_b, b_constant, kept_as, finish);
}

void sgemm_batched(const GemmShape& shape, std::span<const GemmOperands> batch, int threads,
                   const PanelTransform* transform_b, const Tensor* b_constant, Narrow kept_as) {
  const int cap = capped_threads(threads);
  const auto count = static_cast<int64_t>(batch.size());
  if (count == 1 || cap == 1 || count < cap) {
    for (const GemmOperands& op : batch)
      product(shape, op.a, op.b, op.c, cap, transform_b, b_constant, kept_as, nullptr);
    return;
  }
  // One product per thread at a time: each runs whole on its thread, in the same order as alone.
  // A constant B is packed first, on all the threads, rather than by whichever product comes first.
  if (b_constant && !transform_b && shape.m > kFewRows) packed_weights().panels(*b_constant, shape, batch[0].b, cap);
  if (b_constant && transform_b && kept_as != Narrow::kNone) {
    packed_weights().rounded_panels(*b_constant, shape, batch[0].b, kept_as, *transform_b, cap);
  }
  parallel_for(cap, count, [&](int64_t i) {
    const GemmOperands& op = batch[static_cast<size_t>(i)];
    product(shape, op.a, op.b, op.c, 1, transform_b, b_constant, kept_as, nullptr);
  });
}

struct PackedWeights::Entry {
  Tensor owner;  // holds the constant's storage, so that its address stays its own
  std::shared_ptr<const void> panels;  // null: make() refused (a transform that is not a rounding)
  size_t bytes = 0;
};

PackedWeights::PackedWeights(size_t max_bytes) : max_bytes_(max_bytes) {}

PackedWeights::~PackedWeights() = default;

std::shared_ptr<const void> PackedWeights::find_or_make(const std::string& key, const Tensor& owner, size_t bytes,
                                                        const std::function<std::shared_ptr<const void>()>& make) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) return it->second.panels;
  // Constants whose model is gone (the cache holds their storage alone) make room first.
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.owner.sole_owner()) {
      bytes_ -= it->second.bytes;
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  if (bytes > max_bytes_ - bytes_) return nullptr;
  std::shared_ptr<const void> made = make();
  Entry& e = entries_[key];
  e.owner = owner;
  e.bytes = made ? bytes : 0;
  e.panels = std::move(made);
  bytes_ += e.bytes;
  return e.panels;
}

std::shared_ptr<const void> PackedWeights::rounded(int64_t count, Narrow format, const PanelTransform& round,
                                                   int threads, int64_t jobs,
                                                   const std::function<void(int64_t job, float*)>& fill,
                                                   int64_t job_size) {
  std::shared_ptr<uint16_t[]> out(new uint16_t[static_cast<size_t>(count)]);
  std::atomic<bool> exact{true};
  parallel_for(std::max(threads, 1), jobs, [&](int64_t job) {
    // Made once per constant: fresh memory, not a scratch slot that a caller may hold.
    const auto values = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(2 * job_size));
    float* rounded_values = values.get();
    float* widened = values.get() + job_size;
    fill(job, rounded_values);
    uint16_t* bits = out.get() + job * job_size;
    narrow(format, rounded_values, job_size, bits);
    round(std::span<float>(rounded_values, static_cast<size_t>(job_size)));
    widen(format, bits, job_size, widened);
    // `round` must have rounded each value as narrow() did, bit for bit (NaNs included).
    if (std::memcmp(rounded_values, widened, static_cast<size_t>(job_size) * sizeof(float)) != 0) exact = false;
  });
  return exact ? std::shared_ptr<const void>(std::move(out)) : nullptr;
}

std::shared_ptr<const float[]> PackedWeights::panels(const Tensor& owner, const GemmShape& shape, const float* b,
                                                     int threads) {
  const int64_t count = ceil_div(shape.n, kPackCols);
  const int64_t floats = count * shape.k * kPackCols;
  return std::static_pointer_cast<const float[]>(find_or_make(
      fmt::format("B:{}:{}:{}:{}:{}", static_cast<const void*>(b), shape.k, shape.n, shape.ldb, shape.trans_b ? 1 : 0),
      owner, static_cast<size_t>(floats) * sizeof(float), [&]() -> std::shared_ptr<const void> {
        std::shared_ptr<float[]> out(new float[static_cast<size_t>(floats)]);
        parallel_for(std::max(threads, 1), count,
                     [&](int64_t p) { pack_b_panel(shape, b, p, out.get() + p * shape.k * kPackCols); });
        return out;
      }));
}

std::shared_ptr<const uint16_t[]> PackedWeights::rounded_panels(const Tensor& owner, const GemmShape& shape,
                                                                const float* b, Narrow format,
                                                                const PanelTransform& round, int threads) {
  const int64_t count = ceil_div(shape.n, kPackCols);
  const int64_t panel = shape.k * kPackCols;
  return std::static_pointer_cast<const uint16_t[]>(
      find_or_make(fmt::format("B{}:{}:{}:{}:{}:{}", narrow_name(format), static_cast<const void*>(b), shape.k, shape.n,
                               shape.ldb, shape.trans_b ? 1 : 0),
                   owner, static_cast<size_t>(count * panel) * sizeof(uint16_t), [&] {
                     return rounded(
                         count * panel, format, round, threads, count,
                         [&](int64_t p, float* out) { pack_b_panel(shape, b, p, out); }, panel);
                   }));
}

std::shared_ptr<const float[]> PackedWeights::conv_weights(const Tensor& owner, const float* w, int64_t groups,
                                                           int64_t rows, int64_t depth, int threads) {
  const int64_t per_group = packed_a_size(rows, depth);
  const int64_t blocks = ceil_div(rows, kPackRows);
  const int64_t floats = groups * per_group;
  return std::static_pointer_cast<const float[]>(
      find_or_make(fmt::format("A:{}:{}:{}:{}", static_cast<const void*>(w), groups, rows, depth), owner,
                   static_cast<size_t>(floats) * sizeof(float), [&]() -> std::shared_ptr<const void> {
                     std::shared_ptr<float[]> out(new float[static_cast<size_t>(floats)]);
                     parallel_for(std::max(threads, 1), groups * blocks, [&](int64_t job) {
                       const int64_t gi = job / blocks, blk = job % blocks;
                       pack_a(rows, depth, w + gi * rows * depth, depth, blk, blk + 1, out.get() + gi * per_group);
                     });
                     return out;
                   }));
}

std::shared_ptr<const uint16_t[]> PackedWeights::rounded_conv_weights(const Tensor& owner, const float* w,
                                                                      int64_t groups, int64_t rows, int64_t depth,
                                                                      Narrow format, const PanelTransform& round,
                                                                      int threads) {
  const int64_t per_group = packed_a_size(rows, depth);
  const int64_t blocks = ceil_div(rows, kPackRows);
  const int64_t block = depth * kPackRows;
  // Block b of group g sits at g * per_group + b * block: the jobs' blocks, one after another.
  return std::static_pointer_cast<const uint16_t[]>(find_or_make(
      fmt::format("A{}:{}:{}:{}:{}", narrow_name(format), static_cast<const void*>(w), groups, rows, depth), owner,
      static_cast<size_t>(groups * per_group) * sizeof(uint16_t), [&] {
        return rounded(
            groups * per_group, format, round, threads, groups * blocks,
            [&](int64_t job, float* out) {
              const int64_t gi = job / blocks, r0 = job % blocks * kPackRows;
              pack_a(std::min(kPackRows, rows - r0), depth, w + (gi * rows + r0) * depth, depth, 0, 1, out);
            },
            block);
      }));
}

std::shared_ptr<const float[]> PackedWeights::derived_weights(const Tensor& owner, const float* w,
                                                              const std::string& layout, int64_t floats,
                                                              const std::function<bool(float*)>& fill) {
  return std::static_pointer_cast<const float[]>(
      find_or_make(fmt::format("D{}:{}", layout, static_cast<const void*>(w)), owner,
                   static_cast<size_t>(floats) * sizeof(float), [&]() -> std::shared_ptr<const void> {
                     std::shared_ptr<float[]> out(new float[static_cast<size_t>(floats)]);
                     if (!fill(out.get())) return nullptr;
                     return out;
                   }));
}

size_t PackedWeights::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

PackedWeights& packed_weights() {
  static PackedWeights cache(size_t{1} << 30);
  return cache;
}

}  // namespace vn::ops
