// SPDX-License-Identifier: Apache-2.0
// The `reference` tactic: a layer's nodes run one by one through the reference kernels, with
// float32 weights rounded to the layer's storage format. It runs generic layers, and any fused
// layer whose tensors are not float32.
#include <algorithm>
#include <unordered_map>

#include "core/engine/kernels/kernels.h"
#include "core/ops/kernel_context.h"

namespace vn::engine::kernels {
namespace {

/// Where a node input comes from.
struct Source {
  enum class Kind { kNone, kInput, kConstant, kInternal } kind = Kind::kNone;
  int index = -1;
};

struct Step {
  int64_t node = 0;
  int64_t opset = 0;
  ops::KernelFn fn = nullptr;
  int64_t version = 0;  // the op version the kernel implements
  std::vector<Source> inputs;
  std::vector<char> last_read;  // per input: no later step of the layer reads it, nor is it an output
  std::vector<int> outputs;     // internal slot per node output; -1 for an unnamed output
};

bool overlaps(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.nbytes() == 0 || b.nbytes() == 0 || a.dtype() == DType::kString) {
    return false;
  }
  const auto* pa = static_cast<const char*>(a.raw());
  const auto* pb = static_cast<const char*>(b.raw());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

class ReferenceKernel final : public LayerKernel {
 public:
  explicit ReferenceKernel(const KernelArgs& args) : args_(args) {}

  Status prepare() {
    const LayerSpec& spec = *args_.spec;
    const DType storage = precision_of(args_.precision).storage;
    std::unordered_map<std::string, int> internal, constant;
    for (int64_t index : spec.nodes) {
      const Node& n = args_.model->graph.nodes[static_cast<size_t>(index)];
      Step step;
      step.node = index;
      step.opset = args_.model->opset(n.domain);
      ops::KernelLookup found = args_.registry->lookup(n.domain, n.op_type, step.opset);
      if (!found.def) return Status(StatusCode::kUnsupportedOp, std::move(found.reason), n.ref(index));
      step.fn = found.def->fn;
      step.version = found.def->since_version;
      for (const std::string& in : n.inputs) {
        Source src;
        if (in.empty()) {
          src.kind = Source::Kind::kNone;
        } else if (auto it = internal.find(in); it != internal.end()) {
          src = {Source::Kind::kInternal, it->second};
        } else if (const int k = input_index(spec, in); k >= 0) {
          src = {Source::Kind::kInput, k};
        } else if (auto c = args_.constants->find(in); c != args_.constants->end()) {
          auto [pos, added] = constant.emplace(in, static_cast<int>(constants_.size()));
          if (added) {
            Tensor t = c->second;
            if (t.dtype() == DType::kFloat32 && storage != DType::kFloat32) {
              t = t.clone();
              round_in_place(t.mutable_values<float>(), storage);
            }
            constants_.push_back(std::move(t));
          }
          src = {Source::Kind::kConstant, pos->second};
        } else {
          return Status(StatusCode::kInvalidModel, fmt::format("input '{}' has no value", in), n.ref(index));
        }
        step.inputs.push_back(src);
      }
      for (const std::string& out : n.outputs) {
        if (out.empty()) {
          step.outputs.push_back(-1);
          continue;
        }
        const int slot = slots_++;
        internal[out] = slot;
        step.outputs.push_back(slot);
      }
      steps_.push_back(std::move(step));
    }
    for (const std::string& out : spec.outputs) output_slots_.push_back(internal.at(out));
    // Which reads are the last of a layer input or an internal value (outputs excepted), so that a
    // kernel may write over a dying input (ops::KernelContext::allocate_output_elementwise).
    for (size_t i = 0; i < steps_.size(); ++i) {
      Step& step = steps_[i];
      step.last_read.assign(step.inputs.size(), 0);
      for (size_t j = 0; j < step.inputs.size(); ++j) {
        const Source& src = step.inputs[j];
        if (src.kind != Source::Kind::kInput && src.kind != Source::Kind::kInternal) continue;
        const auto same = [&](const Source& o) { return o.kind == src.kind && o.index == src.index; };
        bool later = std::count_if(step.inputs.begin(), step.inputs.end(), same) > 1;
        for (size_t k = i + 1; k < steps_.size() && !later; ++k) {
          later = std::any_of(steps_[k].inputs.begin(), steps_[k].inputs.end(), same);
        }
        if (src.kind == Source::Kind::kInternal) {
          later = later || std::find(output_slots_.begin(), output_slots_.end(), src.index) != output_slots_.end();
        }
        step.last_read[j] = !later;
      }
    }
    return Status::OK();
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const override {
    return run_dying(inputs, {}, outputs);
  }

  Status run_dying(std::span<const Tensor* const> inputs, std::span<const char> dying,
                   std::span<Tensor> outputs) const override {
    std::vector<Tensor> values(static_cast<size_t>(slots_));
    std::vector<char> step_dying, step_constant;
    std::vector<const Tensor*> ins;
    std::vector<Tensor> outs;
    for (const Step& step : steps_) {
      const Node& n = args_.model->graph.nodes[static_cast<size_t>(step.node)];
      ins.assign(step.inputs.size(), nullptr);
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        const Source& s = step.inputs[i];
        if (s.kind == Source::Kind::kInput) ins[i] = inputs[static_cast<size_t>(s.index)];
        if (s.kind == Source::Kind::kConstant) ins[i] = &constants_[static_cast<size_t>(s.index)];
        if (s.kind == Source::Kind::kInternal) ins[i] = &values[static_cast<size_t>(s.index)];
      }
      outs.assign(step.outputs.size(), Tensor());
      step_dying.assign(step.inputs.size(), 0);
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        const Source& s = step.inputs[i];
        const bool gone = s.kind == Source::Kind::kInternal ||
                          (s.kind == Source::Kind::kInput && static_cast<size_t>(s.index) < dying.size() &&
                           dying[static_cast<size_t>(s.index)]);
        step_dying[i] = static_cast<char>(gone && step.last_read[i]);
      }
      // The layer's constants (the model's tensors, or its own rounded copies) are never written:
      // products keep their packed panels (an LSTM's input weights).
      step_constant.assign(step.inputs.size(), 0);
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        step_constant[i] = static_cast<char>(step.inputs[i].kind == Source::Kind::kConstant);
      }
      ops::KernelContext ctx(n, step.node, step.opset, ins, outs, args_.num_threads);
      ctx.set_dying_inputs(step_dying);
      ctx.set_constant_inputs(step_constant);
      Status st = step.fn(ctx);
      if (st.ok()) st = ctx.attr_error();
      if (st.ok()) st = ops::check_all_read(ctx, step.version);
      if (!st.ok()) return st.with_node(n.ref(step.node));
      for (size_t i = 0; i < step.outputs.size(); ++i) {
        if (step.outputs[i] < 0) continue;
        if (!outs[i].defined()) {
          return Status(StatusCode::kInternal, fmt::format("kernel left output {} unset", i), n.ref(step.node));
        }
        values[static_cast<size_t>(step.outputs[i])] = std::move(outs[i]);
      }
    }
    for (size_t i = 0; i < output_slots_.size(); ++i) {
      Tensor& t = values[static_cast<size_t>(output_slots_[i])];
      // Reshape, Identity and friends return views; the caller is about to round in place.
      if (args_.outputs_modified && aliases_operand(t, inputs, dying)) t = t.clone();
      outputs[i] = std::move(t);
    }
    return Status::OK();
  }

 private:
  /// Whether `t` shares memory with an operand that rounding `t` in place would change: an input
  /// or a constant, except a `dying` input that the kernel wrote `t` over, the two alone holding
  /// its storage (BatchNormalization in place: a copy of it cost more than the layer).
  bool aliases_operand(const Tensor& t, std::span<const Tensor* const> inputs, std::span<const char> dying) const {
    if (!t.writable()) return true;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor* in = inputs[i];
      const bool written_over = i < dying.size() && dying[i] && t.shares_storage_only_with(*in);
      if (!written_over && overlaps(t, *in)) return true;
    }
    for (const Tensor& c : constants_) {
      if (overlaps(t, c)) return true;
    }
    return false;
  }

  KernelArgs args_;
  std::vector<Step> steps_;
  std::vector<Tensor> constants_;
  std::vector<int> output_slots_;
  int slots_ = 0;
};

}  // namespace

Result<std::unique_ptr<LayerKernel>> make_reference_kernel(const KernelArgs& args) {
  auto kernel = std::make_unique<ReferenceKernel>(args);
  VN_RETURN_IF_ERROR(kernel->prepare());
  return std::unique_ptr<LayerKernel>(std::move(kernel));
}

}  // namespace vn::engine::kernels
