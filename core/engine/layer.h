// SPDX-License-Identifier: Apache-2.0
// A layer of the engine: one or more fused ONNX nodes (LayerSpec), the kernel that computes it
// with one tactic in one precision (LayerKernel), and the wrapper that rounds its operands and
// results to the precision's storage format and injects faults (CompiledLayer).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/backend/backend.h"
#include "core/common/status.h"
#include "core/engine/fault.h"
#include "core/engine/precision.h"
#include "core/engine/quantize.h"
#include "core/engine/tactic_registry.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "core/ops/op_registry.h"

namespace vn::engine {

/// Initializers and folded tensors by name: what the engine knows before it runs.
using ConstantMap = std::unordered_map<std::string, Tensor>;

/// An activation function, fused into a Conv/Gemm epilogue or run as its own layer.
enum class ActivationFn : uint8_t {
  kNone,
  kRelu,
  kLeakyRelu,  ///< alpha
  kClip,       ///< alpha = min, beta = max
  kSigmoid,
  kTanh,
  kHardSigmoid,  ///< alpha, beta
  kHardSwish,
  kExp,
  kErf,
  kSiLU,  ///< x * Sigmoid(x)
  kGelu,  ///< x * 0.5 * (1 + Erf(x / sqrt(2)))
};

/// An activation with its parameters (unused ones stay 0).
struct Activation {
  ActivationFn fn = ActivationFn::kNone;
  float alpha = 0;
  float beta = 0;
};

/// "Relu", "SiLU", "Gelu", ... ("" for kNone).
std::string_view activation_name(ActivationFn fn);

/// What a Conv or Gemm/MatMul layer applies to its product, in this order:
/// y = activation(product + biases + residual), where a folded BatchNormalization has already
/// been absorbed into the weights and the first bias.
struct Epilogue {
  int64_t batch_norm = -1;          ///< node index of the folded BatchNormalization, or -1
  std::vector<std::string> biases;  ///< constants added along the channel axis (Conv) or the last axis (Gemm)
  std::string residual;             ///< a runtime tensor of the output's shape added elementwise, or ""
  Activation activation;
};

/// The parameters of a LayerNorm layer, whichever form it was fused from.
struct NormSpec {
  int64_t axis = -1;  ///< normalized dims are [axis, rank)
  float epsilon = 1e-5f;
  std::string scale;  ///< constant tensor multiplied in, or "" for none
  std::string bias;   ///< constant tensor added, or ""
};

/// A group of ONNX nodes the engine runs as one layer. Internal tensors (`hidden`) never exist
/// outside the layer: they are not returned and not reported to observers.
struct LayerSpec {
  std::string name;  ///< member node names joined with " + ", as TensorRT names fused layers
  LayerKind kind = LayerKind::kGeneric;
  std::vector<int64_t> nodes;        ///< member node indices in execution order; nodes[0] is the anchor op
  std::vector<std::string> inputs;   ///< runtime tensors read (constants excluded), in first-use order
  std::vector<std::string> outputs;  ///< tensors visible outside the layer
  std::vector<std::string> hidden;   ///< tensors produced and consumed inside the layer
  Epilogue epilogue;                 ///< kConv, kGemm
  Activation activation;             ///< kActivation
  NormSpec norm;                     ///< kLayerNorm
};

/// Computes one layer with one tactic in one precision. Built once, run many times; run() is
/// const and may be called from one thread at a time.
class LayerKernel {
 public:
  virtual ~LayerKernel() = default;
  /// `inputs[i]` is the tensor of spec.inputs[i], already in the layer's storage format;
  /// `outputs` has one slot per spec.outputs, which the kernel fills (with tensors it owns unless
  /// KernelArgs::outputs_modified was false). Errors are tagged with the node that failed.
  virtual Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs) const = 0;
  /// run() for a caller that reads no input marked in `dying` (one flag per input, or none) after
  /// this layer: the kernel may write an output over such an input's buffer where nothing else
  /// holds it (Tensor::sole_owner). By default, run().
  virtual Status run_dying(std::span<const Tensor* const> inputs, std::span<const char> dying,
                           std::span<Tensor> outputs) const {
    (void)dying;
    return run(inputs, outputs);
  }
  /// Whether an int8 kernel quantizes input `input` itself from any float32 values, to the
  /// integers quantize_value gives with the input's scale: CompiledLayer then hands that input
  /// over as it is, where it would write a copy on the int8 grid (whose integers are the same).
  virtual bool quantizes_input(size_t input) const {
    (void)input;
    return false;
  }
  /// run_dying() where the inputs marked in `on_grid` (one flag per input; only inputs the kernel
  /// quantizes itself) hold values of their tensor's int8 grid already, as an int8 layer of the
  /// engine writes them: the kernel may read their integers off without deciding any rounding
  /// (grid_to_float), the same integers. By default, run_dying().
  virtual Status run_on_grid(std::span<const Tensor* const> inputs, std::span<const char> dying,
                             std::span<const char> on_grid, std::span<Tensor> outputs) const {
    (void)on_grid;
    return run_dying(inputs, dying, outputs);
  }
  /// Whether the kernel's outputs leave it in the storage format (KernelArgs::round_outputs).
  virtual bool rounds_outputs() const { return false; }
};

/// Everything a kernel factory needs.
struct KernelArgs {
  const Model* model = nullptr;
  const LayerSpec* spec = nullptr;
  const ConstantMap* constants = nullptr;
  const ops::OpRegistry* registry = nullptr;
  TacticId tactic = TacticId::kReference;
  PrecisionId precision = PrecisionId::kFp32;
  /// The per-tensor activation scales of int8 layers (calibration's, or a plan's); int8 tactics
  /// need one for every input and output of the layer. May be null when no layer is int8.
  const ScaleTable* scales = nullptr;
  /// Leave every bias out of the epilogue (the bias-drop fault).
  bool drop_bias = false;
  /// The caller rounds or corrupts the outputs in place, so the kernel must return tensors it
  /// owns; when false, a kernel may return a view of an input or weight (Reshape's output is its
  /// input).
  bool outputs_modified = true;
  /// The kernel may leave its output in the layer's storage format itself, rounded to float16 or
  /// bfloat16 or, in int8, to the grid of `output_scale` (0: left in float32), as the last step
  /// of its epilogue while each block is in cache; CompiledLayer then makes no pass of its own
  /// over it. Set when no value fault comes between the two; a kernel that does it says so
  /// (LayerKernel::rounds_outputs).
  bool round_outputs = false;
  float output_scale = 0.0f;
  int num_threads = 1;
};

/// Whether `tactic` can run the layer of `args` in `args.precision` on inputs like `inputs` (the
/// tensors of spec.inputs); `reason` says why not ("3x3 stride-1 kernels only", "input is
/// float64", "no int8 scale for 'x'"). kReference runs any layer in fp32, fp16 and bf16.
Support tactic_applicable(const KernelArgs& args, std::span<const Tensor* const> inputs);

/// Builds the kernel of `args` (weights folded, transformed and rounded to the precision's storage
/// format). Precondition: tactic_applicable(args, ...) holds for the inputs it will see.
/// Errors: kInvalidModel or kShapeMismatch for malformed weights, tagged with the anchor node.
Result<std::unique_ptr<LayerKernel>> make_layer_kernel(const KernelArgs& args);

/// The int8 scales of a layer's tensors, one per spec.inputs and one per spec.outputs. An output
/// scale of 0 leaves that output in float32: the engine returns float32 tensors, so an int8 layer
/// writes a tensor the engine returns unquantized, as TensorRT does for float network outputs.
struct LayerScales {
  std::vector<float> inputs;
  std::vector<float> outputs;
};

/// The scales of `spec`'s inputs and outputs from `scales`. kInvalidArgument naming the first
/// tensor without a scale.
Result<LayerScales> layer_scales(const LayerSpec& spec, const ScaleTable& scales);

/// A layer ready to run: its kernel plus the rounding and fault injection around it.
class CompiledLayer {
 public:
  /// `input_formats[i]` is the storage format (kFloat32, kFloat16, kBFloat16, kInt8) of the
  /// producer of spec.inputs[i]; float32 inputs stored wider than this layer's storage format are
  /// rounded on entry, as a reformatting layer would. `faults` are the value faults that apply to
  /// this layer. An int8 layer needs `scales`: its float32 inputs are quantized to their tensor's
  /// int8 grid on entry and its outputs to theirs on exit. `keeps_format`: the kernel's outputs
  /// are in the storage format already (float16 or bfloat16 layers of keeps_values ops), so that
  /// they are rounded only after a fault.
  CompiledLayer(const LayerSpec& spec, TacticId tactic, PrecisionId precision, std::unique_ptr<LayerKernel> kernel,
                std::vector<DType> input_formats, std::vector<FaultSpec> faults, LayerScales scales = {},
                bool keeps_format = false);

  const LayerSpec& spec() const { return *spec_; }
  TacticId tactic() const { return tactic_; }
  PrecisionId precision() const { return precision_; }
  /// The storage format of this layer's float32 outputs.
  DType storage() const { return precision_of(precision_).storage; }

  /// Runs the layer: reformats (or quantizes) inputs, runs the kernel, applies the faults, then
  /// rounds (or requantizes) every float32 output to the storage format. `outputs` has one slot
  /// per spec.outputs. `dying` marks the inputs the caller reads no more (LayerKernel::run_dying).
  /// `from_engine`: the inputs are what the engine's own layers wrote, in the formats the
  /// constructor was given, so an int8 input that an int8 layer wrote is on its tensor's grid
  /// already (requantizing it with the same scale would give it back unchanged) and is read as it
  /// is; any other caller (a layer run alone on the reference's tensors) has every input quantized.
  Status run(std::span<const Tensor* const> inputs, std::span<Tensor> outputs, std::span<const char> dying = {},
             bool from_engine = false) const;

 private:
  const LayerSpec* spec_;
  TacticId tactic_;
  PrecisionId precision_;
  std::unique_ptr<LayerKernel> kernel_;
  std::vector<DType> input_formats_;
  std::vector<FaultSpec> faults_;
  LayerScales scales_;
  bool keeps_format_;
};

}  // namespace vn::engine
