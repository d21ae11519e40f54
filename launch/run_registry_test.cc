#include "launch/run_registry.h"

#include <sys/stat.h>
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

TEST_F(RunRegistryTest, OwnerJsonIs0600AndRecordsTheSweepCommandsGiven) {
  std::string root = MakeRunDir("0123456789ab");
  ASSERT_TRUE(ClaimRunDir(root, "/p.json").ok());
  struct stat st {};
  ASSERT_EQ(::stat((root + "/owner.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  StatusOr<OwnerRecord> claimed = LoadOwner(root);
  ASSERT_TRUE(claimed.ok()) << claimed.status().message();
  ASSERT_TRUE(claimed->sweeps) << "nothing launched yet: nothing to sweep, and it says so";
  EXPECT_TRUE(claimed->sweeps->empty());
  std::vector<RecordedSweep> sweeps = {
      {{"docker", "ps", "-aq", "--filter", "label=sandprobe.run=0123456789ab"}, {{"docker"}, {"rm"}, {"-f"}, {"", ""}}},
      {{"docker", "volume", "ls", "-q"}, {{"docker"}, {"volume"}, {"rm"}, {"ws-", "-", ""}}}};
  ASSERT_TRUE(RecordSweeps(root, sweeps).ok());
  StatusOr<OwnerRecord> owner = LoadOwner(root);
  ASSERT_TRUE(owner.ok()) << owner.status().message();
  ASSERT_TRUE(owner->sweeps);
  ASSERT_EQ(owner->sweeps->size(), 2u);
  EXPECT_EQ((*owner->sweeps)[0].list, sweeps[0].list);
  EXPECT_EQ((*owner->sweeps)[0].RemoveArgv("c1"), (std::vector<std::string>{"docker", "rm", "-f", "c1"}));
  EXPECT_EQ((*owner->sweeps)[1].RemoveArgv("v"), (std::vector<std::string>{"docker", "volume", "rm", "ws-v-v"}));
  ASSERT_EQ(::stat((root + "/owner.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// owner.json is believed only when its owner alone could have written it.
TEST_F(RunRegistryTest, AnOwnerRecordOthersCouldWriteIsNotBelieved) {
  std::string root = MakeRunDir("0123456789ab");
  WriteOwner(root, OwnerLike(ReapedPid(), 1));
  ASSERT_TRUE(LoadOwner(root).ok());
  ::chmod((root + "/owner.json").c_str(), 0666);
  EXPECT_NE(LoadOwner(root).status().message().find("others can write it"), std::string::npos)
      << LoadOwner(root).status().message();
  ::chmod((root + "/owner.json").c_str(), 0644);
  ::chmod(root.c_str(), 0777);
  EXPECT_NE(LoadOwner(root).status().message().find("others can write in it"), std::string::npos)
      << LoadOwner(root).status().message();
  ::chmod(root.c_str(), 0755);
  // A link to a record elsewhere is no record.
  std::string elsewhere = MakeRunDir("bbbbbbbbbbbb");
  WriteOwner(elsewhere, OwnerLike(ReapedPid(), 1));
  fs::remove(root + "/owner.json");
  fs::create_symlink(elsewhere + "/owner.json", root + "/owner.json");
  EXPECT_FALSE(LoadOwner(root).ok());
  std::vector<DeadRun> dead = FindDeadRuns(parent_, std::chrono::seconds(0));
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_FALSE(dead[0].owner) << "the linked record was believed";
}

TEST_F(RunRegistryTest, ASweepWithNothingToRunIsMalformed) {
  json owner = OwnerLike(1, 1);
  owner["sweep"] = json::array({{{"list", json::array()}, {"remove", {{"x"}}}}});
  EXPECT_NE(ParseOwnerRecord(owner.dump(), "o.json").status().message().find("/sweep"), std::string::npos);
  owner["sweep"] = json::array({{{"list", {"ls"}}, {"remove", {json::array()}}}});
  EXPECT_FALSE(ParseOwnerRecord(owner.dump(), "o.json").ok());
  owner["sweep"] = json::array({{{"list", {"ls"}}, {"remove", {"rm"}}}});  // elements must be piece lists
  EXPECT_FALSE(ParseOwnerRecord(owner.dump(), "o.json").ok());
  owner.erase("sweep");
  StatusOr<OwnerRecord> older = ParseOwnerRecord(owner.dump(), "o.json");
  ASSERT_TRUE(older.ok());
  EXPECT_FALSE(older->sweeps) << "an older record: no sweep commands at all";
}

// A pid that is not a whole number fitting pid_t is refused, never converted (a float to int is
// undefined; a 30-digit number would wrap to some other process's pid).
TEST_F(RunRegistryTest, APidThatIsNotAWholePositivePidIsMalformed) {
  for (const json& pid : {json(4.243e28), json(1.5), json(-3), json(0), json(4294967297ULL),
                          json(18446744073709551615ULL), json("42")}) {
    json owner = OwnerLike(1, 1);
    owner["pid"] = pid;
    StatusOr<OwnerRecord> parsed = ParseOwnerRecord(owner.dump(), "o.json");
    ASSERT_FALSE(parsed.ok()) << pid.dump();
  }
  json owner = OwnerLike(1, 1);
  owner["start_time_ticks"] = 1e30;
  EXPECT_NE(ParseOwnerRecord(owner.dump(), "o.json").status().message().find("/start_time_ticks"), std::string::npos);
  owner = OwnerLike(2147483647, 1);
  EXPECT_TRUE(ParseOwnerRecord(owner.dump(), "o.json").ok());
}

// Another uid's dead run: listed only when asked, with its uid; never one of ours.
TEST_F(RunRegistryTest, AnotherUidsDeadRunIsListedOnlyWhenAskedAndMarkedForeign) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a run dir of another uid";
  std::string root = MakeRunDir("aaaaaaaaaaaa");
  WriteOwner(root, OwnerLike(ReapedPid(), 1));
  ASSERT_EQ(::chown(root.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chown((root + "/owner.json").c_str(), 65534, 65534), 0);
  EXPECT_TRUE(FindDeadRuns(parent_, std::chrono::seconds(0)).empty());
  std::vector<DeadRun> dead = FindDeadRuns(parent_, std::chrono::seconds(0), /*include_foreign=*/true);
  ASSERT_EQ(dead.size(), 1u);
  ASSERT_TRUE(dead[0].foreign_uid);
  EXPECT_EQ(*dead[0].foreign_uid, 65534u);
  // Its record in a dir of that uid, but written by a third one: not believed, not listed.
  ASSERT_EQ(::chown((root + "/owner.json").c_str(), 65533, 65533), 0);
  EXPECT_TRUE(FindDeadRuns(parent_, std::chrono::seconds(0), true).empty());
}

TEST(RunRegistry, ProcessTokensAreLongAndPlain) {
  EXPECT_TRUE(IsProcessToken("sandprobe-0123456789ab"));
  EXPECT_FALSE(IsProcessToken("sandprobe-0123"));
  EXPECT_FALSE(IsProcessToken("sandprobe-0123456789ab/"));
  EXPECT_FALSE(IsProcessToken("sandprobe 0123456789ab"));
}

}  // namespace
}  // namespace sandprobe
