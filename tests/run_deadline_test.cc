// One deadline bounds the whole run (--timeout), housekeeping too: a profile whose cleanup,
// teardown and sweep hang (sleep 100 each; before the deadline they ran 60 s each) ends within
// the timeout plus the launcher's kill grace, and the report names the steps it cut. What the
// cut housekeeping could not remove keeps the run dir in the registry for `sandprobe sweep`.
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Under /var/tmp, removed with the other test dirs (MakeTempDir).
std::string TempDir(const char* name) {
  std::string dir = MakeTempDir(name, "/var/tmp");
  ::chmod(dir.c_str(), 0755);
  return dir;
}

TEST(RunDeadlineTest, HangingHousekeepingIsCutAndNamed) {
  std::string dir = TempDir("deadline");
  std::string root = TempDir("runroot");
  json profile = {
      {"name", "hanging-housekeeping"},
      {"description", "The host, with a cleanup, teardown and sweep that never end."},
      {"backend", "other"},
      {"policy", SourcePath("policies/tier-low.json")},
      {"lifecycle", "oneshot"},
      {"injection", "host-path"},
      {"probe_path", "{probe_dir}/sandprobe-probe"},
      {"workspace_path", "{workspace}"},
      {"run", {"{probe}", "{probe_args...}"}},
      {"cleanup", json::array({json::array({"sleep", "100"})})},
      {"teardown", json::array({json::array({"sleep", "100"})})},
      {"sweep", json::array({{{"list", {"sleep", "100"}}, {"remove", {"true", "{id}"}}}})},
      {"timeout_seconds", 60}};
  std::ofstream(dir + "/profile.json") << profile.dump(2);
  auto started = std::chrono::steady_clock::now();
  CliRun run = RunCommand({"/usr/bin/env", "SANDPROBE_RUN_ROOT=" + root, SANDPROBE_CLI, "run",
                           "--sandbox", dir + "/profile.json", "--timeout", "5", "--json",
                           dir + "/r.json"});
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // 5 s of deadline + 2 s of TERM->KILL grace for the step running when it passed, with room
  // for a loaded machine's start-up; unbounded housekeeping took 186 s here.
  EXPECT_LT(wall, 15.0) << run.err;
  std::ifstream in(dir + "/r.json");
  json report = json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.err;
  EXPECT_EQ(SchemaProblem(report), "");
  std::string cut = report.value("cut_short", json::array()).dump();
  EXPECT_NE(cut.find("cleanup: timeout cut from 60000 ms to"), std::string::npos) << cut;
  EXPECT_NE(cut.find("teardown: not started: the run's deadline had passed"), std::string::npos) << cut;
  EXPECT_NE(cut.find("sweep: not started: the run's deadline had passed"), std::string::npos) << cut;
  EXPECT_EQ(report["witnesses"]["sweep"].get<std::string>().rfind("failed: ", 0), 0u)
      << report["witnesses"]["sweep"];
  std::string left = report.value("left_for_sweep", "");
  ASSERT_NE(left, "");
  EXPECT_TRUE(fs::exists(left + "/owner.json")) << "the registry entry stays for `sandprobe sweep`";
  EXPECT_NE((run.out + run.err).find("run `sandprobe sweep`"), std::string::npos)
      << "the console says what to do: " << run.out;
  fs::remove_all(root);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sandprobe::testing
