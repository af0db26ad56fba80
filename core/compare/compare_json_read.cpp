// SPDX-License-Identifier: Apache-2.0
// Reading a layer-wise comparison back from its JSON (compare_json.h): every field's type and
// every index is checked, since the file may be hostile.
#include <cmath>
#include <limits>

#include "core/compare/compare_json.h"
#include "core/compare/tensor_digest.h"

namespace vn {
namespace {

using Json = nlohmann::ordered_json;

// Larger lists than any real comparison holds are refused before they are walked.
constexpr size_t kMaxEntries = size_t{1} << 24;
// A kept heatmap is at most this many cells on a side (the writer keeps far fewer).
constexpr int64_t kMaxHeatmapSide = 4096;

// A number, or the strings "nan", "inf", "-inf" the writer uses for them.
std::optional<double> as_number(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

class Reader {
 public:
  explicit Reader(std::string_view where) : where_(where) {}

  Status bad(const std::string& path, std::string_view what) const {
    return make_error(StatusCode::kIoError, "{}: {} {}", where_, path, what);
  }

  // The member `key` of `obj`: null when absent and `required` is false.
  Result<const Json*> member(const Json& obj, const char* key, const std::string& path, bool required) const {
    const auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) return bad(path + "." + key, "is missing");
      return static_cast<const Json*>(nullptr);
    }
    return &*it;
  }

  // A number, or the strings "nan", "inf", "-inf" the writer uses for them.
  Result<double> number(const Json& obj, const char* key, const std::string& path, std::optional<double> fallback) const {
    VN_ASSIGN_OR_RETURN(const Json* v, member(obj, key, path, !fallback.has_value()));
    if (v == nullptr) return *fallback;
    if (const std::optional<double> n = as_number(*v)) return *n;
    return bad(path + "." + key, "is not a number");
  }

  Result<int64_t> integer(const Json& obj, const char* key, const std::string& path, std::optional<int64_t> fallback) const {
    VN_ASSIGN_OR_RETURN(const Json* v, member(obj, key, path, !fallback.has_value()));
    if (v == nullptr) return *fallback;
    if (!v->is_number_integer()) return bad(path + "." + key, "is not an integer");
    return v->get<int64_t>();
  }

  Result<bool> boolean(const Json& obj, const char* key, const std::string& path, std::optional<bool> fallback) const {
    VN_ASSIGN_OR_RETURN(const Json* v, member(obj, key, path, !fallback.has_value()));
    if (v == nullptr) return *fallback;
    if (!v->is_boolean()) return bad(path + "." + key, "is not true or false");
    return v->get<bool>();
  }

  Result<std::string> string(const Json& obj, const char* key, const std::string& path,
                             std::optional<std::string> fallback) const {
    VN_ASSIGN_OR_RETURN(const Json* v, member(obj, key, path, !fallback.has_value()));
    if (v == nullptr) return *fallback;
    if (!v->is_string()) return bad(path + "." + key, "is not a string");
    return v->get<std::string>();
  }

  // An array member (an empty one when absent and not required).
  Result<const Json*> array(const Json& obj, const char* key, const std::string& path, bool required) const {
    static const Json kEmpty = Json::array();
    VN_ASSIGN_OR_RETURN(const Json* v, member(obj, key, path, required));
    if (v == nullptr) return &kEmpty;
    if (!v->is_array()) return bad(path + "." + key, "is not an array");
    if (v->size() > kMaxEntries) return bad(path + "." + key, "has too many entries");
    return v;
  }

  Result<std::vector<std::string>> strings(const Json& obj, const char* key, const std::string& path) const {
    VN_ASSIGN_OR_RETURN(const Json* a, array(obj, key, path, false));
    std::vector<std::string> out;
    for (size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].is_string()) return bad(fmt::format("{}.{}[{}]", path, key, i), "is not a string");
      out.push_back((*a)[i].get<std::string>());
    }
    return out;
  }

  Status object(const Json& j, const std::string& path) const {
    if (!j.is_object()) return bad(path, "is not an object");
    return Status::OK();
  }

  Result<TensorDigest> digest(const Json& j, const std::string& path) const {
    VN_RETURN_IF_ERROR(object(j, path));
    TensorDigest d;
    VN_ASSIGN_OR_RETURN(const Json* shape, array(j, "shape", path, true));
    for (size_t i = 0; i < shape->size(); ++i) {
      const Json& dim = (*shape)[i];
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0) return bad(fmt::format("{}.shape[{}]", path, i), "is not a dimension");
      d.shape.push_back(dim.get<int64_t>());
    }
    VN_ASSIGN_OR_RETURN(const Json* slice, member(j, "slice", path, true));
    VN_RETURN_IF_ERROR(object(*slice, path + ".slice"));
    VN_ASSIGN_OR_RETURN(d.slice_rows, integer(*slice, "rows", path + ".slice", std::nullopt));
    VN_ASSIGN_OR_RETURN(d.slice_cols, integer(*slice, "cols", path + ".slice", std::nullopt));
    VN_ASSIGN_OR_RETURN(d.slice_count, integer(*slice, "count", path + ".slice", std::nullopt));
    if (d.slice_rows < 1 || d.slice_cols < 1 || d.slice_count < 0) return bad(path + ".slice", "has a negative or zero size");
    VN_ASSIGN_OR_RETURN(const Json* maxima, array(j, "slice_max", path, false));
    if (!maxima->empty() && static_cast<int64_t>(maxima->size()) != d.slice_count) {
      return bad(path + ".slice_max", "does not hold one value per slice");
    }
    for (size_t i = 0; i < maxima->size(); ++i) {
      const std::optional<double> v = as_number((*maxima)[i]);
      if (!v) return bad(fmt::format("{}.slice_max[{}]", path, i), "is not a number");
      d.slice_max.push_back(static_cast<float>(*v));
    }
    VN_ASSIGN_OR_RETURN(const Json* worst, array(j, "worst", path, false));
    for (size_t i = 0; i < worst->size(); ++i) {
      const std::string p = fmt::format("{}.worst[{}]", path, i);
      VN_RETURN_IF_ERROR(object((*worst)[i], p));
      TensorDigest::Element e;
      VN_ASSIGN_OR_RETURN(e.index, integer((*worst)[i], "index", p, std::nullopt));
      if (e.index < 0) return bad(p + ".index", "is negative");
      VN_ASSIGN_OR_RETURN(e.test, number((*worst)[i], "test", p, std::nullopt));
      VN_ASSIGN_OR_RETURN(e.ref, number((*worst)[i], "ref", p, std::nullopt));
      VN_ASSIGN_OR_RETURN(e.abs_error, number((*worst)[i], "abs_error", p, std::nullopt));
      d.worst.push_back(e);
    }
    VN_ASSIGN_OR_RETURN(const Json* maps, array(j, "heatmaps", path, false));
    for (size_t i = 0; i < maps->size(); ++i) {
      const std::string p = fmt::format("{}.heatmaps[{}]", path, i);
      const Json& m = (*maps)[i];
      VN_RETURN_IF_ERROR(object(m, p));
      TensorDigest::Heatmap h;
      VN_ASSIGN_OR_RETURN(h.slice, integer(m, "slice", p, std::nullopt));
      VN_ASSIGN_OR_RETURN(const int64_t rows, integer(m, "rows", p, std::nullopt));
      VN_ASSIGN_OR_RETURN(const int64_t cols, integer(m, "cols", p, std::nullopt));
      VN_ASSIGN_OR_RETURN(h.block_rows, integer(m, "block_rows", p, int64_t{1}));
      VN_ASSIGN_OR_RETURN(h.block_cols, integer(m, "block_cols", p, int64_t{1}));
      if (h.slice < 0 || h.slice >= std::max<int64_t>(1, d.slice_count)) return bad(p + ".slice", "is not a slice of the tensor");
      if (rows < 1 || cols < 1 || rows > kMaxHeatmapSide || cols > kMaxHeatmapSide || h.block_rows < 1 || h.block_cols < 1) {
        return bad(p, "has an impossible size");
      }
      h.rows = static_cast<int>(rows);
      h.cols = static_cast<int>(cols);
      VN_ASSIGN_OR_RETURN(const Json* values, array(m, "values", p, true));
      if (static_cast<int64_t>(values->size()) != rows * cols) return bad(p + ".values", "does not hold rows x cols values");
      for (size_t k = 0; k < values->size(); ++k) {
        const std::optional<double> v = as_number((*values)[k]);
        if (!v) return bad(fmt::format("{}.values[{}]", p, k), "is not a number");
        h.values.push_back(static_cast<float>(*v));
      }
      d.heatmaps.push_back(std::move(h));
    }
    return d;
  }

  Result<TensorComparison> tensor(const Json& j, const std::string& path) const {
    VN_RETURN_IF_ERROR(object(j, path));
    TensorComparison c;
    VN_ASSIGN_OR_RETURN(c.name, string(j, "name", path, std::nullopt));
    VN_ASSIGN_OR_RETURN(c.passed, boolean(j, "passed", path, std::nullopt));
    VN_ASSIGN_OR_RETURN(c.mismatch, string(j, "mismatch", path, std::string()));
    if (const auto it = j.find("tolerance"); it != j.end()) {
      VN_RETURN_IF_ERROR(object(*it, path + ".tolerance"));
      VN_ASSIGN_OR_RETURN(c.tolerance.atol, number(*it, "atol", path + ".tolerance", c.tolerance.atol));
      VN_ASSIGN_OR_RETURN(c.tolerance.rtol, number(*it, "rtol", path + ".tolerance", c.tolerance.rtol));
      VN_ASSIGN_OR_RETURN(c.tolerance.quantile, number(*it, "quantile", path + ".tolerance", c.tolerance.quantile));
      VN_ASSIGN_OR_RETURN(const std::string stat, string(*it, "check_error_stat", path + ".tolerance", std::string("elemwise")));
      const std::optional<ErrorStat> parsed = error_stat_from_name(stat);
      if (!parsed) return bad(path + ".tolerance.check_error_stat", "is not an error statistic");
      c.tolerance.stat = *parsed;
    }
    VN_ASSIGN_OR_RETURN(c.count, integer(j, "count", path, int64_t{0}));
    for (const auto& [key, fields] : {std::pair{"abs_error", std::array{&c.abs_max, &c.abs_mean, &c.abs_median, &c.abs_quantile}},
                                      std::pair{"rel_error", std::array{&c.rel_max, &c.rel_mean, &c.rel_median, &c.rel_quantile}}}) {
      const auto it = j.find(key);
      if (it == j.end()) continue;
      const std::string p = path + "." + key;
      VN_RETURN_IF_ERROR(object(*it, p));
      const char* names[] = {"max", "mean", "median", "quantile"};
      for (size_t k = 0; k < 4; ++k) {
        VN_ASSIGN_OR_RETURN(*fields[k], number(*it, names[k], p, 0.0));
      }
    }
    VN_ASSIGN_OR_RETURN(c.cosine, number(j, "cosine", path, 1.0));
    VN_ASSIGN_OR_RETURN(c.nmse, number(j, "nmse", path, 0.0));
    VN_ASSIGN_OR_RETURN(c.snr_db, number(j, "snr_db", path, 0.0));
    for (const auto& [key, test, ref] : {std::tuple{"nan", &c.nan_test, &c.nan_ref}, std::tuple{"inf", &c.inf_test, &c.inf_ref}}) {
      const auto it = j.find(key);
      if (it == j.end()) continue;
      VN_RETURN_IF_ERROR(object(*it, path + "." + key));
      VN_ASSIGN_OR_RETURN(*test, integer(*it, "test", path + "." + key, int64_t{0}));
      VN_ASSIGN_OR_RETURN(*ref, integer(*it, "ref", path + "." + key, int64_t{0}));
    }
    VN_ASSIGN_OR_RETURN(c.mismatch_count, integer(j, "mismatch_count", path, int64_t{0}));
    if (const auto it = j.find("worst"); it != j.end()) {
      VN_RETURN_IF_ERROR(object(*it, path + ".worst"));
      VN_ASSIGN_OR_RETURN(c.worst_index, integer(*it, "index", path + ".worst", int64_t{-1}));
      VN_ASSIGN_OR_RETURN(c.worst_test, number(*it, "test", path + ".worst", 0.0));
      VN_ASSIGN_OR_RETURN(c.worst_ref, number(*it, "ref", path + ".worst", 0.0));
    }
    if (const auto it = j.find("min_passing"); it != j.end()) {
      VN_RETURN_IF_ERROR(object(*it, path + ".min_passing"));
      VN_ASSIGN_OR_RETURN(c.min_atol, number(*it, "atol", path + ".min_passing", 0.0));
      VN_ASSIGN_OR_RETURN(c.min_rtol, number(*it, "rtol", path + ".min_passing", 0.0));
    }
    VN_ASSIGN_OR_RETURN(const Json* bins, array(j, "histogram", path, false));
    if (!bins->empty() && bins->size() != static_cast<size_t>(kErrorHistogramBins)) {
      return bad(path + ".histogram", fmt::format("does not hold {} bins", kErrorHistogramBins));
    }
    for (size_t b = 0; b < bins->size(); ++b) {
      VN_RETURN_IF_ERROR(object((*bins)[b], fmt::format("{}.histogram[{}]", path, b)));
      VN_ASSIGN_OR_RETURN(const int64_t n, integer((*bins)[b], "count", fmt::format("{}.histogram[{}]", path, b), std::nullopt));
      c.abs_error_histogram.push_back(n);
    }
    if (const auto it = j.find("digest"); it != j.end()) {
      VN_ASSIGN_OR_RETURN(TensorDigest d, digest(*it, path + ".digest"));
      c.digest = std::make_shared<const TensorDigest>(std::move(d));
    }
    return c;
  }

  Result<LayerComparison> layer(const Json& j, const std::string& path, size_t tensors) const {
    VN_RETURN_IF_ERROR(object(j, path));
    LayerComparison l;
    VN_ASSIGN_OR_RETURN(l.layer.name, string(j, "name", path, std::nullopt));
    VN_ASSIGN_OR_RETURN(l.layer.op, string(j, "op", path, std::string()));
    VN_ASSIGN_OR_RETURN(l.layer.node, integer(j, "node", path, int64_t{-1}));
    VN_ASSIGN_OR_RETURN(l.layer.inputs, strings(j, "inputs", path));
    VN_ASSIGN_OR_RETURN(l.layer.outputs, strings(j, "outputs", path));
    VN_ASSIGN_OR_RETURN(const Json* accumulated, array(j, "accumulated", path, false));
    for (size_t i = 0; i < accumulated->size(); ++i) {
      const Json& a = (*accumulated)[i];
      if (!a.is_number_integer() || a.get<int64_t>() < -1 || a.get<int64_t>() >= static_cast<int64_t>(tensors)) {
        return bad(fmt::format("{}.accumulated[{}]", path, i), "is not the index of a tensor or -1");
      }
      l.accumulated.push_back(a.get<int>());
    }
    VN_ASSIGN_OR_RETURN(l.accumulated_excess, number(j, "accumulated_excess", path, 0.0));
    VN_ASSIGN_OR_RETURN(l.input_excess, number(j, "input_excess", path, 0.0));
    VN_ASSIGN_OR_RETURN(const Json* local, array(j, "local", path, false));
    for (size_t i = 0; i < local->size(); ++i) {
      VN_ASSIGN_OR_RETURN(TensorComparison c, tensor((*local)[i], fmt::format("{}.local[{}]", path, i)));
      l.local.push_back(std::move(c));
    }
    VN_ASSIGN_OR_RETURN(l.local_excess, number(j, "local_excess", path, -1.0));
    VN_ASSIGN_OR_RETURN(l.local_skipped, string(j, "local_skipped", path, std::string()));
    VN_ASSIGN_OR_RETURN(l.inputs_within, boolean(j, "inputs_within", path, true));
    VN_ASSIGN_OR_RETURN(l.introduces, boolean(j, "introduces", path, false));
    VN_ASSIGN_OR_RETURN(l.nonfinite, boolean(j, "nonfinite", path, false));
    VN_ASSIGN_OR_RETURN(l.score, number(j, "score", path, 0.0));
    VN_ASSIGN_OR_RETURN(const int64_t rank, integer(j, "rank", path, int64_t{0}));
    if (rank < 0 || rank > std::numeric_limits<int>::max()) return bad(path + ".rank", "is not a rank");
    l.rank = static_cast<int>(rank);
    return l;
  }

 private:
  std::string_view where_;
};

}  // namespace

Result<LayerwiseComparison> layerwise_comparison_from_json(const nlohmann::ordered_json& j, std::string_view where) {
  const Reader r(where);
  VN_RETURN_IF_ERROR(r.object(j, "comparison"));
  LayerwiseComparison c;
  VN_ASSIGN_OR_RETURN(c.local_errors, r.boolean(j, "local_errors", "comparison", false));
  VN_ASSIGN_OR_RETURN(const Json* tensors, r.array(j, "tensors", "comparison", true));
  for (size_t i = 0; i < tensors->size(); ++i) {
    VN_ASSIGN_OR_RETURN(TensorComparison t, r.tensor((*tensors)[i], fmt::format("comparison.tensors[{}]", i)));
    c.tensors.push_back(std::move(t));
  }
  VN_ASSIGN_OR_RETURN(const Json* layers, r.array(j, "layers", "comparison", true));
  for (size_t i = 0; i < layers->size(); ++i) {
    VN_ASSIGN_OR_RETURN(LayerComparison l, r.layer((*layers)[i], fmt::format("comparison.layers[{}]", i), c.tensors.size()));
    c.layers.push_back(std::move(l));
  }
  // The culprits are stored by name; the first layer of that name is the one.
  for (const auto& [key, field] : {std::pair{"culprit", &c.first_culprit}, std::pair{"first_nonfinite", &c.first_nonfinite}}) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) return r.bad(std::string("comparison.") + key, "is not a layer name or null");
    for (size_t i = 0; i < c.layers.size() && !*field; ++i) {
      if (c.layers[i].layer.name == it->get<std::string>()) *field = i;
    }
    if (!*field) return r.bad(std::string("comparison.") + key, "names no layer of the comparison");
  }
  VN_ASSIGN_OR_RETURN(c.only_in_test, r.strings(j, "only_in_test", "comparison"));
  VN_ASSIGN_OR_RETURN(c.only_in_ref, r.strings(j, "only_in_ref", "comparison"));
  VN_ASSIGN_OR_RETURN(c.not_produced, r.strings(j, "not_produced", "comparison"));
  VN_ASSIGN_OR_RETURN(const int64_t held, r.integer(j, "peak_held_bytes", "comparison", int64_t{0}));
  c.peak_held_bytes = static_cast<size_t>(std::max<int64_t>(0, held));
  return c;
}

}  // namespace vn
