// The CLI's contract: validate and list output, exit codes, interruption.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "launch/launcher.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

// A file in a fresh directory of its own (MakeTempDir: removed when the binary exits).
std::string WriteTemp(const std::string& name, const std::string& content) {
  return WriteFile(MakeTempDir("cli"), name, content);
}

TEST(CliTest, ValidateAcceptsEveryShippedFile) {
  std::vector<std::string> args = {"validate"};
  for (const char* dir : {"policies", "sandboxes", "sandboxes/examples", "suites", "tests/data"}) {
    for (const auto& entry : fs::directory_iterator(SourcePath(dir))) {
      if (entry.path().extension() == ".json") args.push_back(entry.path().string());
    }
  }
  CliRun run = RunCli(args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("tier-low.json: ok (policy tier-low)"), std::string::npos) << run.out;
}

TEST(CliTest, ValidateNamesFileLineColumnAndFieldAndExits2) {
  std::string path = WriteTemp("bad.json", "{\n  \"name\": \"x\",\n  \"description\": \"d\",\n"
                                           "  \"limits\": {\"pids\": \"fifty\"}\n}\n");
  CliRun run = RunCli({"validate", path});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(path + ":4:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("/limits/pids"), std::string::npos) << run.err;
}

TEST(CliTest, RunWithAnInvalidPolicyExits2) {
  std::string path = WriteTemp("p.json", "{\"name\": \"p\", \"description\": \"d\", \"filesystem\": {\"readabel\": []}}");
  CliRun run = RunCli({"run", "--sandbox", SourcePath("sandboxes/host.json"), "--policy", path});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("readabel"), std::string::npos) << run.err;
}

TEST(CliTest, ListShowsFamiliesSuitesPoliciesAndSandboxes) {
  CliRun run = RunCli({"list"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* expected : {"fs.read", "fs.alias", "env.secret", "default", "tier-low",
                               "tier-medium", "tier-high", "host", "bwrap-strict", "bwrap-leaky",
                               "docker-hardened", "docker-default"}) {
    EXPECT_NE(run.out.find(expected), std::string::npos) << expected << "\n" << run.out;
  }
  EXPECT_EQ(run.out.find("INVALID"), std::string::npos) << run.out;
}

// The subcommand and report-format tables reach --help: every row is a working command/flag.
TEST(CliTest, HelpListsEverySubcommandAndEveryReportFormat) {
  CliRun top = RunCli({"--help"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  for (const char* command : {"run", "validate", "list", "diff", "sweep"}) {
    EXPECT_NE(top.out.find(std::string("\n  ") + command), std::string::npos) << command << "\n" << top.out;
  }
  CliRun run = RunCli({"run", "--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* flag : {"--json", "--junit", "--sarif", "--summary"}) {
    EXPECT_NE(run.out.find(flag), std::string::npos) << flag << "\n" << run.out;
  }
  EXPECT_EQ(RunCli({}).exit_code, 2);  // a subcommand is required
}

TEST(CliTest, UnknownOptionIsAUsageError) {
  EXPECT_EQ(RunCli({"run", "--sandbox", "x.json", "--no-such-flag"}).exit_code, 2);
}

// SIGINT while a container is running: reports still written with interrupted=true, exit 3,
// and no container of the run left behind.
TEST(CliTest, SigintDuringADockerRunCleansUpAndReports) {
  if (!BackendAvailable("docker", {"docker", "image", "inspect", "sandprobe/agent:latest"})) return;
  std::string dir = fs::path(WriteTemp("x", "")).parent_path().string();
  std::string script =
      std::string(SANDPROBE_CLI) + " run --no-color --sandbox " + SourcePath("tests/data/docker-slow.json") +
      " --json " + dir + "/r.json --junit " + dir + "/j.xml & pid=$!; sleep 5; kill -INT $pid; "
      "wait $pid; echo \"exit=$?\"";
  CliRun run = RunCommand({"sh", "-c", script});
  EXPECT_NE(run.out.find("exit=3"), std::string::npos) << run.out << run.err;
  std::ifstream in(dir + "/r.json");
  nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << "no JSON report written";
  EXPECT_EQ(report.value("interrupted", false), true);
  for (const auto& check : report["checks"]) EXPECT_EQ(check.value("verdict", ""), "error");
  CliRun ps = RunCommand({"docker", "ps", "-aq", "--filter",
                          "label=sandprobe.run=" + report.value("run_id", "?")});
  EXPECT_EQ(ps.out, "");
  CliRun lint = RunCommand({"xmllint", "--noout", "--schema",
                            SANDPROBE_JUNIT_XSD, dir + "/j.xml"});
  EXPECT_EQ(lint.exit_code, 0) << lint.err;
}

// A FIFO given as a policy, profile or suite hung `validate` and `run` forever (a blocking open
// waiting for a writer). Each command now exits 2 at once; the launcher's timeout turns a
// regression into a failure instead of a hung test (30 s: far above the milliseconds it takes,
// so this is no timing assertion).
TEST(CliTest, FifoInputsExit2InsteadOfHanging) {
  std::string dir = fs::path(WriteTemp("x", "")).parent_path().string();
  std::string fifo = dir + "/policy.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const std::vector<std::vector<std::string>> commands = {
      {"validate", fifo},
      {"run", "--sandbox", SourcePath("sandboxes/host.json"), "--policy", fifo},
      {"run", "--sandbox", SourcePath("sandboxes/host.json"), "--suite", fifo},
      {"run", "--sandbox", fifo},
  };
  for (const std::vector<std::string>& args : commands) {
    LaunchSpec spec;
    spec.argv = {SANDPROBE_CLI};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout = std::chrono::seconds(30);
    StatusOr<LaunchResult> result = ProcessLauncher().Launch(spec);
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_FALSE(result->timed_out) << "hung on: " << args[0] << " ... " << args.back();
    EXPECT_EQ(result->exit_code, 2) << result->err;
    EXPECT_NE(result->err.find(fifo + ": is a FIFO, not a regular file"), std::string::npos)
        << result->err;
  }
  fs::remove(fifo);
}

// A suite variant its family does not know, and a NUL in a policy path, are load errors with
// file:line:col (exit 2), not a surprise at run time.
TEST(CliTest, ValidateRefusesUnknownVariantsAndNulStrings) {
  std::string suite = WriteTemp("s.json", R"({"name": "s", "description": "d", "families": [
  {"family": "fs.alias", "variants": ["symlink", "hardlink"]}]})");
  CliRun run = RunCli({"validate", suite});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(suite + ":2:50: /families/0/variants/1: unknown variant \"hardlink\""),
            std::string::npos) << run.err;
  std::string policy = WriteTemp("p.json", R"({"name": "p", "description": "d",
  "filesystem": {"unreadable": ["/etc/shadow\u0000"]}})");
  run = RunCli({"validate", policy});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(policy + ":2:33: /filesystem/unreadable/0: contains a NUL"),
            std::string::npos) << run.err;
}

}  // namespace
}  // namespace sandprobe::testing
