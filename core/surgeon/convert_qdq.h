// SPDX-License-Identifier: Apache-2.0
// `convert --to-onnx --int8`: a QDQ model as ONNX Runtime's quantize_static writes it
// (QuantFormat.QDQ, symmetric int8), with the scales of Vernier's own calibration, so that an
// engine running ONNX files computes in int8 where Vernier's engine does.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/engine/calibration.h"
#include "core/ir/graph.h"
#include "core/ops/op_registry.h"
#include "core/surgeon/convert_fp16.h"

namespace vn::surgeon {

/// One Conv, MatMul or Gemm now fed by DequantizeLinear nodes.
struct QuantizedNode {
  std::string node;  ///< node_label
  std::string op_type;
  std::string input;          ///< the activation input, quantized per tensor
  float input_scale = 0;
  std::string weight;         ///< the weight initializer, now int8 per channel
  int64_t axis = 0;           ///< the weight's channel axis (-1: one scale, for a vector weight)
  int64_t channels = 0;
  float weight_scale_min = 0;
  float weight_scale_max = 0;
  bool bias_int32 = false;    ///< the bias is int32 with scale input_scale x weight_scale
  std::string output;         ///< the output with a Q/DQ pair after it, or "" (MatMul, graph outputs)
  float output_scale = 0;
};

/// What insert_qdq did.
struct QdqReport {
  int64_t opset_before = 0;
  int64_t opset_after = 0;
  std::vector<QuantizedNode> quantized;
  std::vector<KeptNode> skipped;  ///< Conv, MatMul and Gemm nodes left in float, and why
  size_t activations = 0;         ///< tensors with a QuantizeLinear/DequantizeLinear pair
  float activation_scale_min = 0;
  float activation_scale_max = 0;
  std::string calibration;        ///< where the scales came from (convert_to_qdq)
  bool synthetic = false;         ///< calibrated on synthetic data (convert_to_qdq)
};

struct QdqResult {
  Model model;
  QdqReport report;
};

/// Quantizes every Conv, MatMul and Gemm whose weight (input 1) is a float32 constant and whose
/// data input (input 0) has a scale in `scales`, as ORT's QDQ quantizer does with symmetric int8
/// activations and per-channel weights:
/// - the data input gets QuantizeLinear -> DequantizeLinear (int8, zero point 0, its scale from
///   `scales`), one pair per tensor read by every consumer; Conv and Gemm outputs get one too
///   (ORT's QDQConv and QDQGemm do; not MatMul's, nor a graph output, which stays float as the
///   engine's outputs do);
/// - the weight becomes an int8 initializer with one scale per output channel (max |w| / 127; axis
///   0 for Conv, the output-column axis for MatMul and Gemm's B), zero points 0, and a
///   DequantizeLinear with that axis;
/// - a 1-D bias (Conv's, Gemm's with alpha = beta = 1) becomes int32 with scale input scale x
///   weight scale and a DequantizeLinear, as ORT writes it; other biases stay float32.
/// Tensors keep their names (Q/DQ outputs are new ones, "<tensor>_DequantizeLinear_Output"), so
/// results pair with the original's. Per-axis DequantizeLinear needs opset 13: an older model's
/// import is raised to 13 when every node means the same there (onnx_opset_upgrade_blocker;
/// Softmax-family nodes only over their last axis), else kInvalidArgument naming the node and the
/// change. The weight and bias may be initializers or Constant values, also through Identity nodes
/// (which go, with the float initializers, when nothing else reads them). Errors: kInvalidArgument
/// for a model that already has Q/DQ nodes or cannot move to opset 13; kInternal when the result
/// fails libonnx's type check (a bug).
///
/// With `reduce_range`, weights use 7 bits (max |w| / 63, values in [-63, 63]), as ORT's
/// quantizer's reduce_range: x86 int8 kernels without VNNI sum pairs of uint8 x int8 products in
/// 16 bits with saturation (VPMADDUBSW), which full-range weights overflow (ResNet-18 on ONNX
/// Runtime on Zen 3: mean |logit error| 0.23 of the reference against 0.02 as ONNX defines the
/// model).
Result<QdqResult> insert_qdq(const Model& model, const engine::ScaleTable& scales, bool reduce_range = false);

/// How convert_to_qdq obtains its scales.
struct QdqOptions {
  engine::Int8Options int8;
  /// 7-bit weights (insert_qdq).
  bool reduce_range = false;
  /// Shapes of dynamic inputs for synthetic calibration feeds.
  std::map<std::string, Shape> input_shapes;
  int num_threads = 0;
};

/// Obtains the scales as the engine's int8 builds do (engine::obtain_int8_scales: cache, data,
/// synthetic feeds) and inserts the Q/DQ nodes. Errors: those of both.
Result<QdqResult> convert_to_qdq(const Model& model, const QdqOptions& options,
                                 const ops::OpRegistry& registry = ops::reference_registry());

}  // namespace vn::surgeon
