// SPDX-License-Identifier: Apache-2.0
#include "core/common/paths.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vn {
namespace {

using ::testing::HasSubstr;

TEST(SafeFileName, KeepsOrdinaryNames) {
  EXPECT_EQ(safe_file_name("conv1.weight"), "conv1.weight");
  EXPECT_EQ(safe_file_name("layer_3-out+1"), "layer_3-out+1");
}

TEST(SafeFileName, SeparatorsAndControlBytesCannotLeaveTheFolder) {
  EXPECT_EQ(safe_file_name("../../etc/passwd"), ".._.._etc_passwd");
  EXPECT_EQ(safe_file_name("/etc/passwd"), "_etc_passwd");
  EXPECT_EQ(safe_file_name(std::string("a\0b", 3)), "a_b");
  EXPECT_EQ(safe_file_name("a\\b:c d\n"), "a_b_c_d_");
  EXPECT_EQ(safe_file_name("caf\xc3\xa9"), "caf__");
}

TEST(SafeFileName, DotNamesAndOptionLookalikesAreRenamed) {
  EXPECT_EQ(safe_file_name(""), "_");
  EXPECT_EQ(safe_file_name("."), "_.");
  EXPECT_EQ(safe_file_name(".."), "_..");
  EXPECT_EQ(safe_file_name("-rf"), "_rf");
}

TEST(SafeFileName, LongNamesAreCutAndStayDistinct) {
  const std::string a(5000, 'a');
  const std::string b = a + "b";
  const std::string sa = safe_file_name(a), sb = safe_file_name(b);
  EXPECT_EQ(sa.size(), kMaxSafeFileNameBytes);
  EXPECT_EQ(sb.size(), kMaxSafeFileNameBytes);
  EXPECT_NE(sa, sb);
  EXPECT_EQ(sa, safe_file_name(a));  // reproducible
  EXPECT_EQ(safe_file_name(std::string(kMaxSafeFileNameBytes, 'x')), std::string(kMaxSafeFileNameBytes, 'x'));
}

TEST(SafeJoin, StaysDirectlyInsideTheFolder) {
  const std::filesystem::path dir = "/tmp/out";
  for (const char* name : {"../x", "/abs", "a/b/../../..", "..", ".", ""}) {
    const std::filesystem::path p = safe_join(dir, name);
    EXPECT_EQ(p.parent_path(), dir) << name;
    EXPECT_EQ(p.lexically_normal().parent_path(), dir) << name;
  }
}

TEST(CheckOverwrite, RefusesExistingFilesWithoutForce) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "vn_check_overwrite";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "user.onnx";
  std::ofstream(file) << "mine";
  const Status refused = check_overwrite(file, false, "--output");
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("--output " + file.string() + " already exists; pass --force"));
  EXPECT_TRUE(check_overwrite(file, true, "--output").ok());
  EXPECT_TRUE(check_overwrite(dir / "new.onnx", false, "--output").ok());
  std::filesystem::create_symlink(dir / "nowhere", dir / "dangling");
  EXPECT_FALSE(check_overwrite(dir / "dangling", false, "--output").ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vn
