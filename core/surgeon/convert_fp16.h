// SPDX-License-Identifier: Apache-2.0
// `convert --to-onnx --fp16`: a float16 ONNX model for engines that run the file they are given
// (ONNX Runtime) and do not lower precision themselves, as onnxconverter-common's
// convert_float_to_float16 writes it, with the float32 islands a careful user would keep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/surgeon/surgeon.h"

namespace vn::surgeon {

/// A node left in float32, and why.
struct KeptNode {
  std::string node;  ///< node_label
  std::string op_type;
  std::string reason;
};

/// An initializer (or Constant) whose float32 values float16 cannot hold: values beyond +-65504
/// were clamped to it, as onnxconverter-common does.
struct ClampedTensor {
  std::string name;
  int64_t count = 0;     ///< values clamped
  double max_abs = 0;    ///< the largest |value| before clamping
};

struct Fp16Options {
  /// Float32 graph inputs and outputs stay float32, with Casts at the edges (onnxconverter-common's
  /// keep_io_types=True). False (`--fp16-io`): they become float16.
  bool keep_io_types = true;
  /// Nodes to keep in float32 (`--keep-fp32`), by name or node_label; Casts go around them.
  std::vector<std::string> keep_fp32;
  /// Finds the types of values that shape inference left untyped (one run of the original model);
  /// may be null.
  FallbackRun fallback;
};

/// What convert_to_fp16 did.
struct Fp16Report {
  std::vector<std::string> nodes_fp16;  ///< node_label of each node that now computes in float16, in graph order
  std::vector<KeptNode> kept;   ///< nodes with float32 values left in float32, in graph order
  /// Inputs and outputs that stay float32 in a float16 node because ONNX allows no other type
  /// there ("node 'up' (Resize) input 2 'scales'").
  std::vector<std::string> fixed_float32;
  size_t initializers_fp16 = 0;  ///< float32 initializers and Constant values now float16
  size_t initializers_fp32 = 0;  ///< float32 initializers read only in float32, left as they were
  std::vector<ClampedTensor> clamped;
  int64_t flushed_to_zero = 0;   ///< non-zero weights below float16's smallest subnormal, now 0
  size_t casts_added = 0;        ///< Cast nodes added (edges, kept nodes, fixed inputs)
  size_t casts_retargeted = 0;   ///< Casts to float32 of the model that now cast to float16
};

struct Fp16Result {
  Model model;
  Fp16Report report;
};

/// Converts float32 values to float16:
/// - initializers and Constant values read in float16 become float16 (beyond +-65504: clamped,
///   reported); one read in float32 somewhere stays float32, and its float16 readers get a Cast;
/// - every node computes in float16 except: --keep-fp32 nodes; ops without a float16 type in
///   ONNX's schema (libonnx's, the opset-17 one above 17); ops of onnxconverter-common's
///   DEFAULT_OP_BLOCK_LIST; random generators; nodes with subgraphs (If, Loop, Scan: kept whole,
///   their outer float values cast to float32 for them); custom domains; and static shape
///   arithmetic (nodes whose values do not depend on the inputs and feed only shape or index
///   computations, e.g. a Constant feeding Resize's scales), which float16 would make inexact.
///   Inputs ONNX allows only in float32 (Resize's scales) stay float32 with a Cast;
/// - Casts to float32 inside the float16 region cast to float16; Casts are added wherever a value
///   is read in the other precision; graph inputs and outputs as Fp16Options says.
/// Every original value keeps its name (a graph output cast at the edge is the Cast's output;
/// its producer writes "<name>__fp16"), so results pair by name with the original's. value_info
/// dtypes are updated, and the result passes libonnx's type check (check_model_types).
/// Errors: kNotFound for a --keep-fp32 name that is no node ("--keep-fp32 names 'x', which is no
/// node of the model"); value_types' errors for values without a type; kInternal when the result
/// fails the type check (a bug).
Result<Fp16Result> convert_to_fp16(const Model& model, const Fp16Options& options);

/// Expands --keep-fp32 items: a name, or @FILE holding one name per line (blank lines and lines
/// starting with '#' skipped; surrounding spaces trimmed). kIoError naming an unreadable FILE.
Result<std::vector<std::string>> expand_name_list(const std::vector<std::string>& items);

/// Converts a float32 tensor to float16, clamping finite values beyond +-65504 to it (counted in
/// `clamped`, named `name`, when non-null) and counting non-zero values that round to zero.
Tensor float32_to_float16(const Tensor& tensor, const std::string& name, ClampedTensor* clamped,
                          int64_t* flushed_to_zero);

}  // namespace vn::surgeon
