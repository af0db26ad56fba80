// SPDX-License-Identifier: Apache-2.0
// External data: written next to the model, read back as zero-copy views, and every hostile
// reference refused with a message that says what is wrong.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "tests/ir/ir_test_util.h"
#include "tests/ir/onnx_test_util.h"

namespace vn {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// W (64x64 float, 16 KiB) and B (64 floats) feed a MatMul/Add; K is a Constant attribute tensor.
Model weights_model() {
  Result<Model> parsed = parse_model_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
mlp (float[1,64] X) => (float[1,64] Y, float[2] K)
{
  M = MatMul(X, W)
  Y = Add(M, B)
  K = Constant <value = float[2] {1.0, 2.0}> ()
}
)ONNX",
                                          LoadOptions{false, false});
  EXPECT_TRUE(parsed.ok()) << parsed.status().to_string();
  Model m = std::move(parsed).value();
  Tensor w(DType::kFloat32, {64, 64});
  for (int64_t i = 0; i < w.numel(); ++i) w.mutable_data<float>()[i] = static_cast<float>(i) * 0.5f - 7.0f;
  Tensor b(DType::kFloat32, {64});
  for (int64_t i = 0; i < b.numel(); ++i) b.mutable_data<float>()[i] = static_cast<float>(i);
  m.graph.initializers = {Initializer{"W", w}, Initializer{"B", b}};
  return m;
}

TEST(ExternalData, ForcedExternalDataRoundTripsAsReadOnlyViews) {
  TempDir dir;
  const Model m = weights_model();
  SaveOptions options;
  options.force_external_data = true;
  ASSERT_TRUE(save_model(m, dir / "mlp.onnx", options).ok());
  ASSERT_TRUE(std::filesystem::exists(dir / "mlp.onnx.data"));
  EXPECT_EQ(testing::file_names(dir.path()), (std::vector<std::string>{"mlp.onnx", "mlp.onnx.data"}));
  // Only W (16384 bytes) reaches the default 1024-byte threshold; B (256 bytes) and the constant stay inline.
  EXPECT_EQ(std::filesystem::file_size(dir / "mlp.onnx.data"), 16384u);

  Result<Model> loaded = load_model(dir / "mlp.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  ASSERT_EQ(loaded->graph.initializers.size(), 2u);
  for (const Initializer& init : loaded->graph.initializers) {
    const Initializer* original = m.graph.find_initializer(init.name);
    ASSERT_NE(original, nullptr);
    EXPECT_EQ(init.tensor.writable(), init.name == "B") << init.name;
    EXPECT_TRUE(init.tensor.same_as(original->tensor)) << init.name;
  }
  EXPECT_TRUE(loaded->graph.nodes[2].attr("value")->t.writable());

  // With a lower threshold B goes external too, at the next 4096-byte boundary after W.
  options.external_data_threshold = 256;
  ASSERT_TRUE(save_model(m, dir / "mlp.onnx", options).ok());
  EXPECT_EQ(std::filesystem::file_size(dir / "mlp.onnx.data"), 16384u + 256u);
  Result<Model> both = load_model(dir / "mlp.onnx");
  ASSERT_TRUE(both.ok()) << both.status().to_string();
  for (const Initializer& init : both->graph.initializers) {
    EXPECT_FALSE(init.tensor.writable()) << init.name;
    EXPECT_TRUE(init.tensor.same_as(m.graph.find_initializer(init.name)->tensor)) << init.name;
  }
  EXPECT_EQ(std::filesystem::weakly_canonical(loaded->base_dir), std::filesystem::weakly_canonical(dir.path()));
}

TEST(ExternalData, OffsetsArePageAlignedAndLocationsRelative) {
  TempDir dir;
  SaveOptions options;
  options.force_external_data = true;
  options.external_data_threshold = 8;
  ASSERT_TRUE(save_model(weights_model(), dir / "mlp.onnx", options).ok());
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(testing::read_bytes(dir / "mlp.onnx")));
  int external = 0;
  const auto check = [&](const onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return;
    ++external;
    EXPECT_FALSE(t.has_raw_data());
    std::string location;
    uint64_t offset = 1;
    for (const auto& e : t.external_data()) {
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset") offset = std::stoull(e.value());
    }
    EXPECT_EQ(location, "mlp.onnx.data");
    EXPECT_EQ(offset % 4096, 0u) << t.name();
  };
  for (const auto& t : proto.graph().initializer()) check(t);
  for (const auto& n : proto.graph().node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_t()) check(a.t());
    }
  }
  EXPECT_EQ(external, 3);  // W, B and, at this threshold, the constant
  Result<Model> loaded = load_model(dir / "mlp.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_FALSE(loaded->graph.nodes[2].attr("value")->t.writable());
  EXPECT_TRUE(loaded->graph.nodes[2].attr("value")->t.same_as(Tensor::from_vector<float>({2}, {1, 2})));
}

TEST(ExternalData, CustomFileNameInASubfolder) {
  TempDir dir;
  SaveOptions options;
  options.force_external_data = true;
  options.external_data_file = "weights/mlp.bin";
  ASSERT_TRUE(save_model(weights_model(), dir / "mlp.onnx", options).ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "weights" / "mlp.bin"));
  EXPECT_EQ(testing::file_names(dir / "weights"), std::vector<std::string>{"mlp.bin"});
  Result<Model> loaded = load_model(dir / "mlp.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_TRUE(loaded->graph.find_initializer("W")->tensor.same_as(weights_model().graph.find_initializer("W")->tensor));
}

TEST(ExternalData, SavingOverTheFileItsViewsComeFromIsSafe) {
  TempDir dir;
  SaveOptions options;
  options.force_external_data = true;
  ASSERT_TRUE(save_model(weights_model(), dir / "mlp.onnx", options).ok());
  Result<Model> loaded = load_model(dir / "mlp.onnx");
  ASSERT_TRUE(loaded.ok());
  Model m = std::move(loaded).value();
  m.doc_string = "second save";
  ASSERT_TRUE(save_model(m, dir / "mlp.onnx", options).ok());
  Result<Model> again = load_model(dir / "mlp.onnx");
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->doc_string, "second save");
  EXPECT_TRUE(again->graph.find_initializer("W")->tensor.same_as(m.graph.find_initializer("W")->tensor));
  EXPECT_TRUE(again->graph.find_initializer("W")->tensor.same_as(weights_model().graph.find_initializer("W")->tensor));
}

TEST(ExternalData, LoadFromBytesNeedsTheFolder) {
  TempDir dir;
  SaveOptions options;
  options.force_external_data = true;
  ASSERT_TRUE(save_model(weights_model(), dir / "mlp.onnx", options).ok());
  const std::string bytes = testing::read_bytes(dir / "mlp.onnx");
  Result<Model> without = load_model_from_bytes(bytes, {});
  ASSERT_FALSE(without.ok());
  EXPECT_EQ(without.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(without.status().message(), HasSubstr("folder"));
  Result<Model> with = load_model_from_bytes(bytes, dir.path());
  ASSERT_TRUE(with.ok()) << with.status().to_string();
  EXPECT_FALSE(with->graph.find_initializer("W")->tensor.writable());
}

// A model whose initializer W (4 floats) is stored externally, for the hostile-reference tests.
class HostileExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    proto_ = testing::proto_from_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X) => (float[4] Y) <float[4] W = {1.0, 2.0, 3.0, 4.0}> { Y = Add(X, W) }
)ONNX");
    const float w[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    std::string data(8, '\0');  // 8 bytes of padding, then W
    data.append(reinterpret_cast<const char*>(w), sizeof(w));
    testing::write_bytes(dir_ / "w.bin", data);
  }

  Result<Model> load_with(const std::string& location, const std::string& offset = "", const std::string& length = "") {
    onnx::ModelProto proto = proto_;
    testing::make_external(*proto.mutable_graph()->mutable_initializer(0), location, offset, length);
    testing::save_proto(proto, dir_ / "model.onnx");
    return load_model(dir_ / "model.onnx");
  }

  TempDir dir_;
  onnx::ModelProto proto_;
};

TEST_F(HostileExternalData, WellFormedReferenceLoads) {
  Result<Model> m = load_with("w.bin", "8", "16");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE(m->graph.initializers[0].tensor.same_as(Tensor::from_vector<float>({4}, {1, 2, 3, 4})));
  EXPECT_FALSE(m->graph.initializers[0].tensor.writable());
  // "sub/../w.bin" stays inside the folder once normalized.
  std::filesystem::create_directories(dir_ / "sub");
  Result<Model> normalized = load_with("sub/../w.bin", "8");
  EXPECT_TRUE(normalized.ok()) << normalized.status().to_string();
}

TEST_F(HostileExternalData, ParentDirectoryIsRefused) {
  testing::write_bytes(dir_.path().parent_path() / "x", std::string(16, '\0'));
  Result<Model> m = load_with("../x");
  std::filesystem::remove(dir_.path().parent_path() / "x");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(m.status().message(), HasSubstr("model.onnx"));
  EXPECT_THAT(m.status().message(), HasSubstr("'../x' escapes the model's folder"));
  Result<Model> deeper = load_with("a/../../x");
  ASSERT_FALSE(deeper.ok());
  EXPECT_THAT(deeper.status().message(), HasSubstr("escapes the model's folder"));
}

TEST_F(HostileExternalData, AbsolutePathIsRefused) {
  Result<Model> m = load_with("/etc/passwd");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(m.status().message(), HasSubstr("'/etc/passwd' is an absolute path"));
  EXPECT_THAT(m.status().message(), HasSubstr("tensor 'W'"));
}

TEST_F(HostileExternalData, OffsetBeyondTheEndIsRefused) {
  Result<Model> m = load_with("w.bin", "4096");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(m.status().message(), HasSubstr("offset 4096 with length 16 runs past the end of 'w.bin' (24 bytes)"));
  // An offset so large that offset + length would wrap around is refused too.
  Result<Model> wrap = load_with("w.bin", "18446744073709551615");
  ASSERT_FALSE(wrap.ok());
  EXPECT_THAT(wrap.status().message(), HasSubstr("runs past the end"));
  Result<Model> partial = load_with("w.bin", "12");
  ASSERT_FALSE(partial.ok());
  EXPECT_THAT(partial.status().message(), HasSubstr("runs past the end"));
}

TEST_F(HostileExternalData, LengthMismatchIsRefused) {
  Result<Model> m = load_with("w.bin", "8", "12");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(m.status().message(), HasSubstr("length 12 does not match the 16 bytes of shape (4,) of float32"));
}

TEST_F(HostileExternalData, MalformedNumbersAndMissingFilesAreRefused) {
  Result<Model> bad_offset = load_with("w.bin", "eight");
  ASSERT_FALSE(bad_offset.ok());
  EXPECT_THAT(bad_offset.status().message(), HasSubstr("'eight' is not a non-negative integer"));
  Result<Model> negative = load_with("w.bin", "-8");
  ASSERT_FALSE(negative.ok());

  Result<Model> missing = load_with("absent.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.bin"));

  LoadOptions lenient;
  lenient.check_model = false;
  onnx::ModelProto proto = proto_;
  testing::make_external(*proto.mutable_graph()->mutable_initializer(0), "absent.bin");
  testing::save_proto(proto, dir_ / "model.onnx");
  Result<Model> unchecked = load_model(dir_ / "model.onnx", lenient);
  ASSERT_FALSE(unchecked.ok());
  EXPECT_EQ(unchecked.status().code(), StatusCode::kIoError);
  EXPECT_THAT(unchecked.status().message(), HasSubstr("absent.bin: cannot open"));
}

TEST_F(HostileExternalData, MisalignedDataIsCopiedNotViewed) {
  const float w[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  std::string data(3, '\0');
  data.append(reinterpret_cast<const char*>(w), sizeof(w));
  testing::write_bytes(dir_ / "w.bin", data);
  Result<Model> m = load_with("w.bin", "3", "16");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE(m->graph.initializers[0].tensor.writable());
  EXPECT_TRUE(m->graph.initializers[0].tensor.same_as(Tensor::from_vector<float>({4}, {1, 2, 3, 4})));
}

}  // namespace
}  // namespace vn
