// SPDX-License-Identifier: Apache-2.0
#include "core/ir/onnx_proto.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <exception>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "core/common/logging.h"

namespace vn {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data and external data are little-endian; a big-endian host would need byte swapping");

std::string source_prefix(std::string_view source) { return source.empty() ? std::string() : fmt::format("{}: ", source); }

std::string onnx_type_name(int32_t type) {
  // The element types ONNX added after IR version 8, which libonnx 1.12's enum lacks.
  static constexpr std::string_view kNewer[] = {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                                                "uint4",        "int4",           "float4e2m1", "float8e8m0",
                                                "uint2",        "int2"};
  if (type >= 17 && type < 17 + static_cast<int32_t>(std::size(kNewer))) return std::string(kNewer[type - 17]);
  if (!onnx::TensorProto_DataType_IsValid(type)) return fmt::format("data type {}", type);
  std::string name = onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(type));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

std::string tensor_what(const TensorProto& proto) {
  return proto.name().empty() ? std::string("unnamed tensor") : fmt::format("tensor '{}'", proto.name());
}

// Releases the data a converted TensorProto holds; clear() alone keeps the string's capacity.
void release_tensor_data(TensorProto& proto) {
  if (proto.has_raw_data()) std::string().swap(*proto.mutable_raw_data());
  proto.clear_float_data();
  proto.clear_int32_data();
  proto.clear_int64_data();
  proto.clear_double_data();
  proto.clear_uint64_data();
  proto.clear_string_data();
}

// --- Tensor decoding -----------------------------------------------------------------------------

template <typename T, typename Field, typename Convert>
Result<Tensor> tensor_from_field(DType dtype, const Shape& shape, int64_t numel, const Field& field,
                                 std::string_view field_name, const std::string& where, Convert convert) {
  if (static_cast<int64_t>(field.size()) != numel) {
    return make_error(StatusCode::kInvalidModel, "{}{} holds {} values, but shape {} of {} needs {}", where, field_name,
                      field.size(), shape_to_string(shape), dtype_name(dtype), numel);
  }
  VN_ASSIGN_OR_RETURN(Tensor t, Tensor::create(dtype, shape));
  if (numel > 0) {
    T* out = t.mutable_data<T>();
    for (int64_t i = 0; i < numel; ++i) out[i] = convert(field.Get(static_cast<int>(i)));
  }
  return t;
}

template <typename T>
T from_bits16(int32_t v) {
  static_assert(sizeof(T) == 2);
  return Eigen::numext::bit_cast<T>(static_cast<uint16_t>(v & 0xFFFF));
}

Result<uint64_t> parse_u64(std::string_view text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return make_error(StatusCode::kInvalidModel, "'{}' is not a non-negative integer", text);
  }
  return v;
}

// Bytes `numel` elements take in a file: packed for the 4- and 2-bit types, else numel * size.
uint64_t stored_bytes(DType dtype, int64_t numel) {
  if (std::optional<NarrowFormat> f = dtype_narrow_format(dtype); f && narrow_packed_bits(*f) < 8) {
    return narrow_packed_size(*f, numel);
  }
  return static_cast<uint64_t>(numel) * dtype_size(dtype);
}

std::string packed_note(DType dtype) {
  const std::optional<NarrowFormat> f = dtype_narrow_format(dtype);
  if (!f || narrow_packed_bits(*f) == 8) return "";
  return fmt::format(" (packed, {} elements per byte)", 8 / narrow_packed_bits(*f));
}

// A tensor from its stored bytes (stored_bytes of them): unpacked for the 4- and 2-bit types.
Result<Tensor> tensor_from_stored(DType dtype, const Shape& shape, const uint8_t* data) {
  VN_ASSIGN_OR_RETURN(Tensor t, Tensor::create(dtype, shape));
  if (t.numel() == 0) return t;
  const std::optional<NarrowFormat> f = dtype_narrow_format(dtype);
  if (f && narrow_packed_bits(*f) < 8) {
    narrow_unpack(*f, data, t.numel(), static_cast<uint8_t*>(t.mutable_raw()));
  } else {
    std::memcpy(t.mutable_raw(), data, t.nbytes());
  }
  return t;
}

Result<Tensor> tensor_from_external(const TensorProto& proto, DType dtype, const Shape& shape, int64_t numel,
                                    ProtoReadContext& ctx, const std::string& where) {
  if (dtype == DType::kString) {
    return make_error(StatusCode::kInvalidModel, "{}string tensors cannot be stored as external data", where);
  }
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  bool has_location = false;
  for (const onnx::StringStringEntryProto& e : proto.external_data()) {
    if (e.key() == "location") {
      location = e.value();
      has_location = true;
    } else if (e.key() == "offset") {
      Result<uint64_t> v = parse_u64(e.value());
      if (!v.ok()) return v.status().with_context(where + "external data offset");
      offset = *v;
    } else if (e.key() == "length") {
      Result<uint64_t> v = parse_u64(e.value());
      if (!v.ok()) return v.status().with_context(where + "external data length");
      length = *v;
    }
  }
  if (!has_location) return make_error(StatusCode::kInvalidModel, "{}external data has no 'location'", where);
  VN_RETURN_IF_ERROR(external_location_check(location, where.substr(0, where.size() - 2)));
  if (ctx.base_dir.empty()) {
    return make_error(StatusCode::kInvalidModel,
                      "{}external data '{}' cannot be resolved: the folder it is relative to is unknown (load "
                      "from a file, or pass the folder as base_dir)",
                      where, location);
  }
  const uint64_t nbytes = stored_bytes(dtype, numel);
  if (length && *length != nbytes) {
    return make_error(StatusCode::kInvalidModel,
                      "{}external data length {} does not match the {} bytes of shape {} of {}{}", where, *length,
                      nbytes, shape_to_string(shape), dtype_name(dtype), packed_note(dtype));
  }
  const std::string key = std::filesystem::path(location).lexically_normal().string();
  std::shared_ptr<const MappedFile>& file = ctx.mapped[key];
  if (!file) {
    Result<std::shared_ptr<const MappedFile>> opened = MappedFile::open(ctx.base_dir / key);
    if (!opened.ok()) {
      ctx.mapped.erase(key);
      return opened.status().with_context(where + "external data");
    }
    file = *opened;
  }
  if (offset > file->size() || nbytes > file->size() - offset) {
    return make_error(StatusCode::kInvalidModel,
                      "{}external data at offset {} with length {} runs past the end of '{}' ({} bytes)", where, offset,
                      nbytes, location, file->size());
  }
  if (nbytes == 0) return Tensor::create(dtype, shape);
  const std::byte* data = file->data() + offset;
  if (nbytes != static_cast<uint64_t>(numel) * dtype_size(dtype)) {
    return tensor_from_stored(dtype, shape, reinterpret_cast<const uint8_t*>(data));  // packed: unpacked copy
  }
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) != 0) {
    // Writers that pack tensors back to back can leave one misaligned for its element type; reading
    // it through a typed pointer would be undefined, so it is copied instead of viewed.
    VN_ASSIGN_OR_RETURN(Tensor t, Tensor::create(dtype, shape));
    std::memcpy(t.mutable_raw(), data, nbytes);
    return t;
  }
  return Tensor::view(dtype, shape, file, data);
}

Result<Tensor> tensor_from_proto_impl(const TensorProto& proto, ProtoReadContext& ctx, const std::string& what) {
  const std::string where = source_prefix(ctx.source) + what + ": ";
  if (proto.data_type() == TensorProto::UNDEFINED) {
    return make_error(StatusCode::kInvalidModel, "{}has no data type (UNDEFINED)", where);
  }
  const std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) {
    return make_error(StatusCode::kUnsupportedDType, "{}ONNX {} is not supported", where,
                      onnx_type_name(proto.data_type()));
  }
  Shape shape;
  shape.reserve(static_cast<size_t>(proto.dims_size()));
  for (int64_t d : proto.dims()) {
    if (d < 0) return make_error(StatusCode::kInvalidModel, "{}negative dimension {} in its shape", where, d);
    shape.push_back(d);
  }
  Result<int64_t> counted = shape_numel_checked(shape, *dtype);
  if (!counted.ok()) return Status(StatusCode::kInvalidModel, where + counted.status().message());
  const int64_t numel = *counted;
  if (proto.has_segment()) {
    return make_error(StatusCode::kInvalidModel, "{}segmented TensorProto data is not supported", where);
  }
  if (proto.has_data_location() && proto.data_location() == TensorProto::EXTERNAL) {
    return tensor_from_external(proto, *dtype, shape, numel, ctx, where);
  }
  if (proto.has_raw_data()) {
    if (*dtype == DType::kString) {
      return make_error(StatusCode::kInvalidModel, "{}string tensors cannot use raw_data (use string_data)", where);
    }
    const uint64_t nbytes = stored_bytes(*dtype, numel);
    if (proto.raw_data().size() != nbytes) {
      return make_error(StatusCode::kInvalidModel, "{}raw_data holds {} bytes, but shape {} of {} needs {}{}", where,
                        proto.raw_data().size(), shape_to_string(shape), dtype_name(*dtype), nbytes,
                        packed_note(*dtype));
    }
    return tensor_from_stored(*dtype, shape, reinterpret_cast<const uint8_t*>(proto.raw_data().data()));
  }
  if (dtype_is_narrow(*dtype)) {
    // int32_data holds one stored byte per entry: a float8 code, or a byte of packed 4- or 2-bit
    // elements (as onnx.helper.make_tensor writes them).
    const uint64_t nbytes = stored_bytes(*dtype, numel);
    if (static_cast<uint64_t>(proto.int32_data_size()) != nbytes) {
      return make_error(StatusCode::kInvalidModel, "{}int32_data holds {} values, but shape {} of {} needs {}{}", where,
                        proto.int32_data_size(), shape_to_string(shape), dtype_name(*dtype), nbytes, packed_note(*dtype));
    }
    std::vector<uint8_t> bytes(static_cast<size_t>(nbytes));
    for (size_t i = 0; i < bytes.size(); ++i) {
      const int32_t v = proto.int32_data(static_cast<int>(i));
      if (v < 0 || v > 0xFF) {
        return make_error(StatusCode::kInvalidModel, "{}int32_data[{}] = {} is not a byte of {} data", where, i, v,
                          dtype_name(*dtype));
      }
      bytes[i] = static_cast<uint8_t>(v);
    }
    return tensor_from_stored(*dtype, shape, bytes.data());
  }
  const auto same = [](auto v) { return v; };
  switch (*dtype) {
    case DType::kFloat32:
      return tensor_from_field<float>(*dtype, shape, numel, proto.float_data(), "float_data", where, same);
    case DType::kFloat64:
      return tensor_from_field<double>(*dtype, shape, numel, proto.double_data(), "double_data", where, same);
    case DType::kInt32:
      return tensor_from_field<int32_t>(*dtype, shape, numel, proto.int32_data(), "int32_data", where, same);
    case DType::kInt16:
      return tensor_from_field<int16_t>(*dtype, shape, numel, proto.int32_data(), "int32_data", where,
                                        [](int32_t v) { return static_cast<int16_t>(v); });
    case DType::kInt8:
      return tensor_from_field<int8_t>(*dtype, shape, numel, proto.int32_data(), "int32_data", where,
                                       [](int32_t v) { return static_cast<int8_t>(v); });
    case DType::kUInt16:
      return tensor_from_field<uint16_t>(*dtype, shape, numel, proto.int32_data(), "int32_data", where,
                                         [](int32_t v) { return static_cast<uint16_t>(v); });
    case DType::kUInt8:
      return tensor_from_field<uint8_t>(*dtype, shape, numel, proto.int32_data(), "int32_data", where,
                                        [](int32_t v) { return static_cast<uint8_t>(v); });
    case DType::kBool:
      return tensor_from_field<bool>(*dtype, shape, numel, proto.int32_data(), "int32_data", where,
                                     [](int32_t v) { return v != 0; });
    case DType::kFloat16:
      return tensor_from_field<Eigen::half>(*dtype, shape, numel, proto.int32_data(), "int32_data", where,
                                            from_bits16<Eigen::half>);
    case DType::kBFloat16:
      return tensor_from_field<Eigen::bfloat16>(*dtype, shape, numel, proto.int32_data(), "int32_data", where,
                                                from_bits16<Eigen::bfloat16>);
    case DType::kInt64:
      return tensor_from_field<int64_t>(*dtype, shape, numel, proto.int64_data(), "int64_data", where, same);
    case DType::kUInt32:
      return tensor_from_field<uint32_t>(*dtype, shape, numel, proto.uint64_data(), "uint64_data", where,
                                         [](uint64_t v) { return static_cast<uint32_t>(v); });
    case DType::kUInt64:
      return tensor_from_field<uint64_t>(*dtype, shape, numel, proto.uint64_data(), "uint64_data", where, same);
    case DType::kString:
      return tensor_from_field<std::string>(*dtype, shape, numel, proto.string_data(), "string_data", where,
                                            [](const std::string& v) { return v; });
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
    case DType::kFloat4E2M1:
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kInt2:
    case DType::kUInt2: break;  // read from int32_data above
  }
  return make_error(StatusCode::kInternal, "{}unhandled dtype", where);
}

Result<Tensor> sparse_from_proto_impl(const onnx::SparseTensorProto& proto, ProtoReadContext& ctx,
                                      const std::string& what) {
  const std::string where = source_prefix(ctx.source) + what + ": ";
  VN_ASSIGN_OR_RETURN(Tensor values, tensor_from_proto_impl(proto.values(), ctx, what + " values"));
  if (values.rank() != 1) {
    return make_error(StatusCode::kInvalidModel, "{}sparse values must have rank 1, got shape {}", where,
                      shape_to_string(values.shape()));
  }
  Shape dims;
  for (int64_t d : proto.dims()) {
    if (d < 0) return make_error(StatusCode::kInvalidModel, "{}negative dimension {} in its shape", where, d);
    dims.push_back(d);
  }
  Result<Tensor> created = Tensor::create(values.dtype(), dims);
  if (!created.ok()) return Status(StatusCode::kInvalidModel, where + created.status().message());
  Tensor dense = std::move(created).value();
  const int64_t nnz = values.dim(0);
  if (nnz == 0) return dense;
  if (!proto.has_indices())
    return make_error(StatusCode::kInvalidModel, "{}{} sparse values but no indices", where, nnz);
  VN_ASSIGN_OR_RETURN(Tensor indices, tensor_from_proto_impl(proto.indices(), ctx, what + " indices"));
  if (indices.dtype() != DType::kInt64) {
    return make_error(StatusCode::kInvalidModel, "{}sparse indices must be int64, got {}", where,
                      dtype_name(indices.dtype()));
  }
  const int64_t rank = static_cast<int64_t>(dims.size());
  const bool linear = indices.rank() == 1 && indices.dim(0) == nnz;
  const bool coords = indices.rank() == 2 && indices.dim(0) == nnz && indices.dim(1) == rank;
  if (!linear && !coords) {
    return make_error(StatusCode::kInvalidModel, "{}sparse indices of shape {} fit neither ({},) nor ({}, {})", where,
                      shape_to_string(indices.shape()), nnz, nnz, rank);
  }
  const int64_t* idx = indices.data<int64_t>();
  std::vector<int64_t> positions(static_cast<size_t>(nnz));
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t pos = 0;
    if (linear) {
      pos = idx[k];
      if (pos < 0 || pos >= dense.numel()) {
        return make_error(StatusCode::kInvalidModel, "{}sparse index {} is outside [0, {})", where, pos, dense.numel());
      }
    } else {
      for (int64_t j = 0; j < rank; ++j) {
        const int64_t c = idx[k * rank + j];
        if (c < 0 || c >= dims[static_cast<size_t>(j)]) {
          return make_error(StatusCode::kInvalidModel, "{}sparse index {} of axis {} is outside [0, {})", where, c, j,
                            dims[static_cast<size_t>(j)]);
        }
        pos = pos * dims[static_cast<size_t>(j)] + c;
      }
    }
    positions[static_cast<size_t>(k)] = pos;
  }
  dispatch_dtype(values.dtype(), [&]<typename T>() {
    const T* src = values.data<T>();
    T* dst = dense.mutable_data<T>();
    for (int64_t k = 0; k < nnz; ++k) dst[positions[static_cast<size_t>(k)]] = src[k];
  });
  return dense;
}

// --- Value infos and types -----------------------------------------------------------------------

std::string type_description(const onnx::ValueInfoProto& proto) {
  if (!proto.has_type()) return "no type";
  const onnx::TypeProto& t = proto.type();
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return "a tensor of " + onnx_type_name(t.tensor_type().elem_type());
    case onnx::TypeProto::kSequenceType:
      return "a sequence";
    case onnx::TypeProto::kMapType:
      return "a map";
    case onnx::TypeProto::kOptionalType:
      return "an optional";
    case onnx::TypeProto::kSparseTensorType:
      return "a sparse tensor";
    case onnx::TypeProto::kOpaqueType:
      return "an opaque type";
    default:
      return "no type";
  }
}

// --- Attributes ----------------------------------------------------------------------------------

AttributeProto::AttributeType guess_attribute_type(const AttributeProto& p) {
  if (p.has_f()) return AttributeProto::FLOAT;
  if (p.has_i()) return AttributeProto::INT;
  if (p.has_s()) return AttributeProto::STRING;
  if (p.has_t()) return AttributeProto::TENSOR;
  if (p.has_g()) return AttributeProto::GRAPH;
  if (p.has_sparse_tensor()) return AttributeProto::SPARSE_TENSOR;
  if (p.has_tp()) return AttributeProto::TYPE_PROTO;
  if (p.floats_size() > 0) return AttributeProto::FLOATS;
  if (p.ints_size() > 0) return AttributeProto::INTS;
  if (p.strings_size() > 0) return AttributeProto::STRINGS;
  if (p.tensors_size() > 0) return AttributeProto::TENSORS;
  if (p.graphs_size() > 0) return AttributeProto::GRAPHS;
  if (p.sparse_tensors_size() > 0) return AttributeProto::SPARSE_TENSORS;
  if (p.type_protos_size() > 0) return AttributeProto::TYPE_PROTOS;
  return AttributeProto::UNDEFINED;
}

Result<std::shared_ptr<const Graph>> subgraph_from_proto(onnx::GraphProto& proto, ProtoReadContext& ctx) {
  VN_ASSIGN_OR_RETURN(Graph g, graph_from_proto(proto, ctx, /*main_graph=*/false));
  return std::make_shared<const Graph>(std::move(g));
}

// Converts an attribute of `owner`, including subgraphs (recursively) and tensors. An attribute
// without a type (IR version 1) gets the type of the field that is set. Sparse tensors are
// densified; a Constant's sparse_value becomes a dense `value` (the caller renames, see
// graph_from_proto). TYPE_PROTO attributes are kUnsupportedAttr. Tensor data is released from `p`
// once converted.
Result<Attribute> attribute_from_proto_impl(AttributeProto& p, ProtoReadContext& ctx, const std::string& owner) {
  Attribute a;
  a.name = p.name();
  a.doc_string = p.doc_string();
  a.ref_attr_name = p.ref_attr_name();
  const std::string what = fmt::format("attribute '{}'{}", p.name(), owner.empty() ? "" : " of " + owner);
  AttributeProto::AttributeType type = p.type();
  if (type == AttributeProto::UNDEFINED) type = guess_attribute_type(p);
  switch (type) {
    case AttributeProto::UNDEFINED:
      a.type = AttrType::kUndefined;
      break;
    case AttributeProto::FLOAT:
      a.type = AttrType::kFloat;
      a.f = p.f();
      break;
    case AttributeProto::INT:
      a.type = AttrType::kInt;
      a.i = p.i();
      break;
    case AttributeProto::STRING:
      a.type = AttrType::kString;
      a.s = p.s();
      break;
    case AttributeProto::TENSOR: {
      a.type = AttrType::kTensor;
      VN_ASSIGN_OR_RETURN(a.t, tensor_from_proto_impl(p.t(), ctx, what));
      release_tensor_data(*p.mutable_t());
      break;
    }
    case AttributeProto::SPARSE_TENSOR: {
      a.type = AttrType::kTensor;
      VN_ASSIGN_OR_RETURN(a.t, sparse_from_proto_impl(p.sparse_tensor(), ctx, what));
      break;
    }
    case AttributeProto::GRAPH: {
      a.type = AttrType::kGraph;
      VN_ASSIGN_OR_RETURN(a.g, subgraph_from_proto(*p.mutable_g(), ctx));
      break;
    }
    case AttributeProto::FLOATS:
      a.type = AttrType::kFloats;
      a.floats.assign(p.floats().begin(), p.floats().end());
      break;
    case AttributeProto::INTS:
      a.type = AttrType::kInts;
      a.ints.assign(p.ints().begin(), p.ints().end());
      break;
    case AttributeProto::STRINGS:
      a.type = AttrType::kStrings;
      a.strings.assign(p.strings().begin(), p.strings().end());
      break;
    case AttributeProto::TENSORS:
      a.type = AttrType::kTensors;
      for (int k = 0; k < p.tensors_size(); ++k) {
        VN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto_impl(p.tensors(k), ctx, fmt::format("{} [{}]", what, k)));
        a.tensors.push_back(std::move(t));
        release_tensor_data(*p.mutable_tensors(k));
      }
      break;
    case AttributeProto::SPARSE_TENSORS:
      a.type = AttrType::kTensors;
      for (int k = 0; k < p.sparse_tensors_size(); ++k) {
        VN_ASSIGN_OR_RETURN(Tensor t,
                            sparse_from_proto_impl(p.sparse_tensors(k), ctx, fmt::format("{} [{}]", what, k)));
        a.tensors.push_back(std::move(t));
      }
      break;
    case AttributeProto::GRAPHS:
      a.type = AttrType::kGraphs;
      for (int k = 0; k < p.graphs_size(); ++k) {
        VN_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> g, subgraph_from_proto(*p.mutable_graphs(k), ctx));
        a.graphs.push_back(std::move(g));
      }
      break;
    case AttributeProto::TYPE_PROTO:
    case AttributeProto::TYPE_PROTOS:
      return make_error(StatusCode::kUnsupportedAttr, "{}{}: type-proto attributes are not supported",
                        source_prefix(ctx.source), what);
    default:
      return make_error(StatusCode::kUnsupportedAttr, "{}{}: unknown attribute type {}", source_prefix(ctx.source), what,
                        static_cast<int>(type));
  }
  return a;
}

// --- Writing ------------------------------------------------------------------------------------

void add_external_entry(TensorProto& proto, const char* key, const std::string& value) {
  onnx::StringStringEntryProto* e = proto.add_external_data();
  e->set_key(key);
  e->set_value(value);
}

// Calls f(TensorProto&) for every tensor in the graph: initializers and attribute tensors, subgraphs
// included. Sparse tensors are not visited (they are never written by Vernier, and external sparse
// data is rejected during conversion as any other external tensor would be checked).
template <typename F>
void for_each_tensor_proto(const onnx::GraphProto& graph, F&& f) {
  for (const TensorProto& t : graph.initializer()) f(t);
  for (const onnx::SparseTensorProto& s : graph.sparse_initializer()) {
    f(s.values());
    f(s.indices());
  }
  for (const onnx::NodeProto& n : graph.node()) {
    for (const AttributeProto& a : n.attribute()) {
      if (a.has_t()) f(a.t());
      for (const TensorProto& t : a.tensors()) f(t);
      if (a.has_sparse_tensor()) {
        f(a.sparse_tensor().values());
        f(a.sparse_tensor().indices());
      }
      if (a.has_g()) for_each_tensor_proto(a.g(), f);
      for (const onnx::GraphProto& g : a.graphs()) for_each_tensor_proto(g, f);
    }
  }
}

}  // namespace

// --- Public: tensors -------------------------------------------------------------------------------

Result<Tensor> tensor_from_proto(const TensorProto& proto, ProtoReadContext& ctx) {
  return tensor_from_proto_impl(proto, ctx, tensor_what(proto));
}

Result<Tensor> tensor_from_sparse_proto(const onnx::SparseTensorProto& proto, ProtoReadContext& ctx) {
  return sparse_from_proto_impl(proto, ctx, "sparse " + tensor_what(proto.values()));
}

Status tensor_to_proto(const Tensor& tensor, std::string_view name, TensorProto& proto, ProtoWriteContext* ctx) {
  if (!tensor.defined()) {
    return make_error(StatusCode::kInvalidArgument, "tensor '{}' is undefined and cannot be written", name);
  }
  proto.set_name(std::string(name));
  proto.set_data_type(dtype_to_onnx(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  if (tensor.dtype() == DType::kString) {
    for (const std::string& s : tensor.values<std::string>()) proto.add_string_data(s);
    return Status::OK();
  }
  // The 4- and 2-bit types are stored packed; `stored` holds those bytes (as uint8).
  Tensor stored = tensor;
  if (std::optional<NarrowFormat> f = dtype_narrow_format(tensor.dtype()); f && narrow_packed_bits(*f) < 8) {
    stored = Tensor(DType::kUInt8, {static_cast<int64_t>(narrow_packed_size(*f, tensor.numel()))});
    narrow_pack(*f, static_cast<const uint8_t*>(tensor.raw()), tensor.numel(),
                static_cast<uint8_t*>(stored.mutable_raw()));
  }
  const uint64_t nbytes = stored.nbytes();
  if (ctx && nbytes > 0 && nbytes >= ctx->external_threshold) {
    proto.set_data_location(TensorProto::EXTERNAL);
    if (ctx->external_location.empty()) return Status::OK();
    const uint64_t offset =
        (ctx->external_end + kExternalDataAlignment - 1) / kExternalDataAlignment * kExternalDataAlignment;
    ctx->external.push_back(ExternalTensor{stored, offset});
    ctx->external_end = offset + nbytes;
    add_external_entry(proto, "location", ctx->external_location);
    add_external_entry(proto, "offset", std::to_string(offset));
    add_external_entry(proto, "length", std::to_string(nbytes));
    return Status::OK();
  }
  proto.set_raw_data(stored.raw(), nbytes);
  return Status::OK();
}

Result<NamedTensor> tensor_proto_decode(std::string_view bytes, const std::filesystem::path& base_dir,
                                        std::string_view source) {
  if (bytes.size() > kProtobufMaxBytes) {
    return make_error(StatusCode::kIoError, "{}{} bytes is over protobuf's 2 GiB limit on one message", source_prefix(source),
                      bytes.size());
  }
  TensorProto proto;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(static_cast<int>(kProtobufMaxBytes));
  if (!proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    return make_error(StatusCode::kIoError, "{}not a valid ONNX TensorProto (protobuf parse failed)", source_prefix(source));
  }
  ProtoReadContext ctx;
  ctx.base_dir = base_dir;
  ctx.source = std::string(source);
  Result<Tensor> t = tensor_from_proto(proto, ctx);
  if (!t.ok()) {
    // A file that is not a TensorProto often parses as one with no data type; say so plainly.
    if (proto.data_type() == TensorProto::UNDEFINED && proto.dims_size() == 0) {
      return make_error(StatusCode::kIoError, "{}not a valid ONNX TensorProto (no data type)", source_prefix(source));
    }
    // The file is not a model: what makes it unreadable is an I/O-level problem, not kInvalidModel.
    if (t.status().code() == StatusCode::kInvalidModel) return Status(StatusCode::kIoError, t.status().message());
    return t.status();
  }
  return NamedTensor{proto.name(), std::move(t).value()};
}

Result<std::string> tensor_proto_encode(const Tensor& tensor, const std::string& name) {
  TensorProto proto;
  VN_RETURN_IF_ERROR(tensor_to_proto(tensor, name, proto));
  const size_t size = proto.ByteSizeLong();
  if (size > kProtobufMaxBytes) {
    return make_error(StatusCode::kInvalidArgument,
                      "tensor '{}' would serialize to {} bytes, over protobuf's 2 GiB limit on one TensorProto", name,
                      size);
  }
  std::string out;
  if (!proto.SerializeToString(&out)) {
    return make_error(StatusCode::kInternal, "tensor '{}': protobuf serialization failed", name);
  }
  return out;
}

// --- Public: value infos ---------------------------------------------------------------------------

bool value_info_proto_supported(const onnx::ValueInfoProto& proto) {
  if (!proto.has_type() || proto.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return true;
  if (proto.type().value_case() != onnx::TypeProto::kTensorType) return false;
  const int32_t elem = proto.type().tensor_type().elem_type();
  return elem == TensorProto::UNDEFINED || dtype_from_onnx(elem).has_value();
}

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& proto) {
  ValueInfo v;
  v.name = proto.name();
  v.doc_string = proto.doc_string();
  if (!proto.has_type() || proto.type().value_case() != onnx::TypeProto::kTensorType) return v;
  const onnx::TypeProto::Tensor& tt = proto.type().tensor_type();
  if (tt.has_elem_type()) v.dtype = dtype_from_onnx(tt.elem_type());
  if (tt.has_shape()) {
    std::vector<Dim> dims;
    dims.reserve(static_cast<size_t>(tt.shape().dim_size()));
    for (const onnx::TensorShapeProto::Dimension& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        dims.push_back(Dim::of(d.dim_value()));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        dims.push_back(Dim::named(d.dim_param()));
      } else {
        dims.push_back(Dim{});
      }
    }
    v.shape = std::move(dims);
  }
  return v;
}

void value_info_to_proto(const ValueInfo& info, onnx::ValueInfoProto& proto) {
  proto.set_name(info.name);
  if (!info.doc_string.empty()) proto.set_doc_string(info.doc_string);
  if (!info.dtype && !info.shape) return;
  onnx::TypeProto::Tensor* tt = proto.mutable_type()->mutable_tensor_type();
  if (info.dtype) tt->set_elem_type(dtype_to_onnx(*info.dtype));
  if (info.shape) {
    onnx::TensorShapeProto* shape = tt->mutable_shape();
    for (const Dim& d : *info.shape) {
      onnx::TensorShapeProto::Dimension* out = shape->add_dim();
      if (d.known()) {
        out->set_dim_value(d.value);
      } else if (!d.param.empty()) {
        out->set_dim_param(d.param);
      }
    }
  }
}

// --- Public: attributes, graphs, models --------------------------------------------------------------

Status attribute_to_proto(const Attribute& attr, AttributeProto& proto, ProtoWriteContext* ctx) {
  proto.set_name(attr.name);
  if (!attr.doc_string.empty()) proto.set_doc_string(attr.doc_string);
  if (!attr.ref_attr_name.empty()) proto.set_ref_attr_name(attr.ref_attr_name);
  switch (attr.type) {
    case AttrType::kUndefined:
      proto.set_type(AttributeProto::UNDEFINED);
      break;
    case AttrType::kFloat:
      proto.set_type(AttributeProto::FLOAT);
      proto.set_f(attr.f);
      break;
    case AttrType::kInt:
      proto.set_type(AttributeProto::INT);
      proto.set_i(attr.i);
      break;
    case AttrType::kString:
      proto.set_type(AttributeProto::STRING);
      proto.set_s(attr.s);
      break;
    case AttrType::kTensor:
      proto.set_type(AttributeProto::TENSOR);
      VN_RETURN_IF_ERROR(
          tensor_to_proto(attr.t, "", *proto.mutable_t(), ctx).with_context("attribute '" + attr.name + "'"));
      break;
    case AttrType::kGraph:
      proto.set_type(AttributeProto::GRAPH);
      if (!attr.g) return make_error(StatusCode::kInvalidArgument, "attribute '{}' has no graph", attr.name);
      VN_RETURN_IF_ERROR(graph_to_proto(*attr.g, *proto.mutable_g(), ctx));
      break;
    case AttrType::kFloats:
      proto.set_type(AttributeProto::FLOATS);
      for (float v : attr.floats) proto.add_floats(v);
      break;
    case AttrType::kInts:
      proto.set_type(AttributeProto::INTS);
      for (int64_t v : attr.ints) proto.add_ints(v);
      break;
    case AttrType::kStrings:
      proto.set_type(AttributeProto::STRINGS);
      for (const std::string& v : attr.strings) proto.add_strings(v);
      break;
    case AttrType::kTensors:
      proto.set_type(AttributeProto::TENSORS);
      for (const Tensor& t : attr.tensors) {
        VN_RETURN_IF_ERROR(
            tensor_to_proto(t, "", *proto.add_tensors(), ctx).with_context("attribute '" + attr.name + "'"));
      }
      break;
    case AttrType::kGraphs:
      proto.set_type(AttributeProto::GRAPHS);
      for (const std::shared_ptr<const Graph>& g : attr.graphs) {
        if (!g) return make_error(StatusCode::kInvalidArgument, "attribute '{}' has a missing graph", attr.name);
        VN_RETURN_IF_ERROR(graph_to_proto(*g, *proto.add_graphs(), ctx));
      }
      break;
  }
  return Status::OK();
}

Result<Graph> graph_from_proto(onnx::GraphProto& proto, ProtoReadContext& ctx, bool main_graph) {
  Graph g;
  g.name = proto.name();
  g.doc_string = proto.doc_string();
  const auto convert_io = [&](const onnx::ValueInfoProto& v, const char* kind) -> Result<ValueInfo> {
    if (main_graph && !value_info_proto_supported(v)) {
      return make_error(StatusCode::kUnsupportedDType, "{}graph {} '{}' is {}; Vernier handles tensors of {} only",
                        source_prefix(ctx.source), kind, v.name(), type_description(v),
                        "bool, integer, floating-point and string elements");
    }
    return value_info_from_proto(v);
  };
  g.inputs.reserve(static_cast<size_t>(proto.input_size()));
  for (const onnx::ValueInfoProto& v : proto.input()) {
    VN_ASSIGN_OR_RETURN(ValueInfo info, convert_io(v, "input"));
    g.inputs.push_back(std::move(info));
  }
  for (const onnx::ValueInfoProto& v : proto.output()) {
    VN_ASSIGN_OR_RETURN(ValueInfo info, convert_io(v, "output"));
    g.outputs.push_back(std::move(info));
  }
  for (const onnx::ValueInfoProto& v : proto.value_info()) {
    // Non-tensor entries carry nothing Vernier can use; shape inference can recreate them on export.
    if (v.has_type() && v.type().value_case() == onnx::TypeProto::kTensorType) {
      g.value_info.push_back(value_info_from_proto(v));
    }
  }
  g.initializers.reserve(static_cast<size_t>(proto.initializer_size()));
  for (TensorProto& t : *proto.mutable_initializer()) {
    VN_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_proto(t, ctx));
    g.initializers.push_back(Initializer{t.name(), std::move(tensor)});
    release_tensor_data(t);
  }
  for (const onnx::SparseTensorProto& s : proto.sparse_initializer()) {
    VN_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_sparse_proto(s, ctx));
    g.initializers.push_back(Initializer{s.values().name(), std::move(tensor)});
  }
  g.nodes.reserve(static_cast<size_t>(proto.node_size()));
  for (int i = 0; i < proto.node_size(); ++i) {
    onnx::NodeProto& np = *proto.mutable_node(i);
    Node n;
    n.name = np.name();
    n.op_type = np.op_type();
    n.domain = np.domain();
    n.doc_string = np.doc_string();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    const std::string owner = fmt::format("node '{}' ({})", np.name(), np.op_type());
    n.attributes.reserve(static_cast<size_t>(np.attribute_size()));
    for (AttributeProto& ap : *np.mutable_attribute()) {
      Result<Attribute> a = attribute_from_proto_impl(ap, ctx, owner);
      if (!a.ok()) return a.status().with_node(n.ref(i));
      // A sparse constant becomes a dense one: Vernier's Constant reads `value`.
      if (n.op_type == "Constant" && is_default_domain(n.domain) && a->name == "sparse_value") a->name = "value";
      n.attributes.push_back(std::move(a).value());
    }
    g.nodes.push_back(std::move(n));
  }
  return g;
}

Status graph_to_proto(const Graph& graph, onnx::GraphProto& proto, ProtoWriteContext* ctx) {
  proto.set_name(graph.name);
  if (!graph.doc_string.empty()) proto.set_doc_string(graph.doc_string);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    onnx::NodeProto* np = proto.add_node();
    for (const std::string& in : n.inputs) np->add_input(in);
    for (const std::string& out : n.outputs) np->add_output(out);
    if (!n.name.empty()) np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    if (!n.doc_string.empty()) np->set_doc_string(n.doc_string);
    for (const Attribute& a : n.attributes) {
      Status st = attribute_to_proto(a, *np->add_attribute(), ctx);
      if (!st.ok()) return st.with_node(n.ref(static_cast<int64_t>(i)));
    }
  }
  for (const Initializer& init : graph.initializers) {
    VN_RETURN_IF_ERROR(tensor_to_proto(init.tensor, init.name, *proto.add_initializer(), ctx));
  }
  for (const ValueInfo& v : graph.inputs) value_info_to_proto(v, *proto.add_input());
  for (const ValueInfo& v : graph.outputs) value_info_to_proto(v, *proto.add_output());
  for (const ValueInfo& v : graph.value_info) value_info_to_proto(v, *proto.add_value_info());
  return Status::OK();
}

Result<Model> model_from_proto(onnx::ModelProto& proto, ProtoReadContext& ctx) {
  Model m;
  m.ir_version = proto.ir_version();
  for (const onnx::OperatorSetIdProto& o : proto.opset_import())
    m.opset_imports.push_back(OpsetId{o.domain(), o.version()});
  m.producer_name = proto.producer_name();
  m.producer_version = proto.producer_version();
  m.domain = proto.domain();
  m.model_version = proto.model_version();
  m.doc_string = proto.doc_string();
  for (const onnx::StringStringEntryProto& e : proto.metadata_props()) m.metadata.emplace_back(e.key(), e.value());
  if (proto.functions_size() > 0) {
    VN_LOG_WARNING(
        "{}{} model-local function(s) dropped: Vernier does not keep them, and nodes calling them will "
        "be reported as unsupported ops",
        source_prefix(ctx.source), proto.functions_size());
  }
  if (proto.training_info_size() > 0) {
    VN_LOG_WARNING("{}training info dropped: Vernier keeps the inference graph only", source_prefix(ctx.source));
  }
  VN_ASSIGN_OR_RETURN(m.graph, graph_from_proto(*proto.mutable_graph(), ctx, /*main_graph=*/true));
  m.base_dir = ctx.base_dir;
  return m;
}

Status model_to_proto(const Model& model, onnx::ModelProto& proto, ProtoWriteContext* ctx) {
  proto.set_ir_version(model.ir_version);
  for (const OpsetId& o : model.opset_imports) {
    onnx::OperatorSetIdProto* op = proto.add_opset_import();
    op->set_domain(o.domain);
    op->set_version(o.version);
  }
  if (!model.producer_name.empty()) proto.set_producer_name(model.producer_name);
  if (!model.producer_version.empty()) proto.set_producer_version(model.producer_version);
  if (!model.domain.empty()) proto.set_domain(model.domain);
  if (model.model_version != 0) proto.set_model_version(model.model_version);
  if (!model.doc_string.empty()) proto.set_doc_string(model.doc_string);
  for (const auto& [key, value] : model.metadata) {
    onnx::StringStringEntryProto* e = proto.add_metadata_props();
    e->set_key(key);
    e->set_value(value);
  }
  return graph_to_proto(model.graph, *proto.mutable_graph(), ctx);
}

// --- Public: protobuf and libonnx wrappers -----------------------------------------------------------

namespace {

// Serves a mapped file to protobuf in blocks and releases the pages before the block being read:
// protobuf copies every field out of the stream, and the ZeroCopyInputStream contract lets it
// keep only the latest block.
class ReleasingFileStream final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  explicit ReleasingFileStream(const MappedFile& file) : file_(file) {}

  bool Next(const void** data, int* size) override {
    if (pos_ >= file_.size()) return false;
    file_.release_before(pos_);
    const uint64_t n = std::min<uint64_t>(kBlock, file_.size() - pos_);
    *data = file_.data() + pos_;
    *size = static_cast<int>(n);
    pos_ += n;
    return true;
  }
  void BackUp(int count) override { pos_ -= static_cast<uint64_t>(count); }
  bool Skip(int count) override {
    const uint64_t left = file_.size() - pos_;
    pos_ += std::min<uint64_t>(static_cast<uint64_t>(count), left);
    return static_cast<uint64_t>(count) <= left;
  }
  int64_t ByteCount() const override { return static_cast<int64_t>(pos_); }

 private:
  static constexpr uint64_t kBlock = uint64_t{1} << 20;
  const MappedFile& file_;
  uint64_t pos_ = 0;
};

// The checks and the parse shared by both entry points, from an open CodedInputStream.
Status parse_checked(uint64_t size, std::string_view source, google::protobuf::io::CodedInputStream& in,
                     onnx::ModelProto& proto) {
  if (size > kProtobufMaxBytes) {
    return make_error(StatusCode::kInvalidModel,
                      "{}{} bytes is over protobuf's 2 GiB limit on one message; a model this large must keep its "
                      "weights in external data",
                      source_prefix(source), size);
  }
  if (size == 0)
    return make_error(StatusCode::kInvalidModel, "{}not a valid ONNX model (the file is empty)", source_prefix(source));
  in.SetTotalBytesLimit(static_cast<int>(kProtobufMaxBytes));
  if (!proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    return make_error(StatusCode::kInvalidModel, "{}not a valid ONNX model (protobuf parse failed)", source_prefix(source));
  }
  if (!proto.has_graph()) {
    return make_error(StatusCode::kInvalidModel, "{}not a valid ONNX model (no graph in the protobuf message)",
                      source_prefix(source));
  }
  return Status::OK();
}

}  // namespace

Status model_proto_parse(const MappedFile& file, std::string_view source, onnx::ModelProto& proto) {
  ReleasingFileStream stream(file);
  google::protobuf::io::CodedInputStream in(&stream);
  return parse_checked(file.size(), source, in, proto);
}

Status model_proto_parse(std::string_view bytes, std::string_view source, onnx::ModelProto& proto) {
  // The size is checked before it is narrowed to protobuf's int.
  const int size = static_cast<int>(std::min<uint64_t>(bytes.size(), kProtobufMaxBytes));
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), size);
  return parse_checked(bytes.size(), source, in, proto);
}

Status external_location_check(std::string_view location, std::string_view what) {
  if (location.empty()) return make_error(StatusCode::kInvalidModel, "{}: external data location is empty", what);
  if (location.find('\0') != std::string_view::npos) {
    return make_error(StatusCode::kInvalidModel, "{}: external data location contains a NUL byte", what);
  }
  const std::filesystem::path p(location);
  if (p.is_absolute() || p.has_root_path()) {
    return make_error(StatusCode::kInvalidModel,
                      "{}: external data location '{}' is an absolute path; only paths relative to the model's folder "
                      "are allowed",
                      what, location);
  }
  const std::filesystem::path normal = p.lexically_normal();
  if (normal.empty() || normal == ".") {
    return make_error(StatusCode::kInvalidModel, "{}: external data location '{}' names no file", what, location);
  }
  if (*normal.begin() == "..") {
    return make_error(StatusCode::kInvalidModel,
                      "{}: external data location '{}' escapes the model's folder ('..'); only files inside it are "
                      "allowed",
                      what, location);
  }
  return Status::OK();
}

Status model_proto_check_external_locations(const onnx::ModelProto& proto, const std::filesystem::path& base_dir,
                                            std::string_view source) {
  Status first;
  for_each_tensor_proto(proto.graph(), [&](const TensorProto& t) {
    if (!first.ok() || !t.has_data_location() || t.data_location() != TensorProto::EXTERNAL) return;
    if (base_dir.empty()) {
      first = make_error(StatusCode::kInvalidModel,
                         "{}{}: external data cannot be resolved: the model's folder is unknown (load the model from "
                         "its file, or pass the folder as base_dir)",
                         source_prefix(source), tensor_what(t));
      return;
    }
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      if (e.key() != "location") continue;
      Status st = external_location_check(e.value(), tensor_what(t));
      if (!st.ok()) first = st.with_context(source);
    }
  });
  return first;
}

std::optional<std::string> checker_blind_spot(const onnx::ModelProto& model) {
  if (model.ir_version() > onnx::IR_VERSION) {
    return fmt::format("IR version {} is newer than libonnx's {}", model.ir_version(),
                       static_cast<int>(onnx::IR_VERSION));
  }
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const onnx::OperatorSetIdProto& o : model.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? std::string() : o.domain();
    const auto range = ranges.find(domain);
    if (range != ranges.end() && o.version() > range->second.second) {
      return fmt::format("opset {} of domain '{}' is newer than libonnx's {}", o.version(), o.domain(),
                         range->second.second);
    }
  }
  return std::nullopt;
}

Status model_proto_check(const onnx::ModelProto& model, const std::filesystem::path& model_dir,
                         std::string_view source) {
  if (std::optional<std::string> reason = checker_blind_spot(model)) {
    VN_LOG_WARNING("{}{}; the ONNX checker was skipped because it would judge the model by older rules", source_prefix(source),
                   *reason);
    return Status::OK();
  }
  // This is libonnx 1.12's check_model(const ModelProto&, CheckerContext&), which the header does not
  // declare; calling its public pieces lets the checker look for external data in `model_dir` instead
  // of the current directory.
  try {
    onnx::checker::CheckerContext ctx;
    std::string dir = model_dir.string();
    if (!dir.empty() && dir.back() != '/') dir += '/';
    ctx.set_model_dir(dir);
    if (!model.ir_version()) fail_check("The model does not have an ir_version set properly.");
    if (model.ir_version() > onnx::IR_VERSION) fail_check("Your model ir_version is higher than the checker's.");
    std::unordered_set<std::string> keys;
    for (const onnx::StringStringEntryProto& entry : model.metadata_props()) {
      if (!keys.insert(entry.key()).second) fail_check("Your model has duplicate keys in metadata_props.");
    }
    ctx.set_ir_version(static_cast<int>(model.ir_version()));
    std::unordered_map<std::string, int> opset_imports;
    for (const onnx::OperatorSetIdProto& o : model.opset_import()) {
      opset_imports[o.domain()] = static_cast<int>(o.version());
    }
    if (model.ir_version() >= 3) {
      if (opset_imports.empty()) fail_check("model with IR version >= 3 must specify opset_import for ONNX");
    } else if (opset_imports.empty()) {
      opset_imports[onnx::ONNX_DOMAIN] = 1;
    } else {
      fail_check("model with IR version < 3 cannot have opset_import specified");
    }
    ctx.set_opset_imports(opset_imports);
    onnx::checker::LexicalScopeContext lex_ctx;
    onnx::checker::check_graph(model.graph(), ctx, lex_ctx);
    if (ctx.get_ir_version() >= 0x00000008) onnx::checker::check_model_local_functions(model, ctx, lex_ctx);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "{}ONNX checker: {}", source_prefix(source), one_line(e.what()));
  }
  return Status::OK();
}

namespace {

// Strict mode: node-level failures are collected and reported, not skipped silently.
const onnx::ShapeInferenceOptions kInferenceOptions(/*check_type_val=*/false, /*strict_mode_val=*/1,
                                                   /*data_prop_val=*/false);

// A node whose shape inference in libonnx 1.12 (convPoolShapeInference, convTransposeShapeInference)
// indexes past the end of a vector when W's rank differs from X's, or when "pads" is not two values
// per spatial axis of X (or strides, dilations, kernel_shape one): a crash, not an error. Inputs are
// positions in the node; w is -1 for pooling.
struct ConvLikeOp {
  std::string_view op_type;
  int x;
  int w;
};
constexpr ConvLikeOp kConvLikeOps[] = {{"Conv", 0, 1},          {"ConvInteger", 0, 1}, {"QLinearConv", 0, 3},
                                       {"ConvTranspose", 0, 1}, {"MaxPool", 0, -1},    {"AveragePool", 0, -1},
                                       {"LpPool", 0, -1}};
// Attributes with one value per spatial axis (pads: two).
constexpr std::string_view kPerAxisAttributes[] = {"pads", "strides", "dilations", "kernel_shape", "output_padding"};

const ConvLikeOp* conv_like(const onnx::NodeProto& node) {
  if (node.domain() != "" && node.domain() != "ai.onnx") return nullptr;
  for (const ConvLikeOp& op : kConvLikeOps) {
    if (node.op_type() == op.op_type) return &op;
  }
  return nullptr;
}

// One conv-like node of the rank-probing copy, with the graphs that can define its inputs
// (its own graph first, then the enclosing ones).
struct ConvProbe {
  std::string node_name;
  std::string op_type;
  std::string x;
  std::string w;  ///< empty for pooling
  std::vector<std::pair<std::string, int>> per_axis;  ///< kPerAxisAttributes present, with their sizes
  std::vector<const onnx::GraphProto*> scopes;
};

// Replaces every conv-like node of `graph` (subgraphs included) by Identity(X), whose output has
// the rank the node's output would have, and records it. Float weights are dropped: inference reads
// only their dims, and the copy must not double the memory of a large model.
void neutralize_conv_like(onnx::GraphProto& graph, std::vector<const onnx::GraphProto*> scopes,
                          std::vector<ConvProbe>& probes) {
  scopes.insert(scopes.begin(), &graph);
  for (onnx::TensorProto& init : *graph.mutable_initializer()) {
    if (init.data_type() != onnx::TensorProto::INT64 && init.data_type() != onnx::TensorProto::INT32) {
      init.clear_raw_data();
      init.clear_float_data();
    }
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) neutralize_conv_like(*attr.mutable_g(), scopes, probes);
      for (onnx::GraphProto& g : *attr.mutable_graphs()) neutralize_conv_like(g, scopes, probes);
    }
    const ConvLikeOp* op = conv_like(node);
    if (!op || node.input_size() <= std::max(op->x, op->w) || node.output_size() < 1) continue;
    ConvProbe probe{node.name(), node.op_type(), node.input(op->x), op->w >= 0 ? node.input(op->w) : "", {}, scopes};
    for (const onnx::AttributeProto& attr : node.attribute()) {
      for (std::string_view name : kPerAxisAttributes) {
        if (attr.name() == name) probe.per_axis.emplace_back(attr.name(), attr.ints_size());
      }
    }
    probes.push_back(std::move(probe));
    const std::string x = node.input(op->x), y = node.output(0);
    node.Clear();
    node.set_op_type("Identity");
    node.add_input(x);
    node.add_output(y);
  }
}

// The rank of `name` as the graphs in `scopes` declare or infer it, or -1 when unknown.
int rank_in_scopes(const std::string& name, const std::vector<const onnx::GraphProto*>& scopes) {
  const auto rank_of = [](const onnx::ValueInfoProto& v) {
    return v.type().has_tensor_type() && v.type().tensor_type().has_shape() ? v.type().tensor_type().shape().dim_size()
                                                                             : -1;
  };
  for (const onnx::GraphProto* g : scopes) {
    for (const onnx::TensorProto& t : g->initializer()) {
      if (t.name() == name) return t.dims_size();
    }
    for (const auto* list : {&g->input(), &g->value_info(), &g->output()}) {
      for (const onnx::ValueInfoProto& v : *list) {
        if (v.name() == name) return rank_of(v);
      }
    }
  }
  return -1;
}

// Attributes libonnx 1.12's shape inference divides by without checking (found by fuzz_onnx_model:
// MaxPool strides [0, 2] raised SIGFPE): they must be positive.
struct DivisorAttribute {
  std::string_view op_type;
  std::string_view attribute;
};
constexpr DivisorAttribute kDivisorAttributes[] = {
    {"Conv", "strides"},          {"Conv", "dilations"},        {"ConvInteger", "strides"},
    {"ConvInteger", "dilations"}, {"QLinearConv", "strides"},   {"QLinearConv", "dilations"},
    {"ConvTranspose", "strides"}, {"ConvTranspose", "dilations"}, {"MaxPool", "strides"},
    {"MaxPool", "dilations"},     {"AveragePool", "strides"},   {"LpPool", "strides"},
    {"MaxUnpool", "strides"},     {"DepthToSpace", "blocksize"}, {"SpaceToDepth", "blocksize"},
};

Status check_divisor_attributes(const onnx::GraphProto& graph, std::string_view source) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) VN_RETURN_IF_ERROR(check_divisor_attributes(attr.g(), source));
      for (const onnx::GraphProto& g : attr.graphs()) VN_RETURN_IF_ERROR(check_divisor_attributes(g, source));
      if (node.domain() != "" && node.domain() != "ai.onnx") continue;
      for (const DivisorAttribute& d : kDivisorAttributes) {
        if (node.op_type() != d.op_type || attr.name() != d.attribute) continue;
        bool positive = !attr.has_i() || attr.i() > 0;
        for (int64_t v : attr.ints()) positive = positive && v > 0;
        if (!positive) {
          return make_error(StatusCode::kInvalidModel, "{}node '{}' ({}): attribute '{}' must be positive", source_prefix(source),
                            node.name(), node.op_type(), attr.name());
        }
      }
    }
  }
  return Status::OK();
}

bool has_conv_like(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (conv_like(node)) return true;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g() && has_conv_like(attr.g())) return true;
      for (const onnx::GraphProto& g : attr.graphs()) {
        if (has_conv_like(g)) return true;
      }
    }
  }
  return false;
}

// Copies `proto` without the payloads of its large floating-point initializers (the weights):
// inference on the copy needs their shapes only, and copying a ResNet's weights would double the
// peak memory of loading it. Integer initializers, which shape computations read, are copied
// whole. The payloads are moved out of `proto` for the copy and back.
onnx::ModelProto copy_without_weights(onnx::ModelProto& proto) {
  constexpr size_t kSmall = 4096;
  std::vector<std::pair<onnx::TensorProto*, std::string>> moved;
  for (onnx::TensorProto& t : *proto.mutable_graph()->mutable_initializer()) {
    const int type = t.data_type();
    const bool weights = type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::FLOAT16 ||
                         type == onnx::TensorProto::DOUBLE || type == onnx::TensorProto::BFLOAT16;
    if (weights && t.has_raw_data() && t.raw_data().size() > kSmall) {
      moved.emplace_back(&t, std::string());
      moved.back().second.swap(*t.mutable_raw_data());
    }
  }
  struct Restore {
    std::vector<std::pair<onnx::TensorProto*, std::string>>& moved;
    ~Restore() {
      for (auto& [t, bytes] : moved) t->mutable_raw_data()->swap(bytes);
    }
  } restore{moved};
  return proto;
}

// Finds the nodes libonnx would crash on: zero divisors in attributes, and conv-like nodes whose
// input ranks differ, found by inferring ranks on a copy in which they cannot crash it.
Status check_inference_hazards(onnx::ModelProto& proto, std::string_view source,
                               const onnx::ShapeInferenceOptions& options) {
  VN_RETURN_IF_ERROR(check_divisor_attributes(proto.graph(), source));
  if (!has_conv_like(proto.graph())) return Status::OK();
  onnx::ModelProto probe = copy_without_weights(proto);
  std::vector<ConvProbe> probes;
  neutralize_conv_like(*probe.mutable_graph(), {}, probes);
  try {
    onnx::shape_inference::InferShapes(probe, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    // What fails here fails the real inference too, which reports it; ranks found so far still count.
  }
  for (const ConvProbe& p : probes) {
    const int x = rank_in_scopes(p.x, p.scopes), w = p.w.empty() ? -1 : rank_in_scopes(p.w, p.scopes);
    for (const auto& [name, size] : p.per_axis) {
      const int expected = (x - 2) * (name == "pads" ? 2 : 1);
      if (x >= 2 && size != expected) {
        return make_error(StatusCode::kInvalidModel,
                          "{}node '{}' ({}): attribute '{}' has {} values, but input '{}' of rank {} needs {}",
                          source_prefix(source), p.node_name, p.op_type, name, size, p.x, x, expected);
      }
    }
    if (x >= 0 && w >= 0 && w != x) {
      return make_error(StatusCode::kInvalidModel, "{}node '{}' ({}): weight '{}' has rank {}, but input '{}' has rank {}",
                        source_prefix(source), p.node_name, p.op_type, p.w, w, p.x, x);
    }
  }
  return Status::OK();
}

}  // namespace

Status model_proto_check_inference_hazards(onnx::ModelProto& proto, std::string_view source) {
  try {
    return check_inference_hazards(proto, source, kInferenceOptions);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "{}{}", source_prefix(source), one_line(e.what()));
  }
}

Status model_proto_infer_shapes(onnx::ModelProto& proto, std::string_view source, bool hazards_checked) {
  try {
    const onnx::ShapeInferenceOptions& options = kInferenceOptions;
    if (!hazards_checked) {
      Status hazards = check_inference_hazards(proto, source, options);
      if (!hazards.ok()) return make_error(StatusCode::kInvalidModel, "{}shape inference not run: {}", source_prefix(source), hazards.message());
    }
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "{}shape inference failed: {}", source_prefix(source), one_line(e.what()));
  }
  return Status::OK();
}

std::string one_line(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  bool space = false;
  for (char c : message) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace vn
