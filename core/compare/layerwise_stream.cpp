// SPDX-License-Identifier: Apache-2.0
// compare_layerwise: the reference and the backend under test run side by side (the Streamer),
// each tensor compared as soon as both runs have it.
#include "core/compare/layerwise.h"

#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/common/threads.h"
#include "core/ir/topo.h"

namespace vn {
namespace {

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

// The state shared by the two runs, which run side by side: the reference on the calling thread,
// the backend under test on a thread of its own, each with its share of the cores. Everything
// below is guarded by mu_ except the comparisons themselves and the layers run alone, which work
// on tensors taken out of the shared state.
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
      VN_ASSIGN_OR_RETURN(synthesized, graph_layers(options_.layer_graph ? *options_.layer_graph : test_.model()->graph));
      layers = &synthesized;
    }
    // What the test returns without any layer producing it (its folded constants) is its own
    // memory, held whether or not it is compared.
    test_constants_ = in_test_;
    for (const LayerInfo& info : *layers) {
      for (const std::string& n : info.outputs) test_constants_.erase(n);
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

  // The reference produced `produced` at one node (on the calling thread).
  bool on_reference(const TensorMap& produced) {
    if (abort_.load()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const NamedTensor& t : produced) {
        if (options_.on_tensor && in_ref_.count(t.name)) options_.on_tensor(false, t.name, t.tensor);
        if (paired_.count(t.name)) {
          ++ref_produced_;
          largest_ = std::max(largest_, cost(t.name, t.tensor, false));
          auto it = test_pending_.find(t.name);
          if (it != test_pending_.end()) {
            test_lead_ -= cost(t.name, it->second.tensor, true);
            held_ += cost(t.name, t.tensor, false);
            queue(Pair{t.name, std::move(it->second.tensor), t.tensor, it->second.order});
            test_pending_.erase(it);
          } else {
            ref_pending_[t.name] = t.tensor;
            ref_lead_ += cost(t.name, t.tensor, false);
            held_ += cost(t.name, t.tensor, false);
          }
        }
        if (options_.local_errors) provide_reference_value(t.name, t.tensor);
      }
      note_held();
      cv_.notify_all();
    }
    wait_while_ahead(false);
    return !abort_.load();
  }

  // The backend under test produced `produced` at one layer (on the test's thread).
  bool on_test(const TensorMap& produced) {
    if (abort_.load()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const NamedTensor& t : produced) {
        // The test's folded constants come before its first layer; they are listed after every
        // tensor a layer produced, as the weights they are.
        const size_t order = test_constants_.count(t.name) ? kConstantsOrder + next_order_++ : next_order_++;
        if (options_.on_tensor && in_test_.count(t.name)) options_.on_tensor(true, t.name, t.tensor);
        if (!paired_.count(t.name)) continue;
        ++test_produced_;
        largest_ = std::max(largest_, cost(t.name, t.tensor, true));
        auto it = ref_pending_.find(t.name);
        if (it != ref_pending_.end()) {
          ref_lead_ -= cost(t.name, it->second, false);
          held_ += cost(t.name, t.tensor, true);
          queue(Pair{t.name, t.tensor, std::move(it->second), order});
          ref_pending_.erase(it);
        } else {
          test_pending_[t.name] = Pending{t.tensor, order};
          test_lead_ += cost(t.name, t.tensor, true);
          held_ += cost(t.name, t.tensor, true);
        }
      }
      note_held();
      cv_.notify_all();
    }
    wait_while_ahead(true);
    return !abort_.load();
  }

  Status run(const TensorMap& feeds, int threads) {
    RunOptions ref_run, test_run;
    ref_run.stream = test_run.stream = true;
    ref_run.cancel = test_run.cancel = options_.cancel;
    ref_run.observer = [this](int64_t, const Node&, const TensorMap& produced) { return on_reference(produced); };
    test_run.observer = [this](int64_t, const Node&, const TensorMap& produced) { return on_test(produced); };
    const int ref_threads = std::max(1, (threads + 1) / 2);
    const int test_threads = std::max(1, threads / 2);

    Result<TensorMap> test_result = Status::OK();
    std::thread test_thread;
    try {
      test_thread = std::thread([&] {
        pthread_setname_np(pthread_self(), "vernier-test");
        test_result = run_side(true, feeds, test_run, test_threads);
      });
    } catch (const std::system_error& e) {
      return make_error(StatusCode::kInternal, "cannot start a thread for the layer-wise comparison: {}", e.what());
    }
    const Result<TensorMap> ref_result = run_side(false, feeds, ref_run, ref_threads);
    test_thread.join();

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
      record(compare_pair(Pair{name, t->second, r->second, 0}), next_order_++);
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
  // How many bytes of tensors the side ahead may hold for the other before it waits: enough for
  // the runs to overlap across a few layers, small against the activations of one inference.
  static constexpr size_t kLeadBytes = size_t{2} << 20;

  // The lead a side may hold: kLeadBytes, or two of the largest tensors produced so far when that
  // is more. A lead smaller than one tensor keeps the runs in lockstep, layer by layer, and the
  // one ahead idle while the other computes (ResNet-18's first activations are 3 MiB each).
  size_t lead_limit() const { return std::max(kLeadBytes, 2 * largest_); }
  // Added to the order of the test's folded constants (see on_test).
  static constexpr size_t kConstantsOrder = size_t{1} << 62;

  struct Pending {
    Tensor tensor;
    size_t order = 0;
  };
  struct Held {
    Tensor tensor;
    int readers = 0;  // layers still waiting to be run alone on it
  };
  struct Pair {
    std::string name;
    Tensor test, ref;
    size_t order = 0;  // when the test produced it
  };

  // Runs one side with its share of the threads, then helps until both are done.
  Result<TensorMap> run_side(bool test, const TensorMap& feeds, const RunOptions& run, int threads) {
    ThreadCapScope cap(threads);
    Result<TensorMap> result = (test ? test_ : ref_).run(feeds, run);
    {
      std::lock_guard<std::mutex> lock(mu_);
      (test ? test_done_ : ref_done_) = true;
      if (!result.ok()) abort_.store(true);
      cv_.notify_all();
    }
    help_until_done(test);
    return result;
  }

  // A matched pair waits in the queue for whichever side is not behind (see help). Called with
  // mu_ held.
  void queue(Pair pair) {
    queued_bytes_ += pair_cost(pair);
    queue_.push_back(std::move(pair));
  }

  size_t pair_cost(const Pair& p) const { return cost(p.name, p.test, true) + cost(p.name, p.ref, false); }

  TensorComparison compare_pair(const Pair& p) const {
    TensorComparison c = compare_tensors(p.name, p.test, p.ref, options_.config.tolerance_for(p.name),
                                         options_.config.infinities_compare_equal);
    if (options_.digest) c.digest = std::make_shared<const TensorDigest>(digest_tensors(p.test, p.ref, *options_.digest));
    return c;
  }

  void record(TensorComparison comparison, size_t order) {
    compared_.insert(comparison.name);
    out_.tensors.push_back(std::move(comparison));
    orders_.push_back(order);
  }

  // The work either side may take on besides its run: the test side runs the layers that became
  // ready to run alone (it alone runs the test's layers); a side that is not behind the other (it
  // has produced at least as many compared tensors) compares queued pairs, as does a side behind
  // while the queue holds more than lead_limit() and the other is not waiting. So the side that
  // would otherwise get ahead does the comparing, and the two runs finish close together. Returns
  // whether it did anything; `lock` holds mu_ and is released while the work runs.
  bool help(bool test, std::unique_lock<std::mutex>& lock) {
    // Once stopped, what is left queued stays there (and is not work done, or the callers would
    // loop on it).
    if (abort_.load()) return false;
    if (test && !jobs_.empty()) {
      run_jobs(lock);
      return true;
    }
    if (queue_.empty()) return false;
    const bool done = test ? test_done_ : ref_done_;
    const bool behind = test ? test_produced_ < ref_produced_ : ref_produced_ < test_produced_;
    // A side that is behind compares only to bound the queue, and not while the other side waits
    // with nothing else to do: that one wakes to take the pair. (A ResNet-18 pair of 3 MiB tensors
    // was past the limit at once; the reference, behind, compared every such pair while the
    // engine, ahead, sat waiting: 16 ms of every 88.)
    const bool other_waiting = test ? ref_waiting_ : test_waiting_;
    if (!done && behind && (queued_bytes_ <= lead_limit() || other_waiting)) return false;
    Pair pair = std::move(queue_.front());
    queue_.pop_front();
    const size_t bytes = pair_cost(pair);
    const size_t order = pair.order;
    lock.unlock();
    TensorComparison comparison = compare_pair(pair);
    pair = Pair();  // freed before the lock is taken again
    lock.lock();
    queued_bytes_ -= bytes;
    held_ -= bytes;
    record(std::move(comparison), order);
    return true;
  }

  // Whether a side waits and must: it is still ahead. (A side the other has caught up with may not
  // have woken yet; it is not blocked.)
  bool blocked(bool test) const {
    return test ? test_waiting_ && test_lead_ > lead_limit() : ref_waiting_ && ref_lead_ > lead_limit();
  }

  // Waits while this side holds more than lead_limit() the other has not produced yet, unless the
  // other side is blocked too (so the two never wait for each other), has finished, or the
  // comparison stops; helps (see help) rather than waiting where it can.
  void wait_while_ahead(bool test) {
    std::unique_lock<std::mutex> lock(mu_);
    bool& waiting = test ? test_waiting_ : ref_waiting_;
    for (;;) {
      if (help(test, lock)) continue;
      const size_t lead = test ? test_lead_ : ref_lead_;
      // The test side also moves while it has layers to run alone, even after its run.
      const bool other_moves = test ? !ref_done_ && !blocked(false) : (!test_done_ && !blocked(true)) || !jobs_.empty();
      if (lead <= lead_limit() || !other_moves || abort_.load()) return;
      waiting = true;
      cv_.wait(lock);
      waiting = false;
    }
  }

  // After this side's run: helps until the other side is done and nothing is left to do.
  void help_until_done(bool test) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (help(test, lock)) continue;
      if ((ref_done_ && test_done_) || abort_.load()) return;
      cv_.wait(lock);
    }
  }

  void run_jobs(std::unique_lock<std::mutex>& lock) {
    while (!jobs_.empty() && !abort_.load()) {
      const size_t j = jobs_.front();
      jobs_.pop_front();
      run_alone(j, lock);
    }
  }

  void note_held() { out_.peak_held_bytes = std::max(out_.peak_held_bytes, held_); }

  // What holding `t` costs: nothing when it is a view of the model's own weights (Identity of an
  // initializer, as exporters write for shared weights) or one of the test's folded constants,
  // which the backends hold anyway.
  size_t cost(const std::string& name, const Tensor& t, bool test) const {
    if (model_data_.count(t.raw()) || (test && test_constants_.count(name))) return 0;
    return t.nbytes();
  }

  // Keeps a reference value for the layers that will be run alone on it, and queues those that
  // now have everything. Called with mu_ held.
  void provide_reference_value(const std::string& name, const Tensor& value) {
    auto users = users_.find(name);
    if (users == users_.end() || !seen_reference_.insert(name).second) return;
    Held& h = values_[name];
    h.tensor = value;
    h.readers = static_cast<int>(users->second.size());
    held_ += cost(name, value, false);
    ref_lead_ += cost(name, value, false);
    for (size_t j : users->second) {
      if (--missing_[j] == 0) jobs_.push_back(j);
    }
  }

  // Runs layer j of the test alone on the reference's values; `lock` is released meanwhile.
  void run_alone(size_t j, std::unique_lock<std::mutex>& lock) {
    LayerComparison& lc = out_.layers[j];
    const LayerInfo& info = lc.layer;
    std::vector<Tensor> in_values, out_values;
    for (const std::string& n : info.inputs) in_values.push_back(values_.at(n).tensor);
    for (const std::string& n : info.outputs) out_values.push_back(values_.at(n).tensor);
    lock.unlock();

    std::string skipped;
    Status failed;
    std::vector<TensorComparison> local;
    std::vector<const Tensor*> inputs;
    for (Tensor& t : in_values) {
      const std::string& n = info.inputs[inputs.size()];
      if (t.dtype() == DType::kFloat64) {
        auto declared = declared_.find(n);
        const DType want = declared == declared_.end() ? DType::kFloat32 : declared->second;
        if (want != DType::kFloat64) {
          Result<Tensor> cast = tensor_cast(t, want);
          if (!cast.ok()) {
            skipped = cast.status().message();
            break;
          }
          t = std::move(cast).value();
        }
      }
      inputs.push_back(&t);
    }
    if (skipped.empty()) {
      Result<std::vector<Tensor>> outputs = test_.run_layer_alone(j, inputs);
      if (!outputs.ok()) {
        // The layer ran in the full run, so failing alone is a real error, not a gap to note.
        failed = outputs.status().with_context(fmt::format("running layer '{}' alone", info.name));
      } else {
        for (size_t k = 0; k < info.outputs.size(); ++k) {
          const std::string& n = info.outputs[k];
          local.push_back(compare_tensors(n, (*outputs)[k], out_values[k], options_.config.tolerance_for(n),
                                          options_.config.infinities_compare_equal));
        }
      }
    }
    in_values.clear();
    out_values.clear();

    lock.lock();
    lc.local_skipped = std::move(skipped);
    lc.local = std::move(local);
    cv_.notify_all();  // the values it held are released below: the reference may be waiting on them
    if (!failed.ok() && local_status_.ok()) {
      local_status_ = failed;
      abort_.store(true);
      cv_.notify_all();
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
          held_ -= cost(n, it->second.tensor, false);
          ref_lead_ -= cost(n, it->second.tensor, false);
          values_.erase(it);
        }
      }
    }
  }

  Backend& ref_;
  Backend& test_;
  const LayerwiseOptions& options_;
  LayerwiseComparison& out_;
  const std::unordered_map<std::string, DType> declared_;
  const std::unordered_set<std::string> in_ref_;    // the tensors the reference returns
  const std::unordered_set<std::string> in_test_;   // the tensors the test returns
  std::unordered_set<std::string> test_constants_;  // returned by the test, produced by no layer of it

  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> abort_{false};
  bool ref_done_ = false, test_done_ = false;
  bool ref_waiting_ = false, test_waiting_ = false;
  Status local_status_;

  std::unordered_set<std::string> paired_;
  std::unordered_set<std::string> compared_;
  std::unordered_map<std::string, Tensor> ref_pending_;
  std::unordered_map<std::string, Pending> test_pending_;
  // Bytes each side holds that the other has not produced yet (the reference's include the values
  // it keeps for layers not yet run alone).
  size_t ref_lead_ = 0, test_lead_ = 0;
  size_t ref_produced_ = 0, test_produced_ = 0;  // tensors to compare produced so far, per side
  std::deque<Pair> queue_;                       // matched pairs not yet compared
  size_t queued_bytes_ = 0;
  std::vector<size_t> orders_;  // per out_.tensors entry: when the test produced it
  size_t next_order_ = 0;
  size_t held_ = 0;
  size_t largest_ = 0;  // the largest tensor to compare produced so far, in bytes
  std::unordered_set<const void*> model_data_;  // the data of the model's initializers

  std::unordered_map<std::string, std::vector<size_t>> users_;  // tensor -> layers run alone on it
  std::vector<int> missing_;                                    // per layer: tensors not yet seen
  std::unordered_map<std::string, Held> values_;
  std::unordered_set<std::string> seen_reference_;
  std::deque<size_t> jobs_;  // layers with every value, not yet run alone (by the test's thread)
};

}  // namespace

Result<LayerwiseComparison> compare_layerwise(Backend& ref, Backend& test, const TensorMap& feeds,
                                              const LayerwiseOptions& options) {
  if (!ref.model() || !test.model()) {
    return make_error(StatusCode::kInternal, "layer-wise comparison of a backend that was not prepared");
  }
  LayerwiseComparison result;
  // Two runs and the comparison's records share the heap here; mid-size tensors are mapped so
  // that the tensors freed along the way do not leave it fragmented (see MapSmallTensors).
  const MapSmallTensors map_small;
  Streamer streamer(ref, test, options, result);
  VN_RETURN_IF_ERROR(streamer.prepare_layers(feeds));
  // The runs set this thread's OpenMP and default thread counts to their share; what follows gets
  // them back.
  const int omp_threads = omp_get_max_threads();
  const int threads = default_threads();
  const Status ran = streamer.run(feeds, options.threads > 0 ? options.threads : available_cores());
  omp_set_num_threads(omp_threads);
  set_default_threads(threads);
  VN_RETURN_IF_ERROR(ran);
  streamer.finish();
  rank_culprits(result);
  return result;
}

}  // namespace vn
