#include "reports/atomic_file.h"

#include <sys/stat.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using report_fixture::ListDir;
using report_fixture::MakeTempDir;
using report_fixture::ReadFile;

class WriteFileAtomicallyTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }
  const std::string dir_ = MakeTempDir();
};

TEST_F(WriteFileAtomicallyTest, WritesTheContentsWithMode0644) {
  const std::string path = dir_ + "/report.json";
  ASSERT_TRUE(WriteFileAtomically(path, std::string("a\0b", 3)).ok());
  EXPECT_EQ(ReadFile(path), std::string("a\0b", 3));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_THAT(ListDir(dir_), ElementsAre("report.json"));  // no temp file left behind
}

TEST_F(WriteFileAtomicallyTest, ReplacesAnExistingFile) {
  const std::string path = dir_ + "/report.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old, and longer than the new one").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(ReadFile(path), "new");
}

TEST_F(WriteFileAtomicallyTest, MissingDirectoryIsAnErrorNamingThePath) {
  const std::string path = dir_ + "/no/such/dir/report.json";
  const Status status = WriteFileAtomically(path, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("\"" + path + "\""));
  EXPECT_THAT(status.message(), HasSubstr("ENOENT"));
  EXPECT_TRUE(ListDir(dir_).empty());
}

TEST_F(WriteFileAtomicallyTest, FailedRenameRemovesTheTempFile) {
  // Renaming a file over a directory fails after the temp file was written.
  const std::string path = dir_ + "/taken";
  ASSERT_TRUE(std::filesystem::create_directory(path));
  const Status status = WriteFileAtomically(path, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("rename("));
  EXPECT_THAT(status.message(), HasSubstr("EISDIR"));
  EXPECT_THAT(status.message(), HasSubstr("\"" + path + "\""));
  EXPECT_THAT(ListDir(dir_), ElementsAre("taken"));
}

TEST_F(WriteFileAtomicallyTest, PathWithoutFileNameIsAnError) {
  const Status status = WriteFileAtomically(dir_ + "/", "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("not a file name"));
}

TEST(WriteToStdout, WritesTheBytes) {
  ::testing::internal::CaptureStdout();
  const Status status = WriteToStdout("hello\n");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "hello\n");
  EXPECT_TRUE(status.ok());
}

}  // namespace
}  // namespace sandprobe
