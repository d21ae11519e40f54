#include "run/probe_dir.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

std::string TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "sp-probe-dir-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

void WriteProbe(const std::string& dir) {
  fs::create_directories(dir);
  std::ofstream(dir + "/sandprobe-probe") << "#!/bin/true\n";
  ::chmod((dir + "/sandprobe-probe").c_str(), 0755);
}

TEST(ProbeDirTest, AProbeEveryUidCanReachIsUsedInPlace) {
  const std::string root = TempDir();
  ::chmod(root.c_str(), 0755);
  WriteProbe(root + "/build/probe");
  StatusOr<std::string> dir = ProbeDirForSandboxes(root + "/build/probe", root + "/run");
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(*dir, root + "/build/probe");
  EXPECT_FALSE(fs::exists(root + "/run/probe"));
  fs::remove_all(root);
}

// A checkout under a private directory (like /root, 0700): the sandbox's uid could not reach
// the probe, so the run uses its own copy, reachable by everyone.
TEST(ProbeDirTest, AProbeBelowAPrivateDirectoryIsCopiedIntoTheRunDir) {
  const std::string root = TempDir();
  ::chmod(root.c_str(), 0755);
  WriteProbe(root + "/private/build/probe");
  ::chmod((root + "/private").c_str(), 0700);
  EXPECT_FALSE(ReachableByAnyUid(root + "/private/build/probe/sandprobe-probe", S_IROTH | S_IXOTH));
  StatusOr<std::string> dir = ProbeDirForSandboxes(root + "/private/build/probe", root + "/run");
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(*dir, root + "/run/probe");
  EXPECT_TRUE(ReachableByAnyUid(*dir + "/sandprobe-probe", S_IROTH | S_IXOTH));
  fs::remove_all(root);
}

}  // namespace
}  // namespace sandprobe
