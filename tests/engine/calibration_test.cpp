// SPDX-License-Identifier: Apache-2.0
// int8 calibration: each method's threshold on distributions whose right answer is known, the
// weight scales per output channel, and the calibration cache file.
#include "core/engine/calibration.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include "core/ir/mapped_file.h"
#include "tests/engine/engine_test_util.h"

namespace vn::engine {
namespace {

/// `n` values uniform in [-1, 1) from a fixed seed, as a float32 tensor.
Tensor uniform(int64_t n, uint32_t seed) { return test::random_tensor({n}, seed); }

/// `n` standard normal values from a fixed seed.
Tensor normal(int64_t n, uint32_t seed) {
  Tensor t(DType::kFloat32, {n});
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  for (float& v : t.mutable_values<float>()) v = dist(rng);
  return t;
}

double threshold_of(CalibrationMethod method, const std::vector<Tensor>& batches) {
  Calibrator c({method});
  for (const Tensor& b : batches) c.observe_range("x", b);
  if (c.needs_histograms()) {
    for (const Tensor& b : batches) c.observe_histogram("x", b);
  }
  return c.thresholds().at("x");
}

TEST(Calibration, MinMaxScaleIsTheLargestMagnitudeOver127) {
  Tensor a = uniform(1000, 1), b = uniform(1000, 2);
  a.mutable_values<float>()[17] = -3.5f;
  b.mutable_values<float>()[3] = 2.0f;
  Calibrator c({CalibrationMethod::kMinMax});
  c.observe_range("x", a);
  c.observe_range("x", b);
  EXPECT_FALSE(c.needs_histograms());
  EXPECT_FLOAT_EQ(c.scales().at("x"), 3.5f / 127);
}

TEST(Calibration, PercentileIgnoresAPlantedOutlier) {
  Tensor x = uniform(200000, 3);
  x.mutable_values<float>()[12345] = 50.0f;
  EXPECT_DOUBLE_EQ(threshold_of(CalibrationMethod::kMinMax, {x}), 50.0);
  const double p = threshold_of(CalibrationMethod::kPercentile, {x});
  // The 99.99th percentile of |U(-1, 1)| is 0.9999; the histogram over [0, 50] has bins of 0.024.
  EXPECT_NEAR(p, 0.9999, 0.03);
}

TEST(Calibration, PercentileFollowsTheRequestedPercentile) {
  const Tensor x = uniform(100000, 4);
  Calibrator c({CalibrationMethod::kPercentile, 90.0});
  c.observe_range("x", x);
  c.observe_histogram("x", x);
  EXPECT_NEAR(c.thresholds().at("x"), 0.9, 0.01);
}

TEST(Calibration, EntropyThresholdSitsBelowAnOutlierTail) {
  // A standard normal bulk and a sparse tail of 0.05% of the values between 20 and 40.
  Tensor x = normal(200000, 5);
  std::mt19937 rng(6);
  for (int i = 0; i < 100; ++i) {
    x.mutable_values<float>()[static_cast<size_t>(rng() % 200000)] = 20.0f + 20.0f * static_cast<float>(i) / 100;
  }
  const double minmax = threshold_of(CalibrationMethod::kMinMax, {x});
  const double entropy = threshold_of(CalibrationMethod::kEntropy, {x});
  EXPECT_GT(minmax, 39.0);
  EXPECT_LT(entropy, 20.0) << "the threshold clips the tail";
  EXPECT_GT(entropy, 2.5) << "the threshold keeps the bulk (|x| < 2.5 holds 98.8% of it)";
}

TEST(Calibration, EntropyOfABoundedBulkKeepsItsRange) {
  // Without a tail, clipping only loses information: the threshold stays near the maximum.
  const Tensor x = uniform(100000, 7);
  EXPECT_GT(threshold_of(CalibrationMethod::kEntropy, {x}), 0.9);
}

TEST(Calibration, AnAllZeroTensorGetsAUsableScale) {
  const Tensor zeros(DType::kFloat32, {16});
  for (CalibrationMethod m :
       {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile, CalibrationMethod::kEntropy}) {
    Calibrator c({m});
    c.observe_range("z", zeros);
    c.observe_histogram("z", zeros);
    const float s = c.scales().at("z");
    EXPECT_GT(s, 0.0f) << calibration_method_name(m);
    EXPECT_EQ(quantize_value(0.0f, s), 0);
  }
}

TEST(Calibration, MethodNamesRoundTrip) {
  for (CalibrationMethod m :
       {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile, CalibrationMethod::kEntropy}) {
    EXPECT_EQ(calibration_method_from_name(calibration_method_name(m)), m);
  }
  EXPECT_FALSE(calibration_method_from_name("kl").has_value());
}

TEST(Quantize, RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(quantize_value(2.5f, 1.0f), 2);
  EXPECT_EQ(quantize_value(3.5f, 1.0f), 4);
  EXPECT_EQ(quantize_value(-0.26f, 0.5f), -1);
  EXPECT_EQ(quantize_value(1000.0f, 1.0f), 127);
  EXPECT_EQ(quantize_value(-1000.0f, 1.0f), -128);
  EXPECT_EQ(quantize_value(std::nanf(""), 1.0f), 0);
  std::vector<float> v{0.26f, -0.74f, 90.0f};
  fake_quantize_in_place(v, 0.5f);
  EXPECT_EQ(v, (std::vector<float>{0.5f, -0.5f, 63.5f}));
}

TEST(Quantize, WholeSpansGiveEachValueItsOwnQuantization) {
  // The span functions run 32 or eight values at a time where they can: every value, in any position,
  // must come out as quantize_value makes it (ties, saturation, NaN, infinities, signed zeros).
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-200.0f, 200.0f);
  std::vector<float> values = {2.5f,
                               3.5f,
                               -2.5f,
                               -0.2f,
                               0.2f,
                               -0.0f,
                               0.0f,
                               1e30f,
                               -1e30f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::nanf(""),
                               127.5f,
                               -128.5f,
                               126.5f};
  for (int i = 0; i < 1000; ++i) values.push_back(dist(rng));
  for (float scale : {1.0f, 0.37f}) {
    std::vector<float> fake = values;
    fake_quantize_in_place(fake, scale);
    std::vector<int8_t> q(values.size());
    quantize_to_int8(values, scale, q.data());
    for (size_t i = 0; i < values.size(); ++i) {
      const int32_t want = quantize_value(values[i], scale);
      EXPECT_EQ(q[i], want) << values[i];
      const float want_fake = scale * static_cast<float>(want);
      EXPECT_EQ(std::bit_cast<uint32_t>(fake[i]), std::bit_cast<uint32_t>(want_fake)) << values[i];
    }
  }
}

TEST(Quantize, ValuesNearEveryHalfStepQuantizeAsTheirQuotient) {
  // The span functions divide by a normal scale as a product by its reciprocal, except for the
  // values the product could round to the other side of a half-integer: walk 40 floats across
  // each half-integer multiple of the scale, at odd scales, and compare with quantize_value. Whole
  // spans run sixteen lanes where the machine has AVX-512; spans of 15 run eight lanes, then one
  // value at a time.
  for (const float scale : {0.37f, 1.0f / 3.0f, 0.0123f, 7.1f, 1e-30f, 3e-39f, 1e37f}) {
    std::vector<float> values;
    for (int k = -131; k <= 131; ++k) {
      float v = (static_cast<float>(k) + 0.5f) * scale;
      for (int i = 0; i < 20; ++i) v = std::nextafter(v, -std::numeric_limits<float>::infinity());
      for (int i = 0; i < 40; ++i, v = std::nextafter(v, std::numeric_limits<float>::infinity())) values.push_back(v);
    }
    for (const size_t chunk : {values.size(), size_t{15}}) {
      std::vector<float> fake = values, as_float(values.size());
      std::vector<int8_t> q(values.size());
      for (size_t at = 0; at < values.size(); at += chunk) {
        const size_t len = std::min(chunk, values.size() - at);
        fake_quantize_in_place(std::span<float>(fake).subspan(at, len), scale);
        quantize_to_int8(std::span<const float>(values).subspan(at, len), scale, q.data() + at);
        quantize_to_float(std::span<const float>(values).subspan(at, len), scale, as_float.data() + at);
      }
      size_t wrong = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        const int32_t want = quantize_value(values[i], scale);
        const bool same = q[i] == want && as_float[i] == static_cast<float>(want) &&
                          std::bit_cast<uint32_t>(fake[i]) == std::bit_cast<uint32_t>(scale * static_cast<float>(want));
        if (!same && wrong++ < 5) ADD_FAILURE() << "scale " << scale << ", value " << values[i] << ": " << want;
      }
      EXPECT_EQ(wrong, 0u) << "scale " << scale << ", spans of " << chunk;
    }
  }
}

TEST(Quantize, GridValuesGiveBackTheirIntegers) {
  // What an int8 layer hands the next: every grid value of a scale (fake_quantize_in_place of
  // each integer's multiple, and of values around them), read back by grid_to_float as
  // quantize_to_float reads them, at odd, tiny (subnormal grid values, a subnormal scale) and
  // huge scales, in whole spans and in spans of 15 (eight lanes, then one value at a time).
  for (const float scale : {0.37f, 1.0f / 3.0f, 0.0123f, 7.1f, 1e-30f, 1.5e-38f, 3e-39f, 1e37f, 3e38f}) {
    std::vector<float> values;
    for (int k = -140; k <= 140; ++k) {
      values.push_back(static_cast<float>(k) * scale);
      values.push_back((static_cast<float>(k) + 0.3f) * scale);
    }
    values.push_back(-0.0f);
    fake_quantize_in_place(values, scale);
    for (const size_t chunk : {values.size(), size_t{15}}) {
      std::vector<float> want(values.size()), got(values.size());
      for (size_t at = 0; at < values.size(); at += chunk) {
        const size_t len = std::min(chunk, values.size() - at);
        quantize_to_float(std::span<const float>(values).subspan(at, len), scale, want.data() + at);
        grid_to_float(std::span<const float>(values).subspan(at, len), scale, got.data() + at);
      }
      for (size_t i = 0; i < values.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
            << "scale " << scale << ", value " << values[i] << ", spans of " << chunk;
      }
    }
  }
}

TEST(Quantize, WeightScalesArePerOutputChannel) {
  // Channel 0 is a thousand times smaller than channel 1: one scale for both would round it to 0.
  const std::vector<double> w{0.0011, -0.002, 0.0005, 1.1, -2.0, 0.5};
  const std::vector<float> scales = per_channel_scales(w, 2);
  ASSERT_EQ(scales.size(), 2u);
  EXPECT_FLOAT_EQ(scales[0], 0.002f / 127);
  EXPECT_FLOAT_EQ(scales[1], 2.0f / 127);
  const std::vector<int8_t> q = quantize_per_channel(w, scales);
  EXPECT_EQ(q, (std::vector<int8_t>{70, -127, 32, 70, -127, 32}));
}

class CalibrationCacheTest : public ::testing::Test {
 protected:
  std::filesystem::path path_ =
      std::filesystem::temp_directory_path() / ("vn_calibration_cache_" + std::to_string(::getpid()) + ".json");
  void TearDown() override { std::filesystem::remove(path_); }
};

TEST_F(CalibrationCacheTest, RoundTripsScalesBitForBit) {
  CalibrationCache cache{"0x0123456789abcdef", "net", CalibrationMethod::kPercentile, {}};
  cache.scales["conv1"] = 0.1f / 127;
  cache.scales["a:b/c"] = 3.0e-7f;
  cache.scales["y"] = 123.456f;
  ASSERT_TRUE(save_calibration_cache(cache, path_).ok());
  Result<CalibrationCache> back = load_calibration_cache(path_);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->model_hash, cache.model_hash);
  EXPECT_EQ(back->model_name, "net");
  EXPECT_EQ(back->method, CalibrationMethod::kPercentile);
  EXPECT_EQ(back->scales, cache.scales);
}

TEST_F(CalibrationCacheTest, MalformedCachesAreRefusedWithTheReason) {
  ASSERT_TRUE(file_write_atomic(path_, "{\"format\": \"vernier-plan\"}").ok());
  Result<CalibrationCache> r = load_calibration_cache(path_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a Vernier calibration cache"), std::string::npos) << r.status().message();
  ASSERT_TRUE(file_write_atomic(path_,
                                "{\"format\": \"vernier-calibration-cache\", \"version\": 1, \"model\": {\"hash\": "
                                "\"0x1\"}, \"method\": \"entropy\", \"scales\": {\"x\": -1}}")
                  .ok());
  r = load_calibration_cache(path_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("scale of 'x'"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace vn::engine
