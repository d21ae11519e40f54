// Scheduling against real backends: -j gives the same verdicts as one launch at a time, and
// --timeout bounds a whole run that would otherwise hang (docker-slow sleeps 60 s per launch).
#include <chrono>
#include <map>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kDockerUp = {"docker", "image", "inspect", "sandprobe/agent:latest"};

std::map<std::string, std::string> Verdicts(const json& report) {
  std::map<std::string, std::string> out;
  for (const json& c : report.value("checks", json::array())) out[c.value("id", "")] = c.value("verdict", "");
  return out;
}

int ProbeLaunches(const json& report) {
  int n = 0;
  for (const json& l : report.value("launches", json::array())) n += l.value("purpose", "") == "probe";
  return n;
}

TEST(SchedulingTest, ParallelLaunchesGiveTheSameVerdicts) {
  if (!BackendAvailable("bwrap", {"bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"})) return;
  // fs + env + priv families: three family groups, so -j 3 makes three launches of one.
  std::vector<std::string> suite = {"--suite", SourcePath("tests/data/groups-suite.json")};
  std::vector<std::string> serial_args = suite, parallel_args = suite;
  parallel_args.insert(parallel_args.end(), {"-j", "3"});
  CliRun serial = RunProfile("sandboxes/bwrap-strict.json", serial_args);
  CliRun parallel = RunProfile("sandboxes/bwrap-strict.json", parallel_args);
  EXPECT_EQ(serial.exit_code, parallel.exit_code) << parallel.err;
  EXPECT_EQ(ProbeLaunches(serial.report), 1);
  EXPECT_EQ(ProbeLaunches(parallel.report), 3);
  EXPECT_FALSE(Verdicts(serial.report).empty());
  EXPECT_EQ(Verdicts(serial.report), Verdicts(parallel.report));
}

TEST(SchedulingTest, RunTimeoutKillsTheLaunchAndReportsEveryUnfinishedCheckAsError) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  auto start = std::chrono::steady_clock::now();
  CliRun run = RunProfile("tests/data/docker-slow.json", {"--timeout", "3", "--require-backend"});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_LT(took, std::chrono::seconds(40));  // not the 60 s sleep, nor the 120 s launch timeout
  EXPECT_TRUE(run.report.value("interrupted", false));
  ASSERT_FALSE(run.report.value("checks", json::array()).empty()) << run.err;
  for (const json& c : run.report["checks"]) {
    EXPECT_EQ(c.value("verdict", ""), "error") << c.value("id", "");
    EXPECT_NE(c.value("observed", "").find("run timeout after 3 s"), std::string::npos)
        << c.value("observed", "");
  }
  CliRun ps = RunCommand({"docker", "ps", "-aq", "--filter",
                          "label=sandprobe.run=" + run.report.value("run_id", "?")});
  EXPECT_EQ(ps.out, "") << "containers left behind";
}

}  // namespace
}  // namespace sandprobe::testing
