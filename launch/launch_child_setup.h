// The launched child's setup between fork and execve: parent-death signal, own process group,
// clean signal mask, inherited fds marked close-on-exec, working directory, rlimits, joining
// the launch's pids cgroup. Internal to the launcher: included only by launch/launcher.cc and
// its tests. A header because ChildSetup is a Boost.Process extend handler, whose hooks are
// templates over Boost's executor.
//
// MarkInheritedFdsCloexec, the fd sweep the child runs, is declared in launch/launcher.h (so
// tests can force its fallbacks) and defined in launch_child_setup.cc.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>  // Boost 1.74 process/detail/posix/handles.hpp uses unique_ptr unincluded
#include <optional>
#include <string>
#include <system_error>

#include <boost/process/extend.hpp>

#include "launch/launcher.h"

namespace sandprobe {

// Which step of the child's setup failed, written by the child into a MAP_SHARED page so the
// parent can name it (Boost.Process only carries the errno back).
enum class ChildStep : int { kNone, kPdeathsig, kSetpgid, kSigmask, kFdSweep, kChdir, kRlimit, kCgroup };
struct ChildFailure {
  ChildStep step;
  int err;
};

// Runs in the forked child before execve. Failing here reports through Boost's exec-error pipe
// and exits, so the parent never mistakes a half-set-up child for a started one.
struct ChildSetup : boost::process::extend::handler {
  ChildFailure* failure;     // MAP_SHARED
  const char* working_dir;   // nullptr: inherit
  pid_t* failed_pid;         // parent side: a child that failed before or at exec, to reap
  const LaunchEnvelope* envelope;
  const char* cgroup_procs;  // nullptr: no pids cgroup to join
  pid_t launcher_pid;        // getpid() of the harness, taken before fork

  template <class Executor>
  void on_exec_setup(Executor& exec) const {
    auto fail = [&](ChildStep step, int err) {
      failure->step = step;
      failure->err = err;
      exec.set_error(std::error_code(err, std::system_category()), "child setup");
      ::_exit(127);
    };
    // Dies with the harness: a `kill -9` of sandprobe must not leave a docker client or a
    // canary process running. If the harness died between fork and here, the signal will
    // never come (the parent already changed), so leave now; nobody reads the error pipe.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(ChildStep::kPdeathsig, errno);
    if (::getppid() != launcher_pid) ::_exit(127);
    // Own group, so the whole tree can be signalled with killpg(pid).
    if (::setpgid(0, 0) != 0) fail(ChildStep::kSetpgid, errno);
    // Launch() blocks SIGPIPE in its thread; the child must start clean.
    sigset_t none;
    sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) fail(ChildStep::kSigmask, errno);
    ::signal(SIGPIPE, SIG_DFL);
    if (int err = MarkInheritedFdsCloexec(FdSweep::kCloseRange)) fail(ChildStep::kFdSweep, err);
    if (working_dir && ::chdir(working_dir) != 0) fail(ChildStep::kChdir, errno);
    auto limit = [&](int resource, const std::optional<std::uint64_t>& value) {
      if (!value) return;
      struct rlimit lim = {static_cast<rlim_t>(*value), static_cast<rlim_t>(*value)};
      struct rlimit old {};
      // Never raise a hard limit (that needs CAP_SYS_RESOURCE): only lower.
      if (::getrlimit(resource, &old) == 0 && old.rlim_max != RLIM_INFINITY &&
          old.rlim_max < lim.rlim_max) {
        lim.rlim_max = old.rlim_max;
        lim.rlim_cur = std::min(lim.rlim_cur, old.rlim_max);
      }
      if (::setrlimit(resource, &lim) != 0) fail(ChildStep::kRlimit, errno);
    };
    limit(RLIMIT_AS, envelope->address_space_bytes);
    limit(RLIMIT_NOFILE, envelope->open_files);
    limit(RLIMIT_FSIZE, envelope->file_size_bytes);
    limit(RLIMIT_CPU, envelope->cpu_seconds);
    if (cgroup_procs) {
      int fd = ::open(cgroup_procs, O_WRONLY | O_CLOEXEC);
      if (fd < 0) fail(ChildStep::kCgroup, errno);
      // cgroup v1: "0" moves the writing process.
      if (::write(fd, "0", 1) != 1) fail(ChildStep::kCgroup, errno);
      ::close(fd);
    }
  }

  template <class Executor>
  void on_error(Executor& exec, const std::error_code&) const {
    if (exec.pid > 0) *failed_pid = exec.pid;
  }
};

// The launch's error message when the child did not start: "execve(cmd): ENOENT" for
// kNone (the exec itself failed), otherwise the setup step that failed, naming argv[0] and,
// for kChdir and kCgroup, the directory or the cgroup.procs file (`cgroup_procs`).
std::string DescribeChildSetupFailure(ChildStep step, int err, const LaunchSpec& spec,
                                      const std::string& cgroup_procs);

}  // namespace sandprobe
