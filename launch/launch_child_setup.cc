#include "launch/launch_child_setup.h"

#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <filesystem>

#include <fmt/format.h>

#include "model/errno_text.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace sandprobe {
namespace {

int SweepProcSelfFd() noexcept {
  int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return errno;
  alignas(8) char buf[4096];
  for (;;) {
    long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) {
      int err = n < 0 ? errno : 0;
      ::close(dir);
      return err;
    }
    for (long off = 0; off < n;) {
      // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[].
      unsigned short reclen;
      memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      if (name[0] < '0' || name[0] > '9') continue;  // "." and ".."
      int fd = 0;
      for (const char* p = name; *p >= '0' && *p <= '9'; ++p) fd = fd * 10 + (*p - '0');
      if (fd >= 3 && fd != dir) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
}

void SweepEveryNumber() noexcept {
  struct rlimit lim {};
  // Capped: with an unlimited or huge RLIMIT_NOFILE this would take seconds.
  rlim_t top = 65536;
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    top = std::min<rlim_t>(lim.rlim_cur, 1 << 20);
  for (rlim_t fd = 3; fd < top; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
}

}  // namespace

int MarkInheritedFdsCloexec(FdSweep how) noexcept {
  switch (how) {
    case FdSweep::kCloseRange:
      if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return 0;
      [[fallthrough]];
    case FdSweep::kProcSelfFd:
      if (SweepProcSelfFd() == 0) return 0;
      [[fallthrough]];
    case FdSweep::kEveryNumber:
      SweepEveryNumber();
      return 0;
  }
  return EINVAL;
}

std::string DescribeChildSetupFailure(ChildStep step, int err, const LaunchSpec& spec,
                                      const std::string& cgroup_procs) {
  const std::string& argv0 = spec.argv[0];
  switch (step) {
    case ChildStep::kNone:
      return fmt::format("execve({}): {}", argv0, ErrnoText(err));
    case ChildStep::kPdeathsig:
      return fmt::format("prctl(PR_SET_PDEATHSIG) for {}: {}", argv0, ErrnoText(err));
    case ChildStep::kSetpgid:
      return fmt::format("setpgid(0, 0) for {}: {}", argv0, ErrnoText(err));
    case ChildStep::kSigmask:
      return fmt::format("sigprocmask for {}: {}", argv0, ErrnoText(err));
    case ChildStep::kFdSweep:
      return fmt::format("close fds >= 3 for {}: {}", argv0, ErrnoText(err));
    case ChildStep::kRlimit:
      return fmt::format("setrlimit for {}: {}", argv0, ErrnoText(err));
    case ChildStep::kCgroup:
      return fmt::format("join {} for {}: {}", cgroup_procs, argv0, ErrnoText(err));
    case ChildStep::kChdir:
      return fmt::format("chdir({}) for {}: {}", spec.working_dir, argv0, ErrnoText(err));
    case ChildStep::kLabNetns:
      return fmt::format("setns(lab network namespace, CLONE_NEWNET) for {}: {}{}", argv0, ErrnoText(err),
                         err == EPERM ? " (joining the lab needs CAP_SYS_ADMIN: run the harness as root)" : "");
    case ChildStep::kLabMountNs:
      return fmt::format("unshare(CLONE_NEWNS) and make / private for {}: {}", argv0, ErrnoText(err));
    case ChildStep::kLabResolvConf:
      return fmt::format("bind-mount {} over /etc/resolv.conf for {}: {}",
                         spec.lab_join ? spec.lab_join->resolv_conf : "?", argv0, ErrnoText(err));
    case ChildStep::kLabHosts:
      return fmt::format("bind-mount {} over /etc/hosts for {}: {}", spec.lab_join ? spec.lab_join->hosts : "?",
                         argv0, ErrnoText(err));
  }
  return "unreachable ChildStep";
}

namespace {

// `path` resolved (symlinks followed) and checked to be a regular file.
StatusOr<std::string> RegularFile(const std::string& path, const char* role) {
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::canonical(path, ec);
  if (ec) return Status::Error(fmt::format("lab join: {} {}: {}", role, path, ec.message()));
  struct stat st {};
  if (::stat(resolved.c_str(), &st) != 0) {
    return Status::Error(fmt::format("lab join: stat({}): {}", resolved.string(), ErrnoText(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::Error(fmt::format("lab join: {} {} resolves to {}, not a regular file", role, path, resolved.string()));
  }
  return resolved.string();
}

}  // namespace

StatusOr<LabJoinPaths> ResolveLabJoin(const LabJoin& join) {
  if (join.netns_fd < 0) return Status::Error("lab join: no network namespace descriptor");
  LabJoinPaths paths;
  paths.netns_fd = join.netns_fd;
  const std::pair<const std::string*, std::string*> sources[] = {{&join.resolv_conf, &paths.resolv_conf},
                                                                 {&join.hosts, &paths.hosts}};
  for (const auto& [from, to] : sources) {
    StatusOr<std::string> file = RegularFile(*from, "file");
    if (!file.ok()) return file.status();
    *to = *file;
  }
  StatusOr<std::string> resolv = RegularFile("/etc/resolv.conf", "mount target");
  if (!resolv.ok()) return resolv.status();
  StatusOr<std::string> hosts = RegularFile("/etc/hosts", "mount target");
  if (!hosts.ok()) return hosts.status();
  paths.resolv_conf_target = *resolv;
  paths.hosts_target = *hosts;
  return paths;
}

}  // namespace sandprobe
