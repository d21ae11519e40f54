// A gate you can trust under fire: what a run leaves behind when its sandprobe is killed, when
// a probe hangs, and when the sandbox leaves a daemon behind. Every test looks for its own
// run's leftovers only (its run id's label, its run dir, tokens it made).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include <sys/stat.h>

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

std::string UniqueToken(const std::string& prefix) {
  std::random_device random;
  return prefix + std::to_string(random()) + std::to_string(random());
}

std::string ContainersOf(const std::string& run_id) {
  return RunCommand({"docker", "ps", "-aq", "--filter", "label=sandprobe.run=" + run_id}).out;
}

// A run-dir root of this test's own (SANDPROBE_RUN_ROOT): a concurrent `sandprobe run` of
// another test sweeps dead runs under /var/tmp first, and would sweep a runner this test
// killed before the test could look at what it left.
std::string PrivateRunRoot() {
  std::string root = MakeTempDir("runroot", "/var/tmp");
  ::chmod(root.c_str(), 0755);
  return root;
}

// `sandprobe ARGS...` with its run dirs under `root`.
CliRun RunCliUnder(const std::string& root, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "SANDPROBE_RUN_ROOT=" + root, SANDPROBE_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

// The run dir under `root` whose owner.json names `pid`, or "".
std::string RunDirOwnedBy(int pid, const std::string& root) {
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path().filename().string().rfind("sandprobe-", 0) != 0) continue;
    std::ifstream in(entry.path() / "owner.json");
    json owner = json::parse(in, nullptr, false);
    if (owner.is_object() && owner.value("pid", 0) == pid) return entry.path().string();
  }
  return "";
}

// A profile file for the host backend with `run` as its run template (the probe runs on the
// host, so hangs and leftovers are real processes of this machine).
// `extra` adds fields (an envelope).
std::string HostProfile(const std::string& dir, const json& run, int timeout_seconds,
                        const json& extra = json::object()) {
  json profile = {{"name", "host-under-fire"}, {"description", "host profile for sweep tests"},
                  {"backend", "host"}, {"policy", SourcePath("policies/tier-low.json")},
                  {"lifecycle", "oneshot"}, {"injection", "host-path"},
                  {"probe_path", "{probe_dir}/sandprobe-probe"}, {"workspace_path", "{workspace}"},
                  {"run", run}, {"timeout_seconds", timeout_seconds}};
  profile.update(extra);
  std::string path = dir + "/profile.json";
  std::ofstream(path) << profile.dump(2);
  return path;
}

// `sandprobe run --sandbox PROFILE` (an absolute path) with its JSON report in `dir`.
CliRun RunAbsoluteProfile(const std::string& profile, const std::string& dir) {
  CliRun run = RunCli({"run", "--no-color", "--sandbox", profile, "--json", dir + "/r.json"});
  run.report = json::parse(std::ifstream(dir + "/r.json"), nullptr, false);
  return run;
}

// kill -9 of the runner while its container runs: the container outlives it (docker's client
// dies, the container does not), its direct children die with it (parent-death signal), and
// `sandprobe sweep` removes the container and the run dir from the owner record it left.
TEST(SweepTest, AKilledRunnersContainerAndRunDirAreSweptAndItsProcessesDied) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  std::string dir = MakeTempDir("sweep");
  const std::string runs = PrivateRunRoot();
  std::string report = dir + "/r.json";  // unique: finds the runner's pid
  CliRun killed;
  std::thread runner([&] {
    killed = RunCliUnder(runs, {"run", "--no-color", "--sandbox", SourcePath("tests/data/docker-slow.json"),
                     "--suite", SourcePath("suites/privileges.json"), "--json", report});
  });
  int pid = 0;
  std::string run_dir, run_id;
  json owner;
  bool up = WaitFor([&] {
    if (pid == 0) {
      for (int p : Carriers(report)) {
        if (ReadProcFile(p, "cmdline").rfind(SANDPROBE_CLI, 0) == 0) pid = p;
      }
    }
    if (pid != 0 && run_dir.empty()) run_dir = RunDirOwnedBy(pid, runs);
    if (run_dir.empty()) return false;
    run_id = fs::path(run_dir).filename().string().substr(std::string("sandprobe-").size());
    return !ContainersOf(run_id).empty();
  }, seconds(60));
  if (!run_dir.empty()) owner = json::parse(std::ifstream(run_dir + "/owner.json"), nullptr, false);
  if (pid > 0) kill(pid, SIGKILL);  // found by this test's own report path
  runner.join();
  ASSERT_TRUE(up) << "no container of the run appeared; runner pid " << pid << ", run dir '"
                  << run_dir << "'; " << killed.err;
  EXPECT_EQ(killed.exit_code, -1) << "the runner was not killed by the signal";

  std::vector<std::string> tokens = owner.value("process_tokens", std::vector<std::string>{});
  ASSERT_EQ(tokens.size(), 2u) << owner.dump() << ": the dir name and the canary's";
  EXPECT_EQ(tokens[0], "sandprobe-" + run_id);
  EXPECT_EQ(tokens[1].rfind("sandprobe-canary-", 0), 0u) << tokens[1];
  // The canary host process and the docker client (its argv names the run dir) died with it.
  for (const std::string& token : tokens) {
    EXPECT_TRUE(WaitFor([&] { return Carriers(token).empty(); }, seconds(3)))
        << "a process with " << token << " outlived the killed runner";
  }
  EXPECT_NE(ContainersOf(run_id), "") << "the container should outlive a killed runner";
  EXPECT_TRUE(fs::exists(run_dir));

  CliRun sweep = RunCliUnder(runs, {"sweep", "--run-id", run_id});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  EXPECT_NE(sweep.out.find("dead run " + run_id), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.out.find("owner pid " + std::to_string(pid) + " is gone"), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.out.find("removed sandbox "), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.out.find("removed run dir " + run_dir), std::string::npos) << sweep.out;
  EXPECT_EQ(ContainersOf(run_id), "");
  EXPECT_FALSE(fs::exists(run_dir));
  for (const std::string& token : tokens) EXPECT_EQ(Carriers(token), std::vector<int>{}) << token;
  // Nothing left to sweep for it.
  CliRun again = RunCliUnder(runs, {"sweep", "--run-id", run_id, "--json"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(json::parse(again.out, nullptr, false).value("runs", json::array()), json::array()) << again.out;
  fs::remove_all(dir);
  fs::remove_all(runs);
}

// The host cgroup parent of the harness's launch cgroups and their names' prefix, split from
// owner.json "pids_cgroups"; the launch cgroups there named for it.
std::vector<std::string> LaunchCgroupsOf(const std::string& prefix) {
  std::vector<std::string> found;
  fs::path parent = fs::path(prefix).parent_path();
  std::string name = fs::path(prefix).filename().string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    if (entry.is_directory() && entry.path().filename().string().rfind(name, 0) == 0) {
      found.push_back(entry.path().string());
    }
  }
  return found;
}

// The files named for `token` in `dir` (not recursive).
std::vector<std::string> TokenFilesIn(const std::string& dir, const std::string& token) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().find(token) != std::string::npos) found.push_back(entry.path().string());
  }
  return found;
}

// kill -9 of a host persistence run after its plant launch, while the next launch (the check)
// runs: the token-carrying wrapper dies with the runner, but its child (no token) lives on in
// the harness's pids cgroup, and the token files the probe planted in /tmp, /dev/shm, /var/tmp,
// $HOME and the working directory stay. `sandprobe sweep` removes all of it.
TEST(SweepTest, AKilledHostPersistenceRunsFilesOrphansAndPidsCgroupAreSwept) {
  std::string dir = MakeTempDir("sweep");
  std::string marker = UniqueToken("sp-persist-orphan-");
  std::string profile = HostProfile(
      dir,
      {"sh", "-c", "case \"$*\" in *persist.check*) sh -c 'sleep 600; : " + marker + "';; esac; exec \"$0\" \"$@\"",
       "{probe}", "{probe_args...}"},
      120, {{"envelope", {{"pids", 512}}}});
  const std::string runs = PrivateRunRoot();
  std::string report = dir + "/r.json";
  CliRun killed;
  std::thread runner([&] {
    killed = RunCliUnder(runs, {"run", "--no-color", "--sandbox", profile, "--suite",
                     SourcePath("suites/persistence.json"), "--json", report});
  });
  int pid = 0;
  std::string run_dir;
  bool up = WaitFor([&] {
    for (int p : Carriers(report)) {
      if (pid == 0 && ReadProcFile(p, "cmdline").rfind(SANDPROBE_CLI, 0) == 0) pid = p;
    }
    if (pid != 0 && run_dir.empty()) run_dir = RunDirOwnedBy(pid, runs);
    return !run_dir.empty() && !Carriers(marker).empty();
  }, seconds(60));
  json owner;
  if (!run_dir.empty()) owner = json::parse(std::ifstream(run_dir + "/owner.json"), nullptr, false);
  if (pid > 0) kill(pid, SIGKILL);  // found by this test's own report path
  runner.join();
  ASSERT_TRUE(up) << "the check launch never started; runner pid " << pid << "; " << killed.err;
  EXPECT_EQ(killed.exit_code, -1) << "the runner was not killed by the signal";
  std::string run_id = fs::path(run_dir).filename().string().substr(std::string("sandprobe-").size());

  std::string token;
  for (const std::string& t : owner.value("process_tokens", std::vector<std::string>{})) {
    if (t.rfind("persist", 0) == 0) token = t;
  }
  ASSERT_FALSE(token.empty()) << owner.dump();
  ASSERT_EQ(owner["planted_files"].size(), 1u) << owner.dump();
  std::vector<std::string> planted_dirs = owner["planted_files"][0].value("dirs", std::vector<std::string>{});
  const char* home = std::getenv("HOME");
  std::vector<std::string> expected_dirs = {"/tmp", "/dev/shm", "/var/tmp"};
  if (home != nullptr) expected_dirs.push_back(home);
  expected_dirs.push_back(fs::current_path().string());  // RunCli's child inherits it
  EXPECT_EQ(planted_dirs, expected_dirs);
  std::string cgroups = owner.value("pids_cgroups", "");
  EXPECT_NE(cgroups.find(std::to_string(pid) + "-"), std::string::npos) << cgroups;

  // What the killed run left.
  for (const char* d : {"/tmp", "/dev/shm", "/var/tmp"}) {
    EXPECT_EQ(TokenFilesIn(d, token), std::vector<std::string>{std::string(d) + "/.sandprobe-persist-" + token});
  }
  EXPECT_TRUE(WaitFor([&] { return Carriers(token).empty(); }, seconds(3)))
      << "the token carrier outlived the killed runner";
  EXPECT_FALSE(Carriers(marker).empty()) << "its child (no token) should outlive it";
  bool real_cgroups = access("/sys/fs/cgroup/pids/sandprobe", W_OK) == 0;
  if (real_cgroups) {
    EXPECT_FALSE(LaunchCgroupsOf(cgroups).empty()) << "the orphan keeps its launch cgroup";
  }

  CliRun sweep = RunCliUnder(runs, {"sweep", "--run-id", run_id});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  EXPECT_NE(sweep.out.find("removed planted file /tmp/.sandprobe-persist-" + token), std::string::npos) << sweep.out;
  if (real_cgroups) {
    EXPECT_NE(sweep.out.find("removed pids cgroup " + cgroups), std::string::npos) << sweep.out;
  }
  EXPECT_NE(sweep.out.find("removed run dir " + run_dir), std::string::npos) << sweep.out;
  EXPECT_EQ(Carriers(token), std::vector<int>{});
  EXPECT_EQ(Carriers(marker), std::vector<int>{}) << "the orphan in the pids cgroup outlived the sweep";
  for (const std::string& d : expected_dirs) EXPECT_EQ(TokenFilesIn(d, token), std::vector<std::string>{}) << d;
  EXPECT_EQ(LaunchCgroupsOf(cgroups), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(run_dir));
  fs::remove_all(dir);
  fs::remove_all(runs);
}

// A probe that never ends is killed at the launch timeout: every check is an error (exit 3),
// never a pass, and the run takes the timeout, not the hang.
TEST(SweepTest, AHangingDirectLaunchIsKilledAtItsTimeoutAndReportedAsError) {
  std::string dir = MakeTempDir("sweep");
  std::string token = UniqueToken("sp-hang-");
  std::string profile = HostProfile(
      dir, {"sh", "-c", "sleep 1000; exec \"$0\" \"$@\" # " + token, "{probe}", "{probe_args...}"}, 2);
  auto start = std::chrono::steady_clock::now();
  CliRun run = RunAbsoluteProfile(profile, dir);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_LT(took, seconds(30));
  ASSERT_TRUE(run.report.contains("checks")) << run.err;
  ASSERT_FALSE(run.report["checks"].empty());
  for (const json& check : run.report["checks"]) {
    EXPECT_EQ(check.value("verdict", ""), "error") << check.value("id", "") << ": " << check.value("observed", "");
  }
  bool timed_out = false;
  for (const json& launch : run.report["launches"]) {
    if (launch.value("purpose", "") == "probe") timed_out = launch.value("timed_out", false);
  }
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(Carriers(token), std::vector<int>{});
  fs::remove_all(dir);
}

// The sandbox leaves a daemon behind: out of the process group and the session (setsid),
// ignoring SIGTERM. The runner, a child subreaper, gets it as an orphan when its parent exits,
// kills it with its child when the launch ends and records both in the report.
TEST(SweepTest, ADaemonLeftByTheSandboxDoesNotOutliveTheRun) {
  std::string dir = MakeTempDir("sweep");
  std::string token = UniqueToken("sp-daemon-");
  std::string profile = HostProfile(
      dir,
      {"sh", "-c", "(trap '' TERM; setsid sh -c 'sleep 600; :' " + token + " &); sleep 0.3; exec \"$0\" \"$@\"",
       "{probe}", "{probe_args...}"},
      60);
  CliRun run = RunAbsoluteProfile(profile, dir);
  ASSERT_TRUE(run.report.contains("launches")) << run.err;
  EXPECT_EQ(Carriers(token), std::vector<int>{}) << "the daemon outlived the run";
  json leftovers;
  for (const json& launch : run.report["launches"]) {
    if (launch.value("purpose", "") == "probe") leftovers = launch.value("leftover_processes", json::array());
  }
  // The daemon, then its child (orphaned when the daemon died: "sleep 600", or still the
  // daemon's argv if it was caught between fork and exec). Both dead now.
  ASSERT_GE(leftovers.size(), 2u) << leftovers.dump();
  EXPECT_NE(leftovers[0].value("argv", "").find(token), std::string::npos) << leftovers.dump();
  for (const json& leftover : leftovers) {
    int pid = leftover.value("pid", 0);
    std::optional<ProcStat> stat = ReadProcStat(pid);
    bool same_process_alive = stat && !stat->dead() &&
                              CmdlineForDisplay(ReadProcFile(pid, "cmdline"), 4096) == leftover.value("argv", "");
    EXPECT_FALSE(same_process_alive) << "leftover " << pid << " still runs";
  }
  fs::remove_all(dir);
}

// `sandprobe run` sweeps dead runs before its own work, and says so on stderr.
TEST(SweepTest, RunSweepsDeadRunsFirst) {
  std::string run_id = UniqueToken("").substr(0, 12);
  const std::string runs = PrivateRunRoot();
  std::string root = runs + "/sandprobe-" + run_id;
  fs::create_directories(root + "/workspace");
  pid_t gone = fork();  // a pid that no longer runs: the dead owner
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  char ns[128] = {};
  ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  std::ofstream(root + "/owner.json")
      << json({{"pid", gone}, {"start_time_ticks", 1},
               {"pid_namespace", std::string(ns, n > 0 ? static_cast<std::size_t>(n) : 0)},
               {"profile_path", SourcePath("sandboxes/host.json")}, {"sweep", json::array()},
               {"process_tokens", {"sandprobe-" + run_id}}}).dump();
  // A selection that matches no check (exit 2) is found only once the run planned, after the
  // sweep. (Input that does not load is refused before anything runs, sweep included.)
  CliRun run = RunCliUnder(runs, {"run", "--sandbox", SourcePath("sandboxes/host.json"), "--check", "no-such-check"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("swept a dead run " + run_id), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("removed run dir " + root), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(root));
  fs::remove_all(root);
  fs::remove_all(runs);
}

}  // namespace
}  // namespace sandprobe::testing
