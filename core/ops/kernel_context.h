// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"

namespace vn::ops {

/// Runs the graphs held in a node's attributes (If branches, Loop and Scan bodies) for the
/// control-flow kernels. The interpreter implements it once per executing scope, so a body sees
/// the tensors of every enclosing scope by name, as ONNX requires.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;

  /// Runs `body`, a graph attribute of the node being executed, with `inputs` bound to
  /// body.inputs in order, and returns the body's outputs in order. Tensors in `inputs` need only
  /// live for the call. Errors: kInvalidModel (input count, a name no scope defines), kCancelled,
  /// or the failing body node's error with the node named in the message (the Status carries no
  /// NodeRef, because body node indices do not index the main graph).
  virtual Result<std::vector<Tensor>> run(const Graph& body, std::span<const Tensor> inputs) = 0;
  /// kCancelled once the run has been cancelled, else OK. Loops poll it every iteration, so a
  /// loop with a hostile trip count can still be stopped.
  virtual Status poll_cancel() const = 0;
};

/// Everything a kernel sees while it runs one node: its inputs, attributes and output slots.
///
/// Attribute getters take a default for absent attributes. An attribute present with the wrong
/// type (an int where a float is expected) makes the getter return the default and records an
/// error; the interpreter reports it after the kernel returns, so kernels need no error plumbing
/// for attributes.
///
/// The context records which attributes the kernel asked for and which inputs it looked at
/// (has_input or input). An attribute or input the node carries but the kernel never considered
/// is a part of the op the kernel does not implement, so executors refuse the node
/// (check_all_read) instead of returning a result computed without it. Kernels therefore read
/// every attribute of the versions they implement, even where its value is the default, and name
/// those that cannot change their result with ignore_attrs.
class KernelContext {
 public:
  /// `inputs[i]` is null for an omitted optional input (empty name); `outputs` has one slot per
  /// node output, filled by the kernel. `subgraphs` runs the node's subgraphs; null where the
  /// executor runs none (a lone kernel under test), which control-flow kernels report.
  KernelContext(const Node& node, int64_t node_index, int64_t opset, std::span<const Tensor* const> inputs,
                std::span<Tensor> outputs, int num_threads = 1, SubgraphRunner* subgraphs = nullptr);

  const Node& node() const { return node_; }
  int64_t node_index() const { return node_index_; }
  /// The model's opset for the node's domain.
  int64_t opset() const { return opset_; }
  /// Threads the kernel may use: --threads, limited by the calling thread's cap (threads.h).
  int num_threads() const { return num_threads_; }

  /// Number of input slots the node declares, including omitted optional ones.
  size_t input_count() const { return inputs_.size(); }
  /// True when input i exists and was not omitted.
  bool has_input(size_t i) const;
  /// Input i; aborts if absent (check has_input or the op's arity first).
  const Tensor& input(size_t i) const;

  size_t output_count() const { return outputs_.size(); }
  /// Allocates output i (zero-filled); fails for invalid or oversized shapes.
  Result<Tensor*> allocate_output(size_t i, DType dtype, Shape shape);
  /// allocate_output without the zero fill, for a kernel that writes every element of output i
  /// before it reads any.
  Result<Tensor*> allocate_output_for_overwrite(size_t i, DType dtype, Shape shape);
  /// allocate_output_for_overwrite for a kernel that computes each element of output i from the
  /// elements at the same index of those inputs that have the output's shape (and from inputs
  /// it broadcasts, read-only): output i may then be the buffer of such an input of its dtype
  /// that the executor has marked dying here (see set_dying_inputs) and that nothing else holds.
  /// A kernel that reads each row of an input before it writes that row of the output (Softmax)
  /// may use it too.
  Result<Tensor*> allocate_output_elementwise(size_t i, DType dtype, Shape shape);
  /// Marks the inputs whose values nobody reads after this node (dying[i] for input i), for
  /// allocate_output_elementwise. Unmarked by default.
  void set_dying_inputs(std::span<const char> dying) { dying_ = dying; }
  /// Marks the inputs that are constants of the model (constant[i] for input i: an initializer,
  /// never written, whose storage its model holds), for the matrix products to keep their packed
  /// panels (sgemm_driver.h). Unmarked by default.
  void set_constant_inputs(std::span<const char> constant) { constant_ = constant; }
  /// Input i when it is marked constant, else null.
  const Tensor* constant_input(size_t i) const;
  /// An elementwise computation that an executor asks a kernel to apply to its float32 output 0
  /// while each block of it is in cache (the reference's Relu, or residual Add and Relu, after a
  /// Conv; a bias and GELU after a MatMul), in place of running it as nodes over the whole output
  /// afterwards.
  class OutputEpilogue {
   public:
    virtual ~OutputEpilogue() = default;
    /// Whether it applies to output 0 as allocated (its shape; float32 only).
    virtual bool accepts(const Tensor& y) const = 0;
    /// Applies it in place to `rows` runs of `width` elements of y, `stride` elements apart, the
    /// first at element `first`; from any of the kernel's threads, each element once.
    virtual void apply(float* y, int64_t first, int64_t rows, int64_t stride, int64_t width) const = 0;
  };
  /// Offers `epilogue` for output 0 (null: none). A kernel that applies it to every element of
  /// output 0 calls mark_epilogue_applied(); one that does not leaves the output as the node
  /// defines it.
  void set_output_epilogue(const OutputEpilogue* epilogue) { epilogue_ = epilogue; }
  /// The epilogue offered for output 0 when it accepts `y`, else null.
  const OutputEpilogue* output_epilogue(const Tensor& y) const {
    return epilogue_ && epilogue_->accepts(y) ? epilogue_ : nullptr;
  }
  /// Called by a kernel that applied the epilogue to all of output 0.
  void mark_epilogue_applied() { epilogue_applied_ = true; }
  /// Whether the kernel applied the epilogue (the executor then skips the nodes it stands for).
  bool epilogue_was_applied() const { return epilogue_applied_; }
  /// Stores a tensor (often a view of an input, for Identity/Reshape) as output i.
  void set_output(size_t i, Tensor tensor);

  bool has_attr(std::string_view name) const { return find_attr(name) != nullptr; }
  const Attribute* attr(std::string_view name) const { return find_attr(name); }
  int64_t attr_int(std::string_view name, int64_t default_value) const;
  float attr_float(std::string_view name, float default_value) const;
  std::string attr_string(std::string_view name, std::string_view default_value) const;
  std::vector<int64_t> attr_ints(std::string_view name, std::vector<int64_t> default_value = {}) const;
  std::vector<float> attr_floats(std::string_view name, std::vector<float> default_value = {}) const;
  std::vector<std::string> attr_strings(std::string_view name, std::vector<std::string> default_value = {}) const;
  /// The tensor attribute, or nullptr.
  const Tensor* attr_tensor(std::string_view name) const;
  /// The graph attribute (a subgraph), or nullptr.
  const Graph* attr_graph(std::string_view name) const;

  /// Runs `body` (a graph attribute of this node) through the executor's SubgraphRunner; errors
  /// come back tagged with this node. kUnsupportedOp when the executor runs no subgraphs.
  Result<std::vector<Tensor>> run_subgraph(const Graph& body, std::span<const Tensor> inputs) const;
  /// kCancelled once the run has been cancelled (tagged with this node), else OK.
  Status poll_cancel() const;

  /// The first attribute error recorded by a getter, or OK.
  const Status& attr_error() const { return attr_error_; }

  /// Marks attributes whose value cannot change this kernel's result (a legacy hint such as
  /// consumed_inputs, the seed of an op that draws nothing in inference), so that their presence
  /// is not taken for a part of the op left unimplemented.
  void ignore_attrs(std::initializer_list<std::string_view> names) const;
  /// The first attribute of the node that no getter asked for and ignore_attrs did not name, or
  /// nullptr.
  const Attribute* unread_attr() const;
  /// The first input the node supplies (among the first 64) that the kernel never looked at.
  std::optional<size_t> unread_input() const;

  /// An error Status tagged with this node.
  template <typename... Args>
  Status fail(StatusCode code, fmt::format_string<Args...> format, Args&&... args) const {
    return Status(code, fmt::format(format, std::forward<Args>(args)...), node_.ref(node_index_));
  }

 private:
  const Attribute* typed_attr(std::string_view name, AttrType type) const;
  /// node_.attr(name), recorded as read.
  const Attribute* find_attr(std::string_view name) const;
  /// Stores a newly allocated tensor (or the allocation's error, tagged with this node) as output i.
  Result<Tensor*> store_output(size_t i, Result<Tensor> t);

  const Node& node_;
  int64_t node_index_;
  int64_t opset_;
  std::span<const Tensor* const> inputs_;
  std::span<Tensor> outputs_;
  std::span<const char> dying_;
  std::span<const char> constant_;
  const OutputEpilogue* epilogue_ = nullptr;
  bool epilogue_applied_ = false;
  int num_threads_;
  SubgraphRunner* subgraphs_;
  mutable Status attr_error_;
  mutable uint64_t attrs_read_ = 0;   // bit i: node_.attributes[i] was asked for (or ignored)
  mutable uint64_t inputs_read_ = 0;  // bit i: input i was looked at
};

/// OK when the kernel that ran `ctx` considered every attribute and input of its node; else
/// kUnsupportedAttr naming the first one left aside, the op and `since_version` (the version the
/// kernel implements), tagged with the node.
Status check_all_read(const KernelContext& ctx, int64_t since_version);

/// Normalizes an axis in [-rank, rank) to [0, rank); fails with the valid range in the message.
Result<int64_t> normalize_axis(const KernelContext& ctx, int64_t axis, int64_t rank);

}  // namespace vn::ops
