// The CLI's contract: validate and list output, exit codes, interruption.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

std::string WriteTemp(const std::string& name, const std::string& content) {
  std::string tmpl = (fs::temp_directory_path() / "sp-cli-XXXXXX").string();
  std::string path = std::string(mkdtemp(tmpl.data())) + "/" + name;
  std::ofstream(path) << content;
  return path;
}

TEST(CliTest, ValidateAcceptsEveryShippedFile) {
  std::vector<std::string> args = {"validate"};
  for (const char* dir : {"policies", "sandboxes", "suites", "tests/data"}) {
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

}  // namespace
}  // namespace sandprobe::testing
