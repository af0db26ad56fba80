// SPDX-License-Identifier: Apache-2.0
// Chains of float32 elementwise nodes that the reference runs as one pass: PyTorch's exported
// GELU (Div, Erf, Add, Mul, Mul), SiLU (Sigmoid, Mul), a residual Add and Relu, and the like. Each
// node of a chain reads the previous node's output (which nothing else reads), the chain's source
// tensor, another tensor of the source's shape made before the chain, or a one-value constant;
// the chain runs block by block in cache, each node's operation applied in turn with the kernel's
// own rounding, so that the result has the bits of the nodes run one by one. A chain whose source
// is a Conv's or a MatMul's output (read by nothing else) runs inside that kernel, on each block
// of its output as it is finished (KernelContext::OutputEpilogue).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/ops/kernel_context.h"

namespace vn::ref {

/// One node of a chain.
struct ChainOp {
  enum class Kind { kAdd, kSub, kMul, kDiv, kErf, kSigmoid, kRelu };
  /// Where an operand comes from: the previous node's output (the source, for the first node),
  /// the chain's source tensor, `scalar`, the chain's other tensor number `other`, its constant
  /// row number `row` (repeated along the source's last dim: a bias, a layer scale), or the
  /// output of an earlier node that `save`d it as number `saved` (GELU's input after a bias).
  enum class Operand { kPrevious, kSource, kScalar, kOther, kRow, kSaved };
  Kind kind = Kind::kAdd;
  Operand lhs = Operand::kPrevious, rhs = Operand::kPrevious;  // unary ops read lhs
  float scalar = 0.0f;
  int other = -1, row = -1, saved = -1;
  int save = -1;  ///< this node's output is kept as saved value number `save` for later nodes
};

/// What a node could be as a link of a chain: its kind, and per input whether it is a float32
/// constant of one value (`scalars`) or a row of several (`rows`: shape [C] or [1, ..., 1, C]).
/// nullopt for a node no chain takes: another op, an older version (legacy broadcast
/// attributes), or attributes.
struct ChainLink {
  ChainOp::Kind kind;
  std::vector<std::optional<float>> scalars;  // per input
  std::vector<Tensor> rows;                   // per input: the row, or undefined
  int64_t scalar_rank = 0;                    // the highest rank among the constant inputs
};
/// `constant_of` returns an input's value when it is a float32 constant of the model (an
/// initializer or a Constant node's), else an undefined tensor.
using ConstantOf = std::function<Tensor(const std::string& name)>;
std::optional<ChainLink> chain_link(const Node& node, int64_t version, const ConstantOf& constant_of);

/// The most other tensors a chain reads, and its most constant rows.
inline constexpr size_t kChainMaxOthers = 4;
inline constexpr size_t kChainMaxRows = 4;
/// The most outputs of a chain's nodes that later nodes read besides the next one.
inline constexpr size_t kChainMaxSaved = 2;
/// Values a block of a chain's pass: 16 KiB, in L1 beside the source's block.
inline constexpr int64_t kChainBlock = 4096;

/// A fused chain: its nodes' operations in order.
struct ElementwiseChain {
  std::vector<ChainOp> ops;
  int64_t scalar_rank = 0;  ///< the source must have at least this rank (broadcasting keeps its shape)
  /// Per constant row: its values repeated over kBlock + its length, so that the row's values for
  /// any block of the source lie in one run from element (offset mod length).
  std::vector<std::vector<float>> rows;
  std::vector<int64_t> row_lengths;

  /// Adds `row` (shape [C] or [1, ..., 1, C]); its index.
  int add_row(const Tensor& row);
  /// Whether the chain computes what its nodes would from `source` and its other tensors
  /// `others`: the source is float32, the constants' broadcasting keeps its shape, each row is as
  /// long as its last dim, and the others are float32 tensors of its shape.
  bool applies(const Tensor& source, std::span<const Tensor* const> others) const;

  /// y[i] = the chain applied to x[i] for i < n, on up to `threads` threads; y may be x. `others`
  /// holds the other tensors' values (each of n, indexed as x).
  void run(const float* x, float* y, int64_t n, int threads, std::span<const float* const> others) const;
  /// The chain applied in place to `rows` runs of `width` elements of y, `stride` apart, the first
  /// at element `first` (others indexed as y), on the calling thread.
  void run_rows(float* y, int64_t first, int64_t rows, int64_t stride, int64_t width,
                std::span<const float* const> others) const;
};

/// A chain run by a kernel on its output 0 as it finishes each block (a Conv's, a MatMul's):
/// `others` are the values of the chain's other tensors, which must have the output's shape.
class ChainEpilogue final : public ops::KernelContext::OutputEpilogue {
 public:
  ChainEpilogue(const ElementwiseChain& chain, std::vector<const Tensor*> others);
  bool accepts(const Tensor& y) const override;
  void apply(float* y, int64_t first, int64_t rows, int64_t stride, int64_t width) const override;

 private:
  const ElementwiseChain& chain_;
  std::vector<const Tensor*> others_;
  std::vector<const float*> data_;
};

}  // namespace vn::ref
