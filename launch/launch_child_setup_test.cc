#include "launch/launch_child_setup.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

// Each fallback of the sweep, run in this process on a fresh inheritable fd.
TEST(Launcher, EveryFdSweepMarksInheritedFdsCloexec) {
  for (FdSweep how : {FdSweep::kCloseRange, FdSweep::kProcSelfFd, FdSweep::kEveryNumber}) {
    int fd = open("/dev/null", O_RDONLY);
    ASSERT_GE(fd, 3);
    ASSERT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    EXPECT_EQ(MarkInheritedFdsCloexec(how), 0);
    EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << static_cast<int>(how);
    EXPECT_EQ(fcntl(0, F_GETFD) & FD_CLOEXEC, 0) << "stdin must stay inheritable";
    close(fd);
  }
}

// Only kNone and kChdir can be provoked through Launch() (launcher_test.cc); the messages of
// the other steps are pinned here.
TEST(LauncherChildSetupTest, EachFailedStepIsNamedWithTheCommand) {
  LaunchSpec spec;
  spec.argv = {"bwrap", "--ro-bind", "/", "/"};
  spec.working_dir = "/srv/x";
  const std::string procs = "/sys/fs/cgroup/pids/sandprobe/7-1/cgroup.procs";
  auto describe = [&](ChildStep step, int err) {
    return DescribeChildSetupFailure(step, err, spec, procs);
  };
  EXPECT_EQ(describe(ChildStep::kNone, ENOENT), "execve(bwrap): ENOENT");
  EXPECT_EQ(describe(ChildStep::kPdeathsig, EINVAL), "prctl(PR_SET_PDEATHSIG) for bwrap: EINVAL");
  EXPECT_EQ(describe(ChildStep::kSetpgid, EPERM), "setpgid(0, 0) for bwrap: EPERM");
  EXPECT_EQ(describe(ChildStep::kSigmask, EFAULT), "sigprocmask for bwrap: EFAULT");
  EXPECT_EQ(describe(ChildStep::kFdSweep, EBADF), "close fds >= 3 for bwrap: EBADF");
  EXPECT_EQ(describe(ChildStep::kChdir, EACCES), "chdir(/srv/x) for bwrap: EACCES");
  EXPECT_EQ(describe(ChildStep::kRlimit, EPERM), "setrlimit for bwrap: EPERM");
  EXPECT_EQ(describe(ChildStep::kCgroup, EACCES),
            "join /sys/fs/cgroup/pids/sandprobe/7-1/cgroup.procs for bwrap: EACCES");
}

TEST(LauncherChildSetupTest, AnUnnamedErrnoIsGivenByNumber) {
  LaunchSpec spec;
  spec.argv = {"true"};
  EXPECT_EQ(DescribeChildSetupFailure(ChildStep::kNone, 4095, spec, ""),
            "execve(true): errno 4095");
}

}  // namespace
}  // namespace sandprobe
