// SPDX-License-Identifier: Apache-2.0
// Chains of float32 elementwise nodes that the reference runs as one pass: PyTorch's exported
// GELU (Div, Erf, Add, Mul, Mul), SiLU (Sigmoid, Mul), a residual Add and Relu, and the like. Each
// node of a chain reads the previous node's output (which nothing else reads), the chain's source
// tensor, another tensor of the source's shape made before the chain, or a one-value constant;
// the chain runs block by block in cache, each node's operation applied in turn with the kernel's
// own rounding, so that the result has the bits of the nodes run one by one. A chain whose source
// is a Conv's output (read by nothing else) runs inside the Conv, on each block of its output as
// it is finished (KernelContext::OutputEpilogue).
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
  /// the chain's source tensor, `scalar`, or the chain's other tensor number `other`.
  enum class Operand { kPrevious, kSource, kScalar, kOther };
  Kind kind = Kind::kAdd;
  Operand lhs = Operand::kPrevious, rhs = Operand::kPrevious;  // unary ops read lhs
  float scalar = 0.0f;
  int other = -1;
};

/// What a node could be as a link of a chain: its kind, and per input whether it is a one-value
/// float32 constant (its value). nullopt for a node no chain takes: another op, an older version
/// (legacy broadcast attributes), attributes, or inputs that are not one tensor and scalars.
struct ChainLink {
  ChainOp::Kind kind;
  std::vector<std::optional<float>> scalars;  // per input
  int64_t scalar_rank = 0;                    // the highest rank among the scalar inputs
};
/// `constant` returns the value of an input when it is a float32 constant of one element, and its
/// rank; nullopt otherwise.
using ScalarOf = std::function<std::optional<std::pair<float, int64_t>>(const std::string& name)>;
std::optional<ChainLink> chain_link(const Node& node, int64_t version, const ScalarOf& scalar_of);

/// The most other tensors a chain reads.
inline constexpr size_t kChainMaxOthers = 4;

/// A fused chain: its nodes' operations in order.
struct ElementwiseChain {
  std::vector<ChainOp> ops;
  int64_t scalar_rank = 0;  ///< the source must have at least this rank (broadcasting keeps its shape)

  /// y[i] = the chain applied to x[i] for i < n, on up to `threads` threads; y may be x. `others`
  /// holds the other tensors' values (each of n, indexed as x).
  void run(const float* x, float* y, int64_t n, int threads, std::span<const float* const> others) const;
  /// The chain applied in place to `rows` runs of `width` elements of y, `stride` apart, the first
  /// at element `first` (others indexed as y), on the calling thread.
  void run_rows(float* y, int64_t first, int64_t rows, int64_t stride, int64_t width,
                std::span<const float* const> others) const;
};

/// A chain run by a kernel on its output 0 as it finishes each block (a Conv's): `others` are
/// the values of the chain's other tensors, which must have the output's shape.
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
