// SPDX-License-Identifier: Apache-2.0
#include "core/io/test_folder.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/io/tensor_proto.h"
#include "tests/ir/ir_test_util.h"

namespace vn {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

std::vector<NamedTensor> numbered_tensors(const std::string& prefix, int count) {
  std::vector<NamedTensor> out;
  for (int k = 0; k < count; ++k) {
    out.push_back(NamedTensor{prefix + std::to_string(k), Tensor::from_vector<int64_t>({1}, {k})});
  }
  return out;
}

std::vector<std::string> names_of(const std::vector<NamedTensor>& tensors) {
  std::vector<std::string> names;
  for (const NamedTensor& t : tensors) names.push_back(t.name);
  return names;
}

TEST(TestFolderIo, InputsAreSortedNumerically) {
  TempDir dir;
  const auto set_dir = dir / "test_data_set_0";
  ASSERT_TRUE(io::save_test_data_set(set_dir, numbered_tensors("in", 12), numbered_tensors("out", 3)).ok());
  Result<std::vector<io::TestDataSet>> sets = io::load_test_folder(set_dir);
  ASSERT_TRUE(sets.ok()) << sets.status().to_string();
  ASSERT_EQ(sets->size(), 1u);
  const io::TestDataSet& set = (*sets)[0];
  EXPECT_EQ(set.dir, set_dir);
  ASSERT_EQ(set.inputs.size(), 12u);
  // input_10 comes after input_2, not between input_1 and input_2.
  for (int k = 0; k < 12; ++k) {
    EXPECT_EQ(set.inputs[static_cast<size_t>(k)].name, "in" + std::to_string(k));
    EXPECT_TRUE(set.inputs[static_cast<size_t>(k)].tensor.same_as(Tensor::from_vector<int64_t>({1}, {k})));
  }
  EXPECT_EQ(names_of(set.outputs), (std::vector<std::string>{"out0", "out1", "out2"}));
}

TEST(TestFolderIo, DataSetsAreSortedNumerically) {
  TempDir dir;
  testing::write_bytes(dir / "model.onnx", "not read");
  for (int n : {10, 2, 0, 1}) {
    const auto set_dir = dir / ("test_data_set_" + std::to_string(n));
    ASSERT_TRUE(io::save_test_data_set(set_dir, {NamedTensor{"x", Tensor::scalar<int32_t>(n)}}, {}).ok());
  }
  std::filesystem::create_directories(dir / "not_a_data_set");
  Result<std::vector<io::TestDataSet>> sets = io::load_test_folder(dir.path());
  ASSERT_TRUE(sets.ok()) << sets.status().to_string();
  ASSERT_EQ(sets->size(), 4u);
  const int expected[] = {0, 1, 2, 10};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*sets)[i].dir.filename().string(), "test_data_set_" + std::to_string(expected[i]));
    EXPECT_TRUE((*sets)[i].inputs[0].tensor.same_as(Tensor::scalar<int32_t>(expected[i])));
    EXPECT_TRUE((*sets)[i].outputs.empty());
  }
}

TEST(TestFolderIo, SavingASmallerSetRemovesStaleFiles) {
  TempDir dir;
  ASSERT_TRUE(io::save_test_data_set(dir.path(), numbered_tensors("a", 5), numbered_tensors("b", 2)).ok());
  testing::write_bytes(dir / "input_01.pb", "stale");
  testing::write_bytes(dir / "notes.txt", "kept");
  ASSERT_TRUE(io::save_test_data_set(dir.path(), numbered_tensors("c", 2), {}).ok());
  EXPECT_EQ(testing::file_names(dir.path()), (std::vector<std::string>{"input_0.pb", "input_1.pb", "notes.txt"}));
  Result<std::vector<io::TestDataSet>> sets = io::load_test_folder(dir.path());
  ASSERT_TRUE(sets.ok()) << sets.status().to_string();
  EXPECT_EQ(names_of((*sets)[0].inputs), (std::vector<std::string>{"c0", "c1"}));
}

TEST(TestFolderIo, EmptyAndMissingFoldersAreErrors) {
  TempDir dir;
  Result<std::vector<io::TestDataSet>> empty = io::load_test_folder(dir.path());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(empty.status().message(), HasSubstr("no test_data_set_N folders"));

  std::filesystem::create_directories(dir / "test_data_set_0");
  Result<std::vector<io::TestDataSet>> empty_set = io::load_test_folder(dir.path());
  ASSERT_FALSE(empty_set.ok());
  EXPECT_EQ(empty_set.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(empty_set.status().message(), HasSubstr("test_data_set_0: no input_K.pb or output_K.pb"));

  Result<std::vector<io::TestDataSet>> missing = io::load_test_folder(dir / "absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent"));

  testing::write_bytes(dir / "file", "x");
  EXPECT_EQ(io::load_test_folder(dir / "file").status().code(), StatusCode::kIoError);
}

TEST(TestFolderIo, AmbiguousNumbersAndBadFilesAreErrors) {
  TempDir dir;
  ASSERT_TRUE(io::save_test_data_set(dir.path(), numbered_tensors("a", 2), {}).ok());
  ASSERT_TRUE(io::tensor_proto_save(Tensor::scalar<float>(1), "dup", dir / "input_01.pb").ok());
  Result<std::vector<io::TestDataSet>> dup = io::load_test_folder(dir.path());
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().message(), HasSubstr("have the same number"));

  std::filesystem::remove(dir / "input_01.pb");
  testing::write_bytes(dir / "output_0.pb", std::string("\xFF\xFF\xFF", 3));
  Result<std::vector<io::TestDataSet>> bad = io::load_test_folder(dir.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kIoError);
  EXPECT_THAT(bad.status().message(), HasSubstr("output_0.pb"));
}

}  // namespace
}  // namespace vn
