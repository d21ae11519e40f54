// SIGHUP (the terminal or the CI job's session went away) and SIGQUIT end a run as SIGINT and
// SIGTERM do: running launches are killed, the sandboxes cleaned up, the report written with
// "interrupted": true, exit 3.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "launch/proc_info.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The runner started with `args` (which name `report`), sent `signal_number` once `ready`
// holds for its pid; its result and report.
CliRun RunAndSignal(const std::vector<std::string>& args, const std::string& report, int signal_number,
                    const std::function<bool(int)>& ready) {
  CliRun run;
  std::thread runner([&] { run = RunCli(args); });
  int pid = 0;
  bool up = WaitFor([&] {
    for (int p : Carriers(report)) {
      if (pid == 0 && ReadProcFile(p, "cmdline").rfind(SANDPROBE_CLI, 0) == 0) pid = p;
    }
    return pid != 0 && ready(pid);
  }, seconds(60));
  if (pid > 0) kill(pid, up ? signal_number : SIGKILL);
  runner.join();
  EXPECT_TRUE(up) << "the run never reached the point to signal it; " << run.err;
  run.report = json::parse(std::ifstream(report), nullptr, false);
  return run;
}

// The run dir whose owner.json names `pid`, or "".
std::string RunIdOwnedBy(int pid) {
  for (const auto& entry : fs::directory_iterator("/var/tmp")) {
    std::string name = entry.path().filename().string();
    if (name.rfind("sandprobe-", 0) != 0) continue;
    json owner = json::parse(std::ifstream(entry.path() / "owner.json"), nullptr, false);
    if (owner.is_object() && owner.value("pid", 0) == pid) return name.substr(std::string("sandprobe-").size());
  }
  return "";
}

TEST(SignalsTest, SighupDuringADockerRunCleansUpAndReports) {
  if (!BackendAvailable("docker", {"docker", "image", "inspect", "sandprobe/agent:latest"})) return;
  std::string dir = MakeTempDir("signals");
  std::string report = dir + "/r.json";
  CliRun run = RunAndSignal({"run", "--no-color", "--sandbox", SourcePath("tests/data/docker-slow.json"),
                             "--json", report},
                            report, SIGHUP, [](int pid) {
                              std::string run_id = RunIdOwnedBy(pid);
                              return !run_id.empty() &&
                                     !RunCommand({"docker", "ps", "-q", "--filter", "label=sandprobe.run=" + run_id}).out.empty();
                            });
  EXPECT_EQ(run.exit_code, 3) << run.err;
  ASSERT_TRUE(run.report.is_object()) << "no JSON report written; " << run.err;
  EXPECT_EQ(run.report.value("interrupted", false), true);
  ASSERT_FALSE(run.report["checks"].empty());
  for (const json& check : run.report["checks"]) EXPECT_EQ(check.value("verdict", ""), "error") << check.dump();
  ExpectNoContainerLeft(run.report);
  fs::remove_all(dir);
}

// SIGQUIT, on the host: the hanging launch is killed with what it started.
TEST(SignalsTest, SigquitDuringAHostRunKillsItsLaunchAndReports) {
  std::string dir = MakeTempDir("signals");
  std::random_device random;
  std::string marker = "sp-sigquit-" + std::to_string(random()) + std::to_string(random());
  json profile = {{"name", "host-hang"}, {"description", "a host probe that hangs first"},
                  {"backend", "host"}, {"policy", SourcePath("policies/tier-low.json")},
                  {"lifecycle", "oneshot"}, {"injection", "host-path"},
                  {"probe_path", "{probe_dir}/sandprobe-probe"}, {"workspace_path", "{workspace}"},
                  {"run", {"sh", "-c", "sleep 600; : " + marker + "; exec \"$0\" \"$@\"", "{probe}", "{probe_args...}"}},
                  {"timeout_seconds", 300}};
  std::ofstream(dir + "/profile.json") << profile.dump();
  std::string report = dir + "/r.json";
  CliRun run = RunAndSignal({"run", "--no-color", "--sandbox", dir + "/profile.json", "--json", report},
                            report, SIGQUIT, [&](int) { return !Carriers(marker).empty(); });
  EXPECT_EQ(run.exit_code, 3) << run.err;
  ASSERT_TRUE(run.report.is_object()) << "no JSON report written; " << run.err;
  EXPECT_EQ(run.report.value("interrupted", false), true);
  EXPECT_EQ(Carriers(marker), std::vector<int>{});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sandprobe::testing
