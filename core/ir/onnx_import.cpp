// SPDX-License-Identifier: Apache-2.0
#include "core/ir/onnx_import.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include "core/common/logging.h"
#include "core/ir/mapped_file.h"
#include "core/ir/onnx_proto.h"
#include "core/ir/topo.h"

namespace vn {
namespace {

constexpr std::string_view kBytesSource = "in-memory model";
constexpr std::string_view kTextSource = "ONNX text";

// The steps shared by every entry point once a ModelProto exists: check, infer, convert, sort.
Result<Model> finish_load(onnx::ModelProto& proto, const std::filesystem::path& base_dir, std::string_view source,
                          const LoadOptions& options) {
  try {
    VN_RETURN_IF_ERROR(model_proto_check_understood(proto, source));
    VN_RETURN_IF_ERROR(model_proto_check_external_locations(proto, base_dir, source));
    if (options.check_model) VN_RETURN_IF_ERROR(model_proto_check(proto, base_dir, source));
    if (options.infer_shapes) {
      // What would crash libonnx is an error in the model, not a gap in inference.
      VN_RETURN_IF_ERROR(model_proto_check_inference_hazards(proto, source));
      Status inferred = model_proto_infer_shapes(proto, source, /*hazards_checked=*/true);
      if (!inferred.ok()) VN_LOG_WARNING("{} (continuing with the types found so far)", inferred.message());
    }
    ProtoReadContext ctx;
    ctx.base_dir = base_dir;
    ctx.source = std::string(source);
    VN_ASSIGN_OR_RETURN(Model model, model_from_proto(proto, ctx));
    Status sorted = toposort(model.graph);
    if (!sorted.ok()) return sorted.with_context(source);
    // The checker skips models newer than libonnx; their structure (names produced twice, inputs
    // defined by nothing, duplicate graph inputs) is still verified before anything runs them.
    if (options.check_model) {
      Status valid = validate_graph(model.graph, std::max<int64_t>(model.opset(), 1));
      if (!valid.ok()) return valid.with_context(source);
    }
    return model;
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "{}: {}", source, one_line(e.what()));
  }
}

}  // namespace

Result<Model> load_model(const std::filesystem::path& path, const LoadOptions& options) {
  const std::string source = path.string();
  onnx::ModelProto proto;
  {
    VN_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::open(path));
    VN_RETURN_IF_ERROR(model_proto_parse(*file, source, proto));
  }
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(dir, ec);
  if (!ec) dir = absolute.lexically_normal();
  return finish_load(proto, dir, source, options);
}

Result<Model> load_model_from_bytes(std::string_view bytes, const std::filesystem::path& base_dir,
                                    const LoadOptions& options) {
  onnx::ModelProto proto;
  VN_RETURN_IF_ERROR(model_proto_parse(bytes, kBytesSource, proto));
  return finish_load(proto, base_dir, kBytesSource, options);
}

Result<Model> parse_model_text(std::string_view text, const LoadOptions& options) {
  // OnnxParser reads a NUL-terminated buffer.
  const std::string buffer(text);
  onnx::ModelProto proto;
  try {
    onnx::OnnxParser parser(buffer.c_str());
    const auto parsed = parser.Parse(proto);
    if (!parsed.IsOK()) {
      return make_error(StatusCode::kInvalidModel, "{}: {}", kTextSource, one_line(parsed.ErrorMessage()));
    }
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInvalidModel, "{}: {}", kTextSource, one_line(e.what()));
  }
  return finish_load(proto, {}, kTextSource, options);
}

}  // namespace vn
