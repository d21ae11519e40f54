// priv.syscalls, priv.userns, priv.tiocsti: which dangerous kernel entry points the sandbox
// leaves reachable. Each attempt runs in a forked child with arguments that cannot succeed
// (bad pointer, fd -1, invalid flags), so the kernel's answer shows only whether the call got
// past the filter: EFAULT/EBADF/EINVAL mean it reached the kernel, EPERM/ENOSYS or a SIGSYS
// kill mean it was stopped. Where filters commonly look at the argument values (clone,
// unshare, socket families, ioctl), the row also makes the real call (priv_realargs.cc). The
// host does the classification; the probe reports errno names.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>

#include <nlohmann/json.hpp>

#include "contract/mountinfo.h"
#include "contract/errno_name.h"
#include "contract/signal_name.h"
#include "probes/priv_families.h"

namespace sandprobe {
namespace {

// An address no process maps: every copy from or to it fails with EFAULT.
void* const kBad = reinterpret_cast<void*>(1);

struct SyscallRow {
  std::string name;
  std::string call;  // what is called, for the report
  std::function<long()> invoke;
  std::vector<RealAttempt> real = {};  // see RealAttempt (priv_families.h)
};

// The rows with fixed arguments; the socket rows are added per family below. None of the
// invalid-argument calls can succeed: each has an argument the kernel rejects before acting.
std::vector<SyscallRow> FixedRows() {
  return {
      {"chroot", "chroot(bad pointer)", [] { return syscall(SYS_chroot, kBad); }},
      {"mount", "mount(bad, bad, bad, 0, bad)",
       [] { return syscall(SYS_mount, kBad, kBad, kBad, 0L, kBad); }},
      {"unshare", "unshare(0x1: invalid flag)", [] { return syscall(SYS_unshare, 0x1L); },
       {{"unshare(CLONE_NEWUSER)", [](int) { return syscall(SYS_unshare, long{CLONE_NEWUSER}); }},
        {"unshare(CLONE_NEWNS)", [](int) { return syscall(SYS_unshare, long{CLONE_NEWNS}); }},
        {"unshare(CLONE_NEWNET)", [](int) { return syscall(SYS_unshare, long{CLONE_NEWNET}); }}}},
      {"clone", "clone(CLONE_THREAD alone: invalid)", CloneInvalid, CloneRealAttempts()},
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
      // The cross-process calls docker's default seccomp profile allows only with CAP_SYS_PTRACE
      // in the bounding set (kcmp, pidfd_getfd, process_vm_readv/writev): the filter widens with
      // the capability even for a uid that can never use it, and these calls need none against a
      // process of the same uid. Each names the probe's own process and carries invalid flags
      // (or type), so the kernel refuses it before touching any memory or descriptor.
      {"process_vm_readv", "process_vm_readv(own pid, bad, 1, bad, 1, invalid flags)",
       [] { return syscall(SYS_process_vm_readv, long{::getpid()}, kBad, 1L, kBad, 1L, ~0UL); }},
      {"process_vm_writev", "process_vm_writev(own pid, bad, 1, bad, 1, invalid flags)",
       [] { return syscall(SYS_process_vm_writev, long{::getpid()}, kBad, 1L, kBad, 1L, ~0UL); }},
      {"kcmp", "kcmp(own pid, own pid, invalid type, 0, 0)",
       [] { return syscall(SYS_kcmp, long{::getpid()}, long{::getpid()}, 0x7fffL, 0L, 0L); }},
      {"pidfd_getfd", "pidfd_getfd(-1, 0, invalid flags)", [] { return syscall(SYS_pidfd_getfd, -1L, 0L, ~0UL); }},
      // nr_segments above KEXEC_SEGMENT_MAX and an unknown arch: rejected before any segment is
      // read. (nr_segments 0 with flags 0 would unload a loaded kernel: never that.)
      {"kexec_load", "kexec_load(0, 0xffff segments, bad, arch 0x7fff0000)",
       [] { return syscall(SYS_kexec_load, 0L, 0xffffL, kBad, 0x7fff0000L); }},
      {"clone3", "clone3(bad, size 0)", [] { return syscall(SYS_clone3, kBad, 0L); }},
      // 0xffffffff only queries the persona; nothing changes.
      {"personality", "personality(0xffffffff: query)", [] { return syscall(SYS_personality, 0xffffffffL); }},
      {"ioctl", "ioctl(-1, TIOCSTI, bad pointer)", [] { return syscall(SYS_ioctl, -1L, long{TIOCSTI}, kBad); },
       IoctlRealAttempts()},
  };
}

const std::vector<SyscallRow>& SyscallTable() {
  static const std::vector<SyscallRow> kTable = [] {
    std::vector<SyscallRow> rows = FixedRows();
    for (const SocketFamilyRow& f : SocketFamilies()) {
      const int family = f.family;
      std::string call = f.name;  // "socket(AF_VSOCK" + ", invalid type flags, 0)"
      call.insert(call.size() - 1, ", invalid type flags, 0");
      rows.push_back({f.name, call, [family] { return SocketInvalid(family); }, f.real});
    }
    return rows;
  }();
  return kTable;
}

constexpr int kAttemptWaitMs = 5000;  // a child still running then is killed

// Runs `attempt` in a forked child and reports how it ended; the child's exit code carries the
// errno (0 = the call returned >= 0). The wait is bounded: none of these calls should block,
// and one that does is killed and reported as "timed_out".
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
  pid_t done = 0;
  for (int waited = 0; waited < kAttemptWaitMs && done == 0; ++waited) {
    done = ::waitpid(pid, &status, WNOHANG);
    if (done < 0 && errno == EINTR) done = 0;
    if (done == 0) ::usleep(1000);
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    fact["timed_out"] = true;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  if (done < 0) {
    fact["wait_errno"] = ErrnoName(errno);
    return;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kSetupFailedExit) {
    fact["not_tried"] = "setup failed";  // the caller replaces it with "STEP: ERRNO" from its pipe
  } else if (WIFSIGNALED(status)) {
    fact["signal"] = SignalName(WTERMSIG(status));  // "SIGSYS": a seccomp kill
  } else if (WEXITSTATUS(status) == 0) {
    fact["returned"] = true;
  } else {
    fact["errno"] = ErrnoName(WEXITSTATUS(status));
  }
}

std::string DeviceNumber(dev_t dev) {
  return DeviceText(major(dev), minor(dev));
}

// TIOCSTI with the bits above 32 set: the kernel takes the request as an unsigned int and
// drops them, while a seccomp filter comparing the full 64-bit argument with TIOCSTI sees
// another value and lets it through (CVE-2019-10063, flatpak and bubblewrap).
constexpr unsigned long kTiocsti64 = static_cast<unsigned long>(TIOCSTI) | (1UL << 32);

// The plain and the 64-bit TIOCSTI on `fd`, always with a bad pointer: nothing is injected.
void TiocstiAttempts(nlohmann::json& fact, int fd) {
  ForkedAttempt(fact, [fd] { return ::ioctl(fd, TIOCSTI, kBad) == 0 ? 0 : errno; });
  nlohmann::json wide = {{"call", "ioctl(fd, TIOCSTI | 1 << 32, bad pointer)"}};
  ForkedAttempt(wide, [fd] { return syscall(SYS_ioctl, long{fd}, kTiocsti64, kBad) == 0 ? 0 : errno; });
  fact["cmd64"] = wide;
}

// One real-argument attempt: {"call", and how it ended}, or {"call", "not_tried": "step: ERRNO"}
// when its own setup failed (no /dev/ptmx in the sandbox).
nlohmann::json RealForkedAttempt(const RealAttempt& real) {
  nlohmann::json attempt = {{"call", real.call}};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    attempt["not_tried"] = "pipe2: " + ErrnoName(errno);
    return attempt;
  }
  const int setup_fd = fds[1];
  ForkedAttempt(attempt, [&real, setup_fd] { return real.invoke(setup_fd) < 0 ? errno : 0; });
  ::close(fds[1]);
  if (attempt.contains("not_tried")) {
    char why[256];
    const ssize_t n = ::read(fds[0], why, sizeof why);
    attempt["not_tried"] = n > 0 ? std::string(why, static_cast<std::size_t>(n)) : "setup failed";
  }
  ::close(fds[0]);
  return attempt;
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
      if (!row.real.empty()) fact["real"] = nlohmann::json::array();
      for (const RealAttempt& real : row.real) fact["real"].push_back(RealForkedAttempt(real));
      ctx.out.Emit(fact);
    }
  }
  ctx.out.Emit({{"family", "priv.syscalls"}, {"summary", true}, {"kernel", KernelContext()}});
}

// unshare(CLONE_NEWUSER), then unshare(CLONE_NEWNS), in a child that exits right after: the
// namespaces die with it. Then clone(CLONE_NEWUSER), whose child exits at once: a filter may
// refuse one spelling and pass the other (firejail's passes clone). Reports each errno through
// a pipe.
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
    int result[3] = {-1, -1, -1};
    result[2] = CloneAndReap(CLONE_NEWUSER) == 0 ? 0 : errno;  // before this child's unshare
    result[0] = ::unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
    result[1] = ::unshare(CLONE_NEWNS) == 0 ? 0 : errno;
    // The child's own ending says how the attempt went (a SIGSYS); its results travel only
    // through the pipe, so a failed write is never passed off as an errno of the calls.
    ssize_t n = ::write(write_end, result, sizeof result);
    (void)n;
    return 0;
  });
  ::close(fds[1]);
  int result[3];
  const ssize_t got = ::read(fds[0], result, sizeof result);
  if (got != sizeof result) {
    fact["results_errno"] = ErrnoName(got < 0 ? errno : ENODATA);  // the child reported nothing
  } else {
    fact["newuser_ok"] = result[0] == 0;
    if (result[0] != 0) fact["newuser_errno"] = ErrnoName(result[0]);
    fact["newns_ok"] = result[1] == 0;
    if (result[1] != 0) fact["newns_errno"] = ErrnoName(result[1]);
    fact["clone_newuser_ok"] = result[2] == 0;
    if (result[2] != 0) fact["clone_newuser_errno"] = ErrnoName(result[2]);
  }
  ::close(fds[0]);
  if (auto max = ReadSmallFile("/proc/sys/user/max_user_namespaces", 64)) {
    const std::string text = max->substr(0, max->find('\n'));
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text.c_str(), &end, 10);  // a number, as knobs are
    if (!text.empty() && *end == '\0' && errno == 0) fact["max_user_namespaces"] = value;
  }
  ctx.out.Emit(fact);
}

// TIOCSTI pushes bytes into a terminal's input: from a sandbox sharing the harness's terminal,
// that is command injection. Tried only on fds that are terminals, always with a bad pointer,
// so nothing is ever injected: EFAULT means the ioctl got past every check. Each terminal's
// device (the devpts instance, st_dev, and the pty, st_rdev) lets the host tell its own
// terminals from one the sandbox made for itself (systemd-nspawn's own devpts). The filter is
// probed without any terminal too, as bubblewrap's tests do: on fd -1, EBADF means the
// request got past the filter to the kernel.
void RunPrivTiocsti(const ProbeContext& ctx, const FamilyArgs&) {
  int ttys = 0;
  auto attempt = [&](int fd, const std::string& what) {
    nlohmann::json fact = {{"family", "priv.tiocsti"}, {"path", what}, {"isatty", ::isatty(fd) == 1}};
    struct stat st {};
    if (::isatty(fd) == 1) {
      ++ttys;
      if (::fstat(fd, &st) == 0) {
        fact["dev"] = DeviceNumber(st.st_dev);
        fact["rdev"] = DeviceNumber(st.st_rdev);
      }
      TiocstiAttempts(fact, fd);
    }
    return fact;
  };
  for (int fd : {0, 1, 2}) ctx.out.Emit(attempt(fd, "fd" + std::to_string(fd)));
  const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (tty >= 0) {
    nlohmann::json fact = attempt(tty, "/dev/tty");
    // /dev/tty's own node is 5:0; the controlling terminal behind it is TIOCGDEV's answer.
    unsigned int ctty = 0;
    if (::ioctl(tty, TIOCGDEV, &ctty) == 0) fact["ctty_rdev"] = DeviceNumber(static_cast<dev_t>(ctty));
    ctx.out.Emit(fact);
    ::close(tty);
  } else {
    ctx.out.Emit({{"family", "priv.tiocsti"}, {"path", "/dev/tty"}, {"open_errno", ErrnoName(errno)}});
  }
  nlohmann::json filter = {{"family", "priv.tiocsti"}, {"path", "fd-1"}, {"variant", "filter"},
                           {"call", "ioctl(-1, TIOCSTI, bad pointer)"}};
  TiocstiAttempts(filter, -1);
  ctx.out.Emit(filter);
  ctx.out.Emit({{"family", "priv.tiocsti"}, {"summary", true}, {"ttys", ttys},
                {"sid", ::getsid(0)}, {"pgid", ::getpgid(0)}});
}

}  // namespace sandprobe
