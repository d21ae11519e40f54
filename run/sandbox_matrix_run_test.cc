// The multi-sandbox loop with a scripted launcher and a fake witness (no binary, no process):
// each sandbox publishes its own reports under its own name, the matrix has one column per
// sandbox, and the exit code is combined as `sandprobe run --sandbox a,b` promises (a fail is 1;
// a missing backend is 3, or a skipped column that does not gate with --allow-missing-backend;
// an interrupt stops the sandboxes not yet started; a harness failure of one does not stop the
// next); "-" cannot be shared by several sandboxes.
#include "run/sandbox_matrix_run.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "contract/exit_code.h"
#include "families/plan.h"
#include "gate/gate.h"
#include "run/scripted_launcher_test_util.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

void WriteFile(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A FILE* whose text the test reads back (the console and the error stream).
class CapturedStream {
 public:
  CapturedStream() : file_(::open_memstream(&buffer_, &size_)) {}
  ~CapturedStream() {
    std::fclose(file_);
    std::free(buffer_);
  }
  FILE* file() const { return file_; }
  std::string text() const {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  FILE* file_;
};

std::size_t FormatIndex(std::string_view name) {
  return static_cast<std::size_t>(FindReportFormat(name) - ReportFormats().data());
}

class SandboxMatrixRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("sandprobe-matrix-run-test-{}-{}", ::getpid(), counter_++);
    fs::create_directories(dir_ / "runs");
    fs::create_directories(dir_ / "probe");
    fs::create_directories(dir_ / "out");
    WriteFile(dir_ / "probe/sandprobe-probe", "#!/bin/sh\n");
    fs::permissions(dir_ / "probe/sandprobe-probe", fs::perms::owner_all | fs::perms::group_read |
                                                        fs::perms::group_exec | fs::perms::others_read |
                                                        fs::perms::others_exec);
    // Passes: the workspace is readable (the fake probe reads it for real).
    WriteFile(dir_ / "policy-pass.json", R"({"name": "pass", "description": "d",
      "filesystem": {"readable": ["{workspace}"]}})");
    // Fails: the fake probe reads the host canary too, and the harness's hash proves it.
    WriteFile(dir_ / "policy-leak.json", R"({"name": "leak", "description": "d",
      "filesystem": {"readable": ["{workspace}"], "unreadable": ["{host_canary}"]}})");
    WriteFile(dir_ / "suite.json", R"({"name": "s", "description": "d", "families": [{"family": "fs.read"}]})");
    outputs_[FormatIndex("json")] = (dir_ / "out/r.json").string();
    outputs_[FormatIndex("junit")] = (dir_ / "out/j.xml").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A session profile of fake commands named `name`, judged by `policy`; `extra` adds members.
  std::string Profile(const std::string& name, const std::string& policy, const std::string& extra = "") {
    const fs::path path = dir_ / (name + ".json");
    WriteFile(path, fmt::format(R"({{"name": "{}", "description": "scripted", "backend": "other",
      "policy": "{}", "lifecycle": "session", "injection": "host-path",
      "probe_path": "{{probe_dir}}/sandprobe-probe", "workspace_path": "{{workspace}}",
      "start": ["fake-start", "{{instance}}"], "exec": ["fake-exec", "{{probe}}", "{{probe_args...}}"],
      "stop": ["fake-stop", "{{instance}}"], "cleanup": [["fake-cleanup", "{{instance}}"]],
      "timeout_seconds": 60{}}})",
                                name, policy, extra));
    return path.string();
  }
  // As an uninstalled backend looks: its requires fails before any launch.
  std::string AbsentProfile(const std::string& name) {
    launcher_.steps["fake-requires-" + name] = {.exit_code = 1, .out = "no such backend"};
    return Profile(name, "policy-pass.json",
                   fmt::format(R"(, "requires": [["fake-requires-{}"]], "preflight": "before")", name));
  }

  StatusOr<std::vector<MatrixSandbox>> Plan(const std::vector<std::string>& profiles) {
    StatusOr<std::vector<RunInputs>> inputs =
        PreloadRunInputs(profiles, "", {(dir_ / "suite.json").string()}, KnownFamilies());
    if (!inputs.ok()) return inputs.status();
    return PlanMatrixSandboxes(profiles, outputs_, std::move(*inputs));
  }

  SandboxMatrixResult RunMatrix(const std::vector<std::string>& profiles) {
    StatusOr<std::vector<MatrixSandbox>> sandboxes = Plan(profiles);
    EXPECT_TRUE(sandboxes.ok()) << sandboxes.status().message();
    if (!sandboxes.ok()) return {};
    SandboxMatrixOptions options{
        .run = {.suite_paths = {(dir_ / "suite.json").string()},
                .probe_dir = (dir_ / "probe").string(),
                .probe_builds = builds_,
                .allow_missing_backend = allow_missing_backend_,
                .tool_version = "test",
                .cancel = &cancel_},
        .matrix_path = MatrixOutputPath(outputs_),
        .publish = {.program = "sandprobe run",
                    .today = "2026-11-23",
                    .fail_on = *ParseFailOn("low"),
                    .console = console_.file(),
                    .errors = errors_.file()},
        .on_run_ended = [this] { ++runs_ended_; }};
    RunEnvironment env{.launcher = launcher_,
                       .run_dir_parent = (dir_ / "runs").string(),
                       .clock = [this] { return now_; },
                       .utc_now = [] { return UtcTime(std::chrono::sys_days(std::chrono::year(2026) / 11 / 23)); },
                       .random_hex = [this](std::size_t bytes) { return fmt::format("{:0{}x}", ++random_, bytes * 2); },
                       .witness_table = witness_table_};
    return SandboxMatrixRun(std::move(*sandboxes), std::move(options), env).Run();
  }

  nlohmann::json Json(const std::string& file) { return nlohmann::json::parse(ReadFile(dir_ / "out" / file), nullptr, false); }

  static inline int counter_ = 0;
  fs::path dir_;
  ReportPaths outputs_ = ReportPaths(ReportFormats().size());
  bool allow_missing_backend_ = false;
  std::atomic<bool> cancel_{false};
  int runs_ended_ = 0;
  std::chrono::steady_clock::time_point now_{};
  ScriptedLauncher launcher_{now_};
  std::uint64_t random_ = 0x1000;
  CapturedStream console_, errors_;
  std::vector<WitnessRow> witness_table_ = {
      {"fake", {"fs.read"}, [](const WitnessSetup& setup) -> StatusOr<std::unique_ptr<RunWitness>> {
         // A sandbox named "broken" is one whose witness cannot start: a harness failure.
         if (setup.profile.name == "broken") return Status::Error("bind(127.0.0.1:0): EADDRINUSE");
         return std::unique_ptr<RunWitness>(std::make_unique<FakeWitness>());
       }}};
  std::vector<ProbeBuild> builds_ = {
      {ProbeRuntime::kNative, "native-test", Sha256Hex("#!/bin/sh\n"), {"env.secret", "fs.read"}}};
};

TEST_F(SandboxMatrixRunTest, TwoPassingSandboxesWriteTheirOwnReportsAndOneMatrixOfTwoColumns) {
  outputs_[FormatIndex("matrix")] = (dir_ / "out/m.json").string();
  SandboxMatrixResult result = RunMatrix({Profile("alpha", "policy-pass.json"), Profile("beta", "policy-pass.json")});
  EXPECT_EQ(result.exit_code, kExitPass) << console_.text() << errors_.text();
  ASSERT_EQ(result.reports.size(), 2u);
  EXPECT_EQ(runs_ended_, 2);
  EXPECT_FALSE(fs::exists(dir_ / "out/r.json")) << "no unmarked report: each sandbox writes its own";
  for (const std::string name : {"alpha", "beta"}) {
    nlohmann::json report = Json("r." + name + ".json");
    ASSERT_TRUE(report.is_object()) << name << ": " << errors_.text();
    EXPECT_EQ(report["profile"]["name"], name);
    EXPECT_GT(report["summary"]["pass"].get<int>(), 0) << report["summary"];
    EXPECT_EQ(report["summary"]["pass"], report["summary"]["total"]) << report["summary"];
    EXPECT_THAT(ReadFile(dir_ / "out" / ("j." + name + ".xml")), HasSubstr("<testsuite"));
  }
  nlohmann::json matrix = Json("m.json");
  ASSERT_TRUE(matrix.is_object()) << errors_.text();
  ASSERT_EQ(matrix["sandboxes"].size(), 2u);
  EXPECT_EQ(matrix["sandboxes"][0]["name"], "alpha");
  EXPECT_EQ(matrix["sandboxes"][1]["name"], "beta");
  EXPECT_FALSE(fs::exists(dir_ / "out/m.alpha.json")) << "--matrix is written once, unmarked";
  EXPECT_THAT(console_.text(), HasSubstr("matrix: 2 sandboxes"));
  EXPECT_THAT(console_.text(), HasSubstr("sandprobe run: 2 of 2 sandboxes run; exit 0 (the worst of the runs)"));
  EXPECT_THAT(console_.text(), HasSubstr("reports: json " + (dir_ / "out/r.alpha.json").string()));
  EXPECT_EQ(errors_.text(), "");
}

TEST_F(SandboxMatrixRunTest, OneFailingSandboxMakesTheMatrixExitOne) {
  SandboxMatrixResult result = RunMatrix({Profile("alpha", "policy-pass.json"), Profile("leaky", "policy-leak.json")});
  EXPECT_EQ(result.exit_code, kExitFail) << console_.text() << errors_.text();
  ASSERT_EQ(result.exits.size(), 2u);
  EXPECT_EQ(result.exits[0].exit_code, kExitPass);
  EXPECT_EQ(result.exits[1].exit_code, kExitFail);
  EXPECT_GT(Json("r.leaky.json")["summary"]["fail"].get<int>(), 0);
  EXPECT_THAT(console_.text(), HasSubstr("2 of 2 sandboxes run; exit 1 (the worst of the runs)"));
}

TEST_F(SandboxMatrixRunTest, AMissingBackendIsExitThreeByDefault) {
  SandboxMatrixResult result = RunMatrix({Profile("alpha", "policy-pass.json"), AbsentProfile("absent")});
  EXPECT_EQ(result.exit_code, kExitHarness) << "a missing backend checked nothing: " << console_.text();
  ASSERT_EQ(result.exits.size(), 2u);
  EXPECT_FALSE(result.exits[1].backend_skipped);
  EXPECT_GT(Json("r.absent.json")["summary"]["error"].get<int>(), 0);
  ASSERT_FALSE(launcher_.launches.empty());
  EXPECT_EQ(launcher_.launches.back().argv[0], "fake-requires-absent")
      << "the absent sandbox launched nothing after its failed requires";
}

TEST_F(SandboxMatrixRunTest, AMissingBackendIsASkippedColumnThatDoesNotGateWhenAllowed) {
  allow_missing_backend_ = true;
  outputs_[FormatIndex("matrix")] = (dir_ / "out/m.md").string();
  SandboxMatrixResult result = RunMatrix({Profile("alpha", "policy-pass.json"), AbsentProfile("absent")});
  EXPECT_EQ(result.exit_code, kExitPass) << console_.text() << errors_.text();
  ASSERT_EQ(result.exits.size(), 2u);
  EXPECT_TRUE(result.exits[1].backend_skipped);
  nlohmann::json absent = Json("r.absent.json");
  EXPECT_EQ(absent["summary"]["skip"], absent["summary"]["total"]);
  EXPECT_THAT(console_.text(),
              HasSubstr("2 of 2 sandboxes run; exit 0 (the worst of the runs; 1 whose backend was unavailable not "
                        "counted (--allow-missing-backend))"));
  const std::string table = ReadFile(dir_ / "out/m.md");
  EXPECT_THAT(table, HasSubstr("| **absent** |"));
  EXPECT_THAT(table, HasSubstr("skipped: "));
}

TEST_F(SandboxMatrixRunTest, EveryBackendMissingJudgedNothingAndIsExitThreeEvenWhenAllowed) {
  allow_missing_backend_ = true;
  SandboxMatrixResult result = RunMatrix({AbsentProfile("absent1"), AbsentProfile("absent2")});
  EXPECT_EQ(result.exit_code, kExitHarness);
  EXPECT_THAT(console_.text(), HasSubstr("exit 3 (no sandbox's backend was available: nothing was judged)"));
}

TEST_F(SandboxMatrixRunTest, AnInterruptStopsTheSandboxesNotYetStarted) {
  launcher_.interrupt_during_probe = &cancel_;  // SIGINT while the first sandbox's probe runs
  SandboxMatrixResult result =
      RunMatrix({Profile("alpha", "policy-pass.json"), Profile("beta", "policy-pass.json")});
  EXPECT_EQ(result.exit_code, kExitHarness);
  ASSERT_EQ(result.reports.size(), 1u) << "beta never started";
  ASSERT_EQ(result.exits.size(), 2u) << "the interrupted run, and the ones not started";
  EXPECT_EQ(result.exits[0].exit_code, kExitHarness) << "an interrupted run is exit 3 whatever its verdicts";
  EXPECT_TRUE(result.reports[0].interrupted);
  EXPECT_TRUE(Json("r.alpha.json")["interrupted"].get<bool>()) << "the interrupted run's reports are written";
  EXPECT_FALSE(fs::exists(dir_ / "out/r.beta.json"));
  EXPECT_THAT(errors_.text(), HasSubstr("sandprobe run: interrupted; unfinished checks are reported as errors"));
  EXPECT_THAT(errors_.text(), HasSubstr("sandprobe run: interrupted; 1 sandbox(es) not run"));
  EXPECT_THAT(console_.text(), HasSubstr("1 of 2 sandboxes run; exit 3"));
}

TEST_F(SandboxMatrixRunTest, AHarnessFailureOfOneSandboxIsItsColumnAndTheNextStillRuns) {
  SandboxMatrixResult result = RunMatrix({Profile("broken", "policy-pass.json"), Profile("beta", "policy-pass.json")});
  EXPECT_EQ(result.exit_code, kExitHarness) << console_.text() << errors_.text();
  ASSERT_EQ(result.reports.size(), 2u) << "the next sandbox ran";
  EXPECT_EQ(result.exits[0].exit_code, kExitHarness);
  EXPECT_EQ(result.exits[1].exit_code, kExitPass);
  EXPECT_THAT(errors_.text(), HasSubstr("witness fake"));
  nlohmann::json broken = Json("r.broken.json");
  ASSERT_TRUE(broken.is_object()) << "a CI job still finds the failed sandbox's report";
  ASSERT_EQ(broken["checks"].size(), 1u);
  EXPECT_EQ(broken["checks"][0]["id"], "sandprobe.harness");
  EXPECT_THAT(broken["checks"][0]["observed"].get<std::string>(), HasSubstr("EADDRINUSE"));
  EXPECT_EQ(Json("r.beta.json")["summary"]["pass"], Json("r.beta.json")["summary"]["total"]);
}

TEST_F(SandboxMatrixRunTest, AMatrixThatCannotBeWrittenIsExitThreeAfterTheRuns) {
  outputs_[FormatIndex("matrix")] = (dir_ / "gone/m.json").string();
  SandboxMatrixResult result = RunMatrix({Profile("alpha", "policy-pass.json"), Profile("beta", "policy-pass.json")});
  EXPECT_EQ(result.exit_code, kExitHarness);
  EXPECT_EQ(result.exits.size(), 3u) << "two runs and the matrix";
  EXPECT_THAT(errors_.text(), HasSubstr("gone/m.json"));
  EXPECT_TRUE(fs::exists(dir_ / "out/r.beta.json")) << "each run's own reports are written";
}

TEST_F(SandboxMatrixRunTest, InvalidInputOneRunFindsIsExitTwoAndAColumnThatSaysSo) {
  launcher_.hello["build_id"] = "native-other";  // the probe that ran is not ours: exit 2
  SandboxMatrixResult result = RunMatrix({Profile("alpha", "policy-pass.json"), Profile("beta", "policy-pass.json")});
  EXPECT_EQ(result.exit_code, kExitUsage);
  ASSERT_EQ(result.reports.size(), 2u);
  EXPECT_EQ(result.reports[0].verdicts.at(0).check.id, "sandprobe.input");
  EXPECT_THAT(result.reports[0].verdicts.at(0).observed, HasSubstr("invalid input: "));
}

TEST_F(SandboxMatrixRunTest, OneSandboxKeepsItsOutputNamesAndPrintsNoMatrix) {
  SandboxMatrixResult result = RunMatrix({Profile("alpha", "policy-pass.json")});
  EXPECT_EQ(result.exit_code, kExitPass) << errors_.text();
  EXPECT_TRUE(fs::exists(dir_ / "out/r.json"));
  EXPECT_FALSE(fs::exists(dir_ / "out/r.alpha.json"));
  EXPECT_THAT(console_.text(), Not(HasSubstr("sandboxes run")));
  EXPECT_THAT(console_.text(), Not(HasSubstr("matrix:")));
}

TEST_F(SandboxMatrixRunTest, SeveralSandboxesGetTheirNameBeforeTheExtensionAndCannotShareStdout) {
  outputs_[FormatIndex("matrix")] = "-";
  StatusOr<std::vector<MatrixSandbox>> planned =
      Plan({Profile("alpha", "policy-pass.json"), Profile("beta", "policy-pass.json")});
  ASSERT_TRUE(planned.ok()) << planned.status().message();
  EXPECT_EQ((*planned)[1].outputs[FormatIndex("json")], (dir_ / "out/r.beta.json").string());
  EXPECT_EQ((*planned)[1].outputs[FormatIndex("junit")], (dir_ / "out/j.beta.xml").string());
  EXPECT_EQ((*planned)[0].outputs[FormatIndex("matrix")], "") << "the matrix is not a sandbox's";
  EXPECT_TRUE(CheckMatrixOutputs(*planned, MatrixOutputPath(outputs_)).ok()) << "--matrix may go to stdout";

  outputs_[FormatIndex("json")] = "-";
  StatusOr<std::vector<MatrixSandbox>> refused =
      Plan({Profile("alpha", "policy-pass.json"), Profile("beta", "policy-pass.json")});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "--json -: with several sandboxes each run writes its own file; name a file (--matrix may go to stdout)");
  StatusOr<std::vector<MatrixSandbox>> alone = Plan({Profile("alpha", "policy-pass.json")});
  ASSERT_TRUE(alone.ok()) << "one sandbox may write to stdout";
  EXPECT_EQ((*alone)[0].outputs[FormatIndex("json")], "-");
}

TEST_F(SandboxMatrixRunTest, AReportPathThatCannotBeWrittenIsRefusedBeforeAnyRun) {
  outputs_[FormatIndex("json")] = (dir_ / "no-such-dir/r.json").string();
  StatusOr<std::vector<MatrixSandbox>> planned =
      Plan({Profile("alpha", "policy-pass.json"), Profile("beta", "policy-pass.json")});
  ASSERT_TRUE(planned.ok()) << planned.status().message();
  Status checked = CheckMatrixOutputs(*planned, "");
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.message(), HasSubstr("r.alpha.json"));
  EXPECT_TRUE(launcher_.launches.empty());
}

}  // namespace
}  // namespace sandprobe
