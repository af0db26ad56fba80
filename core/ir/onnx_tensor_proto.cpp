// SPDX-License-Identifier: Apache-2.0
// TensorProto conversions: decoding every data form (raw, typed fields, packed narrow types,
// external data, sparse) and encoding, and the test-data .pb entry points.
#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <utility>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>
#include <Eigen/Core>

#include "core/ir/onnx_proto.h"
#include "core/ir/onnx_proto_detail.h"

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

namespace detail {

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

}  // namespace detail

namespace {

using detail::tensor_what;
using onnx::TensorProto;

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

// --- Writing ------------------------------------------------------------------------------------

void add_external_entry(TensorProto& proto, const char* key, const std::string& value) {
  onnx::StringStringEntryProto* e = proto.add_external_data();
  e->set_key(key);
  e->set_value(value);
}

}  // namespace

namespace detail {

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

}  // namespace detail

using detail::sparse_from_proto_impl;
using detail::tensor_from_proto_impl;

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

}  // namespace vn
