// SPDX-License-Identifier: Apache-2.0
#include "core/io/test_folder.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/io/tensor_proto.h"

namespace vn::io {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDataSetPrefix = "test_data_set_";

// The number N in "<prefix>N<suffix>", or nullopt when `name` does not have that form.
std::optional<uint64_t> numbered(std::string_view name, std::string_view prefix, std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size()) return std::nullopt;
  if (name.substr(0, prefix.size()) != prefix || name.substr(name.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  // 18 digits always fit in uint64_t.
  if (digits.size() > 18) return std::nullopt;
  uint64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

struct Numbered {
  uint64_t number;
  fs::path path;
};

Result<std::vector<fs::directory_entry>> list_folder(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return make_error(StatusCode::kIoError, "{}: cannot list: {}", dir.string(), ec.message());
  std::vector<fs::directory_entry> entries;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return make_error(StatusCode::kIoError, "{}: cannot list: {}", dir.string(), ec.message());
    entries.push_back(*it);
  }
  if (ec) return make_error(StatusCode::kIoError, "{}: cannot list: {}", dir.string(), ec.message());
  return entries;
}

// Sorts by number and refuses two files with one number (input_1.pb and input_01.pb).
Status sort_numbered(std::vector<Numbered>& files, const fs::path& dir) {
  std::sort(files.begin(), files.end(), [](const Numbered& a, const Numbered& b) {
    return a.number != b.number ? a.number < b.number : a.path < b.path;
  });
  for (size_t i = 1; i < files.size(); ++i) {
    if (files[i].number == files[i - 1].number) {
      return make_error(StatusCode::kIoError, "{}: '{}' and '{}' have the same number", dir.string(),
                        files[i - 1].path.filename().string(), files[i].path.filename().string());
    }
  }
  return Status::OK();
}

Result<TestDataSet> load_data_set(const fs::path& dir) {
  VN_ASSIGN_OR_RETURN(std::vector<fs::directory_entry> entries, list_folder(dir));
  std::vector<Numbered> inputs;
  std::vector<Numbered> outputs;
  for (const fs::directory_entry& e : entries) {
    std::error_code ec;
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    if (std::optional<uint64_t> k = numbered(name, "input_", ".pb")) inputs.push_back({*k, e.path()});
    if (std::optional<uint64_t> k = numbered(name, "output_", ".pb")) outputs.push_back({*k, e.path()});
  }
  if (inputs.empty() && outputs.empty()) {
    return make_error(StatusCode::kNotFound, "{}: no input_K.pb or output_K.pb files in this test data set",
                      dir.string());
  }
  VN_RETURN_IF_ERROR(sort_numbered(inputs, dir));
  VN_RETURN_IF_ERROR(sort_numbered(outputs, dir));
  TestDataSet set;
  set.dir = dir;
  for (const Numbered& f : inputs) {
    VN_ASSIGN_OR_RETURN(NamedTensor t, tensor_proto_load(f.path));
    set.inputs.push_back(std::move(t));
  }
  for (const Numbered& f : outputs) {
    VN_ASSIGN_OR_RETURN(NamedTensor t, tensor_proto_load(f.path));
    set.outputs.push_back(std::move(t));
  }
  return set;
}

}  // namespace

Result<std::vector<TestDataSet>> load_test_folder(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return make_error(StatusCode::kIoError, "{}: cannot open: {}", path.string(),
                      ec ? ec.message() : std::string("no such file or directory"));
  }
  if (!fs::is_directory(st)) return make_error(StatusCode::kIoError, "{}: not a folder", path.string());

  VN_ASSIGN_OR_RETURN(std::vector<fs::directory_entry> entries, list_folder(path));
  std::vector<Numbered> sets;
  bool has_pb = false;
  for (const fs::directory_entry& e : entries) {
    std::error_code type_ec;
    const std::string name = e.path().filename().string();
    if (e.is_directory(type_ec)) {
      if (std::optional<uint64_t> n = numbered(name, kDataSetPrefix, "")) sets.push_back({*n, e.path()});
    } else if (numbered(name, "input_", ".pb") || numbered(name, "output_", ".pb")) {
      has_pb = true;
    }
  }

  std::vector<TestDataSet> out;
  if (sets.empty()) {
    const bool is_data_set = numbered(path.filename().string(), kDataSetPrefix, "").has_value();
    if (!has_pb && !is_data_set) {
      return make_error(StatusCode::kNotFound,
                        "{}: no test_data_set_N folders and no input_K.pb/output_K.pb files; expected an ONNX test "
                        "folder or one of its data sets",
                        path.string());
    }
    VN_ASSIGN_OR_RETURN(TestDataSet set, load_data_set(path));
    out.push_back(std::move(set));
    return out;
  }
  VN_RETURN_IF_ERROR(sort_numbered(sets, path));
  for (const Numbered& s : sets) {
    VN_ASSIGN_OR_RETURN(TestDataSet set, load_data_set(s.path));
    out.push_back(std::move(set));
  }
  return out;
}

Status save_test_data_set(const fs::path& dir, const std::vector<NamedTensor>& inputs,
                          const std::vector<NamedTensor>& outputs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(StatusCode::kIoError, "{}: cannot create folder: {}", dir.string(), ec.message());
  for (size_t k = 0; k < inputs.size(); ++k) {
    VN_RETURN_IF_ERROR(tensor_proto_save(inputs[k].tensor, inputs[k].name, dir / fmt::format("input_{}.pb", k)));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    VN_RETURN_IF_ERROR(tensor_proto_save(outputs[k].tensor, outputs[k].name, dir / fmt::format("output_{}.pb", k)));
  }
  VN_ASSIGN_OR_RETURN(std::vector<fs::directory_entry> entries, list_folder(dir));
  for (const fs::directory_entry& e : entries) {
    const std::string name = e.path().filename().string();
    const std::optional<uint64_t> in = numbered(name, "input_", ".pb");
    const std::optional<uint64_t> out = numbered(name, "output_", ".pb");
    // Anything numbered that this call did not write is stale ("input_01.pb" included).
    const bool stale = (in && (*in >= inputs.size() || name != fmt::format("input_{}.pb", *in))) ||
                       (out && (*out >= outputs.size() || name != fmt::format("output_{}.pb", *out)));
    if (!stale) continue;
    fs::remove(e.path(), ec);
    if (ec) {
      return make_error(StatusCode::kIoError, "{}: cannot remove stale file: {}", e.path().string(), ec.message());
    }
  }
  return Status::OK();
}

}  // namespace vn::io
