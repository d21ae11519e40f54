#include "run/run_sweep.h"

#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "launch/fake_launcher.h"
#include "launch/launch_pids_cgroup.h"
#include "launch/proc_info.h"
#include "io/write_temp.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

using sandprobe::testing::Exit;
using sandprobe::testing::FakeLauncher;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A host process carrying `token` in its argv, with a child that does not (its `sleep`),
// started through the real launcher on a thread of its own (as the canary witness does);
// stopped at destruction if the sweep did not.
class TokenCarrier {
 public:
  explicit TokenCarrier(const std::string& token) {
    thread_ = std::thread([this, token] {
      ProcessLauncher launcher;
      LaunchSpec spec;
      spec.argv = {"sh", "-c", "sleep 300; :", token};
      spec.timeout = std::chrono::seconds(60);
      spec.cancel = &stop_;
      StatusOr<LaunchResult> r = launcher.Launch(spec);
      if (r.ok()) result_ = *r;
    });
    for (int i = 0; i < 250 && (pid_ == 0 || child_ == 0); ++i) {
      // The shell itself, not its fork (which carries the token until it execs sleep): the
      // carrier whose parent is not a carrier; then its child once that is `sleep`.
      auto carries = [&](int pid) { return ReadProcFile(pid, "cmdline").find(token) != std::string::npos; };
      for (int pid : ListPids()) {
        std::optional<ProcStat> stat = ReadProcStat(pid);
        if (carries(pid) && stat && !carries(stat->ppid)) pid_ = pid;
      }
      for (int below : ListDescendants(pid_).value_or(std::vector<int>{})) {
        if (!carries(below) && ReadProcFile(below, "cmdline").rfind("sleep", 0) == 0) child_ = below;
      }
      if (pid_ == 0 || child_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~TokenCarrier() { Finish(); }
  int pid() const { return pid_; }
  int child() const { return child_; }  // its `sleep`, which carries no token
  // Waits for the launch to end (stopping it first when `stop`); its result.
  const LaunchResult& Finish(bool stop = true) {
    if (stop) stop_ = true;
    if (thread_.joinable()) thread_.join();
    return result_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int pid_ = 0, child_ = 0;
  LaunchResult result_;
};

bool Alive(int pid) {
  std::optional<ProcStat> stat = ReadProcStat(pid);
  return stat && !stat->dead();
}

class RunSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "run-sweep-XXXXXX";
    parent_ = mkdtemp(tmpl.data());
    root_ = parent_ + "/sandprobe-" + run_id_;
    fs::create_directories(root_ + "/workspace");
    // What the profile says now is never read: a sweep runs what the run recorded.
    profile_ = parent_ + "/profile.json";
    std::ofstream(profile_) << R"({
      "name": "fake", "description": "d", "backend": "docker", "lifecycle": "oneshot",
      "probe_path": "/opt/p", "injection": "image", "run": ["rt", "run", "{probe}", "{probe_args...}"],
      "sweep": {"list": ["sh", "-c", "id > /tmp/rewritten"], "remove": ["sh", "{id}"]}})";
  }
  void TearDown() override { fs::remove_all(parent_); }

  DeadRun Dead(std::vector<std::string> tokens = {}) {
    OwnerRecord owner{.pid = 1,
                      .profile_path = profile_,
                      .sweeps = std::vector<RecordedSweep>{{{"rt", "ps", "--filter", "run=" + run_id_}, {{"rt"}, {"rm"}, {"", ""}}}},
                      .process_tokens = std::move(tokens)};
    return DeadRun{.run_id = run_id_, .root = root_, .why = "owner pid 1 is gone", .owner = owner};
  }
  std::vector<std::string> Removed(const SweepSummary& s) {
    std::vector<std::string> out;
    for (const SweptItem& item : s.removed) out.push_back(std::string(SweptKindName(item.kind)) + " " + item.id);
    return out;
  }

  const std::string run_id_ = RandomHex(6);  // also a token: unique, so no other test matches
  std::string parent_, root_, profile_;
};

TEST_F(RunSweepTest, RemovesListedSandboxesKillsTokenCarriersThenTheRunDir) {
  std::string token = "sandprobe-sweep-test-" + RandomHex(8);
  TokenCarrier carrier(token);
  ASSERT_GT(carrier.pid(), 0) << "the token carrier never started";
  ASSERT_GT(carrier.child(), 0);
  FakeLauncher launcher;
  launcher.replies = {Exit(0, "c1\n\n c2 \n")};
  SweepSummary s = SweepDeadRun(Dead({token}), launcher, {});
  EXPECT_EQ(launcher.Argvs(), (std::vector<std::vector<std::string>>{
                                {"rt", "ps", "--filter", "run=" + run_id_}, {"rt", "rm", "c1"}, {"rt", "rm", "c2"}}));
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  // The carrier and, below it, its child that carries no token.
  EXPECT_EQ(Removed(s), (std::vector<std::string>{"sandbox c1", "sandbox c2",
                                                  "process " + std::to_string(carrier.pid()),
                                                  "process " + std::to_string(carrier.child()),
                                                  "run_dir " + root_}));
  EXPECT_THAT(s.removed[2].detail, HasSubstr("sleep 300; : " + token));
  EXPECT_EQ(s.removed[3].detail, "sleep 300");
  EXPECT_FALSE(Alive(carrier.child()));
  EXPECT_FALSE(fs::exists(root_));
  EXPECT_EQ(carrier.Finish(/*stop=*/false).signal, SIGKILL) << "the sweep killed it, not the test";
}

TEST_F(RunSweepTest, WhatCouldNotBeRemovedIsAnErrorAndKeepsTheRunDir) {
  FakeLauncher launcher;
  launcher.replies = {Exit(0, "c1\nc2\n"), Exit(1, "", "Error: No such container: c1\n")};
  SweepSummary s = SweepDeadRun(Dead(), launcher, {});
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0], "could not remove c1: `rt rm c1`: exit 1: Error: No such container: c1");
  EXPECT_EQ(Removed(s), std::vector<std::string>{"sandbox c2"});
  EXPECT_TRUE(fs::exists(root_)) << "the next sweep needs it to try again";
}

TEST_F(RunSweepTest, AFailedListIsAnError) {
  FakeLauncher launcher;
  launcher.replies = {Exit(1, "", "Cannot connect to the Docker daemon\n")};
  SweepSummary s = SweepDeadRun(Dead(), launcher, {});
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0], "sweep list `rt ps --filter run=" + run_id_ +
                             "`: exit 1: Cannot connect to the Docker daemon");
  EXPECT_TRUE(fs::exists(root_));
}

// An owner.json of an older sandprobe names only its profile: nothing is run from that file
// (anyone who can write it could make the sweep run anything), and the run dir stays.
TEST_F(RunSweepTest, AnOwnerRecordWithoutSweepCommandsRunsNothingAndIsAnError) {
  DeadRun run = Dead();
  run.owner->sweeps.reset();
  FakeLauncher launcher;
  SweepSummary s = SweepDeadRun(run, launcher, {});
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_THAT(s.errors[0], HasSubstr("records no sweep commands"));
  EXPECT_THAT(s.errors[0], HasSubstr("sandprobe.run=" + run_id_));
  EXPECT_TRUE(launcher.Argvs().empty());
  EXPECT_TRUE(fs::exists(root_));
}

// Asked by id (`sweep --run-id ID --forget-unrecorded`, after the user removed its labelled
// sandboxes by hand), such a run is forgotten: the rest is swept, the run dir goes, and a note
// (not an error) says what may be left; still nothing runs from the profile.
TEST_F(RunSweepTest, AnOwnerRecordWithoutSweepCommandsIsForgottenWhenAsked) {
  DeadRun run = Dead();
  run.owner->sweeps.reset();
  FakeLauncher launcher;
  SweepSummary dry = SweepDeadRun(run, launcher, {.dry_run = true, .forget_unrecorded = true});
  EXPECT_TRUE(fs::exists(root_));
  SweepSummary s = SweepDeadRun(run, launcher, {.forget_unrecorded = true});
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_THAT(s.notes[0], HasSubstr("sandprobe.run=" + run_id_ + " is yours to remove"));
  EXPECT_TRUE(launcher.Argvs().empty());
  EXPECT_FALSE(fs::exists(root_));
  EXPECT_THAT(DescribeSweep(s, false), HasSubstr("  note: owner.json records no sweep commands"));
  EXPECT_EQ(SweepSummaryToJson(s)["notes"], nlohmann::json(s.notes));
  EXPECT_EQ(Removed(dry), std::vector<std::string>{"run_dir " + root_});
}

// Without --run-id the flag forgets nothing: a sweep of every dead run never drops one whose
// sandboxes nothing can list.
TEST_F(RunSweepTest, ForgettingNeedsTheRunsId) {
  std::ofstream(root_ + "/owner.json") << nlohmann::json{{"pid", 999999999}, {"start_time_ticks", 1},
                                                         {"pid_namespace", fs::read_symlink("/proc/self/ns/pid").string()}, {"profile_path", profile_},
                                                         {"process_tokens", nlohmann::json::array()}}.dump();
  FakeLauncher launcher;
  SweepOptions options{.parent = parent_, .unowned_age = std::chrono::seconds(0), .forget_unrecorded = true};
  std::vector<SweepSummary> swept = SweepDeadRuns(launcher, options);
  ASSERT_EQ(swept.size(), 1u);
  ASSERT_EQ(swept[0].errors.size(), 1u) << DescribeSweep(swept[0], false);
  EXPECT_THAT(swept[0].errors[0], HasSubstr("--run-id " + run_id_ + " --forget-unrecorded"));
  EXPECT_TRUE(fs::exists(root_));
  options.only_run_id = run_id_;
  swept = SweepDeadRuns(launcher, options);
  ASSERT_EQ(swept.size(), 1u);
  EXPECT_TRUE(swept[0].errors.empty()) << swept[0].errors[0];
  EXPECT_FALSE(fs::exists(root_));
}

// The profile file is gone: the sweep runs what was recorded, and the run dir goes.
TEST_F(RunSweepTest, ARunWhoseProfileIsGoneIsSweptFromTheRecord) {
  fs::remove(profile_);
  FakeLauncher launcher;
  launcher.replies = {Exit(0, "c1\n")};
  SweepSummary s = SweepDeadRun(Dead(), launcher, {});
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  EXPECT_EQ(launcher.Argvs(), (std::vector<std::vector<std::string>>{{"rt", "ps", "--filter", "run=" + run_id_},
                                                                    {"rt", "rm", "c1"}}));
  EXPECT_FALSE(fs::exists(root_));
}

// Another uid's dead run is listed and left: no command, no kill, no removal.
TEST_F(RunSweepTest, AnotherUidsDeadRunIsListedNeverSwept) {
  std::string token = "sandprobe-sweep-test-" + RandomHex(8);
  TokenCarrier carrier(token);
  ASSERT_GT(carrier.pid(), 0);
  DeadRun run = Dead({token});
  run.foreign_uid = 4242;
  FakeLauncher launcher;
  SweepSummary s = SweepDeadRun(run, launcher, {});
  EXPECT_THAT(s.skipped, HasSubstr("owned by uid 4242"));
  EXPECT_TRUE(s.errors.empty());
  EXPECT_TRUE(s.removed.empty());
  EXPECT_TRUE(launcher.Argvs().empty());
  EXPECT_TRUE(Alive(carrier.pid()));
  EXPECT_TRUE(fs::exists(root_));
  EXPECT_EQ(SweepSummaryToJson(s)["owner_uid"], 4242);
}

TEST_F(RunSweepTest, DryRunOnlyListsAndTouchesNothing) {
  std::string token = "sandprobe-sweep-test-" + RandomHex(8);
  TokenCarrier carrier(token);
  ASSERT_GT(carrier.pid(), 0);
  FakeLauncher launcher;
  launcher.replies = {Exit(0, "c1\n")};
  SweepSummary s = SweepDeadRun(Dead({token}), launcher, {.dry_run = true});
  EXPECT_EQ(launcher.Argvs().size(), 1u) << "only the list command may run";
  // A superset: the carrier's shell forks for each `sleep`, and the fork carries the token
  // until it execs — it may be listed too.
  EXPECT_THAT(Removed(s), ::testing::IsSupersetOf({std::string("sandbox c1"),
                                                   "process " + std::to_string(carrier.pid()),
                                                   "run_dir " + root_}));
  EXPECT_EQ(s.removed[0].detail, "rt rm c1");
  EXPECT_TRUE(fs::exists(root_));
  std::optional<ProcStat> alive = ReadProcStat(carrier.pid());
  EXPECT_TRUE(alive && !alive->dead());
  EXPECT_THAT(DescribeSweep(s, true), HasSubstr("would kill process " + std::to_string(carrier.pid())));
}

// Without owner.json there is no profile to run; the dir name is still a token.
TEST_F(RunSweepTest, UnownedRunDirKillsCarriersOfItsNameAndGoes) {
  TokenCarrier carrier("sandprobe-" + run_id_);
  ASSERT_GT(carrier.pid(), 0);
  FakeLauncher launcher;
  SweepSummary s = SweepDeadRun(DeadRun{.run_id = run_id_, .root = root_, .why = "no owner.json"},
                                launcher, {});
  EXPECT_TRUE(launcher.Argvs().empty());
  EXPECT_EQ(Removed(s), (std::vector<std::string>{"process " + std::to_string(carrier.pid()),
                                                  "process " + std::to_string(carrier.child()),
                                                  "run_dir " + root_}));
  EXPECT_FALSE(fs::exists(root_));
}

// 1,000 docker-like ids (64 hex digits, 65 KB): the whole output is read, not its tail, and
// every id is removed whole.
TEST_F(RunSweepTest, AThousandListedIdsAreAllRemovedWhole) {
  std::vector<std::string> ids;
  std::string listed;
  for (int i = 0; i < 1000; ++i) {
    ids.push_back(RandomHex(32));
    listed += ids.back() + "\n";
  }
  FakeLauncher launcher;
  launcher.replies = {Exit(0, listed)};
  SweepSummary s = SweepDeadRun(Dead(), launcher, {});
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  std::vector<std::vector<std::string>> argvs = launcher.Argvs();
  ASSERT_EQ(argvs.size(), 1001u);
  std::vector<std::string> removed;
  for (std::size_t i = 1; i < argvs.size(); ++i) removed.push_back(argvs[i][2]);
  EXPECT_EQ(removed, ids);
  ASSERT_EQ(s.removed.size(), 1001u);
  EXPECT_EQ(s.removed[999].id, ids[999]);
  EXPECT_FALSE(fs::exists(root_));
}

// The launcher kept only the first bytes (its output cap): the id it cut is never passed to
// `remove` (with docker a prefix matches another container), and the sweep is incomplete, so
// the run dir stays for the next sweep to list again.
TEST_F(RunSweepTest, ListOutputCutByTheCapRemovesOnlyWholeIdsAndIsIncomplete) {
  std::string listed;
  for (int i = 0; i < 1000; ++i) listed += RandomHex(32) + "\n";
  LaunchResult cut = Exit(0, listed.substr(0, 40000));
  cut.out_dropped = listed.size() - 40000;
  FakeLauncher launcher;
  launcher.replies = {cut};
  SweepSummary s = SweepDeadRun(Dead(), launcher, {});
  std::vector<std::vector<std::string>> argvs = launcher.Argvs();
  ASSERT_EQ(argvs.size(), 1u + 40000 / 65);
  for (std::size_t i = 1; i < argvs.size(); ++i) {
    ASSERT_EQ(argvs[i][2].size(), 64u) << "a partial id was passed: " << argvs[i][2];
    ASSERT_EQ(argvs[i][2], listed.substr((i - 1) * 65, 64));
  }
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0], "sweep list `rt ps --filter run=" + run_id_ + "`: incomplete: output cut after "
                         "40000 bytes (" + std::to_string(listed.size() - 40000) +
                         " more dropped): ids past the cut were not removed");
  EXPECT_TRUE(fs::exists(root_));
}

// The files a probe planted, by the recorded token: regular files only, never a symlink (nor
// what it points to), never a directory, nothing without the token.
TEST_F(RunSweepTest, PlantedFilesWithTheTokenAreRemovedAndNothingElse) {
  std::string token = "persist" + RandomHex(10);
  std::string a = parent_ + "/a", b = parent_ + "/b";
  fs::create_directories(a);
  fs::create_directories(b);
  std::ofstream(a + "/.sandprobe-persist-" + token) << token;
  std::ofstream(b + "/.sandprobe-persist-" + token) << token;
  std::ofstream(a + "/victim") << "keep me";
  fs::create_symlink(a + "/victim", b + "/link-" + token);
  fs::create_directory(a + "/dir-" + token);
  std::ofstream(a + "/.sandprobe-persist-other") << "other";
  // A directory that is a symlink is not entered.
  fs::create_directory_symlink(a, parent_ + "/a-link");
  std::ofstream(a + "/via-link-" + token + "-x") << token;
  DeadRun run = Dead();
  run.owner->planted_files = {{token, {parent_ + "/a-link", a, b, parent_ + "/missing"}}};

  FakeLauncher launcher;
  SweepSummary dry = SweepDeadRun(run, launcher, {.dry_run = true});
  EXPECT_TRUE(fs::exists(a + "/.sandprobe-persist-" + token));
  SweepSummary s = SweepDeadRun(run, launcher, {});
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  EXPECT_EQ(Removed(s), (std::vector<std::string>{"file " + a + "/.sandprobe-persist-" + token,
                                                  "file " + a + "/via-link-" + token + "-x",
                                                  "file " + b + "/.sandprobe-persist-" + token,
                                                  "run_dir " + root_}));
  EXPECT_EQ(Removed(dry), Removed(s));
  EXPECT_THAT(DescribeSweep(s, false), HasSubstr("removed planted file " + b + "/.sandprobe-persist-" + token));
  EXPECT_TRUE(fs::is_symlink(b + "/link-" + token));
  std::string victim;
  std::getline(std::ifstream(a + "/victim"), victim);
  EXPECT_EQ(victim, "keep me");
  EXPECT_TRUE(fs::is_directory(a + "/dir-" + token));
  EXPECT_TRUE(fs::exists(a + "/.sandprobe-persist-other"));
}

// The pids cgroups a killed harness's envelope made, with what is still inside (real v1).
TEST_F(RunSweepTest, TheDeadHarnessLaunchCgroupsAreRemoved) {
  const std::string parent = "/sys/fs/cgroup/pids/sandprobe";
  if (DetectCgroupLayout("/sys/fs/cgroup") != CgroupLayout::kV1 || access(parent.c_str(), W_OK) != 0) {
    GTEST_SKIP() << "no writable cgroup v1 pids hierarchy at " << parent;
  }
  TokenCarrier inside("sandprobe-not-a-token-of-the-run-" + RandomHex(8));
  ASSERT_GT(inside.child(), 0);
  DeadRun run = Dead();
  run.owner->pid = 0x7ffffff0;  // above any pid_max
  run.owner->start_ticks = 5;
  run.owner->pids_cgroups = parent + "/" + std::to_string(0x7ffffff0) + "-5-";
  std::string dir = run.owner->pids_cgroups + "3";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/cgroup.procs") << inside.child();
  FakeLauncher launcher;
  SweepSummary s = SweepDeadRun(run, launcher, {});
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  EXPECT_EQ(Removed(s), (std::vector<std::string>{"cgroup " + dir, "run_dir " + root_}));
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(Alive(inside.child()));
  rmdir(dir.c_str());
}

// A recorded prefix that is not that harness's is refused, and the run dir stays.
TEST_F(RunSweepTest, AForeignCgroupPrefixIsRefused) {
  DeadRun run = Dead();
  run.owner->pids_cgroups = "/sys/fs/cgroup/pids/";
  FakeLauncher launcher;
  SweepSummary s = SweepDeadRun(run, launcher, {});
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_THAT(s.errors[0], HasSubstr("refused to sweep pids cgroups"));
  EXPECT_TRUE(fs::exists(root_));
}

TEST_F(RunSweepTest, ARunBeingSweptElsewhereIsSkipped) {
  int dir = open(root_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_EQ(flock(dir, LOCK_EX), 0);
  FakeLauncher launcher;
  std::thread other([&] {  // flock locks belong to open files: another open competes
    SweepSummary s = SweepDeadRun(Dead(), launcher, {});
    EXPECT_EQ(s.skipped, "another sandprobe is sweeping it");
  });
  other.join();
  close(dir);
  EXPECT_TRUE(launcher.Argvs().empty());
  EXPECT_TRUE(fs::exists(root_));
}

TEST_F(RunSweepTest, SummaryReadsForPeopleAndMachines) {
  SweepSummary s{.run = Dead(),
                 .removed = {{SweptItem::Kind::kSandboxObject, "c1", "rt rm c1"},
                             {SweptItem::Kind::kProcess, "77", "sh -c x"},
                             {SweptItem::Kind::kRunDir, root_, ""}},
                 .errors = {"could not remove c2: `rt rm c2`: exit 1"}};
  EXPECT_EQ(DescribeSweep(s, false),
            "dead run " + run_id_ + " (" + root_ + "): owner pid 1 is gone\n"
            "  removed sandbox c1: rt rm c1\n"
            "  killed process 77: sh -c x\n"
            "  removed run dir " + root_ + "\n"
            "  error: could not remove c2: `rt rm c2`: exit 1\n");
  nlohmann::json j = SweepSummaryToJson(s);
  EXPECT_EQ(j["run_id"], run_id_);
  EXPECT_EQ(j["removed"][1], nlohmann::json({{"kind", "process"}, {"id", "77"}, {"detail", "sh -c x"}}));
  EXPECT_EQ(j["errors"].size(), 1u);
}

TEST_F(RunSweepTest, SweepDeadRunsFiltersByRunId) {
  FakeLauncher launcher;
  SweepOptions options{.only_run_id = "ffffffffffff", .parent = parent_, .unowned_age = std::chrono::seconds(0)};
  // A partial report of a dead writer is swept only without --run-id.
  std::string out = parent_ + "/out";
  fs::create_directories(out);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  std::string temp = out + "/.r.json.sandprobe-tmp." + std::to_string(child) + ".1.0123456789ab";
  std::ofstream(temp) << "{\"partial";
  fs::create_directory(WriteJournalDir(parent_));
  fs::permissions(WriteJournalDir(parent_), fs::perms::owner_all);
  std::ofstream(WriteJournalDir(parent_) + "/" + std::to_string(child) + ".1.0123456789ab")
      << nlohmann::json{{"temp", temp}}.dump();
  EXPECT_TRUE(SweepDeadRuns(launcher, options).empty());
  options.only_run_id = run_id_;
  std::vector<SweepSummary> swept = SweepDeadRuns(launcher, options);
  ASSERT_EQ(swept.size(), 1u);
  EXPECT_EQ(swept[0].run.run_id, run_id_);
  EXPECT_FALSE(fs::exists(root_));
  EXPECT_TRUE(fs::exists(temp));
  options.only_run_id.clear();
  swept = SweepDeadRuns(launcher, options);
  ASSERT_EQ(swept.size(), 1u);
  EXPECT_TRUE(swept[0].partial_report);
  EXPECT_EQ(DescribeSweep(swept[0], false), "partial report " + temp + ": writer pid " + std::to_string(child) +
                                                " is gone\n  removed partial report " + temp + "\n");
  EXPECT_EQ(SweepSummaryToJson(swept[0])["partial_report"], temp);
  EXPECT_FALSE(fs::exists(temp));
}

}  // namespace
}  // namespace sandprobe
