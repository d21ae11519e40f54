// The run's phases with a scripted launcher, a fake clock and a fake witness (nothing is
// started): an interrupted run always sweeps; a preflight failure skips only checks without
// facts; a proven leak survives a failed cleanup, and the run dir then stays in the registry
// for `sandprobe sweep`; the run's deadline bounds every step, housekeeping too, and the
// report names what it cut; failures before the first launch are typed (harness vs input).
#include "run/run.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "launch/run_registry.h"
#include "run/scripted_launcher_test_util.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

void WriteFile(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("sandprobe-run-test-{}-{}", ::getpid(), counter_++);
    fs::create_directories(dir_ / "runs");
    fs::create_directories(dir_ / "probe");
    WriteFile(dir_ / "probe/sandprobe-probe", "#!/bin/sh\n");
    fs::permissions(dir_ / "probe/sandprobe-probe", fs::perms::owner_all | fs::perms::group_read |
                                                        fs::perms::group_exec | fs::perms::others_read |
                                                        fs::perms::others_exec);
    WriteFile(dir_ / "policy.json", R"({"name": "p", "description": "d",
      "filesystem": {"readable": ["{workspace}"], "unreadable": ["{host_canary}"]}})");
    WriteFile(dir_ / "suite.json", R"({"name": "s", "description": "d", "families": [{"family": "fs.read"}]})");
    WriteProfile("");
    options_.profile_path = (dir_ / "profile.json").string();
    options_.suite_paths = {(dir_ / "suite.json").string()};
    options_.probe_dir = (dir_ / "probe").string();
    options_.probe_builds = builds_;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A session profile of fake commands; `extra` adds JSON members.
  void WriteProfile(const std::string& extra) {
    WriteFile(dir_ / "profile.json", fmt::format(R"({{"name": "fake", "description": "scripted", "backend": "other",
      "policy": "policy.json", "lifecycle": "session", "injection": "host-path",
      "probe_path": "{{probe_dir}}/sandprobe-probe", "workspace_path": "{{workspace}}",
      "start": ["fake-start", "{{instance}}"], "exec": ["fake-exec", "{{probe}}", "{{probe_args...}}"],
      "stop": ["fake-stop", "{{instance}}"], "cleanup": [["fake-cleanup", "{{instance}}"]],
      "sweep": [{{"list": ["fake-list", "{{run_id}}"], "remove": ["fake-rm", "{{id}}"]}}],
      "timeout_seconds": 60{}}})",
                                                 extra));
  }

  StatusOr<RunReport> RunIt() {
    RunEnvironment env{.launcher = launcher_,
                       .run_dir_parent = run_dir_parent_.empty() ? (dir_ / "runs").string() : run_dir_parent_,
                       .clock = [this] { return now_; },
                       .utc_now = [] { return UtcTime(std::chrono::sys_days(std::chrono::year(2026) / 11 / 23)); },
                       .random_hex = [this](std::size_t bytes) {
                         return fmt::format("{:0{}x}", ++random_, bytes * 2);
                       },
                       .witness_table = witness_table_};
    return RunProfile(options_, env);
  }

  static const Verdict* Find(const RunReport& report, const std::string& id_prefix) {
    for (const Verdict& v : report.verdicts) {
      if (v.check.id.rfind(id_prefix, 0) == 0) return &v;
    }
    return nullptr;
  }

  static inline int counter_ = 0;
  fs::path dir_;
  std::string run_dir_parent_;  // empty: dir_/runs
  std::chrono::steady_clock::time_point now_{};
  ScriptedLauncher launcher_{now_};
  std::uint64_t random_ = 0x1000;
  std::vector<WitnessRow> witness_table_ = {
      {"fake", {"fs.read"}, [](const WitnessSetup&) -> StatusOr<std::unique_ptr<RunWitness>> {
         return std::unique_ptr<RunWitness>(std::make_unique<FakeWitness>());
       }}};
  RunOptions options_;
  // The build's table: the fake probe above, and a js probe of "js" (sandprobe-probe.js).
  std::vector<ProbeBuild> builds_ = {
      {ProbeRuntime::kNative, "native-test", Sha256Hex("#!/bin/sh\n"), {"env.secret", "fs.read"}},
      {ProbeRuntime::kJs, "js-test", Sha256Hex("js"), {"fs.read"}}};
};

// A one-shot profile: each instance's cleanup runs once, after its probe launch (beside the next
// launches when the probe ended by itself), and is done before the sweep decides: every cleanup
// exited 0, so the sweep is skipped. A probe the harness timed out is removed right away.
TEST_F(RunTest, OneShotInstancesAreCleanedUpBeforeTheSweepDecides) {
  WriteFile(dir_ / "profile.json", R"({"name": "fake", "description": "scripted", "backend": "other",
      "policy": "policy.json", "lifecycle": "oneshot", "injection": "host-path",
      "probe_path": "{probe_dir}/sandprobe-probe", "workspace_path": "{workspace}",
      "run": ["fake-exec", "{instance}", "{probe}", "{probe_args...}"],
      "cleanup": [["fake-cleanup", "{instance}"]],
      "sweep": [{"list": ["fake-list", "{run_id}"], "remove": ["fake-rm", "{id}"]}],
      "timeout_seconds": 60})");
  for (bool hangs : {false, true}) {
    launcher_.launches.clear();
    launcher_.steps["fake-exec"] = {.takes = hangs ? std::chrono::hours(1) : std::chrono::seconds(1)};
    StatusOr<RunReport> report = RunIt();
    ASSERT_TRUE(report.ok()) << report.status().message();
    std::vector<std::string> programs;
    for (const auto& seen : launcher_.launches) programs.push_back(seen.argv[0]);
    ASSERT_EQ(std::count(programs.begin(), programs.end(), "fake-cleanup"), 1) << hangs;
    EXPECT_LT(std::find(programs.begin(), programs.end(), "fake-exec"),
              std::find(programs.begin(), programs.end(), "fake-cleanup")) << hangs;
    // The hung probe's launch was cut short: the sweep runs after its cleanup, as always.
    EXPECT_EQ(launcher_.Launched("fake-list"), hangs) << report->witnesses["sweep"];
    if (!hangs) {
      EXPECT_EQ(report->witnesses["sweep"],
                "skipped: the cleanup of every instance (1) exited 0 and no launch was cut short");
    }
  }
}

TEST_F(RunTest, LeakIsJudgedByTheHarnessHashAndTheRunCleansUp) {
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  const Verdict* canary = Find(*report, "fs.read.denied:host-canary");
  ASSERT_NE(canary, nullptr);
  EXPECT_EQ(canary->outcome, Outcome::kFail);
  EXPECT_EQ(report->witnesses["sweep"], "skipped: the cleanup of every instance (1) exited 0 and no launch was cut short");
  EXPECT_FALSE(launcher_.Launched("fake-list"));
  EXPECT_EQ(report->left_for_sweep, "");
  EXPECT_TRUE(fs::is_empty(dir_ / "runs")) << "the run dir is removed";
  EXPECT_EQ(report->witnesses["fake"]["after_launch"], nlohmann::json::array({"L2"}))
      << "the witness saw the probe launch (L1 is the session's start)";
}

// issue 25: every launch answers a fresh control the host planted and saw opened.
TEST_F(RunTest, EveryLaunchAnswersItsFreshControl) {
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  const nlohmann::json& control = report->witnesses["launch_control"];
  EXPECT_EQ(control["available"], true) << control.dump();
  ASSERT_FALSE(control["launches"].empty());
  for (const nlohmann::json& launch : control["launches"]) {
    EXPECT_FALSE(launch.contains("failed")) << launch.dump();
    EXPECT_EQ(launch["opened"], true);
  }
  bool passed = false;
  for (const Verdict& v : report->verdicts) passed = passed || v.outcome == Outcome::kPass;
  EXPECT_TRUE(passed) << "the live control leaves passes standing";
}

// A launcher that replays an earlier launch's answer: the frames are perfect otherwise, and
// nothing passes; the leak the harness's own hash proves stays a fail.
TEST_F(RunTest, AReplayedControlAnswerPassesNothing) {
  launcher_.replay_control = true;
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  bool named = false;
  for (const Verdict& v : report->verdicts) {
    EXPECT_NE(v.outcome, Outcome::kPass) << v.check.id;
    named = named || v.observed.find("fresh positive control failed: the answer to the fresh control is not") !=
                         std::string::npos;
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(Find(*report, "fs.read.denied:host-canary")->outcome, Outcome::kFail);
  for (const nlohmann::json& launch : report->witnesses["launch_control"]["launches"]) {
    EXPECT_TRUE(launch.contains("failed")) << launch.dump();
  }
}

TEST_F(RunTest, SeveralSuitesAreOnePlanAndTheReportRecordsThemAndTheSelection) {
  StatusOr<RunReport> alone = RunIt();
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  WriteFile(dir_ / "suite2.json", R"({"name": "t", "description": "d", "families": [{"family": "fs.read"}]})");
  options_.suite_paths.push_back((dir_ / "suite2.json").string());
  options_.selection.skip = {"nothing.*"};
  StatusOr<RunReport> both = RunIt();
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(both->suite_name, "s+t");
  ASSERT_TRUE(both->selection.has_value());
  EXPECT_EQ(both->selection->suites, (std::vector<std::string>{"s", "t"}));
  EXPECT_EQ(both->selection->families, (std::vector<std::string>{"fs.read"}));
  EXPECT_EQ(both->selection->skip, (std::vector<std::string>{"nothing.*"}));
  EXPECT_TRUE(both->selection->check.empty());
  ASSERT_EQ(both->verdicts.size(), alone->verdicts.size()) << "a family two suites name is planned once";
  for (std::size_t i = 0; i < alone->verdicts.size(); ++i) {
    EXPECT_EQ(both->verdicts[i].check.id, alone->verdicts[i].check.id);
    EXPECT_EQ(both->verdicts[i].outcome, alone->verdicts[i].outcome) << alone->verdicts[i].check.id;
  }
  EXPECT_EQ(both->launches.size(), alone->launches.size()) << "one shared launch serves both suites";
}

TEST_F(RunTest, ProvenLeakSurvivesAFailedCleanupAndTheRunDirStaysForSweep) {
  launcher_.steps["fake-stop"] = {.exit_code = 1};
  launcher_.steps["fake-cleanup"] = {.exit_code = 1};
  launcher_.steps["fake-list"] = {.exit_code = 1};
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(Find(*report, "fs.read.denied:host-canary")->outcome, Outcome::kFail);
  EXPECT_TRUE(launcher_.Launched("fake-list")) << "a failed cleanup is swept";
  EXPECT_EQ(report->witnesses["sweep"].get<std::string>().rfind("failed: `fake-list", 0), 0u)
      << report->witnesses["sweep"];
  ASSERT_NE(report->left_for_sweep, "");
  EXPECT_TRUE(fs::exists(fs::path(report->left_for_sweep) / "owner.json"))
      << "the registry entry stays until `sandprobe sweep` removes what it lists";
  EXPECT_FALSE(LoadOwner(report->left_for_sweep)->kept) << "left for a sweep, not kept";
}

TEST_F(RunTest, AFailedRemovalIsASweepFailure) {
  launcher_.steps["fake-cleanup"] = {.exit_code = 1};
  launcher_.steps["fake-list"] = {.out = "c0ffee1234\n"};
  launcher_.steps["fake-rm"] = {.exit_code = 1};
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->witnesses["sweep"], "failed: could not remove c0ffee1234: exit 1");
  EXPECT_NE(report->left_for_sweep, "");
}

TEST_F(RunTest, ASweepThatRemovedWhatItListedIsComplete) {
  launcher_.steps["fake-cleanup"] = {.exit_code = 1};
  launcher_.steps["fake-list"] = {.out = "c0ffee1234\n"};
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->witnesses["sweep"], "ran");
  EXPECT_EQ(report->left_for_sweep, "");
  EXPECT_TRUE(fs::is_empty(dir_ / "runs"));
}

TEST_F(RunTest, AnInterruptedRunAlwaysSweeps) {
  std::atomic<bool> cancel{false};
  options_.cancel = &cancel;
  launcher_.interrupt_during_probe = &cancel;
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(launcher_.Launched("fake-cleanup"));
  EXPECT_TRUE(launcher_.Launched("fake-list")) << "cleanup exited 0, but the run was interrupted";
  EXPECT_EQ(report->witnesses["sweep"], "ran");
}

// The probe spoke through the backend (the canary frame), then the launch broke and the
// preflight failed: the backend went away mid-run. A proved leak stays a fail; a check with no
// fact is an error, even with --allow-missing-backend (that opt-out is for an absent backend).
TEST_F(RunTest, ABackendThatWentAwayMidRunIsAnErrorEvenWhenMissingBackendsAreAllowed) {
  WriteProfile(R"(, "requires": [["fake-requires"]], "preflight": "on_failure")");
  launcher_.steps["fake-requires"] = {.exit_code = 1};
  launcher_.steps["fake-exec"] = {.exit_code = 1};
  launcher_.print_done = false;  // the launch is incomplete: the preflight is asked
  launcher_.only_paths_containing = "/canary-";  // the workspace read has no fact
  options_.allow_missing_backend = true;
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_TRUE(launcher_.Launched("fake-requires"));
  EXPECT_EQ(Find(*report, "fs.read.denied:host-canary")->outcome, Outcome::kFail)
      << "the canary's hash was read before the backend went away: still a leak";
  const Verdict* workspace = Find(*report, "fs.read.allowed:workspace");
  ASSERT_NE(workspace, nullptr);
  EXPECT_EQ(workspace->outcome, Outcome::kError) << workspace->observed;
  EXPECT_NE(workspace->observed.find("went away during the run"), std::string::npos) << workspace->observed;
  EXPECT_EQ(report->backend_skipped, "");
}

// A backend that never answered (not one frame) and fails its preflight is missing: an error
// by default, a skip only with --allow-missing-backend, which the report then names.
TEST_F(RunTest, AMissingBackendIsAnErrorUnlessAllowedThenASkipTheReportNames) {
  WriteProfile(R"(, "requires": [["fake-requires"]], "preflight": "on_failure")");
  launcher_.steps["fake-requires"] = {.exit_code = 1};
  launcher_.steps["fake-exec"] = {.exit_code = 1};
  launcher_.print_done = false;
  launcher_.only_paths_containing = "/no-path-has-this/";  // not one fact
  launcher_.hello = nullptr;  // and no hello: not one frame came through the backend
  for (bool allowed : {false, true}) {
    options_.allow_missing_backend = allowed;
    StatusOr<RunReport> report = RunIt();
    ASSERT_TRUE(report.ok()) << report.status().message();
    for (const Verdict& v : report->verdicts) {
      EXPECT_EQ(v.outcome, allowed ? Outcome::kSkip : Outcome::kError) << v.check.id << ": " << v.observed;
      EXPECT_NE(v.observed.find("backend other unavailable for profile fake"), std::string::npos) << v.observed;
    }
    EXPECT_EQ(report->backend_skipped.empty(), !allowed);
  }
}

// A profile that takes the probe's status from the exit status line: a launch that exits 0
// with every frame but no such line decides nothing, except the leak it proved.
TEST_F(RunTest, AMandatoryExitLineThatIsMissingTurnsPassesIntoErrors) {
  WriteProfile(R"(, "probe_exit": "exit_line")");
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(Find(*report, "fs.read.denied:host-canary")->outcome, Outcome::kFail)
      << "the harness's hash proves the leak whatever the launch's status";
  const Verdict* workspace = Find(*report, "fs.read.allowed:workspace");
  ASSERT_NE(workspace, nullptr);
  EXPECT_EQ(workspace->outcome, Outcome::kError);
  EXPECT_NE(workspace->observed.find("probe_exit: exit_line"), std::string::npos) << workspace->observed;
}

TEST_F(RunTest, AMandatoryExitLineThatIsThereDecides) {
  WriteProfile(R"(, "probe_exit": "exit_line")");
  launcher_.exit_line = "@@sandprobe-exit 0\r\n";
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(Find(*report, "fs.read.allowed:workspace")->outcome, Outcome::kPass);
  EXPECT_EQ(Find(*report, "fs.read.denied:host-canary")->outcome, Outcome::kFail);
}

TEST_F(RunTest, TheDeadlineBoundsEveryStepAndTheReportNamesWhatItCut) {
  options_.run_timeout = seconds(5);
  launcher_.steps["fake-exec"] = {.takes = seconds(1)};
  launcher_.steps["fake-stop"] = {.takes = std::chrono::hours(1)};  // hangs
  auto started = now_;
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  for (const auto& seen : launcher_.launches) {
    bool removes = seen.argv[0] == "fake-stop" || seen.argv[0] == "fake-cleanup" || seen.argv[0] == "fake-list";
    EXPECT_LE(seen.at + seen.timeout, started + seconds(5) + (removes ? Deadline::kRemovalWindow : milliseconds(0)))
        << seen.argv[0];
  }
  EXPECT_LE(now_ - started, seconds(5) + Deadline::kRemovalWindow);
  EXPECT_EQ(Find(*report, "fs.read.denied:host-canary")->outcome, Outcome::kFail);
  EXPECT_FALSE(launcher_.Launched("fake-cleanup"));
  EXPECT_FALSE(launcher_.Launched("fake-list"));
  EXPECT_EQ(report->cut_short,
            (std::vector<std::string>{
                "L3 stop: timeout cut from 60000 ms to 6000 ms by the run's deadline",
                "L4 cleanup: not started: the run's deadline had passed",
                "L5 sweep: not started: the run's deadline had passed"}));
  EXPECT_NE(report->left_for_sweep, "") << "nothing removed the instance: a later sweep must";
  EXPECT_TRUE(report->interrupted);
}

TEST_F(RunTest, ARunCutByItsDeadlineStillRemovesItsInstance) {
  options_.run_timeout = seconds(5);
  launcher_.steps["fake-exec"] = {.takes = std::chrono::hours(1)};  // the probe hangs
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(launcher_.Launched("fake-stop"));
  EXPECT_TRUE(launcher_.Launched("fake-cleanup"));
  EXPECT_TRUE(launcher_.Launched("fake-list")) << "an interrupted run always sweeps";
  EXPECT_EQ(report->left_for_sweep, "") << "the removal window sufficed";
  EXPECT_TRUE(report->interrupted);
  for (const Verdict& v : report->verdicts) {
    EXPECT_EQ(v.outcome, Outcome::kError) << v.check.id;
    EXPECT_NE(v.observed.find("run timeout after 5 s"), std::string::npos) << v.observed;
  }
}

TEST_F(RunTest, AProbeLaunchPastTheDeadlineIsNotStarted) {
  options_.run_timeout = seconds(5);
  launcher_.steps["fake-start"] = {.takes = std::chrono::hours(1)};
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_FALSE(launcher_.Launched("fake-exec"));
  for (const Verdict& v : report->verdicts) EXPECT_EQ(v.outcome, Outcome::kError) << v.check.id;
}

TEST_F(RunTest, AWitnessThatCannotStartIsAHarnessError) {
  witness_table_ = {{"broken", {"fs.read"}, [](const WitnessSetup&) -> StatusOr<std::unique_ptr<RunWitness>> {
                       return Status::Error("bind(127.0.0.1:0): EADDRINUSE");
                     }}};
  StatusOr<RunReport> report = RunIt();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kHarness);
  EXPECT_NE(report.status().message().find("witness broken"), std::string::npos) << report.status().message();
  EXPECT_TRUE(launcher_.launches.empty());
  EXPECT_TRUE(fs::is_empty(dir_ / "runs")) << "the run dir of a failed start is removed";
}

TEST_F(RunTest, AnUnusableRunRootIsAHarnessErrorAndBadInputIsInvalidInput) {
  WriteFile(dir_ / "not-a-dir", "");
  RunEnvironment env{.launcher = launcher_, .run_dir_parent = (dir_ / "not-a-dir").string(),
                     .clock = [this] { return now_; }, .utc_now = [] { return UtcTime(); },
                     .random_hex = RandomHex, .witness_table = witness_table_};
  StatusOr<RunReport> report = RunProfile(options_, env);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kHarness) << report.status().message();

  WriteFile(dir_ / "policy.json", R"({"name": "p", "filesystem": {"unreadable": 3}})");
  report = RunIt();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidInput) << report.status().message();
}

TEST_F(RunTest, KeepRunDirMarksItKept) {
  options_.keep_run_dir = true;
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::string root = (dir_ / "runs" / (std::string(kRunDirPrefix) + report->run_id)).string();
  ASSERT_TRUE(fs::exists(root));
  EXPECT_TRUE(LoadOwner(root)->kept);
}

// issue 25: the probe that ran is ours. A hello of another build (an image's own file at the
// probe path, a program answering in the probe's place) ends the run as invalid input.
TEST_F(RunTest, AHelloOfAnotherBuildIsRefusedAndNothingIsJudged) {
  launcher_.hello["build_id"] = "native-other";
  StatusOr<RunReport> report = RunIt();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidInput) << "exit 2";
  EXPECT_NE(report.status().message().find("the probe that ran is not ours: launch L2 ("), std::string::npos)
      << report.status().message();
  EXPECT_NE(report.status().message().find("hello build_id \"native-other\", the injected probe's is \"native-test\""),
            std::string::npos)
      << report.status().message();
  EXPECT_TRUE(launcher_.Launched("fake-stop")) << "the sandbox is still cleaned up";
  EXPECT_TRUE(fs::is_empty(dir_ / "runs")) << "and the run dir removed";
}

TEST_F(RunTest, FramesWithoutAHelloAreNotTheProbes) {
  launcher_.hello = nullptr;
  StatusOr<RunReport> report = RunIt();
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("not the hello every probe writes first"), std::string::npos)
      << report.status().message();
}

TEST_F(RunTest, AProbeDirThatHoldsAnotherFileIsRefusedBeforeAnyLaunch) {
  WriteFile(dir_ / "probe/sandprobe-probe", "#!/bin/sh\necho PASS\n");
  StatusOr<RunReport> report = RunIt();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(report.status().message().find("the probe that would run is not ours"), std::string::npos);
  EXPECT_FALSE(launcher_.Launched("fake-start")) << "nothing launched";
}

// issue 27: a build without the WASI toolchain made no wasi probe (probes/wasi/CMakeLists.txt
// skips it); a wasi profile's run is then a harness error (exit 3) naming what is missing and
// the profile's install hint, before anything is launched: never a pass.
TEST_F(RunTest, AProbeThisBuildDidNotMakeIsAHarnessErrorWithTheProfilesInstallHint) {
  WriteProfile(R"(, "probe": "wasi", "install_hint": "scripts/setup.sh --with wasi, then rebuild")");
  StatusOr<RunReport> report = RunIt();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kHarness);
  EXPECT_EQ(report.status().message(),
            "this sandprobe was built without a wasi probe (it has: native, js); the profile's \"probe\" needs one; "
            "fix: install: scripts/setup.sh --with wasi, then rebuild");
  EXPECT_TRUE(launcher_.launches.empty()) << "nothing launched";
  WriteProfile(R"(, "probe": "wasi")");  // no hint to give: the plain error
  report = RunIt();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kHarness);
  EXPECT_EQ(report.status().message().find("fix:"), std::string::npos) << report.status().message();
}

// issue 27: a family the probe does not implement is skipped, never sent to it.
TEST_F(RunTest, FamiliesTheProbeLacksAreSkippedAsNotExpressibleAndNeverSent) {
  WriteFile(dir_ / "probe/sandprobe-probe.js", "js");
  WriteFile(dir_ / "policy.json", R"({"name": "p", "description": "d",
      "filesystem": {"readable": ["{workspace}"], "unreadable": ["{host_canary}"]},
      "host": {"env_secrets": "hidden"}})");
  WriteFile(dir_ / "suite.json", R"({"name": "s", "description": "d",
      "families": [{"family": "fs.read"}, {"family": "env.secret"}]})");
  WriteProfile(R"(, "probe": "js")");
  launcher_.hello = {{"family", "hello"}, {"runtime", "js"}, {"build_id", "js-test"}, {"families", {"fs.read"}}};
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  const Verdict* env = Find(*report, "env.secret");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->outcome, Outcome::kSkip);
  EXPECT_EQ(env->observed, "not expressible in js: the js probe does not implement env.secret");
  EXPECT_EQ(Find(*report, "fs.read.denied:host-canary")->outcome, Outcome::kFail) << "the rest is judged";
  for (const auto& launch : launcher_.launches) {
    for (const std::string& arg : launch.argv) EXPECT_NE(arg, "env.secret") << "never sent to the probe";
  }
  EXPECT_EQ(report->witnesses["probe"]["runtime"], "js");
  EXPECT_EQ(report->witnesses["probe"]["build_id"], "js-test");
}

// issue 27: a runtime's allowlist compares resolved paths; the workspace is handed over resolved.
TEST_F(RunTest, TheWorkspaceIsHandedToTheSandboxWithSymlinksResolved) {
  fs::create_directory_symlink(dir_ / "runs", dir_ / "runs-link");
  run_dir_parent_ = (dir_ / "runs-link").string();
  StatusOr<RunReport> report = RunIt();
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string workspace = report->witnesses["workspace"].get<std::string>();
  EXPECT_EQ(workspace.rfind(fs::canonical(dir_ / "runs").string(), 0), 0u) << workspace;
  bool handed = false;
  for (const auto& launch : launcher_.launches) {
    for (const std::string& arg : launch.argv) {
      if (arg.find("/workspace") == std::string::npos) continue;  // the canary may go either way
      EXPECT_EQ(arg.find("runs-link"), std::string::npos) << arg;
      handed = handed || arg.find(workspace) != std::string::npos;
    }
  }
  EXPECT_TRUE(handed) << "the probe was asked about the resolved workspace";
}

}  // namespace
}  // namespace sandprobe
