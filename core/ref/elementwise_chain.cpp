// SPDX-License-Identifier: Apache-2.0
#include "core/ref/elementwise_chain.h"

#include <algorithm>

#include "core/ops/kernel_util.h"
#include "core/ops/vector_math.h"

namespace vn::ref {
namespace {

using Kind = ChainOp::Kind;
using Operand = ChainOp::Operand;

// Values a block: 16 KiB, in L1 beside the source's block.
constexpr int64_t kBlock = 4096;

/// t[i] = f(a(i), b(i)) for i < m, one loop per pair of operand kinds so that each vectorizes.
template <typename F>
void binary(const ChainOp& op, const float* x, float* t, int64_t m, F f) {
  const float c = op.scalar;
  const auto prev = [t](int64_t i) { return t[i]; };
  const auto source = [x](int64_t i) { return x[i]; };
  const auto scalar = [c](int64_t) { return c; };
  const auto with_rhs = [&](auto a) {
    const auto loop = [&](auto b) {
      for (int64_t i = 0; i < m; ++i) t[i] = f(a(i), b(i));
    };
    switch (op.rhs) {
      case Operand::kPrevious:
        return loop(prev);
      case Operand::kSource:
        return loop(source);
      case Operand::kScalar:
        return loop(scalar);
    }
  };
  switch (op.lhs) {
    case Operand::kPrevious:
      return with_rhs(prev);
    case Operand::kSource:
      return with_rhs(source);
    case Operand::kScalar:
      return with_rhs(scalar);
  }
}

/// One op over a block: t holds the previous op's values (the source's, before the first).
void apply(const ChainOp& op, const float* x, float* t, int64_t m) {
  switch (op.kind) {
    case Kind::kAdd:
      return binary(op, x, t, m, [](float a, float b) { return a + b; });
    case Kind::kSub:
      return binary(op, x, t, m, [](float a, float b) { return a - b; });
    case Kind::kMul:
      return binary(op, x, t, m, [](float a, float b) { return a * b; });
    case Kind::kDiv:
      return binary(op, x, t, m, [](float a, float b) { return a / b; });
    case Kind::kErf:  // of the previous values: a chain's links read them
      return ops::vmath::erf(t, t, m);
    case Kind::kSigmoid:
      return ops::vmath::sigmoid(t, t, m);
  }
}

}  // namespace

std::optional<ChainLink> chain_link(const Node& node, int64_t version, const ScalarOf& scalar_of) {
  if (!is_default_domain(node.domain) || !node.attributes.empty() || node.outputs.size() != 1) return std::nullopt;
  const std::string& op = node.op_type;
  ChainLink link;
  size_t arity = 2;
  // The versions whose kernels take these inputs alone, with no attributes: from 7 the binary ops
  // broadcast by numpy's rules (before, by legacy attributes).
  if (op == "Add" && version >= 7) {
    link.kind = Kind::kAdd;
  } else if (op == "Sub" && version >= 7) {
    link.kind = Kind::kSub;
  } else if (op == "Mul" && version >= 7) {
    link.kind = Kind::kMul;
  } else if (op == "Div" && version >= 7) {
    link.kind = Kind::kDiv;
  } else if (op == "Erf" && version >= 9) {
    link.kind = Kind::kErf, arity = 1;
  } else if (op == "Sigmoid" && version >= 6) {
    link.kind = Kind::kSigmoid, arity = 1;
  } else {
    return std::nullopt;
  }
  if (node.inputs.size() != arity) return std::nullopt;
  for (const std::string& in : node.inputs) {
    if (in.empty()) return std::nullopt;
    const std::optional<std::pair<float, int64_t>> s = arity == 2 ? scalar_of(in) : std::nullopt;
    link.scalars.push_back(s ? std::optional<float>(s->first) : std::nullopt);
    if (s) link.scalar_rank = std::max(link.scalar_rank, s->second);
  }
  return link;
}

void ElementwiseChain::run(const float* x, float* y, int64_t n, int threads) const {
  ops::parallel_chunks(
      threads, n,
      [&](int64_t lo, int64_t hi) {
        alignas(64) float t[kBlock];
        for (int64_t b0 = lo; b0 < hi; b0 += kBlock) {
          const int64_t m = std::min(kBlock, hi - b0);
          const float* xb = x + b0;
          // The block's values are final before y's block is written: y may be x.
          std::copy(xb, xb + m, t);
          for (const ChainOp& op : ops) apply(op, xb, t, m);
          std::copy(t, t + m, y + b0);
        }
      },
      ops::kComputeBoundGrain);
}

}  // namespace vn::ref
