#include "runner/run_sweep.h"

#include <signal.h>
#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runner/fake_launcher.h"
#include "runner/proc_info.h"
#include "runner/witnesses.h"

namespace sandprobe {
namespace {

using sandprobe::testing::Exit;
using sandprobe::testing::FakeLauncher;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A host process carrying `token` in its argv, started through the real launcher on a thread
// of its own (as the canary witness does); stopped at destruction if the sweep did not.
class TokenCarrier {
 public:
  explicit TokenCarrier(const std::string& token) {
    thread_ = std::thread([this, token] {
      ProcessLauncher launcher;
      LaunchSpec spec;
      spec.argv = {"sh", "-c", "while sleep 1; do :; done", token};
      spec.timeout = std::chrono::seconds(60);
      spec.cancel = &stop_;
      StatusOr<LaunchResult> r = launcher.Launch(spec);
      if (r.ok()) result_ = *r;
    });
    for (int i = 0; i < 250 && pid_ == 0; ++i) {
      // The shell itself, not one of its forks (which carries the token until it execs sleep):
      // the carrier whose parent is not a carrier.
      auto carries = [&](int pid) { return ReadProcFile(pid, "cmdline").find(token) != std::string::npos; };
      for (int pid : ListPids()) {
        std::optional<ProcStat> stat = ReadProcStat(pid);
        if (carries(pid) && stat && !carries(stat->ppid)) pid_ = pid;
      }
      if (pid_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~TokenCarrier() { Finish(); }
  int pid() const { return pid_; }
  // Waits for the launch to end (stopping it first when `stop`); its result.
  const LaunchResult& Finish(bool stop = true) {
    if (stop) stop_ = true;
    if (thread_.joinable()) thread_.join();
    return result_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int pid_ = 0;
  LaunchResult result_;
};

class RunSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "run-sweep-XXXXXX";
    parent_ = mkdtemp(tmpl.data());
    root_ = parent_ + "/sandprobe-" + run_id_;
    fs::create_directories(root_ + "/workspace");
    profile_ = parent_ + "/profile.json";
    std::ofstream(profile_) << R"({
      "name": "fake", "description": "d", "backend": "docker", "lifecycle": "oneshot",
      "probe_path": "/opt/p", "injection": "ro-bind", "run": ["rt", "run", "{probe}", "{probe_args...}"],
      "sweep": {"list": ["rt", "ps", "--filter", "run={run_id}"], "remove": ["rt", "rm", "{id}"]}})";
  }
  void TearDown() override { fs::remove_all(parent_); }

  DeadRun Dead(std::vector<std::string> tokens = {}) {
    OwnerRecord owner{.pid = 1, .profile_path = profile_, .process_tokens = std::move(tokens)};
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
  FakeLauncher launcher;
  launcher.replies = {Exit(0, "c1\n\n c2 \n")};
  SweepSummary s = SweepDeadRun(Dead({token}), launcher, /*dry_run=*/false);
  EXPECT_EQ(launcher.Argvs(), (std::vector<std::vector<std::string>>{
                                {"rt", "ps", "--filter", "run=" + run_id_}, {"rt", "rm", "c1"}, {"rt", "rm", "c2"}}));
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  EXPECT_EQ(Removed(s), (std::vector<std::string>{"sandbox c1", "sandbox c2",
                                                  "process " + std::to_string(carrier.pid()),
                                                  "run_dir " + root_}));
  EXPECT_THAT(s.removed[2].detail, HasSubstr("while sleep 1; do :; done " + token));
  EXPECT_FALSE(fs::exists(root_));
  EXPECT_EQ(carrier.Finish(/*stop=*/false).signal, SIGKILL) << "the sweep killed it, not the test";
}

TEST_F(RunSweepTest, WhatCouldNotBeRemovedIsAnErrorAndKeepsTheRunDir) {
  FakeLauncher launcher;
  launcher.replies = {Exit(0, "c1\nc2\n"), Exit(1, "", "Error: No such container: c1\n")};
  SweepSummary s = SweepDeadRun(Dead(), launcher, false);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0], "could not remove c1: `rt rm c1`: exit 1: Error: No such container: c1");
  EXPECT_EQ(Removed(s), std::vector<std::string>{"sandbox c2"});
  EXPECT_TRUE(fs::exists(root_)) << "the next sweep needs it to try again";
}

TEST_F(RunSweepTest, AFailedListIsAnError) {
  FakeLauncher launcher;
  launcher.replies = {Exit(1, "", "Cannot connect to the Docker daemon\n")};
  SweepSummary s = SweepDeadRun(Dead(), launcher, false);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0], "sweep list `rt ps --filter run=" + run_id_ +
                             "`: exit 1: Cannot connect to the Docker daemon");
  EXPECT_TRUE(fs::exists(root_));
}

TEST_F(RunSweepTest, AnUnloadableProfileIsAnError) {
  fs::remove(profile_);
  FakeLauncher launcher;
  SweepSummary s = SweepDeadRun(Dead(), launcher, false);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_THAT(s.errors[0], HasSubstr("load profile"));
  EXPECT_TRUE(launcher.Argvs().empty());
  EXPECT_TRUE(fs::exists(root_));
}

TEST_F(RunSweepTest, DryRunOnlyListsAndTouchesNothing) {
  std::string token = "sandprobe-sweep-test-" + RandomHex(8);
  TokenCarrier carrier(token);
  ASSERT_GT(carrier.pid(), 0);
  FakeLauncher launcher;
  launcher.replies = {Exit(0, "c1\n")};
  SweepSummary s = SweepDeadRun(Dead({token}), launcher, /*dry_run=*/true);
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
                                launcher, false);
  EXPECT_TRUE(launcher.Argvs().empty());
  EXPECT_EQ(Removed(s), (std::vector<std::string>{"process " + std::to_string(carrier.pid()), "run_dir " + root_}));
  EXPECT_FALSE(fs::exists(root_));
}

TEST_F(RunSweepTest, ARunBeingSweptElsewhereIsSkipped) {
  int dir = open(root_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_EQ(flock(dir, LOCK_EX), 0);
  FakeLauncher launcher;
  std::thread other([&] {  // flock locks belong to open files: another open competes
    SweepSummary s = SweepDeadRun(Dead(), launcher, false);
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
  EXPECT_TRUE(SweepDeadRuns(launcher, options).empty());
  options.only_run_id = run_id_;
  std::vector<SweepSummary> swept = SweepDeadRuns(launcher, options);
  ASSERT_EQ(swept.size(), 1u);
  EXPECT_EQ(swept[0].run.run_id, run_id_);
  EXPECT_FALSE(fs::exists(root_));
}

}  // namespace
}  // namespace sandprobe
