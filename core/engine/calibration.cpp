// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_file.h"
#include "core/engine/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/common/logging.h"
#include "core/data/feeds.h"
#include "core/engine/engine_backend.h"
#include "core/engine/plan.h"
#include "core/ir/mapped_file.h"

namespace vn::engine {
namespace {

constexpr std::string_view kCacheFormat = "vernier-calibration-cache";
constexpr int kCacheVersion = 1;

/// True when the model quantizes explicitly: its QuantizeLinear/DequantizeLinear nodes say where.
bool explicitly_quantized(const Model& model) {
  return std::any_of(model.graph.nodes.begin(), model.graph.nodes.end(), [](const Node& n) {
    return is_default_domain(n.domain) && (n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear");
  });
}

}  // namespace

std::string_view calibration_method_name(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::kMinMax:
      return "minmax";
    case CalibrationMethod::kPercentile:
      return "percentile";
    case CalibrationMethod::kEntropy:
      return "entropy";
  }
  return "entropy";
}

std::optional<CalibrationMethod> calibration_method_from_name(std::string_view name) {
  if (name == "minmax") return CalibrationMethod::kMinMax;
  if (name == "percentile") return CalibrationMethod::kPercentile;
  if (name == "entropy") return CalibrationMethod::kEntropy;
  return std::nullopt;
}

void AbsHistogram::add(std::span<const float> values) {
  if (!(range > 0)) return;
  const double per_bin = kHistogramBins / range;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    const double b = std::abs(static_cast<double>(v)) * per_bin;
    counts[static_cast<size_t>(std::min(b, static_cast<double>(kHistogramBins - 1)))] += 1;
  }
}

double percentile_threshold(const AbsHistogram& h, double percentile) {
  double total = 0;
  for (double c : h.counts) total += c;
  if (total <= 0) return h.range;
  const double target = total * std::clamp(percentile, 0.0, 100.0) / 100.0;
  double below = 0;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    if (h.counts[b] > 0 && below + h.counts[b] >= target) {
      const double inside = (target - below) / h.counts[b];
      return (static_cast<double>(b) + inside) * h.bin_width();
    }
    below += h.counts[b];
  }
  return h.range;
}

double entropy_threshold(const AbsHistogram& h) {
  // The zero bin holds every value a ReLU clamped; its spike would dominate both distributions, so
  // it counts as its neighbour does (as NVIDIA's pytorch-quantization does).
  std::vector<double> bins = h.counts;
  const size_t n = bins.size();
  if (n > 1) bins[0] = bins[1];
  std::vector<double> tail(n + 1, 0.0);
  for (size_t b = n; b-- > 0;) tail[b] = tail[b + 1] + bins[b];
  if (tail[0] <= 0) return h.range;
  double best_kl = std::numeric_limits<double>::infinity();
  size_t best = n;
  std::vector<double> level_sum(kEntropyLevels), level_count(kEntropyLevels), p, q;
  for (size_t i = kEntropyLevels; i <= n; ++i) {
    // Bin k of the first i falls in level floor(k * levels / i); each level's mass is spread back
    // evenly over its non-empty bins, since an empty bin holds no value to quantize.
    std::fill(level_sum.begin(), level_sum.end(), 0.0);
    std::fill(level_count.begin(), level_count.end(), 0.0);
    const auto level = [&](size_t k) { return k * kEntropyLevels / i; };
    for (size_t k = 0; k < i; ++k) {
      if (bins[k] == 0) continue;
      level_sum[level(k)] += bins[k];
      level_count[level(k)] += 1;
    }
    p.assign(bins.begin(), bins.begin() + static_cast<std::ptrdiff_t>(i));
    p[i - 1] += tail[i];
    q.assign(i, 0.0);
    double q_total = 0;
    for (size_t k = 0; k < i; ++k) {
      if (bins[k] != 0) q[k] = level_sum[level(k)] / level_count[level(k)];
      q_total += q[k];
    }
    const double p_total = tail[0];
    double kl = 0;
    for (size_t k = 0; k < i && kl < std::numeric_limits<double>::infinity(); ++k) {
      if (p[k] == 0) continue;
      // A clipped tail landing in an empty last bin has no quantized counterpart: infinite KL.
      kl = q[k] == 0 ? std::numeric_limits<double>::infinity()
                     : kl + p[k] / p_total * std::log((p[k] / p_total) / (q[k] / q_total));
    }
    // Ties go to the larger threshold, which clips less.
    if (kl <= best_kl) {
      best_kl = kl;
      best = i;
    }
  }
  return static_cast<double>(best) * h.bin_width();
}

void Calibrator::observe_range(const std::string& name, const Tensor& tensor) {
  if (tensor.dtype() != DType::kFloat32) return;
  double& m = max_abs_[name];
  for (float v : tensor.values<float>()) {
    if (std::isfinite(v)) m = std::max(m, static_cast<double>(std::abs(v)));
  }
}

void Calibrator::observe_histogram(const std::string& name, const Tensor& tensor) {
  if (tensor.dtype() != DType::kFloat32) return;
  auto m = max_abs_.find(name);
  if (m == max_abs_.end()) return;
  auto [it, added] = histograms_.try_emplace(name);
  if (added) it->second.range = m->second;
  it->second.add(tensor.values<float>());
}

std::unordered_map<std::string, double> Calibrator::thresholds() const {
  std::unordered_map<std::string, double> out;
  for (const auto& [name, max_abs] : max_abs_) {
    auto h = histograms_.find(name);
    if (options_.method == CalibrationMethod::kMinMax || h == histograms_.end() || !(max_abs > 0)) {
      out[name] = max_abs;
    } else if (options_.method == CalibrationMethod::kPercentile) {
      out[name] = percentile_threshold(h->second, options_.percentile);
    } else {
      out[name] = entropy_threshold(h->second);
    }
  }
  return out;
}

ScaleTable Calibrator::scales() const {
  ScaleTable out;
  for (const auto& [name, amax] : thresholds()) out[name] = scale_from_amax(amax);
  return out;
}

Result<ScaleTable> calibrate(const Model& model, const std::vector<TensorMap>& feeds, const CalibrationOptions& options,
                             const ops::OpRegistry& registry, int num_threads) {
  if (feeds.empty()) return make_error(StatusCode::kInvalidArgument, "int8 calibration needs at least one feed");
  EngineOptions fp32;
  fp32.build.deterministic = true;
  // The float32 build runs its layers once; with the calibration data's shapes, dynamic dims too.
  for (const ValueInfo* in : model.graph.runtime_inputs()) {
    if (const Tensor* t = feeds.front().find(in->name)) fp32.build.input_shapes[in->name] = t->shape();
  }
  EngineBackend engine(std::move(fp32), registry);
  PrepareOptions prep;
  prep.mark_all = true;
  prep.num_threads = num_threads;
  VN_RETURN_IF_ERROR(engine.prepare(model, prep));

  Calibrator calibrator(options);
  const int passes = calibrator.needs_histograms() ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    const auto observe = [&](const std::string& name, const Tensor& t) {
      if (pass == 0) {
        calibrator.observe_range(name, t);
      } else {
        calibrator.observe_histogram(name, t);
      }
    };
    RunOptions run;
    run.stream = true;
    run.observer = [&](int64_t, const Node&, const TensorMap& outputs) {
      for (const auto& entry : outputs) observe(entry.name, entry.tensor);
      return true;
    };
    for (const TensorMap& feed : feeds) {
      for (const ValueInfo* in : model.graph.runtime_inputs()) {
        if (const Tensor* t = feed.find(in->name)) observe(in->name, *t);
      }
      VN_RETURN_IF_ERROR(engine.run(feed, run).status());
    }
  }
  return calibrator.scales();
}

Result<ObtainedScales> obtain_int8_scales(const Model& model, const Int8Options& o,
                                          const std::map<std::string, Shape>& input_shapes,
                                          const ops::OpRegistry& registry, int num_threads) {
  ObtainedScales out;
  const std::string_view method = calibration_method_name(o.calibration.method);
  if (explicitly_quantized(model)) {
    out.description =
        "none: the model is explicitly quantized; its QuantizeLinear/DequantizeLinear nodes run as given";
    VN_LOG_INFO("int8: {}", out.description);
    return out;
  }
  if (o.scales) {
    out.scales = *o.scales;
    out.description = fmt::format("{} scales given", out.scales.size());
    return out;
  }
  const std::string hash = model_hash(model);
  std::error_code ec;
  if (!o.cache.empty() && std::filesystem::exists(o.cache, ec)) {
    VN_ASSIGN_OR_RETURN(CalibrationCache cache, load_calibration_cache(o.cache));
    if (cache.model_hash != hash) {
      return make_error(StatusCode::kInvalidArgument,
                        "--calibration-cache {} was calibrated on another model ('{}', hash {}); this model's hash "
                        "is {}: delete the cache or name another file to calibrate again",
                        o.cache.string(), cache.model_name, cache.model_hash, hash);
    }
    out.scales = std::move(cache.scales);
    out.description = fmt::format("{} scales of {} tensor(s) read from the calibration cache {}",
                                  calibration_method_name(cache.method), out.scales.size(), o.cache.string());
    VN_LOG_INFO("int8: {}", out.description);
    return out;
  }
  std::vector<TensorMap> feeds = o.feeds;
  std::string source = fmt::format("{} feed(s)", feeds.size());
  if (!o.data.empty()) {
    VN_ASSIGN_OR_RETURN(feeds, data::load_feeds(o.data, model.graph));
    std::string files;
    for (const std::filesystem::path& p : o.data) files += (files.empty() ? "" : ", ") + p.string();
    source = fmt::format("{} feed(s) of {}", feeds.size(), files);
  } else if (feeds.empty()) {
    data::SyntheticOptions synthetic = o.synthetic;
    for (const auto& [name, shape] : input_shapes) synthetic.input_shapes.try_emplace(name, shape);
    VN_ASSIGN_OR_RETURN(feeds, data::generate_feeds(model.graph, synthetic));
    source = fmt::format("{} synthetic feed(s) (seed {})", feeds.size(), synthetic.seed);
    out.synthetic = true;
    VN_LOG_WARNING(
        "int8: no --calibration-data, so calibrating on {}; scales from random data rarely fit real inputs", source);
  }
  VN_ASSIGN_OR_RETURN(out.scales, calibrate(model, feeds, o.calibration, registry, num_threads));
  out.description = fmt::format("{} calibration over {}", method, source);
  VN_LOG_INFO("int8: {}", out.description);
  if (!o.cache.empty()) {
    VN_RETURN_IF_ERROR(save_calibration_cache({hash, model.graph.name, o.calibration.method, out.scales}, o.cache));
    VN_LOG_INFO("int8: wrote the calibration cache {}", o.cache.string());
  }
  return out;
}

Status save_calibration_cache(const CalibrationCache& cache, const std::filesystem::path& path) {
  nlohmann::ordered_json j;
  j["format"] = kCacheFormat;
  j["version"] = kCacheVersion;
  j["model"] = {{"name", cache.model_name}, {"hash", cache.model_hash}};
  j["method"] = calibration_method_name(cache.method);
  nlohmann::ordered_json scales = nlohmann::ordered_json::object();
  for (const auto& [name, s] : cache.scales) scales[name] = static_cast<double>(s);
  j["scales"] = std::move(scales);
  return file_write_atomic(path, j.dump(2) + "\n");
}

Result<CalibrationCache> load_calibration_cache(const std::filesystem::path& path) {
  const auto fail = [&](std::string_view what) {
    return make_error(StatusCode::kIoError, "{}: not a Vernier calibration cache: {}", path.string(), what);
  };
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json j, read_json_file(path, "calibration cache"));
  if (!j.is_object()) return fail("not a JSON object");
  if (!j.contains("format") || j["format"] != kCacheFormat)
    return fail("\"format\" is not \"vernier-calibration-cache\"");
  if (!j.contains("version") || j["version"] != kCacheVersion) {
    return fail(fmt::format("version is not {}; delete it to calibrate again", kCacheVersion));
  }
  CalibrationCache cache;
  const nlohmann::ordered_json& model = j.contains("model") ? j["model"] : nlohmann::ordered_json();
  if (!model.is_object() || !model.contains("hash") || !model["hash"].is_string()) return fail("no model hash");
  cache.model_hash = model["hash"].get<std::string>();
  if (model.contains("name") && model["name"].is_string()) cache.model_name = model["name"].get<std::string>();
  const std::optional<CalibrationMethod> method = j.contains("method") && j["method"].is_string()
                                                      ? calibration_method_from_name(j["method"].get<std::string>())
                                                      : std::nullopt;
  if (!method) return fail("\"method\" is not minmax, percentile or entropy");
  cache.method = *method;
  if (!j.contains("scales") || !j["scales"].is_object()) return fail("no \"scales\" object");
  for (auto it = j["scales"].begin(); it != j["scales"].end(); ++it) {
    // A scale must survive the conversion to float: 1e300 would become inf and 1e-300 zero.
    const float scale = it.value().is_number() ? static_cast<float>(it.value().get<double>()) : 0.0f;
    if (!std::isfinite(scale) || !(scale >= std::numeric_limits<float>::min())) {
      return fail(fmt::format("the scale of '{}' is not a positive float32 number", it.key()));
    }
    cache.scales[it.key()] = scale;
  }
  return cache;
}

}  // namespace vn::engine
