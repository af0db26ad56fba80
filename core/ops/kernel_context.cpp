// SPDX-License-Identifier: Apache-2.0
#include "core/ops/kernel_context.h"

#include "core/common/threads.h"
#include "core/ir/onnx_schema.h"

namespace vn::ops {

KernelContext::KernelContext(const Node& node, int64_t node_index, int64_t opset, std::span<const Tensor* const> inputs,
                             std::span<Tensor> outputs, int num_threads, SubgraphRunner* subgraphs)
    : node_(node),
      node_index_(node_index),
      opset_(opset),
      inputs_(inputs),
      outputs_(outputs),
      num_threads_(capped_threads(num_threads)),
      subgraphs_(subgraphs) {}

bool KernelContext::has_input(size_t i) const {
  if (i < 64) inputs_read_ |= uint64_t{1} << i;
  return i < inputs_.size() && inputs_[i] != nullptr;
}

const Tensor& KernelContext::input(size_t i) const {
  VN_CHECK(has_input(i), "{} reads missing input {}", node_.op_type, i);
  return *inputs_[i];
}

const Tensor* KernelContext::constant_input(size_t i) const {
  return i < constant_.size() && constant_[i] && has_input(i) ? inputs_[i] : nullptr;
}

Result<Tensor*> KernelContext::store_output(size_t i, Result<Tensor> t) {
  VN_CHECK(i < outputs_.size(), "{} writes output {} of {}", node_.op_type, i, outputs_.size());
  if (!t.ok()) return t.status().with_node(node_.ref(node_index_));
  outputs_[i] = std::move(t).value();
  return &outputs_[i];
}

Result<Tensor*> KernelContext::allocate_output(size_t i, DType dtype, Shape shape) {
  return store_output(i, Tensor::create(dtype, std::move(shape)));
}

Result<Tensor*> KernelContext::allocate_output_for_overwrite(size_t i, DType dtype, Shape shape) {
  return store_output(i, Tensor::create_for_overwrite(dtype, std::move(shape)));
}

Result<Tensor*> KernelContext::allocate_output_elementwise(size_t i, DType dtype, Shape shape) {
  VN_CHECK(i < outputs_.size(), "{} writes output {} of {}", node_.op_type, i, outputs_.size());
  for (size_t j = 0; j < inputs_.size() && j < dying_.size(); ++j) {
    const Tensor* in = inputs_[j];
    // Sole ownership rules out a tensor another slot, the caller or an observer still holds; a
    // string tensor is never reused, as its elements are objects the kernel would assign over.
    if (dying_[j] && in && in->dtype() == dtype && dtype != DType::kString && in->shape() == shape &&
        in->writable() && in->sole_owner()) {
      outputs_[i] = *in;
      return &outputs_[i];
    }
  }
  return allocate_output_for_overwrite(i, dtype, std::move(shape));
}

void KernelContext::set_output(size_t i, Tensor tensor) {
  VN_CHECK(i < outputs_.size(), "{} writes output {} of {}", node_.op_type, i, outputs_.size());
  outputs_[i] = std::move(tensor);
}

const Attribute* KernelContext::find_attr(std::string_view name) const {
  const std::vector<Attribute>& attrs = node_.attributes;
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (attrs[i].name != name) continue;
    if (i < 64) attrs_read_ |= uint64_t{1} << i;
    return &attrs[i];
  }
  return nullptr;
}

void KernelContext::ignore_attrs(std::initializer_list<std::string_view> names) const {
  for (std::string_view name : names) find_attr(name);
}

const Attribute* KernelContext::unread_attr() const {
  const std::vector<Attribute>& attrs = node_.attributes;
  for (size_t i = 0; i < attrs.size() && i < 64; ++i) {
    if (!(attrs_read_ >> i & 1)) return &attrs[i];
  }
  return nullptr;
}

std::optional<size_t> KernelContext::unread_input() const {
  for (size_t i = 0; i < inputs_.size() && i < 64; ++i) {
    if (inputs_[i] != nullptr && !(inputs_read_ >> i & 1)) return i;
  }
  return std::nullopt;
}

const Attribute* KernelContext::typed_attr(std::string_view name, AttrType type) const {
  const Attribute* a = find_attr(name);
  if (!a) return nullptr;
  if (a->type != type) {
    if (attr_error_.ok()) {
      attr_error_ = fail(StatusCode::kInvalidModel, "attribute '{}' is of type {}, expected {}", name,
                         attr_type_name(a->type), attr_type_name(type));
    }
    return nullptr;
  }
  return a;
}

int64_t KernelContext::attr_int(std::string_view name, int64_t default_value) const {
  const Attribute* a = typed_attr(name, AttrType::kInt);
  return a ? a->i : default_value;
}

float KernelContext::attr_float(std::string_view name, float default_value) const {
  const Attribute* a = typed_attr(name, AttrType::kFloat);
  return a ? a->f : default_value;
}

std::string KernelContext::attr_string(std::string_view name, std::string_view default_value) const {
  const Attribute* a = typed_attr(name, AttrType::kString);
  return a ? a->s : std::string(default_value);
}

std::vector<int64_t> KernelContext::attr_ints(std::string_view name, std::vector<int64_t> default_value) const {
  const Attribute* a = typed_attr(name, AttrType::kInts);
  return a ? a->ints : std::move(default_value);
}

std::vector<float> KernelContext::attr_floats(std::string_view name, std::vector<float> default_value) const {
  const Attribute* a = typed_attr(name, AttrType::kFloats);
  return a ? a->floats : std::move(default_value);
}

std::vector<std::string> KernelContext::attr_strings(std::string_view name,
                                                     std::vector<std::string> default_value) const {
  const Attribute* a = typed_attr(name, AttrType::kStrings);
  return a ? a->strings : std::move(default_value);
}

const Tensor* KernelContext::attr_tensor(std::string_view name) const {
  const Attribute* a = typed_attr(name, AttrType::kTensor);
  return a ? &a->t : nullptr;
}

const Graph* KernelContext::attr_graph(std::string_view name) const {
  const Attribute* a = typed_attr(name, AttrType::kGraph);
  return a ? a->g.get() : nullptr;
}

Result<std::vector<Tensor>> KernelContext::run_subgraph(const Graph& body, std::span<const Tensor> inputs) const {
  if (!subgraphs_) {
    return fail(StatusCode::kUnsupportedOp, "{} needs an executor that runs subgraphs", node_.op_type);
  }
  Result<std::vector<Tensor>> outputs = subgraphs_->run(body, inputs);
  if (!outputs.ok()) return outputs.status().with_node(node_.ref(node_index_));
  return outputs;
}

Status KernelContext::poll_cancel() const {
  if (!subgraphs_) return Status::OK();
  Status st = subgraphs_->poll_cancel();
  return st.ok() ? st : st.with_node(node_.ref(node_index_));
}

Status check_all_read(const KernelContext& ctx, int64_t since_version) {
  const Node& n = ctx.node();
  // consumed_inputs, of many ops' first versions, is a legacy optimization hint that ONNX defines
  // as never changing a result.
  ctx.ignore_attrs({"consumed_inputs"});
  if (const Attribute* a = ctx.unread_attr()) {
    return ctx.fail(StatusCode::kUnsupportedAttr,
                    "attribute '{}' of {}-{} is not implemented by Vernier's kernel; refusing rather than computing "
                    "without it",
                    a->name, n.op_type, since_version);
  }
  if (std::optional<size_t> i = ctx.unread_input()) {
    const OnnxSchema* schema = onnx_schema(n.domain, n.op_type, since_version);
    const std::string_view formal = schema ? schema->input_name(*i) : std::string_view();
    return ctx.fail(StatusCode::kUnsupportedAttr,
                    "input {}{} of {}-{} is not implemented by Vernier's kernel; refusing rather than computing "
                    "without it",
                    *i, formal.empty() ? std::string() : fmt::format(" ('{}')", formal), n.op_type, since_version);
  }
  return Status::OK();
}

Result<int64_t> normalize_axis(const KernelContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return ctx.fail(StatusCode::kInvalidModel, "axis {} is not in valid range [{}, {}]", axis, -rank, rank - 1);
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace vn::ops
