// priv.syscalls, priv.userns, priv.tiocsti: which dangerous kernel entry points the sandbox
// leaves reachable. Each attempt runs in a forked child with arguments that cannot succeed
// (bad pointer, fd -1, invalid flags), so the kernel's answer shows only whether the call got
// past the filter: EFAULT/EBADF/EINVAL mean it reached the kernel, EPERM/ENOSYS or a SIGSYS
// kill mean it was stopped. The host does that classification; the probe reports errno names.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include <nlohmann/json.hpp>

#include "probes/errno_name.h"
#include "probes/priv_families.h"

namespace sandprobe {
namespace {

// An address no process maps: every copy from or to it fails with EFAULT.
void* const kBad = reinterpret_cast<void*>(1);

struct SyscallRow {
  const char* name;
  const char* call;  // what is called, for the report
  long (*invoke)();
};

// None of these can succeed: each has at least one argument the kernel rejects before acting.
const std::vector<SyscallRow>& SyscallTable() {
  static const std::vector<SyscallRow> kTable = {
      {"chroot", "chroot(bad pointer)", [] { return syscall(SYS_chroot, kBad); }},
      {"mount", "mount(bad, bad, bad, 0, bad)",
       [] { return syscall(SYS_mount, kBad, kBad, kBad, 0L, kBad); }},
      {"unshare", "unshare(0x1: invalid flag)", [] { return syscall(SYS_unshare, 0x1L); }},
      {"setns", "setns(-1, 0)", [] { return syscall(SYS_setns, -1L, 0L); }},
      {"bpf", "bpf(0xffff: invalid cmd, bad, 64)", [] { return syscall(SYS_bpf, 0xffffL, kBad, 64L); }},
      {"keyctl", "keyctl(-1: invalid op, 0, 0, 0, 0)", [] { return syscall(SYS_keyctl, -1L, 0L, 0L, 0L, 0L); }},
      {"add_key", "add_key(bad type, bad, bad, 0, 0)",
       [] { return syscall(SYS_add_key, kBad, kBad, kBad, 0L, 0L); }},
      {"ptrace", "ptrace(PTRACE_PEEKDATA, pid -1, bad, bad)",
       [] { return syscall(SYS_ptrace, 2L /*PTRACE_PEEKDATA*/, -1L, kBad, kBad); }},
      {"perf_event_open", "perf_event_open(bad attr, 0, -1, -1, invalid flags)",
       [] { return syscall(SYS_perf_event_open, kBad, 0L, -1L, -1L, ~0UL); }},
      {"userfaultfd", "userfaultfd(invalid flags)", [] { return syscall(SYS_userfaultfd, ~0L); }},
      {"io_uring_setup", "io_uring_setup(0, bad params)", [] { return syscall(SYS_io_uring_setup, 0L, kBad); }},
      {"open_by_handle_at", "open_by_handle_at(-1, bad handle, 0)",
       [] { return syscall(SYS_open_by_handle_at, -1L, kBad, 0L); }},
      {"init_module", "init_module(bad, 0, bad)", [] { return syscall(SYS_init_module, kBad, 0L, kBad); }},
      // nr_segments above KEXEC_SEGMENT_MAX and an unknown arch: rejected before any segment is
      // read. (nr_segments 0 with flags 0 would unload a loaded kernel: never that.)
      {"kexec_load", "kexec_load(0, 0xffff segments, bad, arch 0x7fff0000)",
       [] { return syscall(SYS_kexec_load, 0L, 0xffffL, kBad, 0x7fff0000L); }},
      {"clone3", "clone3(bad, size 0)", [] { return syscall(SYS_clone3, kBad, 0L); }},
      // 0xffffffff only queries the persona; nothing changes.
      {"personality", "personality(0xffffffff: query)", [] { return syscall(SYS_personality, 0xffffffffL); }},
  };
  return kTable;
}

// Runs `attempt` in a forked child and reports how it ended; the child's exit code carries the
// errno (0 = the call returned >= 0).
void ForkedAttempt(nlohmann::json& fact, const std::function<int()>& attempt) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    fact["fork_errno"] = ErrnoName(errno);
    return;
  }
  if (pid == 0) {
    ::signal(SIGSYS, SIG_DFL);
    ::_exit(attempt() & 0xff);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    fact["signal"] = WTERMSIG(status) == SIGSYS ? "SIGSYS" : "SIG" + std::to_string(WTERMSIG(status));
  } else if (WEXITSTATUS(status) == 0) {
    fact["returned"] = true;
  } else {
    fact["errno"] = ErrnoName(WEXITSTATUS(status));
  }
}

}  // namespace

const std::vector<std::string>& KnownProbeSyscalls() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const SyscallRow& row : SyscallTable()) names.push_back(row.name);
    return names;
  }();
  return kNames;
}

std::string CheckSyscallArgs(const FamilyArgs& args) {
  if (args.empty()) return "priv.syscalls: no syscalls";
  for (const std::string& name : args) {
    bool known = false;
    for (const SyscallRow& row : SyscallTable()) known = known || name == row.name;
    if (!known) return "priv.syscalls: unknown syscall " + name;
  }
  return "";
}

void RunPrivSyscalls(const ProbeContext& ctx, const FamilyArgs& args) {
  for (const std::string& name : args) {
    for (const SyscallRow& row : SyscallTable()) {
      if (name != row.name) continue;
      nlohmann::json fact = {{"family", "priv.syscalls"}, {"path", row.name}, {"call", row.call}};
      ForkedAttempt(fact, [&row] { return row.invoke() < 0 ? errno : 0; });
      ctx.out.Emit(fact);
    }
  }
}

// unshare(CLONE_NEWUSER), then unshare(CLONE_NEWNS), in a child that exits right after: the
// namespaces die with it. Reports each step's errno through a pipe.
void RunPrivUserns(const ProbeContext& ctx, const FamilyArgs&) {
  nlohmann::json fact = {{"family", "priv.userns"}};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    fact["pipe_errno"] = ErrnoName(errno);
    ctx.out.Emit(fact);
    return;
  }
  const int write_end = fds[1];
  ForkedAttempt(fact, [write_end] {
    int result[2] = {-1, -1};
    result[0] = ::unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
    result[1] = ::unshare(CLONE_NEWNS) == 0 ? 0 : errno;
    ssize_t n = ::write(write_end, result, sizeof result);
    return n == sizeof result ? 0 : 1;
  });
  ::close(fds[1]);
  int result[2];
  if (::read(fds[0], result, sizeof result) == sizeof result) {
    fact["newuser_ok"] = result[0] == 0;
    if (result[0] != 0) fact["newuser_errno"] = ErrnoName(result[0]);
    fact["newns_ok"] = result[1] == 0;
    if (result[1] != 0) fact["newns_errno"] = ErrnoName(result[1]);
  }
  ::close(fds[0]);
  if (auto max = ReadSmallFile("/proc/sys/user/max_user_namespaces", 64)) {
    fact["max_user_namespaces"] = max->substr(0, max->find('\n'));
  }
  ctx.out.Emit(fact);
}

// TIOCSTI pushes bytes into a terminal's input: from a sandbox sharing the harness's terminal,
// that is command injection. Tried only on fds that are terminals, always with a bad pointer,
// so nothing is ever injected: EFAULT means the ioctl got past every check.
void RunPrivTiocsti(const ProbeContext& ctx, const FamilyArgs&) {
  int ttys = 0;
  auto attempt = [&](int fd, const std::string& what) {
    nlohmann::json fact = {{"family", "priv.tiocsti"}, {"path", what}, {"isatty", ::isatty(fd) == 1}};
    if (::isatty(fd) == 1) {
      ++ttys;
      ForkedAttempt(fact, [fd] { return ::ioctl(fd, TIOCSTI, kBad) == 0 ? 0 : errno; });
    }
    ctx.out.Emit(fact);
  };
  for (int fd : {0, 1, 2}) attempt(fd, "fd" + std::to_string(fd));
  const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (tty >= 0) {
    attempt(tty, "/dev/tty");
    ::close(tty);
  } else {
    ctx.out.Emit({{"family", "priv.tiocsti"}, {"path", "/dev/tty"}, {"open_errno", ErrnoName(errno)}});
  }
  ctx.out.Emit({{"family", "priv.tiocsti"}, {"summary", true}, {"ttys", ttys},
                {"sid", ::getsid(0)}, {"pgid", ::getpgid(0)}});
}

}  // namespace sandprobe
