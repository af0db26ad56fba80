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

constexpr int64_t kBlock = kChainBlock;

/// Where a block's operands lie: the other tensors' elements and the rows' values for it.
struct BlockOperands {
  const float* others[kChainMaxOthers];
  const float* rows[kChainMaxRows];
  float* saved[kChainMaxSaved];
};

/// t[i] = f(a(i), b(i)) for i < m, one loop per pair of operand kinds so that each vectorizes.
template <typename F>
void binary(const ChainOp& op, const float* x, float* t, int64_t m, const BlockOperands& at, F f) {
  const float c = op.scalar;
  const float* o = op.other >= 0 ? at.others[op.other] : nullptr;
  const float* r = op.row >= 0 ? at.rows[op.row] : nullptr;
  const float* sv = op.saved >= 0 ? at.saved[op.saved] : nullptr;
  const auto prev = [t](int64_t i) { return t[i]; };
  const auto source = [x](int64_t i) { return x[i]; };
  const auto scalar = [c](int64_t) { return c; };
  const auto other = [o](int64_t i) { return o[i]; };
  const auto row = [r](int64_t i) { return r[i]; };
  const auto saved = [sv](int64_t i) { return sv[i]; };
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
      case Operand::kOther:
        return loop(other);
      case Operand::kRow:
        return loop(row);
      case Operand::kSaved:
        return loop(saved);
    }
  };
  switch (op.lhs) {
    case Operand::kPrevious:
      return with_rhs(prev);
    case Operand::kSource:
      return with_rhs(source);
    case Operand::kScalar:
      return with_rhs(scalar);
    case Operand::kOther:
      return with_rhs(other);
    case Operand::kRow:
      return with_rhs(row);
    case Operand::kSaved:
      return with_rhs(saved);
  }
}

/// One op over a block: t holds the previous op's values (the source's, before the first).
void apply(const ChainOp& op, const float* x, float* t, int64_t m, const BlockOperands& at) {
  switch (op.kind) {
    case Kind::kAdd:
      return binary(op, x, t, m, at, [](float a, float b) { return a + b; });
    case Kind::kSub:
      return binary(op, x, t, m, at, [](float a, float b) { return a - b; });
    case Kind::kMul:
      return binary(op, x, t, m, at, [](float a, float b) { return a * b; });
    case Kind::kDiv:
      return binary(op, x, t, m, at, [](float a, float b) { return a / b; });
    case Kind::kErf:  // of the previous values: a chain's links read them
      return ops::vmath::erf(t, t, m);
    case Kind::kSigmoid:
      return ops::vmath::sigmoid(t, t, m);
    case Kind::kRelu:  // Relu's kernel: NaN and -0 pass through
      for (int64_t i = 0; i < m; ++i) t[i] = t[i] < 0.0f ? 0.0f : t[i];
      return;
  }
}

/// Whether a link reads the chain's source (not only the first link, through its previous
/// values): the chain then keeps each block's values apart from the source's.
bool reads_source(const std::vector<ChainOp>& ops) {
  return std::any_of(ops.begin(), ops.end(),
                     [](const ChainOp& op) { return op.lhs == Operand::kSource || op.rhs == Operand::kSource; });
}

/// The chain over x[0, m) into y (which may be x), in blocks of kBlock; others indexed as x, and
/// x[0] the source's element `offset` (for the rows). A chain that does not read its source
/// (`keep_source` false) works in y itself: a Conv's Add and Relu make two passes over a block,
/// not four.
void run_span(const ElementwiseChain& chain, bool keep_source, const float* x, float* y, int64_t m, int64_t offset,
              std::span<const float* const> others) {
  const std::vector<ChainOp>& ops = chain.ops;
  const auto is = [](const ChainOp& op, Operand a, Operand b) {
    return (op.lhs == a && op.rhs == b) || (op.lhs == b && op.rhs == a);
  };
  // SiLU: the chain starts with the source's Sigmoid (unsaved) times the source.
  const bool silu = ops.size() >= 2 && ops[0].kind == Kind::kSigmoid && ops[0].save < 0 &&
                    ops[1].kind == Kind::kMul && is(ops[1], Operand::kPrevious, Operand::kSource);
  alignas(64) float block[kBlock];
  alignas(64) float saved[kChainMaxSaved][kBlock];
  BlockOperands at;
  for (size_t k = 0; k < kChainMaxSaved; ++k) at.saved[k] = saved[k];
  for (int64_t b0 = 0; b0 < m; b0 += kBlock) {
    const int64_t count = std::min(kBlock, m - b0);
    for (size_t o = 0; o < others.size(); ++o) at.others[o] = others[o] + b0;
    for (size_t r = 0; r < chain.rows.size(); ++r) {
      at.rows[r] = chain.rows[r].data() + (offset + b0) % chain.row_lengths[r];
    }
    // The block's values are final before y's block is written: y may be x.
    // A chain that is SiLU alone writes y from x in its one pass (y may be x).
    float* t = keep_source && !(silu && ops.size() == 2) ? block : y + b0;
    size_t first = 0;
    if (silu) {
      // Sigmoid then its product with the source, in one pass from the source: vmath::silu gives
      // the two links' bits.
      ops::vmath::silu(x + b0, t, count);
      first = 2;
    } else if (t != x + b0) {
      std::copy(x + b0, x + b0 + count, t);
    }
    for (size_t k = first; k < ops.size(); ++k) {
      const ChainOp& op = ops[k];
      apply(op, x + b0, t, count, at);
      if (op.save >= 0) std::copy(t, t + count, at.saved[op.save]);
    }
    if (t != y + b0) std::copy(t, t + count, y + b0);
  }
}

}  // namespace

std::optional<ChainLink> chain_link(const Node& node, int64_t version, const ConstantOf& constant_of) {
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
  } else if (op == "Relu" && version >= 6) {
    link.kind = Kind::kRelu, arity = 1;
  } else {
    return std::nullopt;
  }
  if (node.inputs.size() != arity) return std::nullopt;
  for (const std::string& in : node.inputs) {
    if (in.empty()) return std::nullopt;
    const Tensor c = arity == 2 ? constant_of(in) : Tensor();
    const Shape& shape = c.defined() ? c.shape() : Shape{};
    const bool row = c.defined() && c.numel() > 1 && c.numel() == (shape.empty() ? 1 : shape.back());
    link.scalars.push_back(c.defined() && c.numel() == 1 ? std::optional<float>(c.values<float>()[0]) : std::nullopt);
    link.rows.push_back(row ? c : Tensor());
    if (link.scalars.back() || row) link.scalar_rank = std::max(link.scalar_rank, c.rank());
  }
  return link;
}

int ElementwiseChain::add_row(const Tensor& row) {
  const std::span<const float> v = row.values<float>();
  const auto length = static_cast<int64_t>(v.size());
  std::vector<float> tiled(static_cast<size_t>(kBlock + length));
  for (size_t i = 0; i < tiled.size(); ++i) tiled[i] = v[i % v.size()];
  rows.push_back(std::move(tiled));
  row_lengths.push_back(length);
  return static_cast<int>(rows.size() - 1);
}

bool ElementwiseChain::applies(const Tensor& source, std::span<const Tensor* const> others) const {
  if (!source.defined() || source.dtype() != DType::kFloat32 || source.rank() < scalar_rank) return false;
  const Shape& shape = source.shape();
  return std::all_of(row_lengths.begin(), row_lengths.end(),
                     [&](int64_t c) { return !shape.empty() && shape.back() == c; }) &&
         std::all_of(others.begin(), others.end(), [&](const Tensor* t) {
           return t->defined() && t->dtype() == DType::kFloat32 && t->shape() == shape;
         });
}

void ElementwiseChain::run(const float* x, float* y, int64_t n, int threads,
                           std::span<const float* const> others) const {
  const bool keep_source = reads_source(ops);
  ops::parallel_chunks(
      threads, n,
      [&](int64_t lo, int64_t hi) {
        const float* at[kChainMaxOthers];
        for (size_t o = 0; o < others.size(); ++o) at[o] = others[o] + lo;
        run_span(*this, keep_source, x + lo, y + lo, hi - lo, lo, std::span<const float* const>(at, others.size()));
      },
      ops::kComputeBoundGrain);
}

void ElementwiseChain::run_rows(float* y, int64_t first, int64_t rows, int64_t stride, int64_t width,
                                std::span<const float* const> others) const {
  const bool keep_source = reads_source(ops);
  const float* at[kChainMaxOthers];
  if (width == stride) {
    // Whole rows, one after another (a depthwise convolution's 7 x 7 planes): one span, whose
    // vectors run past each row's end, where a span per row ran each row's tail (49 = 6 x 8 + 1)
    // one value at a time.
    for (size_t o = 0; o < others.size(); ++o) at[o] = others[o] + first;
    run_span(*this, keep_source, y + first, y + first, rows * width, first,
             std::span<const float* const>(at, others.size()));
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t offset = first + r * stride;
    for (size_t o = 0; o < others.size(); ++o) at[o] = others[o] + offset;
    run_span(*this, keep_source, y + offset, y + offset, width, offset,
             std::span<const float* const>(at, others.size()));
  }
}

ChainEpilogue::ChainEpilogue(const ElementwiseChain& chain, std::vector<const Tensor*> others)
    : chain_(chain), others_(std::move(others)) {
  for (const Tensor* t : others_) data_.push_back(t->defined() && t->dtype() == DType::kFloat32 ? t->data<float>() : nullptr);
}

bool ChainEpilogue::accepts(const Tensor& y) const { return chain_.applies(y, others_); }

void ChainEpilogue::apply(float* y, int64_t first, int64_t rows, int64_t stride, int64_t width) const {
  chain_.run_rows(y, first, rows, stride, width, data_);
}

void ReferenceBackend::mark_chains(const Graph& g, Plan& plan, const std::vector<std::vector<int>>& reads,
                                   const std::vector<bool>& kept) {
  std::vector<Step>& steps = plan.steps;
  std::vector<int> producer(kept.size(), -1);
  std::vector<std::vector<int>> readers_of(kept.size());  // per slot: its readers' steps, in order
  for (size_t i = 0; i < reads.size(); ++i) {
    for (int s : reads[i]) {
      std::vector<int>& rs = readers_of[static_cast<size_t>(s)];
      if (rs.empty() || rs.back() != static_cast<int>(i)) rs.push_back(static_cast<int>(i));
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    for (int s : steps[i].outputs) {
      if (s >= 0) producer[static_cast<size_t>(s)] = static_cast<int>(i);
    }
  }
  // A float32 constant: an initializer (or an Identity of one), or a Constant node's value.
  const ConstantOf constant_of = [&](const std::string& name) -> Tensor {
    const auto it = plan.slot_of.find(name);
    if (it == plan.slot_of.end()) return Tensor();
    Tensor t = plan.weights[static_cast<size_t>(it->second)];
    if (!t.defined()) {
      const int p = producer[static_cast<size_t>(it->second)];
      const Node* n = p >= 0 ? &g.nodes[static_cast<size_t>(steps[static_cast<size_t>(p)].node_index)] : nullptr;
      if (!n || n->op_type != "Constant" || !is_default_domain(n->domain) || n->attributes.size() != 1) return Tensor();
      const Attribute& a = n->attributes[0];
      if (a.name == "value_float" && a.type == AttrType::kFloat) return Tensor::from_vector<float>({}, {a.f});
      if (a.name != "value" || a.type != AttrType::kTensor) return Tensor();
      t = a.t;
    }
    return t.defined() && t.dtype() == DType::kFloat32 ? t : Tensor();
  };
  const auto link_of = [&](size_t i) -> std::optional<ChainLink> {
    const Step& st = steps[i];
    if (st.chain >= 0 || !st.narrow_inputs.empty() || st.widen_outputs || st.outputs.size() != 1 || st.outputs[0] < 0) {
      return std::nullopt;
    }
    return chain_link(g.nodes[static_cast<size_t>(st.node_index)], st.version, constant_of);
  };
  // The kernels that offer their output to a chain's epilogue (KernelContext::OutputEpilogue).
  const auto takes_epilogue = [&](int p) {
    const Node& n = g.nodes[static_cast<size_t>(steps[static_cast<size_t>(p)].node_index)];
    return (n.op_type == "Conv" || n.op_type == "MatMul") && is_default_domain(n.domain);
  };
  for (size_t head = 0; head < steps.size(); ++head) {
    std::optional<ChainLink> link = link_of(head);
    if (!link) continue;
    // The head reads one or two tensors besides scalars. The source is the one made last (a
    // Conv's output can then take the chain as its epilogue), the other a tensor of its shape.
    int source = -1;
    for (size_t p = 0; p < link->scalars.size(); ++p) {
      const int s = steps[head].inputs[p];
      const bool constant = link->scalars[p] || link->rows[p].defined();
      if (!constant && (source < 0 || producer[static_cast<size_t>(s)] > producer[static_cast<size_t>(source)]))
        source = s;
    }
    if (source < 0) continue;
    Chain chain;
    chain.source = source;
    std::vector<int> saved_slots;  // link outputs that later links read again
    // Other tensors must be made before the head, where the chain is switched on or off.
    const auto op_of = [&](const ChainLink& l, const Step& st, int previous) -> std::optional<ChainOp> {
      ChainOp op;
      op.kind = l.kind;
      ChainOp::Operand* sides[2] = {&op.lhs, &op.rhs};
      for (size_t p = 0; p < l.scalars.size(); ++p) {
        const int s = st.inputs[p];
        if (l.scalars[p]) {
          *sides[p] = ChainOp::Operand::kScalar;
          op.scalar = *l.scalars[p];  // a binary op has one constant at most: two would be no link
        } else if (l.rows[p].defined()) {
          if (chain.ops.rows.size() == kChainMaxRows) return std::nullopt;
          *sides[p] = ChainOp::Operand::kRow;
          op.row = chain.ops.add_row(l.rows[p]);
        } else if (s == previous) {
          *sides[p] = ChainOp::Operand::kPrevious;
        } else if (s == source) {
          *sides[p] = ChainOp::Operand::kSource;
        } else if (auto sv = std::find(saved_slots.begin(), saved_slots.end(), s); sv != saved_slots.end()) {
          *sides[p] = ChainOp::Operand::kSaved;
          op.saved = static_cast<int>(sv - saved_slots.begin());
        } else if (producer[static_cast<size_t>(s)] < static_cast<int>(head) && op.other < 0) {
          auto at = std::find(chain.others.begin(), chain.others.end(), s);
          if (at == chain.others.end()) {
            if (chain.others.size() == kChainMaxOthers) return std::nullopt;
            at = chain.others.insert(at, s);
          }
          *sides[p] = ChainOp::Operand::kOther;
          op.other = static_cast<int>(at - chain.others.begin());
        } else {
          return std::nullopt;
        }
      }
      const auto constant = [&](size_t p) { return l.scalars[p] || l.rows[p].defined(); };
      if (l.scalars.size() == 2 && constant(0) && constant(1)) return std::nullopt;
      return op;
    };
    std::optional<ChainOp> first = op_of(*link, steps[head], source);
    if (!first) continue;
    chain.ops.ops.push_back(*first);
    chain.ops.scalar_rank = link->scalar_rank;
    std::vector<size_t> links{head};
    for (;;) {
      const int out = steps[links.back()].outputs[0];
      const std::vector<int>& rs = readers_of[static_cast<size_t>(out)];
      if (rs.empty() || kept[static_cast<size_t>(out)]) break;
      // The first reader is the next link; later links may read the output again (saved).
      if (rs.size() > 1) {
        if (saved_slots.size() == kChainMaxSaved) break;
        chain.ops.ops.back().save = static_cast<int>(saved_slots.size());
        saved_slots.push_back(out);
      }
      const auto next = static_cast<size_t>(rs.front());
      std::optional<ChainLink> l = next > links.back() ? link_of(next) : std::nullopt;
      const size_t others = chain.others.size(), rows = chain.ops.rows.size();
      std::optional<ChainOp> op = l ? op_of(*l, steps[next], out) : std::nullopt;
      if (!op) {
        // A link refused after adding its other tensor or row.
        chain.others.resize(others);
        chain.ops.rows.resize(rows);
        chain.ops.row_lengths.resize(rows);
        break;
      }
      chain.ops.ops.push_back(*op);
      chain.ops.scalar_rank = std::max(chain.ops.scalar_rank, l->scalar_rank);
      links.push_back(next);
    }
    // A saved output that a step outside the chain reads must be made: the chain ends where it is
    // produced. Others and rows are listed in the order links first read them, so those that only
    // the links cut off read are the last ones: they go too.
    for (size_t k = 0; k < saved_slots.size(); ++k) {
      const std::vector<int>& rs = readers_of[static_cast<size_t>(saved_slots[k])];
      const bool inside = std::all_of(rs.begin(), rs.end(), [&](int r) {
        return std::find(links.begin(), links.end(), static_cast<size_t>(r)) != links.end();
      });
      if (inside) continue;
      const auto end = static_cast<size_t>(std::find_if(chain.ops.ops.begin(), chain.ops.ops.end(),
                                                        [&](const ChainOp& op) { return op.save == static_cast<int>(k); }) -
                                           chain.ops.ops.begin());
      links.resize(end + 1);
      chain.ops.ops.resize(end + 1);
      chain.ops.ops.back().save = -1;
      saved_slots.resize(k);
      int others = 0, rows = 0;
      for (const ChainOp& op : chain.ops.ops) others = std::max(others, op.other + 1), rows = std::max(rows, op.row + 1);
      chain.others.resize(static_cast<size_t>(others));
      chain.ops.rows.resize(static_cast<size_t>(rows));
      chain.ops.row_lengths.resize(static_cast<size_t>(rows));
      break;
    }
    // The chain reads its source and other tensors at its end: no step between its links may
    // read them (it could be their last reader, which releases them, or write over them).
    const auto read_between = [&](int s) {
      for (size_t i = head + 1; i < links.back(); ++i) {
        const auto& r = reads[i];
        if (std::find(links.begin(), links.end(), i) == links.end() && std::find(r.begin(), r.end(), s) != r.end())
          return true;
      }
      return false;
    };
    if (read_between(source) || std::any_of(chain.others.begin(), chain.others.end(), read_between)) continue;
    // A Conv's or MatMul's output that only the chain's links read (SiLU's Sigmoid and Mul both):
    // it may run the chain on its blocks, once the other tensors are there (then a single Relu,
    // or a linear layer's bias, is worth a chain too).
    const int anchor = producer[static_cast<size_t>(source)];
    const std::vector<int>& source_readers = readers_of[static_cast<size_t>(source)];
    const bool epilogue =
        anchor >= 0 && takes_epilogue(anchor) &&
        std::all_of(
            source_readers.begin(), source_readers.end(),
            [&](int r) { return std::find(links.begin(), links.end(), static_cast<size_t>(r)) != links.end(); }) &&
        !kept[static_cast<size_t>(source)] && std::all_of(chain.others.begin(), chain.others.end(), [&](int s) {
          return producer[static_cast<size_t>(s)] < anchor;
        });
    if (links.size() < 2 && !epilogue) continue;
    const int index = static_cast<int>(plan.chains.size());
    if (epilogue) steps[static_cast<size_t>(anchor)].epilogue_chain = index;
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
