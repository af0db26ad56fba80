// SPDX-License-Identifier: Apache-2.0
#include "core/debug/reduce.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/debug/ddmin_bound.h"
#include "core/ir/subgraph.h"
#include "core/ir/topo.h"
#include "core/ref/reference_backend.h"

namespace vn::debug {

std::string_view reduce_mode_name(ReduceMode mode) {
  switch (mode) {
    case ReduceMode::kBisect:
      return "bisect";
    case ReduceMode::kLinear:
      return "linear";
    case ReduceMode::kDdmin:
      return "ddmin";
  }
  return "bisect";
}

std::optional<ReduceMode> reduce_mode_from_name(std::string_view name) {
  if (name == "bisect") return ReduceMode::kBisect;
  if (name == "linear") return ReduceMode::kLinear;
  if (name == "ddmin") return ReduceMode::kDdmin;
  return std::nullopt;
}

namespace {

// The value of a Constant node, or nullopt for the forms kept as nodes (sparse and string values).
std::optional<Tensor> constant_value(const Node& node) {
  for (const Attribute& a : node.attributes) {
    if (a.name == "value" && a.type == AttrType::kTensor) return a.t;
    if (a.name == "value_float") return Tensor::scalar(a.f);
    if (a.name == "value_int") return Tensor::scalar(a.i);
    if (a.name == "value_floats") return Tensor::from_vector<float>({static_cast<int64_t>(a.floats.size())}, a.floats);
    if (a.name == "value_ints") return Tensor::from_vector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints);
  }
  return std::nullopt;
}

// Polygraphy lowers Constant nodes before reducing, so that their outputs are never boundary
// tensors and a candidate never consists of constants alone.
void lower_constants(Graph& graph) {
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (Node& node : graph.nodes) {
    std::optional<Tensor> value;
    if (node.op_type == "Constant" && is_default_domain(node.domain) && node.outputs.size() == 1) {
      value = constant_value(node);
    }
    if (value) {
      graph.initializers.push_back(Initializer{node.outputs[0], *value});
    } else {
      kept.push_back(std::move(node));
    }
  }
  graph.nodes = std::move(kept);
}

// Nodes computed from initializers alone (Identity copies of shared weights, shape arithmetic on
// constants) become initializers holding their reference values, as Polygraphy's constant folding
// does: a candidate then never takes a weight as a runtime input. Random generators are kept.
void fold_constant_nodes(Graph& graph, const TensorMap& values) {
  std::unordered_set<std::string> constant;
  for (const Initializer& i : graph.initializers) constant.insert(i.name);
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (Node& node : graph.nodes) {
    bool foldable = !node.op_type.starts_with("Random") && node.op_type != "Multinomial" &&
                    node.op_type != "Bernoulli" && node_implicit_inputs(node).empty();
    for (const Attribute& a : node.attributes) foldable = foldable && a.type != AttrType::kGraph && a.type != AttrType::kGraphs;
    for (const std::string& in : node.inputs) foldable = foldable && (in.empty() || constant.count(in));
    for (const std::string& out : node.outputs) foldable = foldable && (out.empty() || values.contains(out));
    if (!foldable) {
      kept.push_back(std::move(node));
      continue;
    }
    for (const std::string& out : node.outputs) {
      if (out.empty()) continue;
      graph.initializers.push_back(Initializer{out, *values.find(out)});
      constant.insert(out);
    }
  }
  graph.nodes = std::move(kept);
}

int64_t ceil_log2(int64_t n) {
  int64_t bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  return bits;
}

std::vector<Dim> dims_of(const Shape& shape) {
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim::of(d));
  return dims;
}

}  // namespace

Result<Reducer> Reducer::create(Model model, std::vector<TensorMap> feeds, int threads) {
  VN_RETURN_IF_NOT(!feeds.empty(), StatusCode::kInvalidArgument, "reduce: no feeds to compute reference values");
  Reducer r;
  lower_constants(model.graph);
  VN_RETURN_IF_ERROR(toposort(model.graph));
  r.model_ = std::move(model);

  ref::ReferenceBackend reference;
  PrepareOptions prep;
  prep.mark_all = true;
  prep.num_threads = threads;
  VN_RETURN_IF_ERROR(reference.prepare(r.model_, prep));
  for (const TensorMap& feed : feeds) {
    VN_ASSIGN_OR_RETURN(TensorMap values, reference.run(feed));
    for (const NamedTensor& t : feed) values.set(t.name, t.tensor);
    r.values_.push_back(std::move(values));
  }
  fold_constant_nodes(r.model_.graph, r.values_[0]);

  const Graph& graph = r.model_.graph;
  const GraphIndex index(graph);
  const size_t n = graph.nodes.size();
  r.node_inputs_.resize(n);
  r.node_outputs_.resize(n);
  r.preds_.resize(n);
  for (size_t v = 0; v < n; ++v) {
    const Node& node = graph.nodes[v];
    std::vector<std::string> reads = node.inputs;
    for (std::string& name : node_implicit_inputs(node)) reads.push_back(std::move(name));
    for (const std::string& name : reads) {
      if (name.empty() || index.is_initializer(name)) continue;
      if (std::find(r.node_inputs_[v].begin(), r.node_inputs_[v].end(), name) != r.node_inputs_[v].end()) continue;
      r.node_inputs_[v].push_back(name);
      r.consumers_[name].push_back(static_cast<int64_t>(v));
      const int64_t p = index.producer(name);
      if (p >= 0 && std::find(r.preds_[v].begin(), r.preds_[v].end(), p) == r.preds_[v].end()) {
        r.preds_[v].push_back(p);
      }
    }
    for (const std::string& name : node.outputs) {
      if (name.empty()) continue;
      r.node_outputs_[v].push_back(name);
      r.producer_[name] = static_cast<int64_t>(v);
    }
  }
  return r;
}

ReduceCandidate Reducer::whole() const {
  std::vector<int64_t> all(static_cast<size_t>(node_count()));
  std::iota(all.begin(), all.end(), 0);
  ReduceCandidate c = candidate_of(std::move(all));
  c.outputs.clear();
  for (const ValueInfo& v : model_.graph.outputs) c.outputs.push_back(v.name);
  return c;
}

ReduceCandidate Reducer::candidate_of(std::vector<int64_t> nodes) const {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::vector<char> in(static_cast<size_t>(node_count()), 0);
  for (int64_t v : nodes) in[static_cast<size_t>(v)] = 1;
  std::unordered_set<std::string> produced, read_inside, graph_outputs;
  for (const ValueInfo& v : model_.graph.outputs) graph_outputs.insert(v.name);
  ReduceCandidate c;
  c.nodes = nodes;
  for (int64_t v : nodes) {
    for (const std::string& t : node_outputs_[static_cast<size_t>(v)]) produced.insert(t);
  }
  std::unordered_set<std::string> seen;
  for (int64_t v : nodes) {
    for (const std::string& t : node_inputs_[static_cast<size_t>(v)]) {
      read_inside.insert(t);
      if (!produced.count(t) && seen.insert(t).second) c.inputs.push_back(t);
    }
  }
  for (int64_t v : nodes) {
    for (const std::string& t : node_outputs_[static_cast<size_t>(v)]) {
      bool flows_out = !read_inside.count(t) || graph_outputs.count(t);
      const auto readers = consumers_.find(t);
      if (!flows_out && readers != consumers_.end()) {
        for (int64_t reader : readers->second) flows_out = flows_out || !in[static_cast<size_t>(reader)];
      }
      if (flows_out) c.outputs.push_back(t);
    }
  }
  return c;
}

Result<Model> Reducer::build_model(const ReduceCandidate& candidate) const {
  std::vector<std::string> runtime_inputs;
  std::vector<Initializer> frozen;
  std::unordered_set<std::string> graph_inputs;
  for (const ValueInfo* v : model_.graph.runtime_inputs()) graph_inputs.insert(v->name);
  for (const std::string& name : candidate.inputs) {
    const Tensor* first = values_[0].find(name);
    VN_RETURN_IF_NOT(first != nullptr, StatusCode::kInternal, "reduce: no reference value for '{}'", name);
    bool constant = !dtype_is_float(first->dtype()) && !graph_inputs.count(name);
    for (size_t i = 1; constant && i < values_.size(); ++i) {
      const Tensor* other = values_[i].find(name);
      constant = other && other->same_as(*first);
    }
    if (constant) {
      frozen.push_back(Initializer{name, *first});
    } else {
      runtime_inputs.push_back(name);
    }
  }
  // extract_subgraph reads initializers from the graph it is given, so frozen tensors join a copy
  // of the graph's initializer list as initializers named like the tensors they replace.
  Graph source;
  source.name = model_.graph.name;
  source.nodes.reserve(candidate.nodes.size());
  for (int64_t v : candidate.nodes) source.nodes.push_back(model_.graph.nodes[static_cast<size_t>(v)]);
  source.value_info = model_.graph.value_info;
  source.initializers = model_.graph.initializers;
  for (Initializer& f : frozen) source.initializers.push_back(std::move(f));
  for (const std::string& name : runtime_inputs) source.inputs.push_back(ValueInfo{name, {}, {}, {}});
  VN_ASSIGN_OR_RETURN(Graph graph, extract_subgraph(source, runtime_inputs, candidate.outputs));

  auto type_from_values = [&](ValueInfo& info) {
    const Tensor* first = values_[0].find(info.name);
    if (!first) return;
    info.dtype = first->dtype();
    std::vector<Dim> dims = dims_of(first->shape());
    // A dim that differs between feeds is left symbolic.
    for (size_t i = 1; i < values_.size(); ++i) {
      const Tensor* other = values_[i].find(info.name);
      if (!other || other->shape().size() != dims.size()) continue;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d].known() && other->shape()[d] != dims[d].value) dims[d] = Dim::named(fmt::format("{}_d{}", info.name, d));
      }
    }
    info.shape = std::move(dims);
  };
  for (ValueInfo& v : graph.inputs) type_from_values(v);
  for (ValueInfo& v : graph.outputs) type_from_values(v);
  Model result;
  result.ir_version = model_.ir_version;
  result.opset_imports = model_.opset_imports;
  result.producer_name = "vernier debug reduce";
  result.graph = std::move(graph);
  result.base_dir = model_.base_dir;
  return result;
}

std::vector<TensorMap> Reducer::build_feeds(const ReduceCandidate& candidate) const {
  std::vector<TensorMap> feeds;
  for (const TensorMap& values : values_) {
    TensorMap feed;
    for (const std::string& name : candidate.inputs) {
      if (const Tensor* t = values.find(name)) feed.set(name, *t);
    }
    feeds.push_back(std::move(feed));
  }
  return feeds;
}

std::vector<TensorMap> Reducer::reference_outputs(const ReduceCandidate& candidate) const {
  std::vector<TensorMap> outputs;
  for (const TensorMap& values : values_) {
    TensorMap out;
    for (const std::string& name : candidate.outputs) {
      if (const Tensor* t = values.find(name)) out.set(name, *t);
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

std::string Reducer::describe(const ReduceCandidate& candidate) const {
  std::string nodes;
  constexpr size_t kShown = 8;
  for (size_t i = 0; i < candidate.nodes.size() && i < kShown; ++i) {
    const int64_t v = candidate.nodes[i];
    nodes += fmt::format("{}{} ({})", i ? ", " : "", node_label(model_.graph, v),
                         model_.graph.nodes[static_cast<size_t>(v)].op_type);
  }
  if (candidate.nodes.size() > kShown) nodes += fmt::format(", ... {} more", candidate.nodes.size() - kShown);
  auto join = [](const std::vector<std::string>& names) {
    std::string s;
    for (size_t i = 0; i < names.size() && i < kShown; ++i) s += (i ? ", " : "") + names[i];
    if (names.size() > kShown) s += fmt::format(", ... {} more", names.size() - kShown);
    return s;
  };
  return fmt::format("{} node(s): {} | inputs: {} | outputs: {}", candidate.nodes.size(), nodes, join(candidate.inputs),
                     join(candidate.outputs));
}

namespace {

// The state of one reduction: runs or replays checks, keeps the history and the best results.
class Search {
 public:
  Search(const Reducer& reducer, DebugReplay& replay, const ReduceOracle& check, const ReduceObserver& observe)
      : reducer_(reducer), replay_(replay), check_(check), observe_(observe) {
    progress_.total_nodes = reducer.node_count();
    progress_.nodes_kept = reducer.node_count();
  }

  // Checks `candidate` as iteration `iteration` of `phase`; `left` bounds the checks still to come
  // after this one. An empty candidate cannot fail and costs no check.
  Result<Verdict> test(const ReduceCandidate& candidate, const std::string& phase, int64_t iteration, int64_t left) {
    if (candidate.nodes.empty() || candidate.outputs.empty()) return Verdict::kGood;
    ReduceIteration it;
    it.key = DebugReplay::key(iteration, phase);
    it.phase = phase;
    it.iteration = iteration;
    it.candidate = candidate;
    if (const ReplayEntry* entry = replay_.find(it.key)) {
      it.result.verdict = entry->verdict;
      it.result.reason = entry->reason.empty() ? "from the debug replay" : entry->reason;
      it.replayed = true;
    } else {
      VN_ASSIGN_OR_RETURN(it.result, check_(candidate, it.key));
      ++result_.checks;
      ReplayEntry record;
      record.state = {{"num_nodes", candidate.nodes.size()}};
      record.iteration = iteration;
      record.verdict = it.result.verdict;
      record.reason = it.result.reason;
      replay_.record(it.key, std::move(record));
    }
    if (it.result.verdict == Verdict::kBad &&
        (!result_.failed_any || candidate.nodes.size() < result_.minimal.nodes.size())) {
      result_.minimal = candidate;
      result_.failed_any = true;
    }
    progress_.phase = phase;
    progress_.checks_done = result_.checks;
    progress_.checks_left = left;
    progress_.nodes_kept = result_.failed_any ? static_cast<int64_t>(result_.minimal.nodes.size()) : reducer_.node_count();
    result_.history.push_back(it);
    if (observe_) VN_RETURN_IF_ERROR(observe_(result_.history.back(), progress_));
    return it.result.verdict;
  }

  // The failing candidate with the fewest nodes among the iterations from `first` on.
  std::optional<ReduceCandidate> best_bad_since(size_t first) const {
    std::optional<ReduceCandidate> best;
    for (size_t i = first; i < result_.history.size(); ++i) {
      const ReduceIteration& it = result_.history[i];
      if (it.result.verdict != Verdict::kBad) continue;
      if (!best || it.candidate.nodes.size() < best->nodes.size()) best = it.candidate;
    }
    return best;
  }

  size_t history_size() const { return result_.history.size(); }

  ReduceResult finish(const ReduceCandidate& whole) {
    if (!result_.failed_any) result_.minimal = whole;
    // Polygraphy's --min-good: the largest passing candidate smaller than the minimal failing one,
    // else the smallest passing one larger than it.
    const size_t bad_size = result_.minimal.nodes.size();
    const ReduceCandidate* below = nullptr;
    const ReduceCandidate* above = nullptr;
    for (const ReduceIteration& it : result_.history) {
      if (it.result.verdict != Verdict::kGood) continue;
      const size_t size = it.candidate.nodes.size();
      if (size < bad_size && (!below || size > below->nodes.size())) below = &it.candidate;
      if (size >= bad_size && (!above || size < above->nodes.size())) above = &it.candidate;
    }
    if (below) {
      result_.min_good = *below;
    } else if (above) {
      result_.min_good = *above;
    }
    return std::move(result_);
  }

 private:
  const Reducer& reducer_;
  DebugReplay& replay_;
  const ReduceOracle& check_;
  const ReduceObserver& observe_;
  ReduceResult result_;
  ReduceProgress progress_;
};

}  // namespace

Result<ReduceResult> Reducer::reduce(const ReduceOptions& options, DebugReplay& replay, const ReduceOracle& check,
                                     const ReduceObserver& observe) const {
  Search search(*this, replay, check, observe);
  const ReduceCandidate whole_model = whole();
  const int64_t n = node_count();

  // Node `node` with everything it depends on (within `within`), node k's outputs as the outputs.
  auto prefix = [&](const std::vector<int64_t>& within, int64_t node) {
    std::vector<char> allowed(static_cast<size_t>(n), 0), keep(static_cast<size_t>(n), 0);
    for (int64_t v : within) allowed[static_cast<size_t>(v)] = 1;
    std::vector<int64_t> stack{node}, nodes;
    keep[static_cast<size_t>(node)] = 1;
    while (!stack.empty()) {
      const int64_t v = stack.back();
      stack.pop_back();
      nodes.push_back(v);
      for (int64_t p : preds_[static_cast<size_t>(v)]) {
        if (allowed[static_cast<size_t>(p)] && !keep[static_cast<size_t>(p)]) {
          keep[static_cast<size_t>(p)] = 1;
          stack.push_back(p);
        }
      }
    }
    ReduceCandidate c = candidate_of(std::move(nodes));
    c.outputs = node_outputs_[static_cast<size_t>(node)];
    return c;
  };
  // Polygraphy's inputs phase: node k's runtime inputs become the inputs of `base`; what does not
  // depend on them is cut off (Polygraphy freezes and folds it; here it becomes inputs fed with
  // reference values).
  auto suffix = [&](const ReduceCandidate& base, int64_t node) {
    std::vector<char> in_base(static_cast<size_t>(n), 0), reached(static_cast<size_t>(n), 0);
    for (int64_t v : base.nodes) in_base[static_cast<size_t>(v)] = 1;
    const std::vector<std::string>& stop = node_inputs_[static_cast<size_t>(node)];
    auto is_stop = [&](const std::string& t) { return std::find(stop.begin(), stop.end(), t) != stop.end(); };
    // What the outputs need when the walk back stops at node k's inputs.
    std::vector<int64_t> stack;
    auto reach = [&](const std::string& t) {
      const auto it = producer_.find(t);
      if (it == producer_.end() || !in_base[static_cast<size_t>(it->second)]) return;
      if (!reached[static_cast<size_t>(it->second)]) {
        reached[static_cast<size_t>(it->second)] = 1;
        stack.push_back(it->second);
      }
    };
    for (const std::string& t : base.outputs) reach(t);
    while (!stack.empty()) {
      const int64_t v = stack.back();
      stack.pop_back();
      for (const std::string& t : node_inputs_[static_cast<size_t>(v)]) {
        if (!is_stop(t)) reach(t);
      }
    }
    // Of that, what depends on the new inputs; the rest would be constant.
    std::vector<char> depends(static_cast<size_t>(n), 0);
    std::vector<int64_t> nodes;
    for (int64_t v : base.nodes) {  // ascending = topological
      if (!reached[static_cast<size_t>(v)]) continue;
      bool dep = false;
      for (const std::string& t : node_inputs_[static_cast<size_t>(v)]) {
        if (is_stop(t)) dep = true;
      }
      for (int64_t p : preds_[static_cast<size_t>(v)]) {
        if (depends[static_cast<size_t>(p)]) dep = true;
      }
      depends[static_cast<size_t>(v)] = dep ? 1 : 0;
      if (dep) nodes.push_back(v);
    }
    ReduceCandidate c = candidate_of(std::move(nodes));
    std::unordered_set<std::string> produced;
    for (int64_t v : c.nodes) {
      for (const std::string& t : node_outputs_[static_cast<size_t>(v)]) produced.insert(t);
    }
    c.outputs.clear();
    for (const std::string& t : base.outputs) {
      if (produced.count(t)) c.outputs.push_back(t);
    }
    return c;
  };

  if (options.mode == ReduceMode::kDdmin) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto range = [&](int64_t a, int64_t b) {
      return candidate_of(std::vector<int64_t>(order.begin() + a, order.begin() + b + 1));
    };
    int64_t iteration = 0;
    const DdminBound stage3(n);  // the checks still to come: this stage's and the later ones' worst cases
    // 1. The last node the failure needs: the whole model is taken to fail, the empty prefix to pass.
    int64_t lo = -1, hi = n - 1;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      const int64_t left = stage3.after(ceil_log2(hi - lo) + ceil_log2(hi), hi + 1);
      VN_ASSIGN_OR_RETURN(Verdict v, search.test(range(0, mid), "ddmin", iteration++, left));
      (v == Verdict::kBad ? hi : lo) = mid;
    }
    const int64_t last = hi;
    // 2. The first node it needs. [0, last-1] passes and [0, last] fails, so the failure shows in
    //    node `last`'s outputs and only `last` and its ancestors matter. A fault in one node ends
    //    here: `last` alone fails. Otherwise the start of the range is searched among the ancestors.
    std::vector<int64_t> current;
    const int64_t alone_left = stage3.after(ceil_log2(last), last + 1);
    VN_ASSIGN_OR_RETURN(Verdict alone, search.test(range(last, last), "ddmin", iteration++, alone_left));
    if (alone == Verdict::kBad) {
      current = {last};
    } else {
      std::vector<int64_t> ancestors = prefix(order, last).nodes;  // sorted, ends with `last`
      int64_t first = 0, known_good = static_cast<int64_t>(ancestors.size()) - 1;
      while (known_good - first > 1) {
        const int64_t mid = first + (known_good - first) / 2;
        const int64_t left =
            stage3.after(ceil_log2(known_good - first) - 1, last - ancestors[static_cast<size_t>(first)] + 1);
        VN_ASSIGN_OR_RETURN(Verdict v, search.test(range(ancestors[static_cast<size_t>(mid)], last), "ddmin",
                                                   iteration++, left));
        (v == Verdict::kBad ? first : known_good) = mid;
      }
      current.assign(order.begin() + ancestors[static_cast<size_t>(first)], order.begin() + last + 1);
    }
    // 3. Delta debugging over what the range holds besides the failure (interleaved branches, nodes
    //    between the members of a fused pattern): remove chunks whose complement still fails,
    //    never splitting the candidate into more connected pieces than it has.
    auto components = [&](const std::vector<int64_t>& nodes) {
      std::unordered_map<int64_t, int64_t> parent;
      for (int64_t v : nodes) parent[v] = v;
      std::function<int64_t(int64_t)> root = [&](int64_t v) { return parent[v] == v ? v : parent[v] = root(parent[v]); };
      int64_t count = static_cast<int64_t>(nodes.size());
      for (int64_t v : nodes) {
        for (int64_t p : preds_[static_cast<size_t>(v)]) {
          if (!parent.count(p)) continue;
          const int64_t a = root(v), b = root(p);
          if (a != b) {
            parent[a] = b;
            --count;
          }
        }
      }
      return count;
    };
    int64_t granularity = 2;
    while (current.size() >= 2) {
      const int64_t size = static_cast<int64_t>(current.size());
      granularity = std::min(granularity, size);
      const int64_t pieces = components(current);
      bool removed = false;
      for (int64_t chunk = 0; chunk < granularity && !removed; ++chunk) {
        const int64_t begin = chunk * size / granularity, end = (chunk + 1) * size / granularity;
        std::vector<int64_t> rest(current.begin(), current.begin() + begin);
        rest.insert(rest.end(), current.begin() + end, current.end());
        if (rest.empty() || components(rest) > pieces) continue;
        const int64_t left = stage3.after(-(chunk + 1), size, granularity);
        VN_ASSIGN_OR_RETURN(Verdict v, search.test(candidate_of(rest), "ddmin", iteration++, left));
        if (v == Verdict::kBad) {
          current = std::move(rest);
          granularity = std::max<int64_t>(granularity - 1, 2);
          removed = true;
        }
      }
      if (!removed) {
        if (granularity >= size) break;
        granularity = std::min(granularity * 2, size);
      }
    }
    return search.finish(whole_model);
  }

  // Polygraphy's outputs phase keeps what marker k depends on and compares node k's outputs only;
  // a marker on a parallel branch after the faulty node then passes and misleads the bisection.
  // Here candidate k keeps every node up to marker k and compares every tensor leaving it, so it
  // fails exactly when the faulty node is among them, whatever the branches.
  auto upto = [&](const std::vector<int64_t>& within, int64_t node) {
    std::vector<int64_t> nodes;
    for (int64_t v : within) {
      if (v <= node) nodes.push_back(v);
    }
    return candidate_of(std::move(nodes));
  };
  // Bisect and linear: the outputs phase, then the inputs phase on its result. Markers are the
  // nodes with a floating-point output: a node computing only integers (shape arithmetic) cannot
  // show a numeric failure, and taking it as a marker breaks bisection's assumption that failure
  // grows with the marker.
  auto markers_of = [&](const std::vector<int64_t>& nodes) {
    std::vector<int64_t> markers;
    for (int64_t v : nodes) {
      for (const std::string& t : node_outputs_[static_cast<size_t>(v)]) {
        const Tensor* value = values_[0].find(t);
        if (value && dtype_is_float(value->dtype())) {
          markers.push_back(v);
          break;
        }
      }
    }
    return markers;
  };
  ReduceCandidate base = whole_model;
  const bool linear = options.mode == ReduceMode::kLinear;
  if (options.reduce_outputs && markers_of(base.nodes).size() > 1) {
    const std::vector<int64_t> markers = markers_of(base.nodes);
    const int64_t count = static_cast<int64_t>(markers.size());
    int64_t first_bad = count;  // the whole model
    if (linear) {
      for (int64_t k = count - 1; k >= 0; --k) {
        VN_ASSIGN_OR_RETURN(Verdict v, search.test(upto(base.nodes, markers[static_cast<size_t>(k)]), "outputs",
                                                   count - 1 - k, k + count));
        if (v == Verdict::kBad) first_bad = k;
      }
    } else {
      int64_t good = 0, k = count / 2, iteration = 0;
      while (first_bad - good > 1) {
        const int64_t left = ceil_log2(first_bad - good) - 1 + ceil_log2(count);
        VN_ASSIGN_OR_RETURN(Verdict v, search.test(upto(base.nodes, markers[static_cast<size_t>(k)]), "outputs",
                                                   iteration++, left));
        if (v == Verdict::kBad) {
          first_bad = k;
          k = (good + first_bad) / 2;
        } else {
          good = k;
          k = (good + first_bad + 1) / 2;
        }
      }
    }
    // Everything up to marker k-1 passes and up to marker k fails, so the failure shows in marker
    // k's outputs: the inputs phase works on marker k and what it depends on, with k's outputs.
    if (first_bad < count) base = prefix(base.nodes, markers[static_cast<size_t>(first_bad)]);
  }
  if (options.reduce_inputs && base.nodes.size() > 1 && markers_of(base.nodes).size() > 1) {
    const size_t first = search.history_size();
    const std::vector<int64_t> markers = markers_of(base.nodes);
    const int64_t count = static_cast<int64_t>(markers.size());
    if (linear) {
      for (int64_t k = 0; k < count; ++k) {
        VN_RETURN_IF_ERROR(
            search.test(suffix(base, markers[static_cast<size_t>(k)]), "inputs", k, count - 1 - k).status());
      }
    } else {
      // Inverted markers: the whole of `base` is taken to fail, the empty suffix to pass.
      int64_t bad = 0, good = count, k = count / 2, iteration = 0;
      while (good - bad > 1) {
        const int64_t left = ceil_log2(good - bad) - 1;
        VN_ASSIGN_OR_RETURN(Verdict v,
                            search.test(suffix(base, markers[static_cast<size_t>(k)]), "inputs", iteration++, left));
        if (v == Verdict::kBad) {
          bad = k;
          k = (good + bad + 1) / 2;
        } else {
          good = k;
          k = (good + bad) / 2;
        }
      }
    }
    if (std::optional<ReduceCandidate> best = search.best_bad_since(first)) base = std::move(*best);
  }
  return search.finish(whole_model);
}

}  // namespace vn::debug
