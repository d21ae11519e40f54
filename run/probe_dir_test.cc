#include "run/probe_dir.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/sha256.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kProbeText[] = "#!/bin/true\n";

std::string TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "sp-probe-dir-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

void WriteProbe(const std::string& dir, const std::string& name = "sandprobe-probe",
                const std::string& text = kProbeText) {
  fs::create_directories(dir);
  std::ofstream(dir + "/" + name) << text;
  ::chmod((dir + "/" + name).c_str(), 0755);
}

// The build's table for a native probe of kProbeText and a js probe of "js".
std::vector<ProbeBuild> Builds() {
  return {{ProbeRuntime::kNative, "native-1", Sha256Hex(kProbeText), {"fs.read"}},
          {ProbeRuntime::kJs, "js-1", Sha256Hex("js"), {"fs.read", "rt.ffi"}}};
}

class ProbeDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = TempDir();
    ::chmod(root_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string root_;
};

TEST_F(ProbeDirTest, AProbeEveryUidCanReachIsUsedInPlace) {
  WriteProbe(root_ + "/build/probe");
  StatusOr<InjectedProbe> probe = FindInjectedProbe({}, "", root_ + "/build/probe", Builds());
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  EXPECT_EQ(probe->runtime, "native");
  ASSERT_TRUE(probe->identity.has_value());
  EXPECT_EQ(probe->identity->build_id, "native-1");
  StatusOr<std::string> dir = PlaceProbe(*probe, root_ + "/run");
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(*dir, root_ + "/build/probe");
  EXPECT_FALSE(fs::exists(root_ + "/run/probe"));
}

// A checkout under a private directory (like /root, 0700): the sandbox's uid could not reach
// the probe, so the run uses its own copy, reachable by everyone, and hashes that copy.
TEST_F(ProbeDirTest, AProbeBelowAPrivateDirectoryIsCopiedIntoTheRunDir) {
  WriteProbe(root_ + "/private/build/probe");
  ::chmod((root_ + "/private").c_str(), 0700);
  EXPECT_FALSE(ReachableByAnyUid(root_ + "/private/build/probe/sandprobe-probe", S_IROTH | S_IXOTH));
  StatusOr<InjectedProbe> probe = FindInjectedProbe({}, "", root_ + "/private/build/probe", Builds());
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  StatusOr<std::string> dir = PlaceProbe(*probe, root_ + "/run");
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(*dir, root_ + "/run/probe");
  EXPECT_TRUE(ReachableByAnyUid(*dir + "/sandprobe-probe", S_IROTH | S_IXOTH));
  ::chmod((root_ + "/private").c_str(), 0755);
}

// issue 25: --probe-dir pointing at another program gave passes.
TEST_F(ProbeDirTest, AnotherProgramInTheProbesPlaceIsRefusedNamingBothHashes) {
  WriteProbe(root_ + "/fake", "sandprobe-probe", "#!/bin/sh\necho PASS\n");
  StatusOr<InjectedProbe> probe = FindInjectedProbe({}, root_ + "/fake", root_ + "/build/probe", Builds());
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  EXPECT_EQ(probe->where, "--probe-dir " + root_ + "/fake");
  StatusOr<std::string> dir = PlaceProbe(*probe, root_ + "/run");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kInvalidInput) << "exit 2";
  EXPECT_THAT(dir.status().message(),
              HasSubstr("the probe that would run is not ours: " + root_ + "/fake/sandprobe-probe (--probe-dir " +
                        root_ + "/fake) has SHA-256 " + Sha256Hex("#!/bin/sh\necho PASS\n") +
                        ", the native probe this build made has " + Sha256Hex(kProbeText)));
}

TEST_F(ProbeDirTest, EachRuntimesProbeComesFromItsOwnDirectory) {
  WriteProbe(root_ + "/build/probe");
  fs::create_directories(root_ + "/build/probe-js");
  std::ofstream(root_ + "/build/probe-js/sandprobe-probe.js") << "js";
  ::chmod((root_ + "/build/probe-js/sandprobe-probe.js").c_str(), 0644);
  StatusOr<InjectedProbe> probe =
      FindInjectedProbe({.runtime = ProbeRuntime::kJs}, "", root_ + "/build/probe", Builds());
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  EXPECT_EQ(probe->path(), root_ + "/build/probe-js/sandprobe-probe.js");
  EXPECT_FALSE(probe->executable);
  EXPECT_EQ(probe->identity->families, (std::vector<std::string>{"fs.read", "rt.ffi"}));
  StatusOr<std::string> dir = PlaceProbe(*probe, root_ + "/run");
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(*dir, root_ + "/build/probe-js") << "a script every uid may read is used in place";
}

TEST_F(ProbeDirTest, ARuntimeThisBuildDidNotMakeOrAMissingFileIsAHarnessError) {
  StatusOr<InjectedProbe> python =
      FindInjectedProbe({.runtime = ProbeRuntime::kPython}, "", root_ + "/build/probe", Builds());
  ASSERT_FALSE(python.ok());
  EXPECT_EQ(python.status().code(), StatusCode::kHarness);
  EXPECT_EQ(python.status().message(),
            "this sandprobe was built without a python probe (it has: native, js); the profile's \"probe\" needs one");
  StatusOr<InjectedProbe> missing = FindInjectedProbe({}, "", root_ + "/nowhere", Builds());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kHarness);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nowhere/sandprobe-probe is missing"));
}

// A probe file the profile names: its hash when the run started is what must be placed.
TEST_F(ProbeDirTest, AProbeFileIsPinnedByItsHashWhenTheRunStarts) {
  WriteProbe(root_ + "/mine", "probe.py", "print()\n");
  StatusOr<InjectedProbe> probe = FindInjectedProbe({.file = root_ + "/mine/probe.py"}, "", "", {});
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  EXPECT_EQ(probe->runtime, "");
  EXPECT_FALSE(probe->identity.has_value());
  EXPECT_EQ(probe->sha256, Sha256Hex("print()\n"));
  EXPECT_EQ(probe->dir, fs::canonical(root_ + "/mine").string());
  std::ofstream(root_ + "/mine/probe.py", std::ios::app) << "import os\n";
  StatusOr<std::string> dir = PlaceProbe(*probe, root_ + "/run");
  ASSERT_FALSE(dir.ok()) << "changed after the run started";
  EXPECT_THAT(dir.status().message(), HasSubstr("when the run started"));
}

TEST(ResolvedPath, SymlinksAreResolvedAndAMissingPathIsMadeAbsolute) {
  const std::string root = TempDir();
  fs::create_directories(root + "/real/ws");
  fs::create_directory_symlink(root + "/real", root + "/link");
  EXPECT_EQ(ResolvedPath(root + "/link/ws"), fs::canonical(root + "/real/ws").string());
  EXPECT_EQ(ResolvedPath(root + "/link/../link/none/x"), root + "/link/none/x");
  fs::remove_all(root);
}

}  // namespace
}  // namespace sandprobe
