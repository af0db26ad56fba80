// SPDX-License-Identifier: Apache-2.0
#include "core/io/polygraphy_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "core/io/base64.h"
#include "core/io/npy.h"
#include "tests/io/test_util.h"

namespace vn::io {
namespace {

using testing::fixture_path;
using testing::read_fixture;
using testing::TempDir;

constexpr const char* kWorkedSample =
    "k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIpLCB9ICAgICAgICAgICAgICAgIC"
    "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAIA/AAAAQAAAQEAAAIBA";

// The (1, 1, 2, 2) float32 payload of 19b_id_inputs.json.
constexpr const char* kSmallArray =
    "k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDEsIDEsIDIsIDIpLCB9ICAgICAgICAgIC"
    "Ag"
    "ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIArog9U+MGc4P4Pc7zhWy5o+";

bool contains(const Status& s, std::string_view needle) { return s.message().find(needle) != std::string::npos; }

template <typename T>
Status error_of(const Result<T>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return Status::OK();
  EXPECT_EQ(r.status().code(), StatusCode::kIoError) << r.status().to_string();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  return r.status();
}

Status run_results_error(std::string_view text) { return error_of(run_results_from_json(text)); }
Status feed_list_error(std::string_view text) { return error_of(feed_list_from_json(text)); }

std::string ndarray_json(const char* b64) {
  return fmt::format(R"({{"array": "{}", "polygraphy_class": "ndarray"}})", b64);
}

std::string run_results_with_output(const std::string& output_json) {
  return fmt::format(R"({{"lst": [["r", [{{"outputs": {{"y": {}}}, "runtime": 0.5, "runner_name": "r",
      "polygraphy_class": "IterationResult"}}]]], "polygraphy_class": "RunResults"}})",
                     output_json);
}

std::vector<float> floats(const Tensor& t) { return {t.values<float>().begin(), t.values<float>().end()}; }

class ByteExact : public ::testing::TestWithParam<const char*> {};

TEST_P(ByteExact, RunResultsReencodeIdentically) {
  const std::string text = read_fixture(GetParam());
  Result<RunResults> results = run_results_from_json(text);
  ASSERT_TRUE(results.ok()) << results.status().to_string();
  Result<std::string> again = run_results_to_json(*results);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(*again, text);
}

INSTANTIATE_TEST_SUITE_P(PolygraphySamples, ByteExact,
                         ::testing::Values("02b_golden.json", "19c_id_outputs.json", "runtime_repr.json"));

class ByteExactFeeds : public ::testing::TestWithParam<const char*> {};

TEST_P(ByteExactFeeds, FeedListsReencodeIdentically) {
  const std::string text = read_fixture(GetParam());
  Result<std::vector<TensorMap>> feeds = feed_list_from_json(text);
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  Result<std::string> again = feed_list_to_json(*feeds);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(*again, text);
}

INSTANTIATE_TEST_SUITE_P(PolygraphySamples, ByteExactFeeds,
                         ::testing::Values("02c_inputs.json", "19b_id_inputs.json", "09b_layerwise_inputs.json",
                                           "numpy_dtypes.json"));

TEST(PolygraphyJson, SamplesHaveNoTrailingNewline) {
  // Python's json.dumps adds none; the byte-exact tests above would catch a writer that does.
  for (const char* name : {"02b_golden.json", "02c_inputs.json", "19b_id_inputs.json", "19c_id_outputs.json"}) {
    const std::string text = read_fixture(name);
    ASSERT_FALSE(text.empty());
    EXPECT_NE(text.back(), '\n') << name;
  }
}

TEST(PolygraphyJson, EveryNumpyPayloadReencodesByteForByte) {
  Result<std::vector<TensorMap>> feeds = load_feed_list(fixture_path("numpy_dtypes.json"));
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  ASSERT_EQ(feeds->size(), 2u);
  EXPECT_TRUE((*feeds)[1].empty());
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(read_fixture("numpy_dtypes.json"));
  size_t i = 0;
  for (const auto& [name, value] : doc[0].items()) {
    Result<std::string> numpy_bytes = base64_decode(value["array"].get<std::string>());
    ASSERT_TRUE(numpy_bytes.ok());
    Result<std::string> ours = npy_encode((*feeds)[0][i].tensor);
    ASSERT_TRUE(ours.ok()) << name;
    EXPECT_EQ(*ours, *numpy_bytes) << name;
    EXPECT_EQ((*feeds)[0][i].name, name);
    ++i;
  }
  EXPECT_EQ(i, 52u);
  const TensorMap& f = (*feeds)[0];
  ASSERT_NE(f.find("int64"), nullptr);
  EXPECT_EQ(f.find("int64")->data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.find("uint64")->data<uint64_t>()[1], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f.find("int8_scalar")->rank(), 0);
  EXPECT_EQ(f.find("uint16_empty")->shape(), (Shape{0, 4}));
  EXPECT_EQ(f.find("wide_first_dim")->shape(), (Shape{123456789, 0}));
  EXPECT_NE(f.find("caf\xc3\xa9 \xe5\x90\x8d\xf0\x9f\x98\x80 \"q\" \\ \n\t\x01\x7f/"), nullptr);
}

TEST(PolygraphyJson, ReadsRunResultsValues) {
  Result<RunResults> results = load_run_results(fixture_path("19c_id_outputs.json"));
  ASSERT_TRUE(results.ok()) << results.status().to_string();
  ASSERT_EQ(results->size(), 1u);
  const RunnerResults& runner = (*results)[0];
  EXPECT_EQ(runner.runner_name, "onnxrt-runner-N0-11/21/26-08:37:34");
  ASSERT_EQ(runner.iterations.size(), 2u);
  EXPECT_EQ(runner.iterations[0].runtime, 0.00031566619873046875);
  EXPECT_EQ(runner.iterations[1].runtime, 2.3603439331054688e-05);
  EXPECT_EQ(runner.iterations[1].runner_name, runner.runner_name);
  const Tensor* y = runner.iterations[0].outputs.find("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->shape(), (Shape{1, 1, 2, 2}));
  // An identity model: its outputs are 19b's inputs, the seed-1 sequence.
  EXPECT_NEAR(y->data<float>()[0], 0.4170220, 1e-7);
  EXPECT_NEAR(y->data<float>()[1], 0.7203245, 1e-7);

  Result<std::vector<TensorMap>> inputs = load_feed_list(fixture_path("19b_id_inputs.json"));
  ASSERT_TRUE(inputs.ok());
  ASSERT_EQ(inputs->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE((*inputs)[i].find("x")->same_as(*runner.iterations[i].outputs.find("y"))) << i;
  }
}

TEST(PolygraphyJson, ReadsGeneratedInputs) {
  Result<std::vector<TensorMap>> feeds = load_feed_list(fixture_path("02c_inputs.json"));
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  ASSERT_EQ(feeds->size(), 1u);
  const TensorMap& feed = (*feeds)[0];
  ASSERT_EQ(feed.size(), 2u);
  EXPECT_EQ(feed[0].name, "x0");
  EXPECT_EQ(feed[1].name, "x1");
  const Tensor& x0 = feed[0].tensor;
  EXPECT_EQ(x0.dtype(), DType::kFloat32);
  EXPECT_EQ(x0.shape(), (Shape{1, 3, 4, 4}));
  const std::vector<float> expected = {0.4170220f, 0.7203245f, 0.0001144f, 0.3023326f};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(x0.data<float>()[i], expected[i], 1e-7) << i;
}

TEST(PolygraphyJson, ReadsLayerwiseGoldenAndMergedInputs) {
  Result<RunResults> golden = load_run_results(fixture_path("02b_golden.json"));
  ASSERT_TRUE(golden.ok()) << golden.status().to_string();
  ASSERT_EQ(golden->size(), 1u);
  ASSERT_EQ((*golden)[0].iterations.size(), 1u);
  const TensorMap& outputs = (*golden)[0].iterations[0].outputs;
  std::vector<std::string> names;
  for (const NamedTensor& nt : outputs) names.push_back(nt.name);
  EXPECT_EQ(names, (std::vector<std::string>{"t_abs", "t_mul", "t_add", "t_relu", "t_sig", "t_scale", "t_tanh", "y"}));
  EXPECT_EQ((*golden)[0].iterations[0].runtime, 0.0003714561462402344);

  Result<std::vector<TensorMap>> merged = load_feed_list(fixture_path("09b_layerwise_inputs.json"));
  ASSERT_TRUE(merged.ok()) << merged.status().to_string();
  ASSERT_EQ(merged->size(), 1u);
  std::vector<std::string> merged_names;
  for (const NamedTensor& nt : (*merged)[0]) merged_names.push_back(nt.name);
  EXPECT_EQ(merged_names.front(), "x0");
  EXPECT_EQ(merged_names.size(), 10u);
  for (const NamedTensor& nt : outputs) {
    const Tensor* t = (*merged)[0].find(nt.name);
    ASSERT_NE(t, nullptr) << nt.name;
    EXPECT_TRUE(t->same_as(nt.tensor)) << nt.name;
  }
}

TEST(PolygraphyJson, DecodesTheWorkedSampleBothWays) {
  const nlohmann::json value = nlohmann::json::parse(ndarray_json(kWorkedSample));
  Result<Tensor> t = decode_polygraphy_array(value);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->shape(), (Shape{2, 2}));
  EXPECT_EQ(floats(*t), (std::vector<float>{1, 2, 3, 4}));
  Result<std::string> json = feed_list_to_json({TensorMap{{"x", *t}}});
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json, fmt::format("[\n    {{\n        \"x\": {{\n            \"array\": \"{}\",\n"
                               "            \"polygraphy_class\": \"ndarray\"\n        }}\n    }}\n]",
                               kWorkedSample));
}

TEST(PolygraphyJson, WritesEmptyContainersAsPythonDoes) {
  Result<std::string> empty_feeds = feed_list_to_json({});
  ASSERT_TRUE(empty_feeds.ok());
  EXPECT_EQ(*empty_feeds, "[]");
  Result<std::string> empty_feed = feed_list_to_json({TensorMap{}});
  ASSERT_TRUE(empty_feed.ok());
  EXPECT_EQ(*empty_feed, "[\n    {}\n]");
  Result<std::string> empty_results = run_results_to_json({});
  ASSERT_TRUE(empty_results.ok());
  EXPECT_EQ(*empty_results, "{\n    \"lst\": [],\n    \"polygraphy_class\": \"RunResults\"\n}");
  RunResults results = {RunnerResults{"r", {IterationResult{TensorMap{}, std::nullopt, "r"}}}};
  Result<std::string> json = run_results_to_json(results);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json,
            "{\n    \"lst\": [\n        [\n            \"r\",\n            [\n                {\n"
            "                    \"outputs\": {},\n                    \"runtime\": null,\n"
            "                    \"runner_name\": \"r\",\n"
            "                    \"polygraphy_class\": \"IterationResult\"\n                }\n"
            "            ]\n        ]\n    ],\n    \"polygraphy_class\": \"RunResults\"\n}");
}

TEST(PolygraphyJson, FormatsRuntimesAsPythonRepr) {
  struct Case {
    double value;
    const char* repr;
  };
  const std::vector<Case> cases = {
      {0.00031566619873046875, "0.00031566619873046875"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {0.5, "0.5"},
      {1.0, "1.0"},
      {123.0, "123.0"},
      {0.1, "0.1"},
      {1e16, "1e+16"},
      {1234567890123456.0, "1234567890123456.0"},
      {1e15, "1000000000000000.0"},
      {2.5e-300, "2.5e-300"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {-2.3603439331054688e-05, "-2.3603439331054688e-05"},
      {-0.0, "-0.0"},
      {12345.678, "12345.678"},
      {std::numeric_limits<double>::quiet_NaN(), "null"},
      {std::numeric_limits<double>::infinity(), "null"},
  };
  for (const Case& c : cases) {
    RunResults results = {RunnerResults{"r", {IterationResult{TensorMap{}, c.value, "r"}}}};
    Result<std::string> json = run_results_to_json(results);
    ASSERT_TRUE(json.ok());
    EXPECT_NE(json->find(fmt::format("\"runtime\": {},\n", c.repr)), std::string::npos) << c.repr << "\n" << *json;
  }
}

TEST(PolygraphyJson, RoundTripsThroughFiles) {
  TempDir dir;
  RunResults results;
  results.push_back(RunnerResults{"trt-runner-N0-1/2/3-4:5:6", {}});
  results.push_back(RunnerResults{"dup", {}});
  results.push_back(RunnerResults{"dup", {}});
  TensorMap outputs;
  outputs.set("b", Tensor::from_vector<float>({2}, {1.5f, -2.0f}));
  outputs.set("a", Tensor::scalar<int32_t>(3));
  outputs.set("mask", Tensor::from_vector<bool>({2, 1}, {true, false}));
  results[0].iterations.push_back(IterationResult{outputs, 0.25, "trt-runner-N0-1/2/3-4:5:6"});
  results[0].iterations.push_back(IterationResult{TensorMap{}, std::nullopt, "other"});
  results[2].iterations.push_back(IterationResult{outputs, 1e-7, "dup"});
  ASSERT_TRUE(save_run_results(results, dir / "r.json").ok());
  EXPECT_EQ(dir.entry_count(), 1u);
  Result<RunResults> back = load_run_results(dir / "r.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[1].runner_name, "dup");
  EXPECT_EQ((*back)[2].runner_name, "dup");
  ASSERT_EQ((*back)[0].iterations.size(), 2u);
  EXPECT_EQ((*back)[0].iterations[0].runtime, 0.25);
  EXPECT_FALSE((*back)[0].iterations[1].runtime.has_value());
  EXPECT_EQ((*back)[0].iterations[1].runner_name, "other");
  EXPECT_EQ((*back)[2].iterations[0].runtime, 1e-7);
  const TensorMap& got = (*back)[0].iterations[0].outputs;
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].name, "b");  // order kept, not sorted
  for (size_t i = 0; i < outputs.size(); ++i) EXPECT_TRUE(got[i].tensor.same_as(outputs[i].tensor));

  std::vector<TensorMap> feeds = {outputs, TensorMap{}};
  ASSERT_TRUE(save_feed_list(feeds, dir / "f.json").ok());
  Result<std::vector<TensorMap>> feeds_back = load_feed_list(dir / "f.json");
  ASSERT_TRUE(feeds_back.ok()) << feeds_back.status().to_string();
  ASSERT_EQ(feeds_back->size(), 2u);
  EXPECT_EQ((*feeds_back)[0][1].name, "a");
  EXPECT_TRUE((*feeds_back)[0][1].tensor.same_as(outputs[1].tensor));
  EXPECT_EQ(dir.entry_count(), 2u);
}

TEST(PolygraphyJson, FileErrorsNameThePath) {
  TempDir dir;
  Status missing = error_of(load_run_results(dir / "nope.json"));
  EXPECT_TRUE(contains(missing, "nope.json")) << missing.message();
  {
    FILE* f = std::fopen((dir / "bad.json").c_str(), "wb");
    std::fputs("{\"lst\": ", f);
    std::fclose(f);
  }
  Status bad = error_of(load_feed_list(dir / "bad.json"));
  EXPECT_TRUE(contains(bad, "bad.json")) << bad.message();
  EXPECT_TRUE(contains(bad, "invalid JSON")) << bad.message();
  RunResults bf16 = {RunnerResults{
      "r", {IterationResult{TensorMap{{"h", Tensor::from_vector<Eigen::bfloat16>({1}, {Eigen::bfloat16(2.5f)})}}, 0.1,
                            "r"}}}};
  ASSERT_TRUE(save_run_results(bf16, dir / "bf16.json").ok());
  Result<RunResults> bf16_back = load_run_results(dir / "bf16.json");
  ASSERT_TRUE(bf16_back.ok()) << bf16_back.status().to_string();
  const Tensor* h = (*bf16_back)[0].iterations[0].outputs.find("h");
  ASSERT_NE(h, nullptr);
  EXPECT_TRUE(h->same_as(*bf16[0].iterations[0].outputs.find("h")));
  RunResults strings = {RunnerResults{"r", {IterationResult{TensorMap{{"h", Tensor(DType::kString, {1})}}, 0.1, "r"}}}};
  Status s = save_run_results(strings, dir / "out.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnsupportedDType);
  EXPECT_TRUE(contains(s, "out.json")) << s.message();
  EXPECT_TRUE(contains(s, "output 'h'")) << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir / "out.json"));
}

TEST(PolygraphyJson, AcceptsLegacyMarkers) {
  Result<std::vector<TensorMap>> feeds = load_feed_list(fixture_path("legacy_inputs.json"));
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  const TensorMap& f = (*feeds)[0];
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(floats(*f.find("latin1")), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(f.find("latin1")->shape(), (Shape{2, 2}));
  EXPECT_TRUE(f.find("npz")->same_as(Tensor::from_vector<int32_t>({2}, {5, 6})));  // the first member
  EXPECT_EQ(floats(*f.find("lazy")), (std::vector<float>{1, 2, 3, 4}));

  const std::string legacy = fmt::format(
      R"({{"__polygraphy_encoded_RunResults": "polygraphy_serialized_json_type", "lst": [["old", [
         {{"__polygraphy_encoded_IterationResult": "polygraphy_serialized_json_type",
          "outputs": {{"y": {{"__polygraphy_encoded_LazyArray": "polygraphy_serialized_json_type",
                             "values": {{"__polygraphy_encoded_ndarray": "polygraphy_serialized_json_type",
                                        "array": "{}"}}}}}},
          "runtime": 1, "runner_name": "old"}}]]]}})",
      kWorkedSample);
  Result<RunResults> results = run_results_from_json(legacy);
  ASSERT_TRUE(results.ok()) << results.status().to_string();
  EXPECT_EQ((*results)[0].iterations[0].runtime, 1.0);
  EXPECT_EQ(floats(*(*results)[0].iterations[0].outputs.find("y")), (std::vector<float>{1, 2, 3, 4}));
}

TEST(PolygraphyJson, AcceptsBareNdarraysAndMarkersAnywhere) {
  // A bare ndarray instead of a LazyArray, and polygraphy_class first rather than last.
  const std::string text = fmt::format(
      R"({{"polygraphy_class": "RunResults", "lst": [["r", [{{"polygraphy_class": "IterationResult",
          "runner_name": "r", "outputs": {{"y": {{"polygraphy_class": "ndarray", "array": "{}"}},
          "z": {{"polygraphy_class": "LazyNumpyArray", "values": {}}}}}}}]]]}})",
      kWorkedSample, ndarray_json(kSmallArray));
  Result<RunResults> results = run_results_from_json(text);
  ASSERT_TRUE(results.ok()) << results.status().to_string();
  const IterationResult& it = (*results)[0].iterations[0];
  EXPECT_FALSE(it.runtime.has_value());  // absent runtime
  EXPECT_EQ(floats(*it.outputs.find("y")), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(it.outputs.find("z")->shape(), (Shape{1, 1, 2, 2}));

  // Feed lists may hold LazyArrays too; a missing runner_name defaults to the runner's.
  Result<std::vector<TensorMap>> feeds = feed_list_from_json(
      fmt::format(R"([{{"x": {{"values": {}, "polygraphy_class": "LazyArray"}}}}])", ndarray_json(kWorkedSample)));
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  Result<RunResults> unnamed = run_results_from_json(
      R"({"lst": [["runner", [{"outputs": {}, "runtime": null, "polygraphy_class": "IterationResult"}]]],
          "polygraphy_class": "RunResults"})");
  ASSERT_TRUE(unnamed.ok()) << unnamed.status().to_string();
  EXPECT_EQ((*unnamed)[0].iterations[0].runner_name, "runner");
}

TEST(PolygraphyJson, DecodesFormattedArrays) {
  const nlohmann::json ok = nlohmann::json::parse(fmt::format(
      R"({{"array": {}, "shape": [4], "polygraphy_class": "FormattedArray"}})", ndarray_json(kWorkedSample)));
  Result<Tensor> t = decode_polygraphy_array(ok);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->shape(), (Shape{4}));
  const nlohmann::json vectorized = nlohmann::json::parse(fmt::format(
      R"({{"array": {}, "shape": [1, 3], "polygraphy_class": "FormattedArray"}})", ndarray_json(kWorkedSample)));
  Status s = error_of(decode_polygraphy_array(vectorized));
  EXPECT_TRUE(contains(s, "vectorized")) << s.message();
}

TEST(PolygraphyJson, RefusesTorchTensors) {
  Status s = run_results_error(run_results_with_output(R"({"tensor": "UEsDBA==", "polygraphy_class": "Tensor"})"));
  EXPECT_TRUE(contains(s, "is a torch tensor; re-save it with numpy arrays")) << s.message();
  EXPECT_TRUE(contains(s, "output 'y'")) << s.message();
  EXPECT_TRUE(contains(s, "runner 0 'r'")) << s.message();
  const nlohmann::json lazy_torch = nlohmann::json::parse(
      R"({"values": {"tensor": "", "polygraphy_class": "Tensor"}, "polygraphy_class": "LazyArray"})");
  EXPECT_TRUE(contains(error_of(decode_polygraphy_array(lazy_torch)), "torch tensor"));
}

TEST(PolygraphyJson, NamesUnknownAndMisplacedClasses) {
  Status unknown = run_results_error(run_results_with_output(R"({"array": "", "polygraphy_class": "Quantum"})"));
  EXPECT_TRUE(contains(unknown, "unknown polygraphy_class 'Quantum'")) << unknown.message();
  Status wrong = run_results_error(run_results_with_output(R"({"polygraphy_class": "TensorInfo"})"));
  EXPECT_TRUE(contains(wrong, "'TensorInfo'")) << wrong.message();
  Status top = run_results_error(R"({"replay": {}, "polygraphy_class": "TacticReplayData"})");
  EXPECT_TRUE(contains(top, "expected RunResults, got a Polygraphy 'TacticReplayData' object")) << top.message();
  Status unknown_top = run_results_error(R"({"polygraphy_class": "Nope"})");
  EXPECT_TRUE(contains(unknown_top, "unknown polygraphy_class 'Nope'")) << unknown_top.message();
  Status untagged = run_results_error(run_results_with_output(R"({"array": "abcd"})"));
  EXPECT_TRUE(contains(untagged, "no polygraphy_class")) << untagged.message();
}

TEST(PolygraphyJson, RefusesTheOtherFileKind) {
  Status feeds_as_results = run_results_error(read_fixture("19b_id_inputs.json"));
  EXPECT_TRUE(contains(feeds_as_results, "feed list")) << feeds_as_results.message();
  Status results_as_feeds = feed_list_error(read_fixture("19c_id_outputs.json"));
  EXPECT_TRUE(contains(results_as_feeds, "got a Polygraphy 'RunResults' object")) << results_as_feeds.message();
}

TEST(PolygraphyJson, RefusesDeepNesting) {
  Status deep = run_results_error(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_TRUE(contains(deep, "nested deeper than 64")) << deep.message();
  Status deep_objects = feed_list_error(std::string(1, '[').append(70, '{').append(70, '}').append("]"));
  EXPECT_TRUE(contains(deep_objects, "nested deeper than 64")) << deep_objects.message();
  // Brackets inside strings do not count.
  const std::string in_string = "[{\"" + std::string(200, '[') + "\\\"\": " + ndarray_json(kWorkedSample) + "}]";
  Result<std::vector<TensorMap>> ok = feed_list_from_json(in_string);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ((*ok)[0][0].name, std::string(200, '[') + "\"");
  // 64 levels are still parsed (and then refused for their structure, not their depth).
  Status at_limit = feed_list_error(std::string(64, '[') + std::string(64, ']'));
  EXPECT_FALSE(contains(at_limit, "nested")) << at_limit.message();
}

TEST(PolygraphyJson, RefusesGarbageWithOneLineMessages) {
  for (const char* text : {"", "   ", "garbage", "{", "[", "[1, 2", "{\"lst\": NaN}", "\x93NUMPY", "null", "42",
                           "\"text\"", "[{\"x\": 1}]", "{\"a\": \"\xff\"}"}) {
    (void)run_results_error(text);
    (void)feed_list_error(text);
  }
  Status parse = feed_list_error("[{\"x\": }]");
  EXPECT_TRUE(contains(parse, "invalid JSON: parse error at line 1, column 8")) << parse.message();
  // A truncated long string must not echo megabytes of base64 back.
  Status truncated = feed_list_error("[{\"x\": {\"array\": \"" + std::string(1 << 20, 'A'));
  EXPECT_LT(truncated.message().size(), 400u);
}

TEST(PolygraphyJson, RefusesMalformedStructure) {
  struct Case {
    std::string text;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {R"({"polygraphy_class": "RunResults"})", "lacks the \"lst\" key"},
      {R"({"lst": {}, "polygraphy_class": "RunResults"})", "\"lst\" must be a list"},
      {R"({"lst": [["r"]], "polygraphy_class": "RunResults"})", "entry 0 must be a [runner_name"},
      {R"({"lst": [[1, []]], "polygraphy_class": "RunResults"})", "entry 0 must be a [runner_name"},
      {R"({"lst": [["r", [5]]], "polygraphy_class": "RunResults"})", "iteration 0: expected an IterationResult object"},
      {R"({"lst": [["r", [{"outputs": {}}]]], "polygraphy_class": "RunResults"})", "no polygraphy_class marker"},
      {R"({"lst": [["r", [{"polygraphy_class": "IterationResult"}]]], "polygraphy_class": "RunResults"})",
       "lacks the \"outputs\" key"},
      {R"({"lst": [["r", [{"outputs": [], "polygraphy_class": "IterationResult"}]]],
           "polygraphy_class": "RunResults"})",
       "\"outputs\" must be an object"},
      {R"({"lst": [["r", [{"outputs": {}, "runtime": "fast", "polygraphy_class": "IterationResult"}]]],
           "polygraphy_class": "RunResults"})",
       "\"runtime\" must be a number"},
      {R"({"lst": [["r", [{"outputs": {}, "runner_name": 3, "polygraphy_class": "IterationResult"}]]],
           "polygraphy_class": "RunResults"})",
       "\"runner_name\" must be a string"},
      {R"({"lst": [], "polygraphy_class": 7})", "\"polygraphy_class\" must be a string"},
      {run_results_with_output("[1]"), "expected an encoded array object, got a list"},
      {run_results_with_output(R"({"polygraphy_class": "ndarray"})"), "lacks the \"array\" key"},
      {run_results_with_output(R"({"array": 5, "polygraphy_class": "ndarray"})"), "\"array\" must be a string"},
      {run_results_with_output(R"({"array": "@@@@", "polygraphy_class": "ndarray"})"), "invalid base64"},
      {run_results_with_output(R"({"array": "Zm9vYmFy", "polygraphy_class": "ndarray"})"), "invalid .npy data"},
      {run_results_with_output(R"({"polygraphy_class": "LazyArray"})"), "lacks the \"values\" key"},
      {run_results_with_output(R"({"array": "\u0093NUMPY\u0001", "polygraphy_class": "ndarray"})"), "truncated"},
      {run_results_with_output(R"({"array": "\u0093NUMPY\u0101", "polygraphy_class": "ndarray"})"), "U+00FF"},
      {run_results_with_output(R"({"array": "UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA==", "polygraphy_class": "ndarray"})"),
       "no members"},
  };
  for (const Case& c : cases) {
    Status s = run_results_error(c.text);
    EXPECT_TRUE(contains(s, c.expect)) << c.text << "\n -> " << s.message();
  }
  Status bad_feed = feed_list_error(R"([{"x": {"array": "!!", "polygraphy_class": "ndarray"}}])");
  EXPECT_TRUE(contains(bad_feed, "feed 0: input 'x': \"array\": invalid base64")) << bad_feed.message();
  EXPECT_TRUE(contains(feed_list_error("[5]"), "feed 0: expected an object"));
  EXPECT_TRUE(contains(feed_list_error(R"([{"polygraphy_class": "IterationResult"}])"), "feed 0: expected a plain"));
}

TEST(PolygraphyJson, EveryTruncationIsAnError) {
  // Each file reads whole under its own reader; every prefix that drops part of the document (all
  // but trailing whitespace) is a one-line kIoError under both readers (error_of checks the code
  // and the line), never a crash or a partial result.
  for (const auto& [name, outputs] : {std::pair{"19c_id_outputs.json", true}, std::pair{"19b_id_inputs.json", false}}) {
    const std::string text = read_fixture(name);
    EXPECT_TRUE(outputs ? run_results_from_json(text).ok() : feed_list_from_json(text).ok()) << name;
    const size_t end = text.find_last_not_of(" \t\r\n") + 1;
    ASSERT_GT(end, 0u) << name;
    for (size_t n = 0; n < end; ++n) {
      const std::string_view prefix = std::string_view(text).substr(0, n);
      EXPECT_FALSE(run_results_error(prefix).message().empty()) << name << " cut to " << n << " bytes, as run results";
      EXPECT_FALSE(feed_list_error(prefix).message().empty()) << name << " cut to " << n << " bytes, as a feed list";
    }
  }
}

TEST(PolygraphyJson, EscapesNamesAsPythonDoes) {
  TensorMap feed;
  feed.set("a\"b\\c\n\x01\x1f\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/", Tensor::scalar<float>(1));
  Result<std::string> json = feed_list_to_json({feed});
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find(R"("a\"b\\c\n\u0001\u001f\u007f\u00e9\u20ac\ud83d\ude00/": {)"), std::string::npos) << *json;
  Result<std::vector<TensorMap>> back = feed_list_from_json(*json);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)[0][0].name, feed[0].name);
  for (const char* bad : {"\xff", "\xc3", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    TensorMap f;
    f.set(bad, Tensor::scalar<float>(1));
    Result<std::string> r = feed_list_to_json({f});
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.status(), "UTF-8")) << r.status().message();
    EXPECT_TRUE(contains(r.status(), "input")) << r.status().message();
  }
  RunResults bad_runner = {RunnerResults{"\xff", {}}};
  EXPECT_FALSE(run_results_to_json(bad_runner).ok());
}

}  // namespace
}  // namespace vn::io
