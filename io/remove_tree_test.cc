#include "io/remove_tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using report_fixture::ListDir;
using report_fixture::MakeTempDir;

TEST(RemoveTree, RemovesEverythingBelowAndNeverFollowsALink) {
  std::string dir = MakeTempDir(), outside = MakeTempDir();
  std::ofstream(outside + "/keep") << "outside";
  std::string tree = dir + "/tree";
  fs::create_directories(tree + "/a/b/c");
  std::ofstream(tree + "/a/b/c/file") << "x";
  std::ofstream(tree + "/top") << "y";
  fs::create_directory_symlink(outside, tree + "/a/link-to-outside");
  fs::create_symlink(outside + "/keep", tree + "/a/b/link-to-file");
  ::chmod((tree + "/a/b").c_str(), 0500);  // read-only for its owner (root ignores it)
  ASSERT_TRUE(RemoveTree(tree).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  EXPECT_EQ(ListDir(outside), std::vector<std::string>{"keep"});
  fs::remove_all(dir);
  fs::remove_all(outside);
}

TEST(RemoveTree, ALinkGivenAsTheTreeIsRemovedItselfAndAMissingPathIsNoError) {
  std::string dir = MakeTempDir(), outside = MakeTempDir();
  std::ofstream(outside + "/keep") << "outside";
  fs::create_directory_symlink(outside, dir + "/link");
  ASSERT_TRUE(RemoveTree(dir + "/link").ok());
  EXPECT_EQ(ListDir(outside), std::vector<std::string>{"keep"});
  EXPECT_TRUE(ListDir(dir).empty());
  EXPECT_TRUE(RemoveTree(dir + "/missing").ok());
  fs::remove_all(dir);
  fs::remove_all(outside);
}

TEST(RemoveTree, AnErrorNamesTheEntryAndTheCall) {
  if (::geteuid() == 0) GTEST_SKIP() << "root removes from a directory it may not write";
  std::string dir = MakeTempDir();
  fs::create_directories(dir + "/tree/locked");
  std::ofstream(dir + "/tree/locked/file") << "x";
  ::chmod((dir + "/tree/locked").c_str(), 0500);
  Status status = RemoveTree(dir + "/tree");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("unlink(\"" + dir + "/tree/locked/file\"): EACCES"), std::string::npos)
      << status.message();
  ::chmod((dir + "/tree/locked").c_str(), 0700);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sandprobe
