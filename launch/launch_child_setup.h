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
#include <sched.h>
#include <sys/mount.h>
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
enum class ChildStep : int {
  kNone, kPdeathsig, kSetpgid, kSigmask, kFdSweep, kChdir, kRlimit, kCgroup,
  kLabNetns,        // setns(LabJoin::netns_fd, CLONE_NEWNET)
  kLabMountNs,      // unshare(CLONE_NEWNS), then / made recursively private
  kLabResolvConf,   // the bind mount over /etc/resolv.conf (or its target)
  kLabHosts,        // the bind mount over /etc/hosts (or its target)
};

// The lab join's paths, resolved by the parent before fork (the child may not allocate): each
// source file and the regular file it is mounted over (/etc/resolv.conf's target when that is
// a symlink).
struct LabJoinPaths {
  int netns_fd = -1;
  std::string resolv_conf, resolv_conf_target;
  std::string hosts, hosts_target;
};
// Checks and resolves `join` for a launch; the error names the file and why.
StatusOr<LabJoinPaths> ResolveLabJoin(const LabJoin& join);
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
  const LabJoinPaths* lab_join = nullptr;  // nullptr: the child stays in the harness's namespaces

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
    if (lab_join) {
      // The lab first, so everything after (and the exec) happens inside it.
      if (::setns(lab_join->netns_fd, CLONE_NEWNET) != 0) fail(ChildStep::kLabNetns, errno);
      if (::unshare(CLONE_NEWNS) != 0) fail(ChildStep::kLabMountNs, errno);
      // Private before anything is mounted: a shared / would carry the mounts to the host's
      // namespace.
      if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail(ChildStep::kLabMountNs, errno);
      auto bind = [&](const std::string& from, const std::string& over, ChildStep step) {
        if (::mount(from.c_str(), over.c_str(), nullptr, MS_BIND, nullptr) != 0) fail(step, errno);
        if (::mount(nullptr, over.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) fail(step, errno);
      };
      bind(lab_join->resolv_conf, lab_join->resolv_conf_target, ChildStep::kLabResolvConf);
      bind(lab_join->hosts, lab_join->hosts_target, ChildStep::kLabHosts);
    }
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
