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
  /// Bytes of panels kept.
  size_t bytes() const;

 private:
  struct Entry;
  /// The entry `key` of `floats` floats for `owner`, filled by `fill(out)` when new; null when it
  /// does not fit.
  std::shared_ptr<const float[]> find_or_make(const std::string& key, const Tensor& owner, int64_t floats,
                                              const std::function<void(float*)>& fill);
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  size_t bytes_ = 0;
  size_t max_bytes_;
};

/// The process's cache of packed constant weights: 1 GiB at most.
PackedWeights& packed_weights();

/// C = op(A) · op(B) on up to `threads` threads, B's values passed through `transform_b` when
/// given. When B lies in the constant tensor `b_constant` (and has no transform), the product
/// reads B's kept panels (packed_weights()) where it would pack B. C is overwritten, never read
/// (zero when k is 0).
void sgemm(const GemmShape& shape, const float* a, const float* b, float* c, int threads,
           const PanelTransform* transform_b = nullptr, const Tensor* b_constant = nullptr);

/// sgemm for each product of `batch`, the products spread over the threads when there are enough
/// of them, else each product's work. `b_constant` only where every product reads that one B.
void sgemm_batched(const GemmShape& shape, std::span<const GemmOperands> batch, int threads,
                   const PanelTransform* transform_b = nullptr, const Tensor* b_constant = nullptr);

}  // namespace vn::ops
