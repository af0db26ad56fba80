// SPDX-License-Identifier: Apache-2.0
// The float32 matrix product of MatMul and Gemm, for the reference backend and the engine: B is
// packed into the panels of sgemm.h (by all threads) and the products run on sgemm_packed's
// kernel (AVX-512 where the machine has it), in tasks of row blocks and column panels shared
// among the threads.
//
// Every element of C is the sum of its k products in an order fixed by k alone (sgemm_packed's
// passes over k, each in k order, from zero): the result is the same at any thread count and for
// any split of the work, and the same whether a product runs alone or in a batch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "core/ir/tensor.h"
#include "core/ops/narrow.h"

namespace vn::ops {

/// The shape and layout shared by the products of a batch: op(A) is m x k and op(B) k x n, A
/// stored with rows lda apart (m x k, or k x m when trans_a), B with rows ldb apart (k x n, or
/// n x k when trans_b), C (m x n) with rows ldc apart.
struct GemmShape {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
};

/// The operands of one product.
struct GemmOperands {
  const float* a;
  const float* b;
  float* c;
};

/// Applied to B's values once they are packed (a span of whole packed panels, zero padding
/// included), before any product reads them: an elementwise rounding, such as the engine's to its
/// operand format, costs a pass over packed panels that are in cache rather than a copy of B.
using PanelTransform = std::function<void(std::span<float>)>;

/// B matrices that are constants of a model, packed into sgemm.h's panels once and kept: a
/// product whose B is one reads the kept panels instead of packing B at each call (a
/// transformer's 768 x 3072 weights, 9 MiB, were copied at every product: ViT-B/16 at one thread
/// 308 -> 275-293 ms with them kept). Executors say which of a node's inputs are constants
/// (KernelContext); backends running one model share its panels (the reference and the float32
/// engine read the same tensors). Thread-safe. Each entry holds its constant's storage, so that
/// the address it is found by names that constant while the entry lives; an entry goes once the
/// cache is the last holder of its constant (the model is gone), checked whenever an entry is
/// added.
class PackedWeights {
 public:
  /// Keeps at most `max_bytes` of panels: a B that does not fit in what is left is packed at each
  /// product, as without the cache.
  explicit PackedWeights(size_t max_bytes);
  ~PackedWeights();
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  /// The panels of op(B) (k x n; `shape`'s trans_b and ldb) read from `b`, which lies in the
  /// storage of the constant `owner`: packed on up to `threads` threads at the first call for this
  /// B, or null when they do not fit.
  std::shared_ptr<const float[]> panels(const Tensor& owner, const GemmShape& shape, const float* b, int threads);
  /// A convolution's weights `w` (in the storage of the constant `owner`): `groups` matrices of
  /// `rows` x `depth`, one after another, each packed as sgemm.h's A (packed_a_size floats per
  /// group), or null when they do not fit.
  std::shared_ptr<const float[]> conv_weights(const Tensor& owner, const float* w, int64_t groups, int64_t rows,
                                              int64_t depth, int threads);
  /// panels() passed through `round`, kept in `format` (half the bytes). `round` must be the
  /// rounding to `format` (to nearest even, as ops::narrow): this is checked on every value as
  /// the panels are made, and a transform that gives anything else keeps nothing (null, at this
  /// call and the next ones), as does a B that does not fit.
  std::shared_ptr<const uint16_t[]> rounded_panels(const Tensor& owner, const GemmShape& shape, const float* b,
                                                   Narrow format, const PanelTransform& round, int threads);
  /// conv_weights() passed through `round`, kept in `format`, as rounded_panels().
  std::shared_ptr<const uint16_t[]> rounded_conv_weights(const Tensor& owner, const float* w, int64_t groups,
                                                         int64_t rows, int64_t depth, Narrow format,
                                                         const PanelTransform& round, int threads);
  /// A constant's weights `w` (in the storage of `owner`) in a layout of the caller's, `floats`
  /// values that `fill(out)` writes, kept under `layout`, which must name that layout and every
  /// size it depends on; null when they do not fit or when fill returned false (remembered, as the
  /// other entries).
  std::shared_ptr<const float[]> derived_weights(const Tensor& owner, const float* w, const std::string& layout,
                                                 int64_t floats, const std::function<bool(float*)>& fill);
  /// Bytes of panels kept.
  size_t bytes() const;

 private:
  struct Entry;
  /// The entry `key` of `bytes` bytes for `owner`, made by `make()` when new; null when it does
  /// not fit, or when make() gave null (remembered: make is not called again for the key).
  std::shared_ptr<const void> find_or_make(const std::string& key, const Tensor& owner, size_t bytes,
                                           const std::function<std::shared_ptr<const void>()>& make);
  /// The `count` 16-bit values of `format` that `fill(out)` writes as float32 and `round` rounds,
  /// or null when `round` did not round as narrow() does.
  static std::shared_ptr<const void> rounded(int64_t count, Narrow format, const PanelTransform& round, int threads,
                                             int64_t jobs, const std::function<void(int64_t job, float*)>& fill,
                                             int64_t job_size);
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  size_t bytes_ = 0;
  size_t max_bytes_;
};

/// The process's cache of packed constant weights: 1 GiB at most.
PackedWeights& packed_weights();

/// Called, from any of the threads, on each block of C whose sums are complete (rows [i0, i1),
/// columns [j0, j1)), while it is in that thread's cache: an engine's epilogue, which may rewrite
/// the block. The blocks cover C once each.
using GemmFinish = std::function<void(int64_t i0, int64_t i1, int64_t j0, int64_t j1)>;

/// C = op(A) · op(B) on up to `threads` threads, B's values passed through `transform_b` when
/// given. When B lies in the constant tensor `b_constant` and has no transform, the product reads
/// B's kept panels (packed_weights()) where it would pack B; with a transform that rounds to the
/// 16-bit format `kept_as`, it reads B's kept rounded panels (PackedWeights::rounded_panels),
/// widened a few at a time, where it would pack and round B. C is overwritten, never read (zero
/// when k is 0); it is the same with or without kept panels, and then passed through `finish`.
void sgemm(const GemmShape& shape, const float* a, const float* b, float* c, int threads,
           const PanelTransform* transform_b = nullptr, const Tensor* b_constant = nullptr,
           Narrow kept_as = Narrow::kNone, const GemmFinish* finish = nullptr);

/// sgemm for each product of `batch`, the products spread over the threads when there are enough
/// of them, else each product's work. `b_constant` only where every product reads that one B.
void sgemm_batched(const GemmShape& shape, std::span<const GemmOperands> batch, int threads,
                   const PanelTransform* transform_b = nullptr, const Tensor* b_constant = nullptr,
                   Narrow kept_as = Narrow::kNone);

}  // namespace vn::ops
