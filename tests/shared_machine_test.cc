// Safe as root on a shared machine (issue 25, item 4): what another local user can do to a root
// harness through the files it shares with them. Each test plays that other user with a real
// second uid (65534, through setpriv) and the real CLI; the sweeps run under a run root of the
// test's own (SANDPROBE_RUN_ROOT), so no concurrent run sweeps its evidence first.
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "launch/proc_info.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::seconds;

constexpr int kOtherUid = 65534;  // nobody: the other local user

// argv prefix that runs the rest as the other user, with no groups and no capabilities.
std::vector<std::string> AsOtherUser(std::vector<std::string> argv) {
  std::vector<std::string> full = {"setpriv", "--reuid", std::to_string(kOtherUid), "--regid",
                                   std::to_string(kOtherUid), "--clear-groups"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

// A run root of the test's own, readable by everyone (as /var/tmp is).
std::string PrivateRunRoot() {
  std::string root = MakeTempDir("runroot", "/var/tmp");
  ::chmod(root.c_str(), 0755);
  return root;
}

// A directory the other user owns (their home, say), mode 0755.
std::string OtherUsersDir(const std::string& name) {
  std::string dir = MakeTempDir(name);
  EXPECT_EQ(::chown(dir.c_str(), kOtherUid, kOtherUid), 0);
  ::chmod(dir.c_str(), 0755);
  return dir;
}

CliRun RunCliUnder(const std::string& root, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "SANDPROBE_RUN_ROOT=" + root, SANDPROBE_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The host profile `name` in `dir`: each probe launch runs `run` (argv), a sweep spec whose
// list prints nothing; `extra` adds or replaces fields.
std::string WriteHostProfile(const std::string& dir, const json& run, const json& extra = json::object()) {
  json profile = {{"name", "shared-machine"}, {"description", "host profile for shared-machine tests"},
                  {"backend", "host"}, {"lifecycle", "oneshot"}, {"injection", "host-path"},
                  {"probe_path", "{probe_dir}/sandprobe-probe"}, {"workspace_path", "{workspace}"},
                  {"run", run},
                  {"sweep", {{"list", {"true"}}, {"remove", {"true", "{id}"}}}},
                  {"timeout_seconds", 900}};
  profile.update(extra);
  return WriteFile(dir, "profile.json", profile.dump(2));
}

// The sandprobe process whose command line names `unique` (a path only this test uses).
int RunnerPid(const std::string& unique) {
  for (int pid : Carriers(unique)) {
    if (ReadProcFile(pid, "cmdline").rfind(SANDPROBE_CLI, 0) == 0) return pid;
  }
  return 0;
}

// The run dir under `root` (the only one there), or "".
std::string OnlyRunDir(const std::string& root) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (entry.path().filename().string().rfind("sandprobe-", 0) == 0) return entry.path().string();
  }
  return "";
}

// A direct child of `parent` whose command line holds `text` (the launcher runs argv[0] by its
// absolute path: /usr/bin/sh).
bool HasChild(int parent, const std::string& text) {
  for (int pid : ListPids()) {
    std::optional<ProcStat> stat = ReadProcStat(pid);
    if (stat && stat->ppid == parent && ReadProcFile(pid, "cmdline").find(text) != std::string::npos) return true;
  }
  return false;
}

// A run of `profile` under `runs` whose probe launch is `exec sleep 600`, killed with SIGKILL
// once that launch runs. Returns the run dir it left.
std::string KilledRun(const std::string& runs, const std::string& profile, const std::string& scratch) {
  std::string report = scratch + "/killed.json";
  CliRun killed;
  std::thread runner([&] {
    killed = RunCliUnder(runs, {"run", "--no-color", "--sandbox", profile, "--policy",
                                SourcePath("policies/tier-low.json"), "--check",
                                "fs.write.allowed:workspace", "--json", report});
  });
  int pid = 0;
  bool up = WaitFor([&] {
    if (pid == 0) pid = RunnerPid(report);
    return pid != 0 && HasChild(pid, "sleep");
  }, seconds(60));
  if (pid > 0) ::kill(pid, SIGKILL);
  runner.join();
  EXPECT_TRUE(up) << "the probe launch never started; " << killed.err;
  EXPECT_EQ(killed.exit_code, -1) << "the runner was not killed by the signal";
  return OnlyRunDir(runs);
}

bool Root() { return ::geteuid() == 0; }

// A run dies; the other user, who owns the profile it ran, rewrites its sweep to run `id`.
// Root's sweep removes the dead run from what the run recorded when it started, and runs
// nothing from the rewritten file (the marker the rewritten sweep would write never appears).
TEST(SharedMachineTest, RootsSweepRunsNothingFromAProfileAnotherUserRewrote) {
  if (!Root()) GTEST_SKIP() << "needs root: the test plays root's sweep against another uid";
  std::string theirs = OtherUsersDir("theirs");
  std::string profile = WriteHostProfile(theirs, {"sh", "-c", "exec sleep 600", "{probe}", "{probe_args...}"});
  ASSERT_EQ(::chown(profile.c_str(), kOtherUid, kOtherUid), 0);
  std::string runs = PrivateRunRoot();
  std::string run_dir = KilledRun(runs, profile, MakeTempDir("killed"));
  ASSERT_FALSE(run_dir.empty());
  std::string run_id = fs::path(run_dir).filename().string().substr(std::string("sandprobe-").size());

  std::string marker = theirs + "/marker";
  json rewritten = json::parse(ReadAll(profile));
  rewritten["sweep"]["list"] = {"sh", "-c", "id > " + marker};
  CliRun rewrite = RunCommand(AsOtherUser({"sh", "-c", "printf '%s' \"$1\" > \"$2\"", "sh", rewritten.dump(), profile}));
  ASSERT_EQ(rewrite.exit_code, 0) << rewrite.err;
  ASSERT_NE(ReadAll(profile).find(marker), std::string::npos) << "the other user could not rewrite it";

  CliRun sweep = RunCliUnder(runs, {"sweep", "--run-id", run_id});
  EXPECT_FALSE(fs::exists(marker)) << "root ran the rewritten sweep: " << ReadAll(marker);
  EXPECT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  EXPECT_NE(sweep.out.find("removed run dir " + run_dir), std::string::npos) << sweep.out;
  EXPECT_FALSE(fs::exists(run_dir));
}

// A dead run whose profile file is gone is swept from what the run recorded: its container
// (a real one, labelled with the run id) and its run dir; a second sweep finds nothing.
TEST(SharedMachineTest, ADeadRunWhoseProfileIsGoneIsSweptFromTheRecord) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  std::string dir = MakeTempDir("gone");
  json profile = json::parse(ReadAll(SourcePath("tests/data/docker-slow.json")), nullptr, true, true);
  profile.erase("policy");
  std::string copy = WriteFile(dir, "docker-slow.json", profile.dump(2));
  std::string runs = PrivateRunRoot();
  std::string report = dir + "/r.json";
  CliRun killed;
  std::thread runner([&] {
    killed = RunCliUnder(runs, {"run", "--no-color", "--sandbox", copy, "--policy", SourcePath("policies/tier-low.json"),
                                "--check", "fs.write.allowed:workspace", "--json", report});
  });
  int pid = 0;
  std::string run_id;
  bool up = WaitFor([&] {
    if (pid == 0) pid = RunnerPid(report);
    std::string run_dir = OnlyRunDir(runs);
    if (run_dir.empty()) return false;
    run_id = fs::path(run_dir).filename().string().substr(std::string("sandprobe-").size());
    return !RunCommand({"docker", "ps", "-aq", "--filter", "label=sandprobe.run=" + run_id}).out.empty();
  }, seconds(60));
  if (pid > 0) ::kill(pid, SIGKILL);
  runner.join();
  ASSERT_TRUE(up) << "no container of the run appeared; " << killed.err;
  fs::remove(copy);

  CliRun sweep = RunCliUnder(runs, {"sweep", "--run-id", run_id});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  EXPECT_NE(sweep.out.find("removed sandbox "), std::string::npos) << sweep.out;
  EXPECT_EQ(RunCommand({"docker", "ps", "-aq", "--filter", "label=sandprobe.run=" + run_id}).out, "");
  EXPECT_EQ(OnlyRunDir(runs), "");
  CliRun again = RunCliUnder(runs, {"sweep"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("no dead runs"), std::string::npos) << again.out;
}

// While a run runs, its workspace (and run dir) cannot be written by another uid: a file the
// other user plants there could be taken for the probe's. The sandbox's own uid still writes
// it: root's docker-hardened (uid 1000 inside and out) and bwrap-strict (host uid 65534)
// pass their workspace write.
TEST(SharedMachineTest, TheWorkspaceIsWritableOnlyByTheSandboxsUid) {
  if (!Root()) GTEST_SKIP() << "needs root: the test plays another uid";
  std::string dir = MakeTempDir("ws");
  std::string profile = WriteHostProfile(dir, {"sh", "-c", "sleep 2; exec \"$0\" \"$@\"", "{probe}", "{probe_args...}"});
  std::string runs = PrivateRunRoot();
  std::string report = dir + "/r.json";
  CliRun run;
  std::thread runner([&] {
    run = RunCliUnder(runs, {"run", "--no-color", "--sandbox", profile, "--policy", SourcePath("policies/tier-low.json"),
                             "--check", "fs.write.allowed:workspace", "--json", report});
  });
  std::string workspace;
  bool up = WaitFor([&] {
    std::string run_dir = OnlyRunDir(runs);
    if (!run_dir.empty() && fs::exists(run_dir + "/workspace")) workspace = run_dir + "/workspace";
    return !workspace.empty();
  }, seconds(30));
  CliRun plant;
  struct stat ws {}, rd {};
  if (up) {
    plant = RunCommand(AsOtherUser({"sh", "-c", "echo planted > \"$1\"/planted", "sh", workspace}));
    ::stat(workspace.c_str(), &ws);
    ::stat(fs::path(workspace).parent_path().c_str(), &rd);
  }
  runner.join();
  ASSERT_TRUE(up) << run.err;
  EXPECT_NE(plant.exit_code, 0) << "uid " << kOtherUid << " wrote into the workspace";
  for (const auto& [name, st] : {std::pair{"workspace", ws}, std::pair{"run dir", rd}}) {
    bool world_writable = (st.st_mode & S_IWOTH) != 0, sticky = (st.st_mode & S_ISVTX) != 0;
    EXPECT_FALSE(world_writable && !sticky) << name << " mode " << std::oct << (st.st_mode & 07777);
    EXPECT_FALSE(st.st_mode & S_IWGRP) << name << " mode " << std::oct << (st.st_mode & 07777);
  }
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;

  if (BackendAvailable("docker", kDockerUp)) {
    CliRun hardened = RunProfile("sandboxes/docker-hardened.json", {"--check", "fs.write.allowed:workspace"});
    ExpectVerdict(hardened.report, "fs.write.allowed:workspace", "pass");
  }
  if (BackendAvailable("bwrap", kBwrapUp)) {
    CliRun strict = RunProfile("sandboxes/bwrap-strict.json", {"--check", "fs.write.allowed:workspace"});
    ExpectVerdict(strict.report, "fs.write.allowed:workspace", "pass");
  }
}

// `sandprobe run ... --json FILE`, with `umask` set first (as a login shell would).
CliRun RunWithUmask(const std::string& umask, const std::string& json_path) {
  return RunCommand({"sh", "-c", "umask " + umask + "; exec \"$@\"", "sh", SANDPROBE_CLI, "run", "--no-color",
                     "--sandbox", SourcePath("sandboxes/host.json"), "--check", "fs.write.allowed:workspace",
                     "--json", json_path});
}

// Reports honour the umask (077: 0600); one written over an existing report keeps that file's
// owner and mode; as root, a report file another user owns is refused (exit 2) and left as
// it was.
TEST(SharedMachineTest, ReportsHonourTheUmaskKeepOwnerAndModeAndRefuseAnotherUsersFile) {
  std::string dir = MakeTempDir("umask");
  ::chmod(dir.c_str(), 0755);
  CliRun fresh = RunWithUmask("077", dir + "/new.json");
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/new.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  std::string existing = WriteFile(dir, "existing.json", "{}");
  ::chmod(existing.c_str(), 0640);
  CliRun over = RunWithUmask("022", existing);
  EXPECT_EQ(over.exit_code, 0) << over.err;
  ASSERT_EQ(::stat(existing.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_NE(ReadAll(existing).find("\"checks\""), std::string::npos);

  if (!Root()) GTEST_SKIP() << "the refusal of another user's file needs root to make one";
  std::string theirs_dir = OtherUsersDir("theirs");
  std::string theirs = theirs_dir + "/theirs.json";
  CliRun made = RunCommand(AsOtherUser({"sh", "-c", "umask 022; echo old > \"$1\"", "sh", theirs}));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  struct stat before {};
  ASSERT_EQ(::stat(theirs.c_str(), &before), 0);
  CliRun refused = RunWithUmask("022", theirs);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("uid " + std::to_string(kOtherUid)), std::string::npos) << refused.err;
  struct stat after {};
  ASSERT_EQ(::stat(theirs.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_uid, static_cast<uid_t>(kOtherUid));
  EXPECT_TRUE(ReadAll(theirs) == "old\n") << "their file was replaced";
}

// The temp files in `dir` (names beginning with a dot).
std::vector<std::string> HiddenFiles(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string()[0] == '.') found.push_back(entry.path().filename().string());
  }
  return found;
}

// kill -9 while the JSON report is written (strace holds the runner 2 s in every rename, so
// also in the one that would publish the report): the partial temp file stays behind. `sandprobe sweep` removes it (it is ours:
// our uid, our name pattern, a dead writer), and a later run writing the same report path
// removes such a file too.
TEST(SharedMachineTest, APartialReportLeftByAKilledRunIsRemovedBySweepAndByTheNextRun) {
  if (!BackendAvailable("strace", {"strace", "-V"})) return;
  std::string runs = PrivateRunRoot();
  std::string dir = MakeTempDir("partial");
  std::string report = dir + "/r.json";
  auto killed_mid_write = [&] {
    CliRun traced;
    std::thread runner([&] {
      traced = RunCommand({"/usr/bin/env", "SANDPROBE_RUN_ROOT=" + runs, "strace", "-f", "-qq", "-o", "/dev/null",
                           "-e", "trace=rename,renameat,renameat2", "-e",
                           "inject=rename,renameat,renameat2:delay_enter=2000000", SANDPROBE_CLI, "run",
                           "--no-color", "--sandbox", SourcePath("sandboxes/host.json"), "--check",
                           "fs.write.allowed:workspace", "--json", report});
    });
    bool in_rename = WaitFor([&] { return !HiddenFiles(dir).empty(); }, seconds(120));
    int pid = RunnerPid(report);
    if (pid > 0) ::kill(pid, SIGKILL);
    runner.join();
    EXPECT_TRUE(in_rename) << "no temp file appeared; " << traced.err;
    EXPECT_GT(pid, 0);
  };
  killed_mid_write();
  std::vector<std::string> left = HiddenFiles(dir);
  ASSERT_EQ(left.size(), 1u) << "the killed write should leave its temp file";
  EXPECT_FALSE(fs::exists(report));

  CliRun sweep = RunCliUnder(runs, {"sweep"});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  EXPECT_NE(sweep.out.find(left[0]), std::string::npos) << sweep.out;
  EXPECT_EQ(HiddenFiles(dir), std::vector<std::string>{});

  killed_mid_write();
  ASSERT_EQ(HiddenFiles(dir).size(), 1u);
  CliRun next = RunCliUnder(runs, {"run", "--no-color", "--sandbox", SourcePath("sandboxes/host.json"), "--check",
                                   "fs.write.allowed:workspace", "--json", report});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(HiddenFiles(dir), std::vector<std::string>{});
  EXPECT_TRUE(fs::exists(report));
}

// The run root is a 256 KiB tmpfs that the test fills once the run dir is made and the probe
// launch waits: the probe's write into the workspace fails with ENOSPC. That is the harness's
// disk, not the sandbox's policy: the check is an error (exit 3), never "fail too-restrictive".
TEST(SharedMachineTest, AFullRunRootIsAHarnessErrorNotTheSandboxsFail) {
  if (!Root()) GTEST_SKIP() << "needs root to mount a small tmpfs as the run root";
  std::string runs = PrivateRunRoot();
  ASSERT_EQ(::mount("sp-full", runs.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=256k,mode=0755"), 0)
      << std::strerror(errno);
  std::string dir = MakeTempDir("full");
  std::string go = dir + "/go";
  std::string profile = WriteHostProfile(
      dir, {"sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.05; done; exec \"$0\" \"$@\"", "{probe}", "{probe_args...}"},
      {{"timeout_seconds", 60}});
  std::string report = dir + "/r.json";
  CliRun run;
  std::thread runner([&] {
    run = RunCliUnder(runs, {"run", "--no-color", "--sandbox", profile, "--policy", SourcePath("policies/tier-low.json"),
                             "--check", "fs.write.allowed:workspace", "--json", report});
  });
  int pid = 0;
  bool waiting = WaitFor([&] {
    if (pid == 0) pid = RunnerPid(report);
    return pid != 0 && HasChild(pid, go);
  }, seconds(30));
  // Fill it: root may use every block of a tmpfs.
  {
    std::ofstream filler(runs + "/filler");
    std::string block(4096, 'x');
    while (filler.write(block.data(), block.size()) && filler.flush()) {}
  }
  WriteFile(dir, "go", "");
  runner.join();
  fs::remove(runs + "/filler");
  ::umount(runs.c_str());
  ASSERT_TRUE(waiting) << run.err;
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  ASSERT_TRUE(fs::exists(report)) << run.err;
  json parsed = json::parse(ReadAll(report), nullptr, false);
  EXPECT_EQ(CheckField(parsed, "fs.write.allowed:workspace", "verdict"), "error")
      << CheckField(parsed, "fs.write.allowed:workspace", "observed");
  EXPECT_NE(CheckField(parsed, "fs.write.allowed:workspace", "observed").find("full"), std::string::npos)
      << CheckField(parsed, "fs.write.allowed:workspace", "observed");
}

}  // namespace
}  // namespace sandprobe::testing
