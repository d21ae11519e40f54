#include "launch/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "launch/launch_executable.h"
#include "launch/launch_pids_cgroup.h"
#include "launch/proc_info.h"

namespace sandprobe {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

LaunchSpec Child(std::vector<std::string> args) {
  LaunchSpec spec;
  spec.argv = {LAUNCHER_TEST_CHILD};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout = milliseconds(20000);
  return spec;
}

LaunchSpec Command(std::vector<std::string> argv) {
  LaunchSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

LaunchResult MustLaunch(const LaunchSpec& spec) {
  ProcessLauncher launcher;
  StatusOr<LaunchResult> r = launcher.Launch(spec);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : LaunchResult{};
}

// True once `pid` no longer runs: gone (ESRCH) or a zombie waiting for its new parent.
// Retries briefly, since SIGKILL delivery to a reparented grandchild is asynchronous.
bool ProcessIsGone(int pid) {
  for (int i = 0; i < 100; ++i) {
    if (kill(pid, 0) == -1 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() &&
        (text[paren + 2] == 'Z' || text[paren + 2] == 'X'))
      return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return false;
}

// The test process must not be left with zombies (or anything else) from a launch.
bool NoChildrenLeft() { return waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

int ReadPidFile(const std::string& path) {
  std::ifstream in(path);
  int pid = 0;
  in >> pid;
  return pid;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "launcher_test_" + std::to_string(getpid()) + "_" + name;
}

TEST(Launcher, ExitZero) {
  LaunchResult r = MustLaunch(Child({"exit", "0"}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.leftovers_killed.empty());
  EXPECT_FALSE(r.signal);
  EXPECT_FALSE(r.timed_out);
  EXPECT_GT(r.pid, 0);
  EXPECT_EQ(DescribeExit(r), "exit 0");
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(Launcher, ExitCodeIsKept) {
  LaunchResult r = MustLaunch(Child({"exit", "3"}));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.signal);
  EXPECT_EQ(DescribeExit(r), "exit 3");
}

TEST(Launcher, SignalIsToldApartFromExit) {
  LaunchResult segv = MustLaunch(Child({"raise", std::to_string(SIGSEGV)}));
  EXPECT_FALSE(segv.exit_code);
  EXPECT_EQ(segv.signal, SIGSEGV);
  EXPECT_EQ(DescribeExit(segv), "signal 11 (SIGSEGV)");
  LaunchResult abrt = MustLaunch(Child({"raise", std::to_string(SIGABRT)}));
  EXPECT_FALSE(abrt.exit_code);
  EXPECT_EQ(abrt.signal, SIGABRT);
}

TEST(Launcher, ChildLeadsItsOwnProcessGroup) {
  LaunchResult r = MustLaunch(Child({"pgid"}));
  std::istringstream in(r.out);
  int pid = 0, pgid = 0;
  in >> pid >> pgid;
  EXPECT_EQ(pid, r.pid);
  EXPECT_EQ(pgid, r.pid);
  EXPECT_NE(pgid, getpgid(0));
}

TEST(Launcher, OnlyStandardFdsReachTheChild) {
  // Deliberately inheritable: a file, both ends of a pipe, a socket.
  int file = open("/proc/self/status", O_RDONLY);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(file, 0);
  ASSERT_GE(sock, 0);
  LaunchResult r = MustLaunch(Child({"fds"}));
  EXPECT_EQ(r.out, "0 1 2");
  EXPECT_EQ(r.exit_code, 0);
  close(file);
  close(fds[0]);
  close(fds[1]);
  close(sock);
}

TEST(Launcher, MissingCommandIsAnErrorNamingIt) {
  ProcessLauncher launcher;
  auto r = launcher.Launch(Command({"sandprobe-no-such-cmd", "x"}));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("execve(sandprobe-no-such-cmd): ENOENT"));
}

// These fail inside execve, so they also prove Boost's exec-error pipe survives the fd sweep
// and that the failed child is reaped.
TEST(Launcher, ExecFailureIsAnErrorAndLeavesNoZombie) {
  ProcessLauncher launcher;
  auto missing = launcher.Launch(Command({"/nonexistent/cmd"}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "execve(/nonexistent/cmd): ENOENT");
  std::string plain_file = TempPath("not-executable");
  std::ofstream(plain_file) << "data\n";
  ASSERT_EQ(chmod(plain_file.c_str(), 0644), 0);
  auto not_executable = launcher.Launch(Command({plain_file}));
  ASSERT_FALSE(not_executable.ok());
  EXPECT_EQ(not_executable.status().message(), "execve(" + plain_file + "): EACCES");
  unlink(plain_file.c_str());
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(Launcher, BadWorkingDirIsAnErrorNamingIt) {
  LaunchSpec spec = Child({"exit", "0"});
  spec.working_dir = "/nonexistent-dir";
  ProcessLauncher launcher;
  auto r = launcher.Launch(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("chdir(/nonexistent-dir)"));
  EXPECT_THAT(r.status().message(), HasSubstr("ENOENT"));
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(Launcher, WorkingDirIsUsed) {
  LaunchSpec spec = Command({"pwd"});
  spec.working_dir = "/usr/lib";
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.out, "/usr/lib\n");
}

TEST(Launcher, TimeoutTermsTheChild) {
  LaunchSpec spec = Child({"sleep"});
  spec.timeout = milliseconds(300);
  LaunchResult r = MustLaunch(spec);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_FALSE(r.exit_code);
  EXPECT_GE(r.wall, milliseconds(300));
  EXPECT_EQ(DescribeExit(r), "timed out after 300 ms (then signal 15 (SIGTERM))");
}

TEST(Launcher, TimeoutReachesAChildThatLeftItsGroup) {
  LaunchSpec spec = Child({"leave-group-sleep"});
  spec.timeout = milliseconds(300);
  LaunchResult r = MustLaunch(spec);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
}

TEST(Launcher, TimeoutKillsAChildThatIgnoresTerm) {
  LaunchSpec spec = Child({"ignore-term-sleep"});
  spec.timeout = milliseconds(200);
  spec.grace = milliseconds(300);
  LaunchResult r = MustLaunch(spec);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_GE(r.wall, milliseconds(500));
  EXPECT_LT(r.wall, milliseconds(5000));
}

TEST(Launcher, TimeoutKillsTheWholeTree) {
  std::string pidfile = TempPath("tree.pid");
  LaunchSpec spec = Child({"spawn-grandchild", pidfile, "sleep"});
  spec.timeout = milliseconds(500);
  spec.grace = milliseconds(300);
  LaunchResult r = MustLaunch(spec);
  EXPECT_TRUE(r.timed_out);
  int grandchild = ReadPidFile(pidfile);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(ProcessIsGone(grandchild));
  EXPECT_LT(r.wall, milliseconds(5000));
  // It ignored the TERM and outlived the child: a leftover the launcher killed.
  ASSERT_EQ(r.leftovers_killed.size(), 1u);
  EXPECT_EQ(r.leftovers_killed[0].pid, grandchild);
  unlink(pidfile.c_str());
}

// The grandchild keeps stdout open: without the straggler kill the reader would wait for the
// 20 s timeout (and the grandchild would live on).
TEST(Launcher, StragglersDieWhenTheChildExits) {
  std::string pidfile = TempPath("straggler.pid");
  LaunchResult r = MustLaunch(Child({"spawn-grandchild", pidfile, "exit"}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(r.wall, milliseconds(5000));
  int grandchild = ReadPidFile(pidfile);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(ProcessIsGone(grandchild));
  ASSERT_EQ(r.leftovers_killed.size(), 1u);
  EXPECT_EQ(r.leftovers_killed[0].pid, grandchild);
  EXPECT_THAT(r.leftovers_killed[0].argv, HasSubstr("spawn-grandchild " + pidfile + " exit"));
  unlink(pidfile.c_str());
}

// True when /proc has no entry for `pid` at all: not even a zombie (it was reaped).
bool ProcessIsReaped(int pid) {
  return access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0;
}

// The daemon left the process group and the session and ignores SIGTERM: killpg cannot reach
// it. As a child subreaper the launcher gets it as an orphan, records it, kills and reaps it,
// and does so before draining the pipes the daemon still holds (grace is 5 s).
TEST(Launcher, DaemonThatLeftTheGroupIsKilledRecordedAndReaped) {
  ASSERT_TRUE(BecomeChildSubreaper().ok());
  std::string pidfile = TempPath("daemon.pid");
  LaunchSpec spec = Child({"daemonize", pidfile, "exit"});
  spec.grace = milliseconds(5000);
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.exit_code, 0);
  int daemon = ReadPidFile(pidfile);
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(ProcessIsReaped(daemon));
  ASSERT_EQ(r.leftovers_killed.size(), 1u);
  EXPECT_EQ(r.leftovers_killed[0].pid, daemon);
  EXPECT_EQ(r.leftovers_killed[0].argv,
            std::string(LAUNCHER_TEST_CHILD) + " daemonize " + pidfile + " exit");
  EXPECT_LT(r.wall, milliseconds(4000));
  EXPECT_TRUE(NoChildrenLeft());
  unlink(pidfile.c_str());
}

// Launch A starts first but daemonizes only after launch B has started; B ends first. By
// start time alone B would take A's daemon: the launch marker in its environment says it is
// A's, so each launch kills and reports exactly its own.
TEST(Launcher, ConcurrentLaunchesKeepTheirOwnOrphans) {
  ASSERT_TRUE(BecomeChildSubreaper().ok());
  std::string pidfile_a = TempPath("a.pid"), pidfile_b = TempPath("b.pid");
  std::atomic<bool> cancel_a{false};
  LaunchSpec a = Child({"daemonize", pidfile_a, "stay", "800"});
  a.cancel = &cancel_a;
  LaunchResult result_a;
  std::thread thread_a([&] { result_a = MustLaunch(a); });
  std::this_thread::sleep_for(milliseconds(200));
  LaunchSpec b = Child({"daemonize", pidfile_b, "stay"});
  b.timeout = milliseconds(1500);
  b.grace = milliseconds(300);
  LaunchResult result_b = MustLaunch(b);
  int daemon_a = ReadPidFile(pidfile_a);
  EXPECT_GT(daemon_a, 0) << "A's daemon was not up before B ended";
  std::optional<ProcStat> a_alive = ReadProcStat(daemon_a);
  EXPECT_TRUE(a_alive && !a_alive->dead()) << "B's launch killed A's daemon";
  cancel_a = true;
  thread_a.join();
  int daemon_b = ReadPidFile(pidfile_b);
  ASSERT_GT(daemon_b, 0);
  ASSERT_EQ(result_b.leftovers_killed.size(), 1u);
  EXPECT_EQ(result_b.leftovers_killed[0].pid, daemon_b);
  ASSERT_EQ(result_a.leftovers_killed.size(), 1u);
  EXPECT_EQ(result_a.leftovers_killed[0].pid, daemon_a);
  EXPECT_TRUE(ProcessIsReaped(daemon_a));
  EXPECT_TRUE(ProcessIsReaped(daemon_b));
  EXPECT_TRUE(NoChildrenLeft());
  unlink(pidfile_a.c_str());
  unlink(pidfile_b.c_str());
}

// As a child subreaper the launcher lists group stragglers by walking its own process tree,
// not all of /proc. Here the straggler is two deep: the shell's subshell (reparented to us
// when the shell exits) and its sleep (still the subshell's child); both must be listed.
TEST(Launcher, SubreaperListsStragglersAtEveryDepth) {
  ASSERT_TRUE(BecomeChildSubreaper().ok());
  std::string pidfile = TempPath("deep-straggler.pid");
  const std::string script = "( sleep 600 & echo $! > " + pidfile +
                             "; wait ) & while [ ! -s " + pidfile + " ]; do sleep 0.01; done";
  LaunchSpec spec = Command({"/bin/sh", "-c", script});
  spec.timeout = milliseconds(20000);
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LT(r.wall, milliseconds(5000));
  int sleeper = ReadPidFile(pidfile);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(ProcessIsGone(sleeper));
  ASSERT_EQ(r.leftovers_killed.size(), 2u);
  std::vector<std::string> argvs;
  bool sleeper_listed = false;
  for (const LeftoverProcess& p : r.leftovers_killed) {
    argvs.push_back(p.argv);
    if (p.pid == sleeper) sleeper_listed = true;
  }
  EXPECT_TRUE(sleeper_listed);
  EXPECT_THAT(argvs, ::testing::UnorderedElementsAre("sleep 600", "/bin/sh -c " + script));
  EXPECT_TRUE(NoChildrenLeft());
  unlink(pidfile.c_str());
}

TEST(Launcher, ChildHasSigkillAsParentDeathSignal) {
  LaunchResult r = MustLaunch(Child({"pdeathsig"}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::to_string(SIGKILL));
}

// A launcher killed mid-launch (here: a forked copy of this test that exits while its launch
// thread waits) takes its child with it.
TEST(Launcher, ChildDiesWithTheLauncherProcess) {
  std::string pidfile = TempPath("orphaned-child.pid");
  pid_t launcher_process = fork();
  ASSERT_GE(launcher_process, 0);
  if (launcher_process == 0) {
    std::thread([pidfile] {
      ProcessLauncher launcher;
      (void)launcher.Launch(Child({"pidfile", pidfile}));
    }).detach();
    for (int i = 0; i < 500 && ReadPidFile(pidfile) <= 0; ++i) usleep(10000);
    _exit(ReadPidFile(pidfile) > 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(launcher_process, &status, 0), launcher_process);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child never started";
  int child = ReadPidFile(pidfile);
  EXPECT_TRUE(ProcessIsGone(child));
  waitpid(child, nullptr, WNOHANG);  // ours to reap when this process is a subreaper
  unlink(pidfile.c_str());
}

TEST(Launcher, BothStreamsAreDrainedAndCapped) {
  const std::size_t ten_mib = 10 << 20;
  LaunchResult r = MustLaunch(Child({"flood", std::to_string(ten_mib)}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), std::size_t{1} << 20);
  EXPECT_EQ(r.out_dropped, ten_mib - (1 << 20));
  EXPECT_EQ(r.out.find_first_not_of('x'), std::string::npos);
  EXPECT_EQ(r.err.size(), 100005u);
  EXPECT_EQ(r.err_dropped, 0u);
  EXPECT_THAT(r.err, ::testing::EndsWith("done\n"));
}

TEST(Launcher, SmallCapKeepsTheHead) {
  LaunchSpec spec = Child({"flood", "5000"});
  spec.output_cap = 1000;
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.out, std::string(1000, 'x'));
  EXPECT_EQ(r.out_dropped, 4000u);
  EXPECT_EQ(r.err, std::string(1000, 'e'));
  EXPECT_EQ(r.err_dropped, 100005u - 1000u);
}

TEST(Launcher, StdinDataIsDelivered) {
  LaunchSpec spec = Child({"cat"});
  for (int i = 0; i < 30000; ++i) spec.stdin_data += "line " + std::to_string(i) + "\n";
  ASSERT_GT(spec.stdin_data.size(), 65536u);  // more than a pipe buffer
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.out, spec.stdin_data);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(Launcher, EmptyStdinDataMeansDevNull) {
  // Without /dev/null, cat would read the test's own stdin and hang until the timeout.
  LaunchSpec spec = Child({"cat"});
  spec.timeout = milliseconds(5000);
  LaunchResult r = MustLaunch(spec);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
}

// The child never reads its stdin: writing the rest raises SIGPIPE, which must not kill us.
TEST(Launcher, UnreadStdinDoesNotKillTheHarness) {
  LaunchSpec spec = Child({"exit", "0"});
  spec.stdin_data.assign(4 << 20, 'i');
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.exit_code, 0);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
}

TEST(Launcher, ExtraEnvIsVisibleAndOverrides) {
  setenv("SANDPROBE_LAUNCHER_TEST_OLD", "inherited", 1);
  LaunchSpec spec = Child({"env", "SANDPROBE_LAUNCHER_TEST_NEW"});
  spec.extra_env = {{"SANDPROBE_LAUNCHER_TEST_NEW", "hello world"}};
  EXPECT_EQ(MustLaunch(spec).out, "hello world");

  LaunchSpec inherited = Child({"env", "SANDPROBE_LAUNCHER_TEST_OLD"});
  EXPECT_EQ(MustLaunch(inherited).out, "inherited");
  inherited.extra_env = {{"SANDPROBE_LAUNCHER_TEST_OLD", "overridden"}};
  EXPECT_EQ(MustLaunch(inherited).out, "overridden");
  unsetenv("SANDPROBE_LAUNCHER_TEST_OLD");
}

// --- which program ran (launch/launch_executable.h) ---

// A fresh directory (0755) for programs that shadow system ones.
std::string ShadowDir(const std::string& name) {
  const std::string dir = TempPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  ::chmod(dir.c_str(), 0755);
  return dir;
}

TEST(Launcher, ShadowingNameInPathIsRecordedAsTheProgramThatRan) {
  const std::string dir = ShadowDir("shadow");
  const std::string script = dir + "/env";
  std::ofstream(script) << "#!/bin/sh\necho \"ran $0\"\n";
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  LaunchSpec spec = Command({"env"});
  spec.extra_env = {{"PATH", dir + ":" + std::getenv("PATH")}};
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.out, "ran " + script + "\n");  // $0: the path execve was given
  EXPECT_EQ(r.executable, script);
  StatusOr<std::string> hash = ExecutableSha256(script);
  ASSERT_TRUE(hash.ok());
  EXPECT_EQ(r.executable_sha256, *hash);
  EXPECT_THAT(r.executable_warning, HasSubstr("found on PATH in " + dir + ", outside the system paths"));
  EXPECT_FALSE(r.executable_forgeable);  // only root or we could have replaced it
  std::filesystem::remove_all(dir);
}

TEST(Launcher, RecordedBinaryIsTheOneTheKernelRan) {
  // A copy of readlink shadows the real one; /proc/self/exe is what the kernel executed.
  const std::string dir = ShadowDir("exe");
  std::filesystem::copy_file("/usr/bin/readlink", dir + "/readlink");
  LaunchSpec spec = Command({"readlink", "/proc/self/exe"});
  spec.extra_env = {{"PATH", dir + ":/usr/bin:/bin"}};
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.out, dir + "/readlink\n");
  EXPECT_EQ(r.executable, dir + "/readlink");
  std::filesystem::remove_all(dir);
}

TEST(Launcher, ChildPathDecidesNotTheHarnessPath) {
  LaunchSpec spec = Command({"true"});
  spec.extra_env = {{"PATH", "/usr/bin"}};
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.executable, "/usr/bin/true");
  EXPECT_EQ(r.executable_warning, "");
  EXPECT_EQ(r.executable_sha256.size(), 64u);
  StatusOr<std::string> hash = ExecutableSha256("/usr/bin/true");
  ASSERT_TRUE(hash.ok());
  EXPECT_EQ(r.executable_sha256, *hash);
}

TEST(Launcher, ProgramInAWorldWritableDirectoryIsWarnedAbout) {
  const std::string dir = ShadowDir("world");
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  const std::string script = dir + "/tool";
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  LaunchResult r = MustLaunch(Command({script}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.executable, script);
  EXPECT_THAT(r.executable_warning, HasSubstr("in a world-writable directory " + dir));
  EXPECT_TRUE(r.executable_forgeable);
  // Spelled out by path: its location is the caller's choice, only its permissions count.
  EXPECT_THAT(r.executable_warning, Not(HasSubstr("outside the system paths")));
  std::filesystem::remove_all(dir);
}

TEST(Launcher, CancelKillsLikeATimeout) {
  std::atomic<bool> cancel{false};
  LaunchSpec spec = Child({"sleep"});
  spec.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(200));
    cancel = true;
  });
  LaunchResult r = MustLaunch(spec);
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_GE(r.wall, milliseconds(200));
  EXPECT_LT(r.wall, milliseconds(5000));
  EXPECT_EQ(DescribeExit(r), "cancelled");
}

TEST(Launcher, AlreadyCancelledStartsNothing) {
  std::atomic<bool> cancel{true};
  LaunchSpec spec = Child({"exit", "0"});
  spec.cancel = &cancel;
  LaunchResult r = MustLaunch(spec);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.pid, 0);
}

// The cancel event: a write to the fd ends the launch at once, as `cancel` does at its tick.
TEST(Launcher, CancelFdKillsLikeATimeout) {
  int event = ::eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(event, 0);
  LaunchSpec spec = Child({"sleep"});
  spec.cancel_fd = event;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(200));
    std::uint64_t one = 1;
    ASSERT_EQ(::write(event, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  });
  LaunchResult r = MustLaunch(spec);
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_EQ(DescribeExit(r), "cancelled");
  ::close(event);
}

// A launch that ends by itself leaves the (unsignalled) cancel fd alone and returns.
TEST(Launcher, CancelFdNeverWrittenDoesNotHoldTheLaunch) {
  int event = ::eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(event, 0);
  LaunchSpec spec = Child({"exit", "3"});
  spec.cancel_fd = event;
  LaunchResult r = MustLaunch(spec);
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(r.exit_code, 3);
  ::close(event);
}

TEST(Launcher, CancelFdAlreadyReadableStartsNothing) {
  int event = ::eventfd(1, EFD_CLOEXEC);
  ASSERT_GE(event, 0);
  LaunchSpec spec = Child({"exit", "0"});
  spec.cancel_fd = event;
  LaunchResult r = MustLaunch(spec);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.pid, 0);
  ::close(event);
}

// on_started runs once the child has exec'd: its /proc cmdline is already the new program's.
TEST(Launcher, OnStartedSeesTheExecdChild) {
  int event = ::eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(event, 0);
  LaunchSpec spec = Child({"sleep"});
  spec.cancel_fd = event;
  int started_pid = 0;
  std::string cmdline;
  spec.on_started = [&](int pid) {
    started_pid = pid;
    cmdline = ReadProcFile(pid, "cmdline");
    std::uint64_t one = 1;
    EXPECT_EQ(::write(event, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  };
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(started_pid, r.pid);
  EXPECT_THAT(cmdline, HasSubstr(std::string("sleep") + '\0'));
  EXPECT_TRUE(r.cancelled);
  ::close(event);
}

// empty_environment: nothing of the harness's environment, extra_env, nor the launch marker,
// as under `env -i`; the program is still found through the harness's PATH.
TEST(Launcher, EmptyEnvironmentPassesNothing) {
  setenv("SANDPROBE_LAUNCHER_TEST_OLD", "inherited", 1);
  LaunchSpec spec = Command({"env"});
  spec.extra_env = {{"SANDPROBE_CANARY_TEST", "secret"}};
  spec.empty_environment = true;
  LaunchResult r = MustLaunch(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.executable, HasSubstr("/env"));
  spec.empty_environment = false;
  EXPECT_THAT(MustLaunch(spec).out, HasSubstr("SANDPROBE_CANARY_TEST=secret"));
  unsetenv("SANDPROBE_LAUNCHER_TEST_OLD");
}

// Two threads launching at once: each result holds its own child's output, nothing leaks
// across (fds of one launch must not keep the other's pipes open), nothing is left over.
TEST(Launcher, ConcurrentLaunchesStayApart) {
  auto worker = [](char tag, int* mismatches) {
    ProcessLauncher launcher;
    for (int i = 0; i < 15; ++i) {
      LaunchSpec spec = Child({"cat"});
      spec.stdin_data.assign(100000 + i, tag);
      spec.timeout = milliseconds(10000);
      auto r = launcher.Launch(spec);
      if (!r.ok() || r->out != spec.stdin_data || r->exit_code != 0 || r->wall > milliseconds(5000))
        ++*mismatches;
    }
  };
  int bad_a = 0, bad_b = 0;
  std::thread a(worker, 'a', &bad_a), b(worker, 'b', &bad_b);
  a.join();
  b.join();
  EXPECT_EQ(bad_a, 0);
  EXPECT_EQ(bad_b, 0);
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(DescribeExit, NamesEachOutcome) {
  LaunchResult r;
  r.signal = SIGKILL;
  EXPECT_EQ(DescribeExit(r), "signal 9 (SIGKILL)");
  r = LaunchResult{};
  r.exit_code = 125;
  EXPECT_EQ(DescribeExit(r), "exit 125");
  r = LaunchResult{};
  r.timed_out = true;
  r.timeout = milliseconds(2000);
  r.signal = SIGTERM;
  EXPECT_EQ(DescribeExit(r), "timed out after 2000 ms (then signal 15 (SIGTERM))");
}

TEST(FormatArgv, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(FormatArgv({"docker", "run", "--name", "a b"}), "docker run --name 'a b'");
  EXPECT_EQ(FormatArgv({"echo", "", "it's", "/x/y-z.json", "a=b"}),
            "echo '' 'it'\\''s' /x/y-z.json a=b");
  EXPECT_EQ(FormatArgv({"sh", "-c", "echo $HOME; ls *"}), "sh -c 'echo $HOME; ls *'");
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

// The envelope: rlimits set in the child before exec, inherited by what it starts.
TEST(LauncherEnvelopeTest, RlimitsApplyInsideTheChild) {
  ProcessLauncher launcher;
  LaunchSpec spec;
  spec.argv = {"/bin/sh", "-c", "ulimit -n; ulimit -v"};
  spec.envelope.open_files = 77;
  spec.envelope.address_space_bytes = 512ull << 20;
  StatusOr<LaunchResult> r = launcher.Launch(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "77\n524288\n");
}

// The policy says a background process outlives the launch: the orphan that carries the spare
// argument is listed and left running, in the launch's pids cgroup, which the launcher hands
// over instead of removing; removing it later ends the process. Another orphan still dies.
TEST(LauncherEnvelopeTest, AnOrphanCarryingTheSpareArgumentIsLeftRunningInItsKeptCgroup) {
  ASSERT_TRUE(BecomeChildSubreaper().ok());
  std::string pidfile = TempPath("spared.pid");
  LaunchSpec spec = Child({"daemonize", pidfile, "exit"});
  spec.grace = milliseconds(300);  // the daemon holds the pipes: the drain gives up after this
  spec.spare_processes_with_arg = pidfile;
  spec.envelope.pids_max = 16;
  LaunchResult r = MustLaunch(spec);
  int daemon = ReadPidFile(pidfile);
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(r.leftovers_killed.empty());
  ASSERT_EQ(r.leftovers_spared.size(), 1u);
  EXPECT_EQ(r.leftovers_spared[0].pid, daemon);
  EXPECT_EQ(kill(daemon, 0), 0) << "the spared daemon was killed";
  if (r.envelope_note.empty()) {
    ASSERT_FALSE(r.kept_cgroup.empty());
    std::ifstream procs(r.kept_cgroup + "/cgroup.procs");
    std::string members((std::istreambuf_iterator<char>(procs)), std::istreambuf_iterator<char>());
    EXPECT_NE(members.find(std::to_string(daemon)), std::string::npos) << members;
    EXPECT_EQ(RemoveCgroupDir(r.kept_cgroup), "");
    EXPECT_TRUE(ProcessIsGone(daemon));
  } else {
    EXPECT_TRUE(r.kept_cgroup.empty());
    kill(daemon, SIGKILL);
  }
  waitpid(daemon, nullptr, 0);
  EXPECT_TRUE(NoChildrenLeft());
  unlink(pidfile.c_str());

  // An argument the daemon does not carry spares nothing.
  spec.spare_processes_with_arg = "sandprobe-no-such-token";
  r = MustLaunch(spec);
  daemon = ReadPidFile(pidfile);
  EXPECT_TRUE(r.leftovers_spared.empty());
  EXPECT_TRUE(r.kept_cgroup.empty());
  ASSERT_EQ(r.leftovers_killed.size(), 1u);
  EXPECT_EQ(r.leftovers_killed[0].pid, daemon);
  EXPECT_TRUE(NoChildrenLeft());
  unlink(pidfile.c_str());
}

TEST(LauncherEnvelopeTest, PidsCgroupBoundsForksEvenForRoot) {
  ProcessLauncher launcher;
  LaunchSpec spec;
  // Builtins only until the forks: with pids.max=4, some of the 8 sleeps cannot start.
  spec.argv = {"/bin/sh", "-c", "while read l; do case $l in *pids*) echo $l;; esac; done "
                                "</proc/self/cgroup; for i in 1 2 3 4 5 6 7 8; do sleep 5 & done"};
  spec.envelope.pids_max = 4;
  StatusOr<LaunchResult> r = launcher.Launch(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  if (!r->envelope_note.empty()) GTEST_SKIP() << r->envelope_note;
  EXPECT_NE(r->out.find("/sandprobe/"), std::string::npos) << r->out;
  EXPECT_NE(r->err.find("fork"), std::string::npos) << "no fork failed: " << r->err;
  EXPECT_LT(r->wall.count(), 4000) << "the sleeps were killed with the launch";
}

}  // namespace
}  // namespace sandprobe
