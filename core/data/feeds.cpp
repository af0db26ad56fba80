// SPDX-License-Identifier: Apache-2.0
#include "core/data/feeds.h"

#include <cstring>
#include <optional>
#include <string>
#include <system_error>

#include "core/io/npz.h"
#include "core/io/polygraphy_json.h"
#include "core/io/tensor_proto.h"
#include "core/io/test_folder.h"

namespace vn::data {
namespace {

std::string names_of(const TensorMap& feed) {
  std::string s;
  for (const NamedTensor& t : feed) {
    if (!s.empty()) s += ", ";
    s += "'" + t.name + "'";
  }
  return s.empty() ? std::string("no tensors") : s;
}

Status check_complete(const TensorMap& feed, const Graph& graph, const std::filesystem::path& path, size_t iteration) {
  for (const ValueInfo* in : graph.runtime_inputs()) {
    if (!feed.contains(in->name)) {
      return make_error(StatusCode::kNotFound, "{}: iteration {} has no tensor for input '{}' (it holds {})",
                        path.string(), iteration, in->name, names_of(feed));
    }
  }
  return Status::OK();
}

}  // namespace

Tensor as_declared(const Tensor& t, std::optional<DType> declared) {
  if (declared == DType::kBFloat16 && t.dtype() == DType::kUInt16) {
    Tensor out(DType::kBFloat16, t.shape());
    if (t.nbytes() > 0) std::memcpy(out.mutable_raw(), t.raw(), t.nbytes());
    return out;
  }
  return t;
}

namespace {

// Test folders name their tensors after the graph inputs, but older exporters wrote other names;
// ONNX's own runner falls back to position, and so does Vernier. uint16 tensors fed to bfloat16
// inputs are bfloat16 bit patterns (as_declared).
TensorMap match_test_set(const std::vector<NamedTensor>& tensors, const Graph& graph) {
  std::vector<const ValueInfo*> inputs = graph.runtime_inputs();
  bool by_name = true;
  for (const ValueInfo* in : inputs) {
    bool found = false;
    for (const NamedTensor& t : tensors) found = found || t.name == in->name;
    by_name = by_name && found;
  }
  const auto declared = [&](const std::string& name) -> std::optional<DType> {
    for (const ValueInfo* in : inputs) {
      if (in->name == name) return in->dtype;
    }
    return std::nullopt;
  };
  TensorMap feed;
  if (by_name) {
    for (const NamedTensor& t : tensors) feed.set(t.name, as_declared(t.tensor, declared(t.name)));
    return feed;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string& name = i < inputs.size() ? inputs[i]->name : tensors[i].name;
    feed.set(name, as_declared(tensors[i].tensor, declared(name)));
  }
  return feed;
}

Result<std::vector<TensorMap>> load_one(const std::filesystem::path& path, const Graph& graph) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    VN_ASSIGN_OR_RETURN(std::vector<io::TestDataSet> sets, io::load_test_folder(path));
    std::vector<TensorMap> feeds;
    for (const io::TestDataSet& set : sets) feeds.push_back(match_test_set(set.inputs, graph));
    return feeds;
  }
  if (!std::filesystem::exists(path, ec)) {
    return make_error(StatusCode::kIoError, "{}: no such file or folder", path.string());
  }
  const std::string ext = path.extension().string();
  if (ext == ".json") return io::load_feed_list(path);
  if (ext == ".npz") {
    VN_ASSIGN_OR_RETURN(TensorMap feed, io::npz_load(path));
    return std::vector<TensorMap>{std::move(feed)};
  }
  if (ext == ".pb") {
    VN_ASSIGN_OR_RETURN(NamedTensor t, io::tensor_proto_load(path));
    return std::vector<TensorMap>{match_test_set({t}, graph)};
  }
  return make_error(StatusCode::kInvalidArgument,
                    "{}: unknown input format '{}'; expected a Polygraphy .json feed list, .npz, .pb or an ONNX test "
                    "folder",
                    path.string(), ext);
}

}  // namespace

Result<std::vector<TensorMap>> load_feeds(const std::vector<std::filesystem::path>& paths, const Graph& graph) {
  std::vector<TensorMap> all;
  for (const auto& path : paths) {
    VN_ASSIGN_OR_RETURN(std::vector<TensorMap> feeds, load_one(path, graph));
    if (feeds.empty()) return make_error(StatusCode::kIoError, "{}: holds no feeds", path.string());
    for (size_t i = 0; i < feeds.size(); ++i) VN_RETURN_IF_ERROR(check_complete(feeds[i], graph, path, i));
    for (TensorMap& f : feeds) all.push_back(std::move(f));
  }
  return all;
}

}  // namespace vn::data
