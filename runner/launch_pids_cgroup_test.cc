#include "runner/launch_pids_cgroup.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using ::testing::EndsWith;
using ::testing::StartsWith;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "launch_pids_cgroup_test_" + std::to_string(getpid()) + "_" + name;
}

TEST(LauncherPidsCgroupTest, UnmakeableDirectoryIsTheUnavailableNote) {
  std::string root = TempPath("no-such-parent") + "/sandprobe";
  PidsCgroup cgroup(root);
  Status made = cgroup.Make(4);
  ASSERT_FALSE(made.ok());
  std::string dir_prefix = root + "/" + std::to_string(getpid()) + "-";
  EXPECT_THAT(made.message(), StartsWith("pids cgroup unavailable: mkdir(" + dir_prefix));
  EXPECT_THAT(made.message(), EndsWith("): ENOENT"));
  EXPECT_FALSE(cgroup.made());
  EXPECT_EQ(cgroup.procs_path(), "");
}

// A plain directory as the root: the launch's directory is made, but it has no pids.max (not a
// cgroup), so it is removed again and the root, made because it was missing, stays empty.
TEST(LauncherPidsCgroupTest, DirectoryWithoutPidsMaxIsTheUnavailableNoteAndRemoved) {
  std::string parent = TempPath("plain");
  ASSERT_EQ(mkdir(parent.c_str(), 0755), 0);
  std::string root = parent + "/sandprobe";
  PidsCgroup cgroup(root);
  Status made = cgroup.Make(4);
  ASSERT_FALSE(made.ok());
  std::string dir_prefix = root + "/" + std::to_string(getpid()) + "-";
  EXPECT_THAT(made.message(), StartsWith("pids cgroup unavailable: write " + dir_prefix));
  EXPECT_THAT(made.message(), EndsWith("/pids.max: ENOENT"));
  EXPECT_FALSE(cgroup.made());
  EXPECT_EQ(rmdir(root.c_str()), 0) << "root missing or not empty: " << strerrorname_np(errno);
  EXPECT_EQ(rmdir(parent.c_str()), 0);
}

// Needs a writable cgroup v1 pids hierarchy (root), as LauncherEnvelopeTest does.
TEST(LauncherPidsCgroupTest, RealCgroupHasItsLimitAndIsRemoved) {
  PidsCgroup cgroup;
  Status made = cgroup.Make(7);
  if (!made.ok()) GTEST_SKIP() << made.message();
  ASSERT_TRUE(cgroup.made());
  ASSERT_THAT(cgroup.procs_path(), StartsWith(std::string(kPidsCgroupRoot) + "/"));
  ASSERT_THAT(cgroup.procs_path(), EndsWith("/cgroup.procs"));
  std::string dir = cgroup.procs_path().substr(0, cgroup.procs_path().rfind('/'));
  std::ifstream max(dir + "/pids.max");
  std::string limit;
  max >> limit;
  EXPECT_EQ(limit, "7");
  cgroup.Remove();
  EXPECT_FALSE(cgroup.made());
  struct stat st;
  EXPECT_EQ(stat(dir.c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
}  // namespace sandprobe
