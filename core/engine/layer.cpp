// SPDX-License-Identifier: Apache-2.0
#include "core/engine/layer.h"

#include <algorithm>

#include "core/common/threads.h"
#include "core/engine/kernels/kernels.h"
#include "core/ops/kernel_util.h"

namespace vn::engine {

std::string_view activation_name(ActivationFn fn) {
  switch (fn) {
    case ActivationFn::kNone:
      return "";
    case ActivationFn::kRelu:
      return "Relu";
    case ActivationFn::kLeakyRelu:
      return "LeakyRelu";
    case ActivationFn::kClip:
      return "Clip";
    case ActivationFn::kSigmoid:
      return "Sigmoid";
    case ActivationFn::kTanh:
      return "Tanh";
    case ActivationFn::kHardSigmoid:
      return "HardSigmoid";
    case ActivationFn::kHardSwish:
      return "HardSwish";
    case ActivationFn::kExp:
      return "Exp";
    case ActivationFn::kErf:
      return "Erf";
    case ActivationFn::kSiLU:
      return "SiLU";
    case ActivationFn::kGelu:
      return "Gelu";
  }
  return "";
}

Support tactic_applicable(const KernelArgs& args, std::span<const Tensor* const> inputs) {
  const TacticInfo& t = tactic_info(args.tactic);
  const LayerSpec& spec = *args.spec;
  if (!t.supports(args.precision)) {
    return {false,
            fmt::format("{} runs in {}, not {}", t.name, mask_to_string(t.precisions), precision_name(args.precision))};
  }
  if (args.tactic == TacticId::kReference) return {};
  if (t.kind != spec.kind) {
    return {false, fmt::format("{} is a {} tactic; this is a {} layer", t.name, layer_kind_name(t.kind),
                               layer_kind_name(spec.kind))};
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DType d = inputs[i]->dtype();
    // Only a Reduce layer reads a non-float tensor (its runtime axes); the rest is float32 data.
    const bool aux = spec.kind == LayerKind::kReduce && dtype_is_integer(d);
    if (d != DType::kFloat32 && !aux) {
      return {false, fmt::format("input '{}' is {}; only the reference tactic runs layers that are not float32",
                                 spec.inputs[i], dtype_name(d))};
    }
  }
  if (args.precision == PrecisionId::kInt8) {
    if (!args.scales) return {false, "no int8 scales: the build was not calibrated"};
    if (Result<LayerScales> s = layer_scales(spec, *args.scales); !s.ok()) return {false, s.status().message()};
  }
  if (spec.kind == LayerKind::kConv) return kernels::conv_applicable(args, inputs);
  if (spec.kind == LayerKind::kGemm) return kernels::gemm_applicable(args, inputs);
  return {};
}

Result<LayerScales> layer_scales(const LayerSpec& spec, const ScaleTable& scales) {
  LayerScales out;
  const auto add = [&](const std::string& name, std::vector<float>& to) -> Status {
    auto it = scales.find(name);
    if (it == scales.end()) {
      return make_error(StatusCode::kInvalidArgument, "no int8 scale for '{}': calibration did not observe it", name);
    }
    to.push_back(it->second);
    return Status::OK();
  };
  for (const std::string& in : spec.inputs) VN_RETURN_IF_ERROR(add(in, out.inputs));
  for (const std::string& o : spec.outputs) VN_RETURN_IF_ERROR(add(o, out.outputs));
  return out;
}

Result<std::unique_ptr<LayerKernel>> make_layer_kernel(const KernelArgs& args) {
  if (args.tactic == TacticId::kReference) return kernels::make_reference_kernel(args);
  switch (args.spec->kind) {
    case LayerKind::kConv:
      return kernels::make_conv_kernel(args);
    case LayerKind::kGemm:
      return kernels::make_gemm_kernel(args);
    case LayerKind::kSoftmax:
      return kernels::make_softmax_kernel(args);
    case LayerKind::kLayerNorm:
      return kernels::make_layernorm_kernel(args);
    case LayerKind::kReduce:
      return kernels::make_reduce_kernel(args);
    case LayerKind::kActivation:
      return kernels::make_activation_kernel(args);
    case LayerKind::kPool:
      return kernels::make_pool_kernel(args);
    case LayerKind::kEltwise:
      return kernels::make_eltwise_kernel(args);
    case LayerKind::kGeneric:
      return kernels::make_reference_kernel(args);
  }
  return make_error(StatusCode::kInternal, "no kernel factory for layer '{}'", args.spec->name);
}

CompiledLayer::CompiledLayer(const LayerSpec& spec, TacticId tactic, PrecisionId precision,
                             std::unique_ptr<LayerKernel> kernel, std::vector<DType> input_formats,
                             std::vector<FaultSpec> faults, LayerScales scales, bool keeps_format)
    : spec_(&spec),
      tactic_(tactic),
      precision_(precision),
      kernel_(std::move(kernel)),
      input_formats_(std::move(input_formats)),
      faults_(std::move(faults)),
      scales_(std::move(scales)),
      keeps_format_(keeps_format) {}

namespace {

/// Rounds `from` into `values` (the same span to round in place) to `storage` (float16,
/// bfloat16), or to their int8 grid with `scale` (int8), on the threads of the running backend
/// for large tensors: each chunk copied, then rounded while in cache.
void to_storage(std::span<const float> from, std::span<float> values, float scale, DType storage) {
  ops::parallel_chunks(default_threads(), static_cast<int64_t>(values.size()), [&](int64_t i0, int64_t i1) {
    const std::span<float> chunk = values.subspan(static_cast<size_t>(i0), static_cast<size_t>(i1 - i0));
    if (from.data() != values.data()) std::copy(from.begin() + i0, from.begin() + i1, chunk.begin());
    if (storage == DType::kInt8) {
      fake_quantize_in_place(chunk, scale);
    } else {
      round_in_place(chunk, storage);
    }
  });
}

}  // namespace

Status CompiledLayer::run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs, std::span<const char> dying,
                          bool from_engine) const {
  const DType storage = this->storage();
  std::vector<const Tensor*> ins(inputs.begin(), inputs.end());
  std::vector<Tensor> reformatted;
  reformatted.reserve(ins.size());
  // A reformatted copy is the layer's own: nothing reads it after the kernel.
  std::vector<char> gone(ins.size(), 0);
  for (size_t i = 0; i < ins.size() && i < dying.size(); ++i) gone[i] = dying[i];
  const bool int8 = storage == DType::kInt8;
  std::vector<char> on_grid;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ins[i]->dtype() != DType::kFloat32 || format_contains(storage, input_formats_[i])) continue;
    if (int8 && from_engine && input_formats_[i] == DType::kInt8) {
      if (kernel_->quantizes_input(i)) {
        on_grid.resize(ins.size(), 0);
        on_grid[i] = 1;
      }
      continue;
    }
    if (int8 && kernel_->quantizes_input(i)) continue;
    gone[i] = 1;
    Result<Tensor> copy = Tensor::create_for_overwrite(DType::kFloat32, ins[i]->shape());
    if (!copy.ok()) return copy.status();
    reformatted.push_back(std::move(*copy));
    to_storage(ins[i]->values<float>(), reformatted.back().mutable_values<float>(), int8 ? scales_.inputs[i] : 0.0f,
               storage);
    ins[i] = &reformatted.back();
  }
  VN_RETURN_IF_ERROR(on_grid.empty() ? kernel_->run_dying(ins, gone, outputs)
                                     : kernel_->run_on_grid(ins, gone, on_grid, outputs));
  for (size_t o = 0; o < outputs.size(); ++o) {
    Tensor& out = outputs[o];
    if (!out.defined() || out.dtype() != DType::kFloat32 || (storage == DType::kFloat32 && faults_.empty())) continue;
    if ((keeps_format_ || kernel_->rounds_outputs()) && faults_.empty()) continue;
    std::span<float> values = out.mutable_values<float>();
    for (const FaultSpec& f : faults_) apply_fault(f, values);
    if (!int8 || scales_.outputs[o] > 0) to_storage(values, values, int8 ? scales_.outputs[o] : 0.0f, storage);
  }
  return Status::OK();
}

}  // namespace vn::engine
