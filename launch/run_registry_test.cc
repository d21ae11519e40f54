#include "launch/run_registry.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launch/launch_pids_cgroup.h"
#include "launch/proc_info.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RunRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "run-registry-XXXXXX";
    parent_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(parent_); }

  std::string MakeRunDir(const std::string& run_id) {
    std::string root = parent_ + "/sandprobe-" + run_id;
    fs::create_directories(root + "/workspace");
    return root;
  }
  // An owner.json as some other runner would have written it.
  void WriteOwner(const std::string& root, json owner) {
    std::ofstream(root + "/owner.json") << owner.dump();
  }
  json OwnerLike(int pid, unsigned long long start_ticks) {
    char ns[128] = {};
    ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    return {{"pid", pid}, {"start_time_ticks", start_ticks},
            {"pid_namespace", std::string(ns, n > 0 ? static_cast<std::size_t>(n) : 0)},
            {"profile_path", "/p.json"}, {"process_tokens", json::array()}};
  }
  std::vector<std::string> DeadIds() {
    std::vector<std::string> ids;
    for (const DeadRun& run : FindDeadRuns(parent_)) ids.push_back(run.run_id);
    return ids;
  }

  std::string parent_;
};

unsigned long long OwnStartTicks() { return ReadProcStat(getpid())->start_ticks; }

// A pid that was just in use and is not any more.
int ReapedPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

TEST_F(RunRegistryTest, ClaimRecordsThisProcessTheAbsoluteProfileAndTheDirNameAsToken) {
  std::string root = MakeRunDir("0123456789ab");
  ASSERT_TRUE(ClaimRunDir(root, "sandboxes/host.json").ok());
  StatusOr<OwnerRecord> owner = LoadOwner(root);
  ASSERT_TRUE(owner.ok()) << owner.status().message();
  EXPECT_EQ(owner->pid, getpid());
  EXPECT_EQ(owner->start_ticks, OwnStartTicks());
  EXPECT_EQ(owner->profile_path, (fs::current_path() / "sandboxes/host.json").string());
  EXPECT_EQ(owner->process_tokens, std::vector<std::string>{"sandprobe-0123456789ab"});
  EXPECT_FALSE(owner->kept);
  EXPECT_TRUE(DeadIds().empty()) << "its owner (this process) is alive";
}

TEST_F(RunRegistryTest, TokensAreAddedOnceAndShortOrOddOnesRefused) {
  std::string root = MakeRunDir("0123456789ab");
  ASSERT_TRUE(ClaimRunDir(root, "/p.json").ok());
  RecordProcessToken(root, "sandprobe-canary-00112233445566778899");
  RecordProcessToken(root, "sandprobe-canary-00112233445566778899");
  RecordProcessToken(root, "short-token");
  RecordProcessToken(root, "sandprobe canary with spaces");
  EXPECT_EQ(LoadOwner(root)->process_tokens,
            (std::vector<std::string>{"sandprobe-0123456789ab", "sandprobe-canary-00112233445566778899"}));
  // Atomic rewrites leave no temp file behind: owner.json and the workspace only.
  EXPECT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 2);
}

// Planted files: a long token and absolute dirs only; the launch cgroups' prefix names this
// process (LaunchCgroupPrefix).
TEST_F(RunRegistryTest, PlantedFilesAndTheLaunchCgroupPrefixAreRecorded) {
  std::string root = MakeRunDir("0123456789ab");
  ASSERT_TRUE(ClaimRunDir(root, "/p.json").ok());
  RecordPlantedFiles(root, "persist0123456789abcdef", {"/tmp", "relative", "", "/root"});
  RecordPlantedFiles(root, "short", {"/tmp"});
  StatusOr<OwnerRecord> owner = LoadOwner(root);
  ASSERT_TRUE(owner.ok()) << owner.status().message();
  ASSERT_EQ(owner->planted_files.size(), 1u);
  EXPECT_EQ(owner->planted_files[0].token, "persist0123456789abcdef");
  EXPECT_EQ(owner->planted_files[0].dirs, (std::vector<std::string>{"/tmp", "/root"}));
  StatusOr<std::string> prefix = LaunchCgroupPrefix();
  ASSERT_TRUE(prefix.ok()) << prefix.status().message();
  EXPECT_EQ(owner->pids_cgroups, *prefix);
  EXPECT_NE(owner->pids_cgroups.find(std::to_string(getpid()) + "-" + std::to_string(OwnStartTicks()) + "-"),
            std::string::npos) << owner->pids_cgroups;
}

// An owner.json of an older sandprobe has neither field.
TEST_F(RunRegistryTest, AnOlderOwnerRecordHasNoPlantedFilesNorCgroups) {
  std::string root = MakeRunDir("aaaaaaaaaaaa");
  WriteOwner(root, OwnerLike(ReapedPid(), 1));
  StatusOr<OwnerRecord> owner = LoadOwner(root);
  ASSERT_TRUE(owner.ok()) << owner.status().message();
  EXPECT_TRUE(owner->planted_files.empty());
  EXPECT_EQ(owner->pids_cgroups, "");
}

TEST_F(RunRegistryTest, ADeadOrRecycledOwnerMakesADeadRun) {
  WriteOwner(MakeRunDir("aaaaaaaaaaaa"), OwnerLike(ReapedPid(), 1));
  WriteOwner(MakeRunDir("bbbbbbbbbbbb"), OwnerLike(getpid(), OwnStartTicks() + 1));  // pid reused
  WriteOwner(MakeRunDir("cccccccccccc"), OwnerLike(getpid(), OwnStartTicks()));      // alive
  std::vector<DeadRun> dead = FindDeadRuns(parent_);
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0].run_id, "aaaaaaaaaaaa");
  EXPECT_EQ(dead[0].root, parent_ + "/sandprobe-aaaaaaaaaaaa");
  EXPECT_NE(dead[0].why.find("is gone"), std::string::npos) << dead[0].why;
  ASSERT_TRUE(dead[0].owner);
  EXPECT_EQ(dead[0].owner->profile_path, "/p.json");
  EXPECT_EQ(dead[1].run_id, "bbbbbbbbbbbb");
  EXPECT_NE(dead[1].why.find("another process now"), std::string::npos) << dead[1].why;
}

TEST_F(RunRegistryTest, KeptOrForeignNamespaceRunsAreNeverDead) {
  json kept = OwnerLike(ReapedPid(), 1);
  kept["kept"] = true;
  WriteOwner(MakeRunDir("aaaaaaaaaaaa"), kept);
  json elsewhere = OwnerLike(ReapedPid(), 1);
  elsewhere["pid_namespace"] = "pid:[1]";
  WriteOwner(MakeRunDir("bbbbbbbbbbbb"), elsewhere);
  EXPECT_TRUE(DeadIds().empty());
}

TEST_F(RunRegistryTest, MarkKeptKeepsAFinishedRunFromTheSweep) {
  std::string root = MakeRunDir("0123456789ab");
  ASSERT_TRUE(ClaimRunDir(root, "/p.json").ok());
  MarkRunDirKept(root);
  EXPECT_TRUE(LoadOwner(root)->kept);
}

TEST_F(RunRegistryTest, UnownedDirsAreDeadOnlyOnceUntouchedLongEnough) {
  MakeRunDir("aaaaaaaaaaaa");
  EXPECT_TRUE(FindDeadRuns(parent_).empty()) << "fresh: maybe a run between mkdir and claim";
  std::vector<DeadRun> dead = FindDeadRuns(parent_, std::chrono::seconds(0));
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_FALSE(dead[0].owner);
  EXPECT_NE(dead[0].why.find("no owner.json"), std::string::npos) << dead[0].why;
  // A corrupt owner.json is no owner either.
  std::ofstream(parent_ + "/sandprobe-aaaaaaaaaaaa/owner.json") << "{\"pid\": ";
  dead = FindDeadRuns(parent_, std::chrono::seconds(0));
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_FALSE(dead[0].owner);
}

TEST_F(RunRegistryTest, OnlyRealRunDirsAreConsidered) {
  fs::create_directories(parent_ + "/elsewhere");
  fs::create_directories(parent_ + "/sandprobe-");
  fs::create_directory_symlink(parent_ + "/elsewhere", parent_ + "/sandprobe-aaaaaaaaaaaa");
  std::ofstream(parent_ + "/sandprobe-bbbbbbbbbbbb") << "a file";
  EXPECT_TRUE(FindDeadRuns(parent_, std::chrono::seconds(0)).empty());
  EXPECT_TRUE(FindDeadRuns(parent_ + "/missing", std::chrono::seconds(0)).empty());
}

TEST(RunRegistry, ProcessTokensAreLongAndPlain) {
  EXPECT_TRUE(IsProcessToken("sandprobe-0123456789ab"));
  EXPECT_FALSE(IsProcessToken("sandprobe-0123"));
  EXPECT_FALSE(IsProcessToken("sandprobe-0123456789ab/"));
  EXPECT_FALSE(IsProcessToken("sandprobe 0123456789ab"));
}

}  // namespace
}  // namespace sandprobe
