// SPDX-License-Identifier: Apache-2.0
#include "core/ir/mapped_file.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/ir/ir_test_util.h"

namespace vn {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

TEST(MappedFile, MapsContentsAndOutlivesRename) {
  TempDir dir;
  testing::write_bytes(dir / "a.bin", "hello mapped world");
  Result<std::shared_ptr<const MappedFile>> file = MappedFile::open(dir / "a.bin");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ((*file)->size(), 18u);
  EXPECT_EQ((*file)->bytes(), "hello mapped world");
  // Replacing the file by rename, as every Vernier writer does, leaves the mapping intact.
  ASSERT_TRUE(file_write_atomic(dir / "a.bin", "replaced").ok());
  EXPECT_EQ((*file)->bytes(), "hello mapped world");
  EXPECT_EQ(testing::read_bytes(dir / "a.bin"), "replaced");
}

TEST(MappedFile, EmptyFileMapsToNothing) {
  TempDir dir;
  testing::write_bytes(dir / "empty.bin", "");
  Result<std::shared_ptr<const MappedFile>> file = MappedFile::open(dir / "empty.bin");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->size(), 0u);
  EXPECT_EQ((*file)->data(), nullptr);
  EXPECT_TRUE((*file)->bytes().empty());
}

TEST(MappedFile, MissingFileAndFolderAreIoErrors) {
  TempDir dir;
  Result<std::shared_ptr<const MappedFile>> missing = MappedFile::open(dir / "absent.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.bin: cannot open: No such file or directory"));
  Result<std::shared_ptr<const MappedFile>> folder = MappedFile::open(dir.path());
  ASSERT_FALSE(folder.ok());
  EXPECT_THAT(folder.status().message(), HasSubstr("not a regular file"));
}

TEST(AtomicFileWriter, CommitReplacesAndAbandonLeavesNoTrace) {
  TempDir dir;
  testing::write_bytes(dir / "out.bin", "old");
  {
    Result<AtomicFileWriter> w = AtomicFileWriter::create(dir / "out.bin");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->write("partial").ok());
    EXPECT_EQ(testing::file_names(dir.path()).size(), 2u);
  }
  EXPECT_EQ(testing::file_names(dir.path()), std::vector<std::string>{"out.bin"});
  EXPECT_EQ(testing::read_bytes(dir / "out.bin"), "old");

  Result<AtomicFileWriter> w = AtomicFileWriter::create(dir / "out.bin");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->write("ab").ok());
  ASSERT_TRUE(w->pad_to(4100).ok());
  ASSERT_TRUE(w->write("z").ok());
  EXPECT_EQ(w->size(), 4101u);
  EXPECT_EQ(w->pad_to(10).code(), StatusCode::kInternal);
  ASSERT_TRUE(w->commit().ok());
  EXPECT_EQ(w->commit().code(), StatusCode::kInternal);
  const std::string bytes = testing::read_bytes(dir / "out.bin");
  ASSERT_EQ(bytes.size(), 4101u);
  EXPECT_EQ(bytes.substr(0, 2), "ab");
  EXPECT_EQ(bytes[2], '\0');
  EXPECT_EQ(bytes.back(), 'z');
  EXPECT_EQ(testing::file_names(dir.path()), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFileWriter, MissingFolderIsAnIoError) {
  TempDir dir;
  Status st = file_write_atomic(dir / "no" / "x.bin", "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_THAT(st.message(), HasSubstr("x.bin: cannot create"));
}

}  // namespace
}  // namespace vn
