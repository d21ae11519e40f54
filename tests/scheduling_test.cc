// Scheduling against real backends: -j gives the same verdicts as one launch at a time, and
// --timeout bounds a whole run that would otherwise hang (docker-slow sleeps 60 s per launch).
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

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

// Launches grow with families, not checks: a policy denying 1,000 paths (read, write and three
// alias variants each: 5,000 checks and more) is still one probe launch, and every check gets
// a verdict from it.
TEST(SchedulingTest, AThousandDeniedPathsAreOneLaunch) {
  if (!BackendAvailable("bwrap", {"bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"})) return;
  json unreadable = {"/etc/shadow", "{host_canary}"};
  json unwritable = {"/etc"};
  for (int i = unreadable.size(); i < 1000; ++i) {
    unreadable.push_back("/srv/sandprobe-denied/" + std::to_string(i));
    unwritable.push_back("/srv/sandprobe-denied/w" + std::to_string(i));
  }
  json policy = {{"name", "thousand-denied"},
                 {"description", "1,000 unreadable and 1,000 unwritable paths"},
                 {"filesystem", {{"readable", {"{workspace}"}}, {"unreadable", unreadable},
                                 {"writable", {"{workspace}"}}, {"unwritable", unwritable}}},
                 {"host", {{"env_secrets", "hidden"}}}};
  std::string tmpl = (std::filesystem::temp_directory_path() / "sp-thousand-XXXXXX").string();
  std::string dir = ::mkdtemp(tmpl.data());
  std::ofstream(dir + "/policy.json") << policy.dump(1);
  CliRun run = RunProfile("sandboxes/bwrap-strict.json", {"--policy", dir + "/policy.json"});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(ProbeLaunches(run.report), 1);
  std::map<std::string, int> verdicts;
  for (const json& c : run.report.value("checks", json::array())) ++verdicts[c.value("verdict", "")];
  EXPECT_GE(run.report["checks"].size(), 5000u);
  EXPECT_EQ(verdicts["pass"], static_cast<int>(run.report["checks"].size())) << json(verdicts).dump();
}

// 5,000 denied paths make ~15,000 probe arguments, past bwrap's 9,000: the plan splits the
// launch by its argument budget (families/plan_split.h), and every check still passes.
TEST(SchedulingTest, AFiveThousandPathPolicyIsSplitAndPassesOnBwrapStrict) {
  if (!BackendAvailable("bwrap", {"bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"})) return;
  json unreadable = {"/etc/shadow", "{host_canary}"};
  json unwritable = {"/etc"};
  for (int i = unreadable.size(); i < 5000; ++i) unreadable.push_back("/srv/sandprobe-denied/" + std::to_string(i));
  for (int i = unwritable.size(); i < 5000; ++i) unwritable.push_back("/srv/sandprobe-denied/w" + std::to_string(i));
  json policy = {{"name", "five-thousand-denied"},
                 {"description", "5,000 unreadable and 5,000 unwritable paths"},
                 {"filesystem", {{"readable", {"{workspace}"}}, {"unreadable", unreadable},
                                 {"writable", {"{workspace}"}}, {"unwritable", unwritable}}},
                 {"host", {{"env_secrets", "hidden"}}}};
  std::string tmpl = (std::filesystem::temp_directory_path() / "sp-5k-XXXXXX").string();
  std::string dir = ::mkdtemp(tmpl.data());
  std::ofstream(dir + "/policy.json") << policy.dump(1);
  CliRun run = RunProfile("sandboxes/bwrap-strict.json", {"--policy", dir + "/policy.json"});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_GT(ProbeLaunches(run.report), 1);
  for (const json& l : run.report.value("launches", json::array())) {
    EXPECT_LT(l.value("argv", json::array()).size(), 9000u) << l.value("id", "");
  }
  std::map<std::string, int> verdicts;
  for (const json& c : run.report.value("checks", json::array())) ++verdicts[c.value("verdict", "")];
  EXPECT_GE(run.report["checks"].size(), 30000u);
  EXPECT_EQ(verdicts["pass"], static_cast<int>(run.report["checks"].size())) << json(verdicts).dump();
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
