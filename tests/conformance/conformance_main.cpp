// SPDX-License-Identifier: Apache-2.0
// Runs ONNX's backend node tests through the reference backend and compares with the expected
// outputs using ONNX's own tolerances (rtol 1e-3, atol 1e-7). Prints one line per failure, then
// "N passed, M failed, K skipped". Exit status 1 when a case fails.
//
// With --allow-refusals a case Vernier refuses (the model is not loaded, prepared or run, with an
// error saying why) is counted apart from one that gives wrong numbers without an error, and only
// the latter fail the run: "N passed, R refused, W wrong, K skipped". This is how the suites newer
// than what Vernier implements are run: a refusal is honest, a wrong number never is.
// --no-refusals counts them apart the same way but fails the run on a refusal too: a suite whose
// every in-scope case passes keeps doing so, and its log still says which kind a failure was.
//
// Usage: vn_conformance NODE_TESTS_DIR SKIP_FILE [-v] [--filter SUBSTRING] [--allow-refusals | --no-refusals]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/common/logging.h"
#include "core/data/feeds.h"
#include "core/io/test_folder.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"

namespace {

namespace fs = std::filesystem;
using namespace vn;

struct Skip {
  std::string pattern;  // exact test name, or a prefix when it ends in '*'
  std::string reason;
};

std::vector<Skip> read_skips(const fs::path& path) {
  std::vector<Skip> skips;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t bar = line.find('|');
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t") + 1);
      return s;
    };
    skips.push_back(Skip{trim(line.substr(0, bar)), bar == std::string::npos ? "" : trim(line.substr(bar + 1))});
  }
  return skips;
}

const Skip* find_skip(const std::vector<Skip>& skips, const std::string& name) {
  for (const Skip& s : skips) {
    if (!s.pattern.empty() && s.pattern.back() == '*') {
      if (name.rfind(s.pattern.substr(0, s.pattern.size() - 1), 0) == 0) return &s;
    } else if (s.pattern == name) {
      return &s;
    }
  }
  return nullptr;
}

// ONNX's runner: numpy.testing.assert_allclose(rtol=1e-3, atol=1e-7) for floats, exact equality
// otherwise; NaNs must sit in the same places.
Status compare(const std::string& name, const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return make_error(StatusCode::kNumericFailure, "output '{}': dtype {} but expected {}", name,
                      dtype_name(got.dtype()), dtype_name(want.dtype()));
  }
  if (got.shape() != want.shape()) {
    return make_error(StatusCode::kNumericFailure, "output '{}': shape {} but expected {}", name,
                      shape_to_string(got.shape()), shape_to_string(want.shape()));
  }
  if (got.dtype() == DType::kString) {
    for (int64_t i = 0; i < got.numel(); ++i) {
      if (got.data<std::string>()[i] != want.data<std::string>()[i]) {
        return make_error(StatusCode::kNumericFailure, "output '{}': string {} differs", name, i);
      }
    }
    return Status::OK();
  }
  const std::vector<double> a = tensor_to_doubles(got).value();
  const std::vector<double> b = tensor_to_doubles(want).value();
  const bool is_float = dtype_is_float(got.dtype());
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok;
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      ok = std::isnan(a[i]) && std::isnan(b[i]);
    } else if (std::isinf(a[i]) || std::isinf(b[i])) {
      ok = a[i] == b[i];
    } else {
      ok = is_float ? std::abs(a[i] - b[i]) <= 1e-7 + 1e-3 * std::abs(b[i]) : a[i] == b[i];
    }
    if (!ok) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++bad;
    }
  }
  if (bad) {
    const auto f = static_cast<size_t>(first);
    return make_error(StatusCode::kNumericFailure, "output '{}': {} of {} elements differ; first at {}: got {} expected {}",
                      name, bad, a.size(), first, a[f], b[f]);
  }
  return Status::OK();
}

/// How a case ended: passed, refused by Vernier (an error before any output), or wrong outputs.
struct Outcome {
  Status status;
  bool wrong = false;
};

Status run_case(const fs::path& dir, bool& compared) {
  VN_ASSIGN_OR_RETURN(Model model, load_model(dir / "model.onnx"));
  VN_ASSIGN_OR_RETURN(std::vector<io::TestDataSet> sets, io::load_test_folder(dir));
  ref::ReferenceBackend backend;
  PrepareOptions prep;
  prep.num_threads = 1;
  VN_RETURN_IF_ERROR(backend.prepare(model, prep));
  for (const io::TestDataSet& set : sets) {
    TensorMap feeds;
    const auto inputs = model.graph.runtime_inputs();
    for (size_t i = 0; i < set.inputs.size() && i < inputs.size(); ++i) {
      feeds.set(inputs[i]->name, data::as_declared(set.inputs[i].tensor, inputs[i]->dtype));
    }
    VN_ASSIGN_OR_RETURN(TensorMap out, backend.run(feeds));
    compared = true;
    if (out.size() != set.outputs.size()) {
      return make_error(StatusCode::kNumericFailure, "{} outputs but {} expected", out.size(), set.outputs.size());
    }
    for (size_t i = 0; i < out.size(); ++i) {
      const Tensor want = data::as_declared(set.outputs[i].tensor, out[i].tensor.dtype());
      VN_RETURN_IF_ERROR(compare(out[i].name, out[i].tensor, want));
    }
  }
  return Status::OK();
}

Outcome run_case(const fs::path& dir) {
  bool compared = false;
  Status st = run_case(dir, compared);
  const bool wrong = !st.ok() && compared;
  return Outcome{std::move(st), wrong};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s NODE_TESTS_DIR SKIP_FILE [-v] [--filter SUBSTRING] [--allow-refusals | --no-refusals]\n",
                 argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  const std::vector<Skip> skips = read_skips(argv[2]);
  bool verbose = false;
  bool allow_refusals = false;
  bool refusals_fail = false;
  std::string filter;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-v") verbose = true;
    if (a == "--allow-refusals") allow_refusals = true;
    if (a == "--no-refusals") allow_refusals = refusals_fail = true;
    if (a == "--filter" && i + 1 < argc) filter = argv[++i];
  }
  set_log_threshold(LogLevel::kError);
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_", 0) == 0) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  int passed = 0, failed = 0, refused = 0, skipped = 0;
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    if (const Skip* s = find_skip(skips, name)) {
      ++skipped;
      if (verbose) fmt::print("SKIP {}: {}\n", name, s->reason);
      continue;
    }
    const Outcome o = run_case(dir);
    if (o.status.ok()) {
      ++passed;
      if (verbose) fmt::print("PASS {}\n", name);
    } else if (allow_refusals && !o.wrong) {
      ++refused;
      fmt::print("REFUSED {}: {}\n", name, o.status.to_string());
    } else {
      ++failed;
      fmt::print("{} {}: {}\n", allow_refusals ? "WRONG" : "FAIL", name, o.status.to_string());
    }
  }
  if (allow_refusals) {
    fmt::print("{} passed, {} refused, {} wrong (numbers without an error), {} skipped\n", passed, refused, failed,
               skipped);
  } else {
    fmt::print("{} passed, {} failed, {} skipped\n", passed, failed, skipped);
  }
  return failed == 0 && !(refusals_fail && refused > 0) ? 0 : 1;
}
