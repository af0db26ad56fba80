// SPDX-License-Identifier: Apache-2.0
#include "core/compare/layerwise.h"

#include <sys/mman.h>
#include <ucontext.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/topo.h"

namespace vn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// How much of tolerance `tol` an error of `needed` takes: 0 for none, +inf when `tol` is 0.
double ratio(double needed, double tol) {
  if (needed <= 0) return 0;
  return tol > 0 ? needed / tol : kInf;
}

bool adds_nonfinite(const TensorComparison& c) { return c.nan_test + c.inf_test > c.nan_ref + c.inf_ref; }

// Two runs taking turns on one OS thread: the backend under test runs as a coroutine with its own
// stack, and each side switches to the other from inside its observer. One thread means one
// OpenMP team, so neither run's workers spin on the cores while the other computes (two threads
// handing off would leave the idle team's spinning workers competing with the active one), and
// neither run can race ahead holding tensors the other has not produced yet.
class Turns {
 public:
  explicit Turns(std::function<void()> test_body) : body_(std::move(test_body)) {}
  ~Turns() {
    if (stack_) munmap(stack_, kStackBytes);
  }

  /// Called by the reference side: lets the test side run until it yields or finishes.
  Status to_test() {
    if (test_done_) return Status::OK();
    if (!stack_) VN_RETURN_IF_ERROR(start());
    switch_to(main_, test_, stack_, kStackBytes);
    return Status::OK();
  }
  /// Called by the test side: back to the reference side, unless it has finished.
  void to_reference() {
    if (ref_done_) return;
    switch_to(test_, main_, main_stack_bottom_, main_stack_size_);
  }
  /// The reference side has finished: the test side runs to its end.
  Status finish_reference() {
    ref_done_ = true;
    while (!test_done_) VN_RETURN_IF_ERROR(to_test());
    return Status::OK();
  }

 private:
  static constexpr size_t kStackBytes = size_t{64} << 20;  // reserved, committed only as touched

  Status start() {
    stack_ = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                  -1, 0);
    if (stack_ == MAP_FAILED) {
      stack_ = nullptr;
      return make_error(StatusCode::kInternal, "cannot map a stack for the layer-wise run");
    }
    // A guard page at the low end turns an overflow into a crash rather than corruption.
    mprotect(stack_, 4096, PROT_NONE);
    getcontext(&test_);
    test_.uc_stack.ss_sp = stack_;
    test_.uc_stack.ss_size = kStackBytes;
    test_.uc_link = &main_;
    const auto self = reinterpret_cast<uintptr_t>(this);
    makecontext(&test_, reinterpret_cast<void (*)()>(&Turns::entry), 2, static_cast<unsigned>(self >> 32),
                static_cast<unsigned>(self & 0xffffffffu));
    return Status::OK();
  }

  static void entry(unsigned hi, unsigned lo) {
    auto* self = reinterpret_cast<Turns*>((static_cast<uintptr_t>(hi) << 32) | lo);
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(nullptr, &self->main_stack_bottom_, &self->main_stack_size_);
#endif
    self->body_();
    self->test_done_ = true;
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_start_switch_fiber(nullptr, self->main_stack_bottom_, self->main_stack_size_);
#endif
    // Returning resumes uc_link, the reference side.
  }

  void switch_to(ucontext_t& from, ucontext_t& to, const void* to_stack, size_t to_size) {
#if defined(__SANITIZE_ADDRESS__)
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, to_stack, to_size);
    swapcontext(&from, &to);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    (void)to_stack;
    (void)to_size;
    swapcontext(&from, &to);
#endif
  }

  std::function<void()> body_;
  ucontext_t main_{}, test_{};
  void* stack_ = nullptr;
  const void* main_stack_bottom_ = nullptr;
  size_t main_stack_size_ = 0;
  bool ref_done_ = false;
  bool test_done_ = false;
};

// The declared dtype of every tensor of `graph` that declares one.
std::unordered_map<std::string, DType> declared_dtypes(const Graph& graph) {
  std::unordered_map<std::string, DType> declared;
  for (const auto* list : {&graph.inputs, &graph.outputs, &graph.value_info}) {
    for (const ValueInfo& v : *list) {
      if (v.dtype) declared.emplace(v.name, *v.dtype);
    }
  }
  return declared;
}

// The state shared by the two runs. Only the side holding the baton touches it.
class Streamer {
 public:
  Streamer(Backend& ref, Backend& test, const LayerwiseOptions& options, LayerwiseComparison& out)
      : ref_(ref),
        test_(test),
        options_(options),
        out_(out),
        declared_(declared_dtypes(ref.model()->graph)),
        in_ref_(ref.output_names().begin(), ref.output_names().end()),
        in_test_(test.output_names().begin(), test.output_names().end()) {
    for (const Initializer& init : ref.model()->graph.initializers) model_data_.insert(init.tensor.raw());
    for (const std::string& n : test.output_names()) {
      if (in_ref_.count(n)) {
        paired_.insert(n);
      } else {
        out_.only_in_test.push_back(n);
      }
    }
    for (const std::string& n : ref.output_names()) {
      if (!in_test_.count(n)) out_.only_in_ref.push_back(n);
    }
  }

  Status prepare_layers(const TensorMap& feeds) {
    const std::vector<LayerInfo>* layers = test_.layers();
    std::vector<LayerInfo> synthesized;
    if (!layers) {
      if (options_.local_errors) {
        return make_error(StatusCode::kInvalidArgument,
                          "local errors need a backend under test that runs layers alone (--engine); the {} "
                          "backend cannot",
                          test_.name());
      }
      VN_ASSIGN_OR_RETURN(synthesized, graph_layers(test_.model()->graph));
      layers = &synthesized;
    }
    for (const LayerInfo& info : *layers) {
      LayerComparison lc;
      lc.layer = info;
      out_.layers.push_back(std::move(lc));
    }
    if (!options_.local_errors) return Status::OK();

    missing_.assign(out_.layers.size(), 0);
    for (size_t j = 0; j < out_.layers.size(); ++j) {
      std::unordered_set<std::string> names;
      const LayerInfo& info = out_.layers[j].layer;
      for (const auto* list : {&info.inputs, &info.outputs}) {
        for (const std::string& n : *list) {
          if (!n.empty() && names.insert(n).second) {
            users_[n].push_back(j);
            ++missing_[j];
          }
        }
      }
    }
    // Graph inputs are the reference's values from the start.
    for (const NamedTensor& f : feeds) provide_reference_value(f.name, f.tensor);
    return Status::OK();
  }

  // The reference produced `produced` at one node.
  bool on_reference(const TensorMap& produced) {
    if (abort_.load()) return false;
    for (const NamedTensor& t : produced) {
      if (options_.on_tensor && in_ref_.count(t.name)) options_.on_tensor(false, t.name, t.tensor);
      if (paired_.count(t.name)) {
        auto it = test_pending_.find(t.name);
        if (it != test_pending_.end()) {
          record(t.name, it->second.tensor, t.tensor, it->second.order);
          held_ -= held_bytes(it->second.tensor);
          test_pending_.erase(it);
        } else {
          ref_pending_[t.name] = t.tensor;
          held_ += held_bytes(t.tensor);
        }
      }
      if (options_.local_errors) provide_reference_value(t.name, t.tensor);
      if (!local_status_.ok()) return false;
    }
    note_held();
    if (!ref_pending_.empty()) {
      if (Status st = turns_->to_test(); !st.ok()) {
        local_status_ = st;
        return false;
      }
    }
    return !abort_.load();
  }

  // The backend under test produced `produced` at one layer.
  bool on_test(const TensorMap& produced) {
    if (abort_.load()) return false;
    for (const NamedTensor& t : produced) {
      const size_t order = next_order_++;
      if (options_.on_tensor && in_test_.count(t.name)) options_.on_tensor(true, t.name, t.tensor);
      if (!paired_.count(t.name)) continue;
      auto it = ref_pending_.find(t.name);
      if (it != ref_pending_.end()) {
        record(t.name, t.tensor, it->second, order);
        held_ -= held_bytes(it->second);
        ref_pending_.erase(it);
      } else {
        test_pending_[t.name] = Pending{t.tensor, order};
        held_ += held_bytes(t.tensor);
      }
    }
    note_held();
    if (!test_pending_.empty()) turns_->to_reference();
    return !abort_.load();
  }

  Status run(const TensorMap& feeds) {
    RunOptions ref_run, test_run;
    ref_run.stream = test_run.stream = true;
    ref_run.cancel = test_run.cancel = options_.cancel;
    ref_run.observer = [this](int64_t, const Node&, const TensorMap& produced) { return on_reference(produced); };
    test_run.observer = [this](int64_t, const Node&, const TensorMap& produced) { return on_test(produced); };

    Result<TensorMap> test_result = Status::OK();
    Turns turns([&] {
      test_result = test_.run(feeds, test_run);
      if (!test_result.ok()) abort_.store(true);
    });
    turns_ = &turns;
    Result<TensorMap> ref_result = ref_.run(feeds, ref_run);
    if (!ref_result.ok()) abort_.store(true);
    Status finished = turns.finish_reference();
    turns_ = nullptr;
    if (!finished.ok()) return finished;

    // A local run's error is what stopped the reference; otherwise the first real failure wins
    // over the cancellation it caused on the other side.
    if (!local_status_.ok()) return local_status_;
    const bool ref_cancelled = !ref_result.ok() && ref_result.status().code() == StatusCode::kCancelled;
    if (!ref_result.ok() && !(ref_cancelled && !test_result.ok())) return ref_result.status().with_context(ref_.name());
    if (!test_result.ok()) return test_result.status().with_context(test_.name());

    // What was never reported to the observers: tensors returned at the end (constants) and
    // those still pending on one side.
    std::unordered_map<std::string, Tensor> ref_left, test_left;
    for (const NamedTensor& t : *ref_result) {
      ref_left[t.name] = t.tensor;
      if (options_.on_tensor) options_.on_tensor(false, t.name, t.tensor);
    }
    for (const NamedTensor& t : *test_result) {
      test_left[t.name] = t.tensor;
      if (options_.on_tensor) options_.on_tensor(true, t.name, t.tensor);
    }
    for (auto& [name, t] : ref_pending_) ref_left[name] = t;
    for (auto& [name, p] : test_pending_) test_left[name] = p.tensor;
    for (const std::string& name : test_.output_names()) {
      if (!paired_.count(name) || compared_.count(name)) continue;
      auto r = ref_left.find(name);
      auto t = test_left.find(name);
      if (r == ref_left.end() || t == test_left.end()) {
        out_.not_produced.push_back(name);
        continue;
      }
      record(name, t->second, r->second, next_order_++);
    }
    ref_pending_.clear();
    test_pending_.clear();
    if (options_.local_errors) {
      for (size_t j = 0; j < out_.layers.size(); ++j) {
        if (missing_[j] == 0 || !out_.layers[j].local_skipped.empty()) continue;
        std::string absent;
        for (const auto* list : {&out_.layers[j].layer.inputs, &out_.layers[j].layer.outputs}) {
          for (const std::string& n : *list) {
            if (absent.empty() && !n.empty() && !seen_reference_.count(n)) absent = n;
          }
        }
        out_.layers[j].local_skipped = fmt::format("the reference never produced '{}'", absent);
      }
    }
    out_.local_errors = options_.local_errors;
    return Status::OK();
  }

 private:
  struct Pending {
    Tensor tensor;
    size_t order = 0;
  };
  struct Held {
    Tensor tensor;
    int readers = 0;  // layers still waiting to be run alone on it
  };

  void record(const std::string& name, const Tensor& test, const Tensor& ref, size_t order) {
    out_.tensors.push_back(
        compare_tensors(name, test, ref, options_.config.tolerance_for(name), options_.config.infinities_compare_equal));
    orders_.push_back(order);
    compared_.insert(name);
  }

  void note_held() { out_.peak_held_bytes = std::max(out_.peak_held_bytes, held_); }

  // What holding `t` costs: nothing when it is a view of the model's own weights (Identity of an
  // initializer, as exporters write for shared weights; the reference reports it as produced,
  // while an engine folds it and returns it only at the end).
  size_t held_bytes(const Tensor& t) const { return model_data_.count(t.raw()) ? 0 : t.nbytes(); }

  // Keeps a reference value for the layers that will be run alone on it, and runs those that now
  // have everything.
  void provide_reference_value(const std::string& name, const Tensor& value) {
    auto users = users_.find(name);
    if (users == users_.end() || !seen_reference_.insert(name).second) return;
    Held& h = values_[name];
    h.tensor = value;
    h.readers = static_cast<int>(users->second.size());
    held_ += held_bytes(value);
    for (size_t j : users->second) {
      if (--missing_[j] == 0) run_alone(j);
    }
  }

  void run_alone(size_t j) {
    LayerComparison& lc = out_.layers[j];
    const LayerInfo& info = lc.layer;
    std::vector<Tensor> narrowed;
    narrowed.reserve(info.inputs.size());
    std::vector<const Tensor*> inputs;
    for (const std::string& n : info.inputs) {
      const Tensor* t = &values_.at(n).tensor;
      if (t->dtype() == DType::kFloat64) {
        auto declared = declared_.find(n);
        const DType want = declared == declared_.end() ? DType::kFloat32 : declared->second;
        if (want != DType::kFloat64) {
          Result<Tensor> cast = tensor_cast(*t, want);
          if (!cast.ok()) {
            lc.local_skipped = cast.status().message();
            release(info);
            return;
          }
          narrowed.push_back(std::move(cast).value());
          t = &narrowed.back();
        }
      }
      inputs.push_back(t);
    }
    Result<std::vector<Tensor>> outputs = test_.run_layer_alone(j, inputs);
    if (!outputs.ok()) {
      // The layer ran in the full run, so failing alone is a real error, not a gap to note.
      local_status_ = outputs.status().with_context(fmt::format("running layer '{}' alone", info.name));
      abort_.store(true);
      release(info);
      return;
    }
    for (size_t k = 0; k < info.outputs.size(); ++k) {
      const std::string& n = info.outputs[k];
      lc.local.push_back(compare_tensors(n, (*outputs)[k], values_.at(n).tensor, options_.config.tolerance_for(n),
                                         options_.config.infinities_compare_equal));
    }
    release(info);
  }

  void release(const LayerInfo& info) {
    std::unordered_set<std::string> names;
    for (const auto* list : {&info.inputs, &info.outputs}) {
      for (const std::string& n : *list) {
        if (n.empty() || !names.insert(n).second) continue;
        auto it = values_.find(n);
        if (it != values_.end() && --it->second.readers == 0) {
          held_ -= held_bytes(it->second.tensor);
          values_.erase(it);
        }
      }
    }
  }

 public:
  // Sorts the comparisons into the order the test produced the tensors.
  void finish() {
    std::vector<size_t> idx(out_.tensors.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return orders_[a] < orders_[b]; });
    std::vector<TensorComparison> sorted;
    sorted.reserve(idx.size());
    for (size_t i : idx) sorted.push_back(std::move(out_.tensors[i]));
    out_.tensors = std::move(sorted);
  }

 private:
  Backend& ref_;
  Backend& test_;
  const LayerwiseOptions& options_;
  LayerwiseComparison& out_;
  const std::unordered_map<std::string, DType> declared_;
  const std::unordered_set<std::string> in_ref_;   // the tensors the reference returns
  const std::unordered_set<std::string> in_test_;  // the tensors the test returns
  Turns* turns_ = nullptr;
  std::atomic<bool> abort_{false};
  Status local_status_;

  std::unordered_set<std::string> paired_;
  std::unordered_set<std::string> compared_;
  std::unordered_map<std::string, Tensor> ref_pending_;
  std::unordered_map<std::string, Pending> test_pending_;
  std::vector<size_t> orders_;  // per out_.tensors entry: when the test produced it
  size_t next_order_ = 0;
  size_t held_ = 0;
  std::unordered_set<const void*> model_data_;  // the data of the model's initializers

  std::unordered_map<std::string, std::vector<size_t>> users_;  // tensor -> layers run alone on it
  std::vector<int> missing_;                                    // per layer: tensors not yet seen
  std::unordered_map<std::string, Held> values_;
  std::unordered_set<std::string> seen_reference_;
};

}  // namespace

double tolerance_excess(const TensorComparison& c) {
  if (!c.mismatch.empty()) return kInf;
  const double excess = std::min(ratio(c.min_atol, c.tolerance.atol), ratio(c.min_rtol, c.tolerance.rtol));
  // A failed string comparison carries no error magnitudes: just past the tolerance.
  return c.passed ? excess : std::max(excess, std::nextafter(1.0, kInf));
}

bool LayerwiseComparison::passed() const {
  return !tensors.empty() &&
         std::all_of(tensors.begin(), tensors.end(), [](const TensorComparison& c) { return c.passed; });
}

std::vector<size_t> LayerwiseComparison::ranking() const {
  std::vector<size_t> ranked;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].rank > 0) ranked.push_back(i);
  }
  std::sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) { return layers[a].rank < layers[b].rank; });
  return ranked;
}

Result<std::vector<LayerInfo>> graph_layers(const Graph& graph) {
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(graph));
  GraphIndex index(graph);
  std::vector<LayerInfo> layers;
  for (int64_t i : order) {
    const Node& n = graph.nodes[static_cast<size_t>(i)];
    if (n.op_type == "Constant" && is_default_domain(n.domain)) continue;
    LayerInfo info{node_label(graph, i), n.op_type, i, {}, {}};
    for (const std::string& in : n.inputs) {
      if (!in.empty() && !index.is_initializer(in) &&
          std::find(info.inputs.begin(), info.inputs.end(), in) == info.inputs.end()) {
        info.inputs.push_back(in);
      }
    }
    for (const std::string& out : n.outputs) {
      if (!out.empty()) info.outputs.push_back(out);
    }
    layers.push_back(std::move(info));
  }
  return layers;
}

void rank_culprits(LayerwiseComparison& result) {
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < result.tensors.size(); ++i) by_name.emplace(result.tensors[i].name, i);
  result.first_culprit.reset();
  result.first_nonfinite.reset();

  for (size_t j = 0; j < result.layers.size(); ++j) {
    LayerComparison& lc = result.layers[j];
    lc.accumulated.assign(lc.layer.outputs.size(), -1);
    lc.accumulated_excess = 0;
    lc.input_excess = 0;
    lc.inputs_within = true;
    lc.nonfinite = false;
    bool accumulated_failed = false;
    for (size_t k = 0; k < lc.layer.outputs.size(); ++k) {
      auto it = by_name.find(lc.layer.outputs[k]);
      if (it == by_name.end()) continue;
      const TensorComparison& c = result.tensors[it->second];
      lc.accumulated[k] = static_cast<int>(it->second);
      lc.accumulated_excess = std::max(lc.accumulated_excess, tolerance_excess(c));
      accumulated_failed = accumulated_failed || !c.passed;
      lc.nonfinite = lc.nonfinite || adds_nonfinite(c);
    }
    for (const std::string& in : lc.layer.inputs) {
      auto it = by_name.find(in);
      if (it == by_name.end()) continue;
      const TensorComparison& c = result.tensors[it->second];
      lc.input_excess = std::max(lc.input_excess, tolerance_excess(c));
      lc.inputs_within = lc.inputs_within && c.passed;
      // NaN/Inf arriving from upstream is not this layer's doing.
      if (adds_nonfinite(c)) lc.nonfinite = false;
    }
    bool local_failed = false, local_nonfinite = false;
    lc.local_excess = lc.local.empty() ? -1 : 0;
    for (const TensorComparison& c : lc.local) {
      lc.local_excess = std::max(lc.local_excess, tolerance_excess(c));
      local_failed = local_failed || !c.passed;
      local_nonfinite = local_nonfinite || adds_nonfinite(c);
    }
    if (!lc.local.empty()) {
      lc.score = lc.local_excess;
      lc.introduces = local_failed && lc.inputs_within;
      lc.nonfinite = lc.nonfinite || local_nonfinite;
    } else {
      lc.score = lc.accumulated_excess / std::max(1.0, lc.input_excess);
      lc.introduces = accumulated_failed && lc.inputs_within;
    }
    if (lc.introduces && !result.first_culprit) result.first_culprit = j;
    if (lc.nonfinite && !result.first_nonfinite) result.first_nonfinite = j;
  }

  // Layers that introduce an error come first, then by score; execution order breaks ties so the
  // earliest of equally bad layers leads.
  std::vector<size_t> order;
  for (size_t j = 0; j < result.layers.size(); ++j) {
    result.layers[j].rank = 0;
    if (result.layers[j].score > 0 || result.layers[j].introduces) order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const LayerComparison& x = result.layers[a];
    const LayerComparison& y = result.layers[b];
    if (x.introduces != y.introduces) return x.introduces;
    return x.score > y.score;
  });
  for (size_t r = 0; r < order.size(); ++r) result.layers[order[r]].rank = static_cast<int>(r + 1);
}

Result<LayerwiseComparison> compare_layerwise(Backend& ref, Backend& test, const TensorMap& feeds,
                                              const LayerwiseOptions& options) {
  if (!ref.model() || !test.model()) {
    return make_error(StatusCode::kInternal, "layer-wise comparison of a backend that was not prepared");
  }
  LayerwiseComparison result;
  Streamer streamer(ref, test, options, result);
  VN_RETURN_IF_ERROR(streamer.prepare_layers(feeds));
  VN_RETURN_IF_ERROR(streamer.run(feeds));
  streamer.finish();
  rank_culprits(result);
  return result;
}

Result<LayerwiseComparison> compare_layerwise_results(const TensorMap& test, const TensorMap& ref, const Graph& graph,
                                                      const CompareConfig& config) {
  LayerwiseComparison result;
  VN_ASSIGN_OR_RETURN(std::vector<LayerInfo> layers, graph_layers(graph));
  const ResultsComparison plain = compare_results(test, ref, config);
  result.tensors = plain.tensors;
  result.only_in_test = plain.only_in_test;
  result.only_in_ref = plain.only_in_ref;
  for (LayerInfo& info : layers) {
    LayerComparison lc;
    lc.layer = std::move(info);
    result.layers.push_back(std::move(lc));
  }
  rank_culprits(result);
  return result;
}

}  // namespace vn
