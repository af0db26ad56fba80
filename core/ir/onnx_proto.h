// SPDX-License-Identifier: Apache-2.0
// Internal to core/ir and core/io: conversions between Vernier's IR and ONNX protobuf messages, and
// the libonnx calls (checker, shape inference, schema lookups) wrapped so that nothing they throw
// escapes. The ONNX message types are only forward-declared here; onnx_tensor_proto.cpp (tensors),
// onnx_proto.cpp (value infos, attributes, graphs, models, parsing), onnx_checks.cpp (checker and
// shape inference), onnx_fields.cpp, onnx_import.cpp, onnx_export.cpp and onnx_signature.cpp are the
// only files that include libonnx headers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/mapped_file.h"
#include "core/ir/tensor.h"
#include "core/ir/tensor_map.h"

namespace onnx {
class AttributeProto;
class GraphProto;
class ModelProto;
class SparseTensorProto;
class TensorProto;
class ValueInfoProto;
}  // namespace onnx

namespace vn {

/// The largest message protobuf can parse or serialize: 2^31 - 1 bytes.
inline constexpr uint64_t kProtobufMaxBytes = std::numeric_limits<int32_t>::max();

/// Alignment of each tensor inside an external data file written by Vernier. Page-aligned data can be
/// mapped and viewed in place by any reader.
inline constexpr uint64_t kExternalDataAlignment = 4096;

/// State shared while converting one proto to IR: where external data lives and the files mapped so far.
struct ProtoReadContext {
  /// The model's folder; external data locations are resolved against it. Empty: external data is
  /// refused (the folder is unknown).
  std::filesystem::path base_dir;
  /// The file or origin named at the start of error messages ("model.onnx").
  std::string source;
  /// External data files mapped so far, by normalized location, so that each is mapped once.
  std::unordered_map<std::string, std::shared_ptr<const MappedFile>> mapped;
};

/// One tensor placed in an external data file by tensor_to_proto: its bytes as stored (for the 4-
/// and 2-bit types, a uint8 tensor of the packed bytes).
struct ExternalTensor {
  Tensor tensor;
  uint64_t offset = 0;
};

/// How tensor_to_proto stores data. By default everything is inline (raw_data, or string_data for
/// strings).
struct ProtoWriteContext {
  /// Non-string tensors of at least this many bytes are not written inline.
  uint64_t external_threshold = std::numeric_limits<uint64_t>::max();
  /// Where those tensors go: the location written into the proto (relative to the model's folder),
  /// with their offsets recorded in `external`. When empty, they are written with their type and
  /// shape only, marked EXTERNAL with no location: enough for shape inference, which never reads
  /// large tensors.
  std::string external_location;
  /// Filled by tensor_to_proto: the external tensors in file order.
  std::vector<ExternalTensor> external;
  /// End of the last external tensor, i.e. the external file's size.
  uint64_t external_end = 0;
};

// --- Tensors -------------------------------------------------------------------------------------

/// Decodes a TensorProto: raw_data (little-endian; int4, uint4 and float4e2m1 packed two per byte
/// and int2/uint2 four per byte, low bits first, the last byte padded), float_data, int32_data
/// (which also holds int8, int16, uint8, uint16, bool, float16 and bfloat16 bit patterns, float8
/// codes one per entry, and the packed bytes of the 4- and 2-bit types one per entry), int64_data, double_data,
/// uint64_data, string_data, and external data (a read-only view over the mapped file when the data
/// is suitably aligned, else a copy). The element count is validated against kMaxTensorBytes and the
/// data length against the shape before anything is allocated.
/// Errors: kUnsupportedDType (data type Vernier lacks), kInvalidModel (length mismatch, segments,
/// bad external data reference), kIoError (external file unreadable). Messages start with ctx.source
/// when it is set, then name the tensor.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, ProtoReadContext& ctx);

/// Densifies a SparseTensorProto (values [NNZ] with int64 indices [NNZ] (linear) or [NNZ, rank]).
/// kInvalidModel for inconsistent shapes or out-of-range indices.
Result<Tensor> tensor_from_sparse_proto(const onnx::SparseTensorProto& proto, ProtoReadContext& ctx);

/// Encodes `tensor` under `name`: raw_data for numbers (packed for the 4- and 2-bit types), string_data for strings, or external data per
/// `ctx` (null: inline). kInvalidArgument for an undefined tensor.
Status tensor_to_proto(const Tensor& tensor, std::string_view name, onnx::TensorProto& proto,
                       ProtoWriteContext* ctx = nullptr);

/// Parses a serialized TensorProto (an ONNX test-data .pb file) and decodes it. External data is
/// resolved against `base_dir`. kIoError "<source>: not a valid ONNX TensorProto (protobuf parse
/// failed)" for bytes protobuf rejects; tensor_from_proto's errors otherwise.
Result<NamedTensor> tensor_proto_decode(std::string_view bytes, const std::filesystem::path& base_dir,
                                        std::string_view source);

/// Serializes `tensor` as a TensorProto named `name`, data inline. kInvalidArgument for an undefined
/// tensor or one whose proto would exceed kProtobufMaxBytes.
Result<std::string> tensor_proto_encode(const Tensor& tensor, const std::string& name);

// --- Graph pieces ----------------------------------------------------------------------------------

/// Converts a ValueInfoProto. Tensor types map to dtype and dims (dim_value, dim_param, or unknown);
/// element types Vernier lacks and non-tensor types (sequence, map, optional, sparse) give an unknown
/// dtype and shape.
ValueInfo value_info_from_proto(const onnx::ValueInfoProto& proto);
/// Whether the proto's type is a tensor of a supported element type (or has no type at all).
bool value_info_proto_supported(const onnx::ValueInfoProto& proto);
void value_info_to_proto(const ValueInfo& info, onnx::ValueInfoProto& proto);

/// kInvalidArgument for an undefined tensor or a missing subgraph.
Status attribute_to_proto(const Attribute& attr, onnx::AttributeProto& proto, ProtoWriteContext* ctx = nullptr);

/// Converts a graph. `main_graph`: inputs and outputs must be tensors of supported element types
/// (kUnsupportedDType otherwise); subgraph inputs and outputs may be untyped. Sparse initializers are
/// densified. Initializer data is released from `proto` once converted, to bound peak memory on big
/// models. Nodes keep their order.
Result<Graph> graph_from_proto(onnx::GraphProto& proto, ProtoReadContext& ctx, bool main_graph);
/// Errors name the node whose attribute could not be written.
Status graph_to_proto(const Graph& graph, onnx::GraphProto& proto, ProtoWriteContext* ctx = nullptr);

/// Converts a whole model (metadata, opsets, graph). Sets Model::base_dir to ctx.base_dir. Model-local
/// functions and training info have no place in Model and are dropped with a warning.
Result<Model> model_from_proto(onnx::ModelProto& proto, ProtoReadContext& ctx);
Status model_to_proto(const Model& model, onnx::ModelProto& proto, ProtoWriteContext* ctx = nullptr);

// --- Protobuf and libonnx wrappers --------------------------------------------------------------------

/// Parses a ModelProto with the total-bytes limit raised to kProtobufMaxBytes. kInvalidModel
/// "<source>: not a valid ONNX model (protobuf parse failed)" when protobuf rejects the bytes or
/// they hold no graph; kInvalidModel for inputs over the limit.
Status model_proto_parse(std::string_view bytes, std::string_view source, onnx::ModelProto& proto);

/// model_proto_parse over a whole mapped file, read once front to back: the pages already parsed
/// are released as it goes (MappedFile::release_before), so that the file and its parsed copy are
/// never both resident. Same errors.
Status model_proto_parse(const MappedFile& file, std::string_view source, onnx::ModelProto& proto);

/// Checks that an external data location stays inside the model's folder: not empty, no NUL byte,
/// not absolute, and no ".." that climbs above the folder once normalized ("a/../b" is fine).
/// kInvalidModel naming the location and `what` (e.g. "tensor 'w'").
Status external_location_check(std::string_view location, std::string_view what);

/// Applies external_location_check to every external tensor of the model (initializers and attribute
/// tensors, subgraphs included), so that a hostile reference is reported as such before the checker
/// probes the file system for it. With an empty `base_dir` any external tensor is an error (the folder
/// to resolve it against is unknown). kInvalidModel; messages start with `source`.
Status model_proto_check_external_locations(const onnx::ModelProto& proto, const std::filesystem::path& base_dir,
                                            std::string_view source);

/// Why libonnx would judge `model` by older rules (IR version above 8, an opset above the newest it
/// knows for the domain), or nullopt when it knows them all.
std::optional<std::string> checker_blind_spot(const onnx::ModelProto& model);

/// onnx::checker::check_model with the checker's model folder set to `model_dir` (where external data
/// files must exist). kInvalidModel "<source>: ONNX checker: <message>" (one line) on failure.
/// A model newer than libonnx (IR version above 8, or an opset above the newest it knows, 17 for
/// ai.onnx) is not checked: the checker would apply older schemas and reject valid models. That is
/// logged as a warning and OK is returned.
Status model_proto_check(const onnx::ModelProto& proto, const std::filesystem::path& model_dir,
                         std::string_view source);

/// libonnx shape inference in strict mode. Node-level failures do not stop it: every node is
/// processed and what was inferred stays in the proto even when this returns an error
/// (kInvalidModel "<source>: shape inference failed: ...", one line).
/// Unless `hazards_checked`, model_proto_check_inference_hazards runs first; its error is returned
/// as "<source>: shape inference not run: ..." with the proto unchanged.
Status model_proto_infer_shapes(onnx::ModelProto& proto, std::string_view source, bool hazards_checked = false);

/// Finds what crashes libonnx 1.12's shape inference instead of failing it (found by fuzzing):
/// a zero or negative stride, dilation or blocksize of a conv, pooling, DepthToSpace or
/// SpaceToDepth node; a Conv, ConvInteger, QLinearConv or ConvTranspose whose weight's rank differs
/// from its input's; a conv or pooling node whose pads, strides, dilations, kernel_shape or
/// output_padding do not have one value per spatial axis (pads: two). Ranks are found by inferring
/// shapes on a copy in which those nodes are Identity nodes. kInvalidModel naming the first such
/// node; subgraphs included. `proto` comes back as it was: the payloads of its weights are moved
/// aside while the copy is made, so that loading a model never holds its weights twice.
Status model_proto_check_inference_hazards(onnx::ModelProto& proto, std::string_view source);


/// "source: ", or "" for an empty source: the start of error messages about a file.
std::string source_prefix(std::string_view source);
/// The lower-case name of an ONNX element type ("float32" is "float"), also for the types added
/// after libonnx 1.12 ("float8e4m3fn"); "data type N" for numbers ONNX does not define.
std::string onnx_type_name(int32_t type);

/// Refuses a model that holds what libonnx 1.12's protobuf (IR version 8) could not read: an IR
/// version newer than kNewestIrVersion, element types added since (kept aside by protobuf as
/// unknown values), or newer fields other than annotations that leave the computation unchanged
/// (metadata_props, multi-device configurations). kInvalidModel or kUnsupportedDType naming the
/// field and where it is (core/ir/onnx_fields.cpp).
Status model_proto_check_understood(const onnx::ModelProto& proto, std::string_view source);

/// Collapses a multi-line libonnx message into one line.
std::string one_line(std::string_view message);

}  // namespace vn
