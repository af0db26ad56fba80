// SPDX-License-Identifier: Apache-2.0
#include "core/ref/elementwise_chain.h"

#include <algorithm>

#include "core/ops/kernel_util.h"
#include "core/ops/vector_math.h"
#include "core/ref/reference_plan.h"

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

void ReferenceBackend::mark_chains(const Graph& g, Plan& plan, const std::vector<std::vector<int>>& reads,
                                   const std::vector<bool>& kept) {
  std::vector<Step>& steps = plan.steps;
  std::vector<int> readers(kept.size(), 0), reader(kept.size(), -1), producer(kept.size(), -1);
  for (size_t i = 0; i < reads.size(); ++i) {
    for (int s : reads[i]) {
      ++readers[static_cast<size_t>(s)];
      reader[static_cast<size_t>(s)] = static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    for (int s : steps[i].outputs) {
      if (s >= 0) producer[static_cast<size_t>(s)] = static_cast<int>(i);
    }
  }
  // A float32 value of one element: an initializer, or a Constant node's.
  const ScalarOf scalar_of = [&](const std::string& name) -> std::optional<std::pair<float, int64_t>> {
    const auto it = plan.slot_of.find(name);
    if (it == plan.slot_of.end()) return std::nullopt;
    const Tensor* t = &plan.constants[static_cast<size_t>(it->second)];
    if (!t->defined()) {
      const int p = producer[static_cast<size_t>(it->second)];
      const Node* n = p >= 0 ? &g.nodes[static_cast<size_t>(steps[static_cast<size_t>(p)].node_index)] : nullptr;
      if (!n || n->op_type != "Constant" || !is_default_domain(n->domain) || n->attributes.size() != 1)
        return std::nullopt;
      const Attribute& a = n->attributes[0];
      if (a.name == "value_float" && a.type == AttrType::kFloat) return std::pair<float, int64_t>{a.f, 0};
      if (a.name != "value" || a.type != AttrType::kTensor) return std::nullopt;
      t = &a.t;
    }
    if (!t->defined() || t->dtype() != DType::kFloat32 || t->numel() != 1) return std::nullopt;
    return std::pair<float, int64_t>{t->values<float>()[0], t->rank()};
  };
  const auto link_of = [&](size_t i) -> std::optional<ChainLink> {
    const Step& st = steps[i];
    if (st.chain >= 0 || !st.narrow_inputs.empty() || st.widen_outputs || st.outputs.size() != 1 || st.outputs[0] < 0) {
      return std::nullopt;
    }
    return chain_link(g.nodes[static_cast<size_t>(st.node_index)], st.version, scalar_of);
  };
  for (size_t head = 0; head < steps.size(); ++head) {
    std::optional<ChainLink> link = link_of(head);
    if (!link) continue;
    // The head reads one tensor, the source, besides scalars: the previous values of its block.
    int source = -1;
    bool one_tensor = true;
    for (size_t p = 0; p < link->scalars.size(); ++p) {
      if (link->scalars[p]) continue;
      const int s = steps[head].inputs[p];
      one_tensor = one_tensor && (source < 0 || s == source);
      source = s;
    }
    if (!one_tensor || source < 0) continue;
    const auto op_of = [&](const ChainLink& l, const Step& st, int previous) -> std::optional<ChainOp> {
      ChainOp op;
      op.kind = l.kind;
      ChainOp::Operand* sides[2] = {&op.lhs, &op.rhs};
      for (size_t p = 0; p < l.scalars.size(); ++p) {
        const int s = st.inputs[p];
        if (l.scalars[p]) {
          *sides[p] = ChainOp::Operand::kScalar;
          op.scalar = *l.scalars[p];  // a binary op has one scalar at most: two would be no link
        } else if (s == previous) {
          *sides[p] = ChainOp::Operand::kPrevious;
        } else if (s == source) {
          *sides[p] = ChainOp::Operand::kSource;
        } else {
          return std::nullopt;
        }
      }
      if (l.scalars.size() == 2 && l.scalars[0] && l.scalars[1]) return std::nullopt;
      return op;
    };
    std::optional<ChainOp> first = op_of(*link, steps[head], source);
    if (!first) continue;
    Chain chain;
    chain.source = source;
    chain.ops.ops.push_back(*first);
    chain.ops.scalar_rank = link->scalar_rank;
    std::vector<size_t> links{head};
    for (;;) {
      const int out = steps[links.back()].outputs[0];
      if (readers[static_cast<size_t>(out)] != 1 || kept[static_cast<size_t>(out)]) break;
      const size_t next = static_cast<size_t>(reader[static_cast<size_t>(out)]);
      std::optional<ChainLink> l = next > links.back() ? link_of(next) : std::nullopt;
      std::optional<ChainOp> op = l ? op_of(*l, steps[next], out) : std::nullopt;
      if (!op) break;
      chain.ops.ops.push_back(*op);
      chain.ops.scalar_rank = std::max(chain.ops.scalar_rank, l->scalar_rank);
      links.push_back(next);
    }
    if (links.size() < 2) continue;
    const int index = static_cast<int>(plan.chains.size());
    for (size_t k = 0; k < links.size(); ++k) {
      Step& st = steps[links[k]];
      st.chain = index;
      if (k + 1 < links.size()) chain.release.insert(chain.release.end(), st.release.begin(), st.release.end());
    }
    steps[links.front()].chain_head = true;
    Step& end = steps[links.back()];
    end.chain_end = true;
    const auto released = [&](const std::vector<int>& r) { return std::find(r.begin(), r.end(), source) != r.end(); };
    chain.source_dies = released(chain.release) || released(end.release);
    plan.chains.push_back(std::move(chain));
  }
}

}  // namespace vn::ref
