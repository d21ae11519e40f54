#include "load/data_dir.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

const std::string kDataDir = SANDPROBE_SOURCE_DIR;

namespace fs = std::filesystem;

// A scratch tree; removed at the end of the test.
class DiscoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sp-discover-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = fs::canonical(tmpl);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Touch(const fs::path& file) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "x";
  }
  fs::path root_;
};

TEST_F(DiscoverTest, AnInstalledBinaryFindsShareAndLibBesideItsBin) {
  Touch(root_ / "usr/bin/sandprobe");
  fs::create_directories(root_ / "usr/share/sandprobe/suites");
  DataPaths paths = DiscoverDataPaths((root_ / "usr/bin/sandprobe").string());
  EXPECT_EQ(paths.data_dir, (root_ / "usr/share/sandprobe").string());
  // Not created here: the path an install would have, so the error names it.
  EXPECT_EQ(paths.probe_dir, (root_ / "usr/lib/sandprobe").string());
}

TEST_F(DiscoverTest, ABuildTreeFollowsItsLinkToTheCheckout) {
  fs::create_directories(root_ / "src/suites");
  fs::create_directories(root_ / "src/build/probe");
  fs::create_directory_symlink(root_ / "src", root_ / "src/build/sandprobe-data");
  DataPaths paths = DiscoverDataPaths((root_ / "src/build/sandprobe").string());
  EXPECT_EQ(paths.data_dir, (root_ / "src").string());
  EXPECT_EQ(paths.probe_dir, (root_ / "src/build/probe").string());
}

TEST_F(DiscoverTest, TheInstalledLayoutWinsAndIsNeverMixedWithTheBuildTree) {
  // A prefix that holds both: the installed row comes first, data and probe together.
  fs::create_directories(root_ / "share/sandprobe/suites");
  fs::create_directories(root_ / "bin/sandprobe-data/suites");
  fs::create_directories(root_ / "bin/probe");
  DataPaths paths = DiscoverDataPaths((root_ / "bin/sandprobe").string());
  EXPECT_EQ(paths.data_dir, (root_ / "share/sandprobe").string());
  EXPECT_EQ(paths.probe_dir, (root_ / "lib/sandprobe").string());
}

TEST_F(DiscoverTest, NoLayoutNamesTheInstalledPaths) {
  DataPaths paths = DiscoverDataPaths((root_ / "opt/x/bin/sandprobe").string());
  EXPECT_EQ(paths.data_dir, (root_ / "opt/x/share/sandprobe").string());
  EXPECT_EQ(paths.probe_dir, (root_ / "opt/x/lib/sandprobe").string());
}

TEST(DataDirTest, SelfExecutableIsThisTestBinary) {
  EXPECT_EQ(fs::path(SelfExecutable()).filename(), "load_test");
}

TEST(DataDirTest, ResolvesBuiltinNamesInTheirOwnDirectory) {
  StatusOr<std::string> sandbox = ResolveDataFile(DataKind::kSandbox, "docker-hardened", kDataDir);
  ASSERT_TRUE(sandbox.ok()) << sandbox.status().message();
  EXPECT_EQ(*sandbox, kDataDir + "/sandboxes/docker-hardened.json");
  EXPECT_EQ(*ResolveDataFile(DataKind::kPolicy, "tier-low", kDataDir), kDataDir + "/policies/tier-low.json");
  EXPECT_EQ(*ResolveDataFile(DataKind::kSuite, "network", kDataDir), kDataDir + "/suites/network.json");
  // codex is a sandbox and a policy: the kind decides which.
  EXPECT_EQ(*ResolveDataFile(DataKind::kPolicy, "codex", kDataDir), kDataDir + "/policies/codex.json");
}

TEST(DataDirTest, APathStaysAPathEvenWhenItDoesNotExist) {
  EXPECT_EQ(*ResolveDataFile(DataKind::kSandbox, "sandboxes/host.json", kDataDir), "sandboxes/host.json");
  EXPECT_EQ(*ResolveDataFile(DataKind::kPolicy, "/nonexistent/p.json", kDataDir), "/nonexistent/p.json");
  EXPECT_EQ(*ResolveDataFile(DataKind::kSuite, "mine.json", kDataDir), "mine.json");
}

TEST(DataDirTest, AnUnknownNameListsTheNamesThereAndTheNearestOne) {
  StatusOr<std::string> r = ResolveDataFile(DataKind::kSandbox, "docker-hardend", kDataDir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  const std::string m = r.status().message();
  EXPECT_NE(m.find("--sandbox docker-hardend"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean docker-hardened?"), std::string::npos) << m;
  EXPECT_NE(m.find("bwrap-strict, bwrap-user, codex"), std::string::npos) << m;
  StatusOr<std::string> policy = ResolveDataFile(DataKind::kPolicy, "tier-lowest-of-all", kDataDir);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().message().find("did you mean"), std::string::npos) << policy.status().message();
  EXPECT_NE(policy.status().message().find("tier-high, tier-low, tier-medium"), std::string::npos);
}

TEST(DataDirTest, AnEmptyDataDirSaysSo) {
  StatusOr<std::string> r = ResolveDataFile(DataKind::kSuite, "network", "/nonexistent-data-dir");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("holds no suite"), std::string::npos) << r.status().message();
}

TEST(DataDirTest, RunInputsResolveInPlaceAndLeaveEmptyOnesEmpty) {
  std::string sandbox = "bwrap-strict", policy, suite = "privileges";
  ASSERT_TRUE(ResolveRunInputs(kDataDir, sandbox, policy, suite).ok());
  EXPECT_EQ(sandbox, kDataDir + "/sandboxes/bwrap-strict.json");
  EXPECT_EQ(policy, "");
  EXPECT_EQ(suite, kDataDir + "/suites/privileges.json");
  std::string bad = "tier-nope";
  Status s = ResolveRunInputs(kDataDir, sandbox, bad, suite);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--policy tier-nope"), std::string::npos) << s.message();
}

TEST(DataDirTest, ValidateArgsExpandANameToEveryKindThatHasIt) {
  EXPECT_EQ(ResolveValidateArgs({"codex", "network", "x/y.json", "nothing-here"}, kDataDir),
            (std::vector<std::string>{kDataDir + "/sandboxes/codex.json",
                                      kDataDir + "/policies/codex.json",
                                      kDataDir + "/suites/network.json", "x/y.json",
                                      "nothing-here"}));
}

TEST(DataDirTest, NearestNameNeedsToBeClose) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(NearestName("tier-lw", {"tier-high", "tier-low"}), "tier-low");
  EXPECT_EQ(NearestName("gvisr", {"gvisor", "host"}), "gvisor");
  EXPECT_EQ(NearestName("zzz", {"gvisor", "host"}), "");
}

TEST(DataDirTest, SuitesSplitAtCommasAndAllIsEverySuiteOnce) {
  StatusOr<std::vector<std::string>> two = ResolveSuites({"default,network"}, kDataDir);
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(*two, (std::vector<std::string>{kDataDir + "/suites/default.json", kDataDir + "/suites/network.json"}));
  StatusOr<std::vector<std::string>> all = ResolveSuites({"network", "all"}, kDataDir);
  ASSERT_TRUE(all.ok()) << all.status().message();
  std::vector<std::string> expected = {kDataDir + "/suites/network.json"};
  for (const std::string& name : DataNames(DataKind::kSuite, kDataDir)) {
    if (name != "network") expected.push_back(kDataDir + "/suites/" + name + ".json");
  }
  EXPECT_EQ(*all, expected) << "network first, as given, and only once";
  EXPECT_GE(all->size(), 5u);
}

TEST(DataDirTest, SuitesRefuseEmptyAndUnknownNames) {
  StatusOr<std::vector<std::string>> empty = ResolveSuites({"default,"}, kDataDir);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "--suite default,: an empty suite name");
  StatusOr<std::vector<std::string>> typo = ResolveSuites({"default,netwrok"}, kDataDir);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean network?"), std::string::npos) << typo.status().message();
  StatusOr<std::vector<std::string>> none = ResolveSuites({"all"}, "/nonexistent");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("holds no suite"), std::string::npos);
}

// Each runtime's probe has a directory of its own beside the native one (sandboxes bind the
// whole directory, so it must hold that probe only).
TEST(ProbeDirFor, EachRuntimeBesideTheNativeProbe) {
  EXPECT_EQ(ProbeDirFor("/usr/lib/sandprobe", ProbeRuntime::kNative), "/usr/lib/sandprobe");
  EXPECT_EQ(ProbeDirFor("/usr/lib/sandprobe", ProbeRuntime::kJs), "/usr/lib/sandprobe-js");
  EXPECT_EQ(ProbeDirFor("/src/build/probe/", ProbeRuntime::kPython), "/src/build/probe-python");
  EXPECT_EQ(ProbeDirFor("/src/build/probe", ProbeRuntime::kWasi), "/src/build/probe-wasi");
}

}  // namespace
}  // namespace sandprobe
