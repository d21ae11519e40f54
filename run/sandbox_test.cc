#include "run/sandbox.h"

#include <gtest/gtest.h>

#include "launch/fake_launcher.h"

namespace sandprobe {
namespace {

using sandprobe::testing::Exit;
using sandprobe::testing::FakeLauncher;

Profile OneShot() {
  Profile p;
  p.name = "fake";
  p.backend = Backend::kDocker;
  p.lifecycle = Lifecycle::kOneShot;
  p.probe_path = "/opt/sp/sandprobe-probe";
  p.run = {"rt", "run", "--name", "{instance}", "--label", "run={run_id}", "-v", "{probe_dir}:/opt/sp",
           "-v", "{workspace}:/w", "{probe}", "{probe_args...}"};
  p.cleanup = {{"rt", "rm", "{instance}"}};
  p.sweeps = {SweepSpec{{"rt", "ps", "--filter", "run={run_id}"}, {"rt", "rm", "{id}"}}};
  p.timeout_seconds = 7;
  return p;
}

// OneShot() as a session: start once, exec per launch, stop; cleanup as before.
Profile Session() {
  Profile p = OneShot();
  p.lifecycle = Lifecycle::kSession;
  p.run.clear();
  p.start = {"rt", "start", "{instance}"};
  p.exec = {"rt", "exec", "{instance}", "{probe}", "{probe_args...}"};
  p.stop = {"rt", "stop", "{instance}"};
  return p;
}

SandboxContext Context(const std::atomic<bool>* cancel = nullptr) {
  return SandboxContext{"r1", "/b/probe", "/var/tmp/ws", {{"SANDPROBE_CANARY_X", "tok"}}, cancel};
}

TEST(SandboxTest, OneShotRunsAFreshInstanceThenItsCleanup) {
  FakeLauncher launcher;
  launcher.replies.push_back(Exit(0, "noise\n@@sandprobe N {\"family\":\"hello\"}\n@@sandprobe N {\"done\":true}\n"));
  std::atomic<bool> cancel{false};
  Profile profile = OneShot();
  Sandbox sandbox(profile, launcher, Context(&cancel));
  LaunchRecord record = sandbox.RunProbe({"--nonce", "N", "fs.read", "/etc"}, "N");
  ASSERT_EQ(launcher.specs.size(), 2u);
  EXPECT_EQ(launcher.Argvs()[0],
            (std::vector<std::string>{"rt", "run", "--name", "sp-r1-1", "--label", "run=r1", "-v",
                                      "/b/probe:/opt/sp", "-v", "/var/tmp/ws:/w",
                                      "/opt/sp/sandprobe-probe", "--nonce", "N", "fs.read", "/etc"}));
  EXPECT_EQ(launcher.Argvs()[1], (std::vector<std::string>{"rt", "rm", "sp-r1-1"}));
  EXPECT_EQ(launcher.specs[0].timeout, std::chrono::seconds(7));
  EXPECT_EQ(launcher.specs[0].cancel, &cancel);     // probe launches stop on SIGINT
  EXPECT_EQ(launcher.specs[1].cancel, nullptr);     // cleanup always runs
  EXPECT_EQ(launcher.specs[0].extra_env, (std::vector<std::pair<std::string, std::string>>{{"SANDPROBE_CANARY_X", "tok"}}));
  EXPECT_TRUE(record.frames.done);
  EXPECT_EQ(record.frames.facts.size(), 1u);
  EXPECT_EQ(record.frames.noise_lines, 1);
  EXPECT_EQ(record.purpose, "probe");
  ASSERT_EQ(sandbox.records().size(), 2u);
  EXPECT_EQ(sandbox.records()[1].purpose, "cleanup");
  EXPECT_EQ(sandbox.records()[1].id, "L2");

  sandbox.RunProbe({"--nonce", "M"}, "M");
  EXPECT_EQ(launcher.Argvs()[2][3], "sp-r1-2");  // a new instance per one-shot launch
}

TEST(SandboxTest, SessionStartsOnceExecsPerLaunchAndStopsOnClose) {
  FakeLauncher launcher;
  Profile profile = Session();
  Sandbox sandbox(profile, launcher, Context());
  sandbox.RunProbe({"a"}, "N");
  sandbox.RunProbe({"b"}, "N");
  sandbox.Close();
  sandbox.Close();  // idempotent
  EXPECT_EQ(launcher.Argvs(), (std::vector<std::vector<std::string>>{
                                  {"rt", "start", "sp-r1-1"},
                                  {"rt", "exec", "sp-r1-1", "/opt/sp/sandprobe-probe", "a"},
                                  {"rt", "exec", "sp-r1-1", "/opt/sp/sandprobe-probe", "b"},
                                  {"rt", "stop", "sp-r1-1"},
                                  {"rt", "rm", "sp-r1-1"}}));
}

TEST(SandboxTest, AFreshInstanceStopsTheSessionAndStartsAnotherThenTeardownRunsOnce) {
  FakeLauncher launcher;
  Profile profile = Session();
  profile.teardown = {{"rt", "volume", "rm", "vol-{run_id}"}};
  profile.inspect = InspectSpec{{"rt", "inspect", "{instance}"}, {}};
  Sandbox sandbox(profile, launcher, Context());
  sandbox.RunProbe({"plant"}, "N", {.host_readings = false});
  sandbox.RunProbe({"turn"}, "N", {.host_readings = false});
  sandbox.RunProbe({"session"}, "N", {.fresh_instance = true, .host_readings = false});
  sandbox.Close();
  sandbox.Teardown();
  EXPECT_EQ(launcher.Argvs(), (std::vector<std::vector<std::string>>{
                                  {"rt", "start", "sp-r1-1"},
                                  {"rt", "exec", "sp-r1-1", "/opt/sp/sandprobe-probe", "plant"},
                                  {"rt", "exec", "sp-r1-1", "/opt/sp/sandprobe-probe", "turn"},
                                  {"rt", "stop", "sp-r1-1"},
                                  {"rt", "rm", "sp-r1-1"},
                                  {"rt", "start", "sp-r1-2"},
                                  {"rt", "exec", "sp-r1-2", "/opt/sp/sandprobe-probe", "session"},
                                  {"rt", "stop", "sp-r1-2"},
                                  {"rt", "rm", "sp-r1-2"},
                                  {"rt", "volume", "rm", "vol-r1"}}));
  // With host readings asked for, inspect runs after the probe launch.
  FakeLauncher again;
  Sandbox inspected(profile, again, Context());
  inspected.RunProbe({"x"}, "N");
  EXPECT_EQ(again.Argvs().at(2), (std::vector<std::string>{"rt", "inspect", "sp-r1-1"}));
}

// inspect.settle: an OOM kill docker has not recorded yet (exit 137, OOMKilled false) is read
// again until it is; any other reading is read once.
TEST(SandboxTest, InspectReadsAgainWhileTheReadingsAreNotSettled) {
  Profile profile = OneShot();
  profile.inspect = InspectSpec{{"rt", "inspect", "{instance}"},
                                {{"oom_killed", "/0/State/OOMKilled"}, {"exit_code", "/0/State/ExitCode"}},
                                InspectSettle{{{"exit_code", 137}, {"oom_killed", false}}, 3, 1}};
  const std::string unsettled = R"([{"State": {"OOMKilled": false, "ExitCode": 137}}])";
  const std::string settled = R"([{"State": {"OOMKilled": true, "ExitCode": 137}}])";
  FakeLauncher launcher;
  launcher.replies = {Exit(137), Exit(0, unsettled), Exit(0, unsettled), Exit(0, settled)};
  Sandbox sandbox(profile, launcher, Context());
  LaunchRecord record = sandbox.RunProbe({"res.memory"}, "N");
  EXPECT_EQ(sandbox.host_readings().at(record.id),
            (nlohmann::json{{"oom_killed", true}, {"exit_code", 137}, {"inspect_rereads", 2}}));
  EXPECT_EQ(launcher.Argvs().size(), 5u);  // probe, three inspects, cleanup

  // Never settled: at most `tries` more reads, and the last one is what the host read.
  FakeLauncher stuck;
  stuck.replies = {Exit(137), Exit(0, unsettled), Exit(0, unsettled), Exit(0, unsettled), Exit(0, unsettled)};
  Sandbox again(profile, stuck, Context());
  record = again.RunProbe({"res.memory"}, "N");
  EXPECT_EQ(again.host_readings().at(record.id),
            (nlohmann::json{{"oom_killed", false}, {"exit_code", 137}, {"inspect_rereads", 3}}));

  // Settled at once (a clean exit): one read, no rereads recorded.
  FakeLauncher clean;
  clean.replies = {Exit(0), Exit(0, R"([{"State": {"OOMKilled": false, "ExitCode": 0}}])")};
  Sandbox once(profile, clean, Context());
  record = once.RunProbe({"fs.read"}, "N");
  EXPECT_EQ(once.host_readings().at(record.id), (nlohmann::json{{"oom_killed", false}, {"exit_code", 0}}));
  EXPECT_EQ(clean.Argvs().size(), 3u);  // probe, inspect, cleanup
}

TEST(SandboxTest, FailedSessionStartIsALaunchErrorAndStillCleansUp) {
  FakeLauncher launcher;
  launcher.replies.push_back(Exit(125, "", "no such image\n"));
  Profile profile = Session();
  {
    Sandbox sandbox(profile, launcher, Context());
    LaunchRecord record = sandbox.RunProbe({"a"}, "N");
    EXPECT_NE(record.error.find("session start failed: no such image"), std::string::npos) << record.error;
  }  // the destructor closes the session
  EXPECT_EQ(launcher.Argvs().back(), (std::vector<std::string>{"rt", "rm", "sp-r1-1"}));
}

TEST(SandboxTest, PreflightNamesBackendCommandOutputAndInstallHint) {
  FakeLauncher launcher;
  launcher.replies.push_back(Exit(1, "", "Cannot connect to the Docker daemon\nmore\n"));
  Profile profile = OneShot();
  profile.requirements = {{"rt", "info"}};
  profile.requires_hint = "apt-get install rt";
  Sandbox sandbox(profile, launcher, Context());
  Status status = sandbox.Preflight();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "backend docker unavailable for profile fake: `rt info` failed: exit 1: Cannot "
            "connect to the Docker daemon; cause: missing program: rt is not installed (not found "
            "in PATH); fix: install: apt-get install rt");
}

TEST(SandboxTest, PreflightReportsACommandThatCannotStart) {
  FakeLauncher launcher;
  launcher.replies.push_back(Status::Error("execve(rt): No such file or directory"));
  Profile profile = OneShot();
  profile.requirements = {{"rt", "info"}};
  Sandbox sandbox(profile, launcher, Context());
  Status status = sandbox.Preflight();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("execve(rt): No such file or directory"), std::string::npos);
}

// The sweep is the net for what housekeeping could not remove: with every cleanup at exit 0
// and no launch cut short it has nothing to find; anything less and it runs.
TEST(SandboxTest, SweepIsSkippedOnlyWhenEveryInstanceWasCleanedUp) {
  const std::string done = "@@sandprobe N {\"done\":true}\n";
  {
    FakeLauncher launcher;
    Profile profile = OneShot();
    Sandbox sandbox(profile, launcher, Context());
    sandbox.RunProbe({"a"}, "N");
    sandbox.RunProbe({"b"}, "N");
    sandbox.Sweep();
    EXPECT_EQ(launcher.specs.size(), 4u);  // two runs, two cleanups, no sweep
    EXPECT_EQ(sandbox.sweep_summary(),
              "skipped: the cleanup of every instance (2) exited 0 and no launch was cut short");
  }
  {  // one cleanup failed
    FakeLauncher launcher;
    launcher.replies = {Exit(0, done), Exit(0), Exit(0, done), Exit(1, "", "busy"), Exit(0, "")};
    Profile profile = OneShot();
    Sandbox sandbox(profile, launcher, Context());
    sandbox.RunProbe({"a"}, "N");
    sandbox.RunProbe({"b"}, "N");
    sandbox.Sweep();
    EXPECT_EQ(launcher.Argvs().back(), (std::vector<std::string>{"rt", "ps", "--filter", "run=r1"}));
    EXPECT_EQ(sandbox.sweep_summary(), "ran");
  }
  {  // the probe launch timed out: its cleanup may have raced the container's creation
    FakeLauncher launcher;
    LaunchResult timed_out = Exit(137);
    timed_out.timed_out = true;
    launcher.replies = {timed_out};
    Profile profile = OneShot();
    Sandbox sandbox(profile, launcher, Context());
    sandbox.RunProbe({"a"}, "N");
    sandbox.Sweep();
    EXPECT_EQ(launcher.Argvs().back(), (std::vector<std::string>{"rt", "ps", "--filter", "run=r1"}));
  }
  {  // a launch that could not run at all
    FakeLauncher launcher;
    launcher.replies = {Status::Error("execve(rt): ENOENT")};
    Profile profile = OneShot();
    Sandbox sandbox(profile, launcher, Context());
    sandbox.RunProbe({"a"}, "N");
    sandbox.Sweep();
    EXPECT_EQ(sandbox.sweep_summary(), "ran");
  }
  {  // an interrupted run sweeps, even between launches that all ended well
    FakeLauncher launcher;
    std::atomic<bool> cancel{false};
    Profile profile = OneShot();
    Sandbox sandbox(profile, launcher, Context(&cancel));
    sandbox.RunProbe({"a"}, "N");
    cancel = true;
    sandbox.Sweep();
    EXPECT_EQ(sandbox.sweep_summary(), "ran");
  }
  {  // no cleanup in the profile: nothing proves the instance is gone
    FakeLauncher launcher;
    Profile profile = OneShot();
    profile.cleanup.clear();
    Sandbox sandbox(profile, launcher, Context());
    sandbox.RunProbe({"a"}, "N");
    sandbox.Sweep();
    EXPECT_EQ(sandbox.sweep_summary(), "ran");
  }
  {  // a failed teardown (e.g. the session's volume is still there)
    FakeLauncher launcher;
    launcher.replies = {Exit(0, done), Exit(0), Exit(1, "", "volume in use")};
    Profile profile = OneShot();
    profile.teardown = {{"rt", "volume", "rm", "v-{run_id}"}};
    Sandbox sandbox(profile, launcher, Context());
    sandbox.RunProbe({"a"}, "N");
    sandbox.Teardown();
    sandbox.Sweep();
    EXPECT_EQ(sandbox.sweep_summary(), "ran");
  }
}

TEST(SandboxTest, SweepRemovesEachListedId) {
  FakeLauncher launcher;
  launcher.replies.push_back(Exit(0, "abc\n  def \n\n"));
  Profile profile = OneShot();
  Sandbox sandbox(profile, launcher, Context());
  sandbox.Sweep();
  EXPECT_EQ(launcher.Argvs(), (std::vector<std::vector<std::string>>{
                                  {"rt", "ps", "--filter", "run=r1"},
                                  {"rt", "rm", "abc"},
                                  {"rt", "rm", "def"}}));
}

// Only whole ids are removed; what the list printed that is not one makes the run's sweep
// "incomplete", said in the report.
TEST(SandboxTest, SweepTakesOnlyWholeIdsAndSaysWhenIncomplete) {
  FakeLauncher launcher;
  LaunchResult cut = Exit(0, "c1\n-rf\nc2\nc3");
  cut.out_dropped = 100;
  launcher.replies = {cut};
  Profile profile = OneShot();
  Sandbox sandbox(profile, launcher, Context());
  std::vector<Sandbox::SweepListing> listings = sandbox.Sweep();
  ASSERT_EQ(listings.size(), 1u);
  ASSERT_EQ(listings[0].removals.size(), 2u);
  EXPECT_EQ(listings[0].removals[0].first, "c1");
  EXPECT_EQ(listings[0].removals[1].first, "c2");
  EXPECT_EQ(launcher.specs.size(), 3u) << "the list and two removals, not -rf nor the cut c3";
  EXPECT_EQ(sandbox.sweep_summary(),
            "failed: line 2: not an id: \"-rf\"; output cut after 12 bytes (100 more dropped): "
            "ids past the cut were not removed");
}

}  // namespace
}  // namespace sandprobe
