// The real-argument attempts of priv.syscalls (see RealAttempt in priv_families.h): clone with
// namespace flags, socket with the families sandboxes commonly refuse, and the terminal ioctls
// on a pty the probe opens for itself. A seccomp filter sees the argument values, so a filter
// that passes clone(CLONE_THREAD) but refuses clone(CLONE_NEWUSER) (docker's) is told apart
// only by making the real call. Each runs in a throwaway child (ForkedAttempt): whatever it
// creates (a namespace, a socket, a pty) dies with that child, and nothing here reaches a
// terminal, a network or a file outside the probe's own.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "contract/errno_name.h"
#include "probes/priv_families.h"

namespace sandprobe {
namespace {

// Not in every libc's headers: the values are the kernel ABI's.
constexpr int kAfVsock = 40;      // AF_VSOCK
constexpr int kAfBluetooth = 31;  // AF_BLUETOOTH
constexpr int kNetlinkRoute = 0;
constexpr int kNetlinkNetfilter = 12;
constexpr int kTioclGetFgConsole = 12;  // TIOCLINUX subcode: which VT is in front (a read)

// socket() then close(): the socket is never bound, connected or sent on.
long SocketAndClose(int family, int type, int protocol) {
  const int fd = ::socket(family, type | SOCK_CLOEXEC, protocol);
  if (fd < 0) return -1;
  ::close(fd);
  return 0;
}

// Type bits the kernel rejects (EINVAL) before it looks up the family: the call can never
// create a socket, and only a filter that compares the family answers EPERM instead.
constexpr int kInvalidSocketType = 0x7ffffff0 | SOCK_STREAM;

// Writes "step: ERRNO" to the report pipe and ends the child with kSetupFailedExit: the setup,
// not the attempt, failed.
[[noreturn]] void SetupFailed(int report_fd, const char* step) {
  const std::string text = std::string(step) + ": " + ErrnoName(errno);
  [[maybe_unused]] ssize_t n = ::write(report_fd, text.data(), text.size());
  ::_exit(kSetupFailedExit);
}

// A new pty that is this child's controlling terminal, in a session of its own: TIOCSTI into
// any other terminal needs CAP_SYS_ADMIN, so only a controlling terminal shows what a filter
// does with the request. Returns the terminal side; the master stays open until the child ends.
// SIGHUP is ignored because the session leader gets one when the master closes at exit.
int OwnControllingPty(int report_fd) {
  ::signal(SIGHUP, SIG_IGN);
  if (::setsid() < 0) SetupFailed(report_fd, "setsid");
  const int master = ::open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) SetupFailed(report_fd, "open(/dev/ptmx)");
  int unlock = 0;
  if (::ioctl(master, TIOCSPTLCK, &unlock) != 0) SetupFailed(report_fd, "ioctl(TIOCSPTLCK)");
  unsigned int number = 0;
  if (::ioctl(master, TIOCGPTN, &number) != 0) SetupFailed(report_fd, "ioctl(TIOCGPTN)");
  const std::string path = "/dev/pts/" + std::to_string(number);
  const int tty = ::open(path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (tty < 0) SetupFailed(report_fd, "open(/dev/pts/N)");
  if (::ioctl(tty, TIOCSCTTY, 0) != 0) SetupFailed(report_fd, "ioctl(TIOCSCTTY)");
  return tty;
}

// A byte pushed into the child's own pty: it lands in that pty's input queue, which no one
// reads and which is freed when the child exits.
long TiocstiOwnPty(int report_fd, unsigned long request) {
  const int tty = OwnControllingPty(report_fd);
  const char byte = '\n';
  return syscall(SYS_ioctl, long{tty}, request, &byte);
}

}  // namespace

// The child of a raw clone with a NULL stack runs on a copy of this stack, like fork's: it
// exits at once (exit_group, no atexit handlers), and the caller reaps it.
long CloneAndReap(long flags) {
  const long pid = syscall(SYS_clone, flags | SIGCHLD, 0L, 0L, 0L, 0L);
  if (pid == 0) syscall(SYS_exit_group, 0L);
  if (pid < 0) return -1;
  int status = 0;
  while (::waitpid(static_cast<pid_t>(pid), &status, 0) < 0 && errno == EINTR) {
  }
  return 0;
}

const std::vector<RealAttempt>& CloneRealAttempts() {
  static const std::vector<RealAttempt> kAttempts = {
      {"clone(CLONE_NEWUSER)", [](int) { return CloneAndReap(CLONE_NEWUSER); }},
      {"clone(CLONE_NEWUSER | CLONE_NEWNS)", [](int) { return CloneAndReap(CLONE_NEWUSER | CLONE_NEWNS); }},
      {"clone(CLONE_NEWNS)", [](int) { return CloneAndReap(CLONE_NEWNS); }},
      {"clone(CLONE_NEWNET)", [](int) { return CloneAndReap(CLONE_NEWNET); }},
      {"clone(CLONE_NEWPID)", [](int) { return CloneAndReap(CLONE_NEWPID); }},
  };
  return kAttempts;
}

long CloneInvalid() {
  // CLONE_THREAD without CLONE_SIGHAND and CLONE_VM: EINVAL before anything is created.
  return syscall(SYS_clone, long{CLONE_THREAD}, 0L, 0L, 0L, 0L);
}

const std::vector<SocketFamilyRow>& SocketFamilies() {
  static const std::vector<SocketFamilyRow> kRows = {
      {"socket(AF_PACKET)", AF_PACKET,
       {{"socket(AF_PACKET, SOCK_RAW, 0)", [](int) { return SocketAndClose(AF_PACKET, SOCK_RAW, 0); }},
        {"socket(AF_PACKET, SOCK_DGRAM, 0)", [](int) { return SocketAndClose(AF_PACKET, SOCK_DGRAM, 0); }}}},
      {"socket(AF_VSOCK)", kAfVsock,
       {{"socket(AF_VSOCK, SOCK_STREAM, 0)", [](int) { return SocketAndClose(kAfVsock, SOCK_STREAM, 0); }}}},
      {"socket(AF_BLUETOOTH)", kAfBluetooth,
       {{"socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP)",
         [](int) { return SocketAndClose(kAfBluetooth, SOCK_SEQPACKET, 0); }}}},
      {"socket(AF_NETLINK)", AF_NETLINK,
       {{"socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)",
         [](int) { return SocketAndClose(AF_NETLINK, SOCK_RAW, kNetlinkRoute); }},
        {"socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER)",
         [](int) { return SocketAndClose(AF_NETLINK, SOCK_RAW, kNetlinkNetfilter); }}}},
  };
  return kRows;
}

long SocketInvalid(int family) { return SocketAndClose(family, kInvalidSocketType, 0); }

const std::vector<RealAttempt>& IoctlRealAttempts() {
  static const std::vector<RealAttempt> kAttempts = {
      {"ioctl(own pty, TIOCSTI, '\\n') as its controlling terminal",
       [](int fd) { return TiocstiOwnPty(fd, TIOCSTI); }},
      {"ioctl(own pty, TIOCSTI | 1 << 32, '\\n') as its controlling terminal",
       [](int fd) { return TiocstiOwnPty(fd, static_cast<unsigned long>(TIOCSTI) | (1UL << 32)); }},
      // Not a VT, so the kernel answers ENOTTY without acting: only a filter answers otherwise.
      {"ioctl(own pty, TIOCLINUX, TIOCL_GETFGCONSOLE)", [](int fd) {
         const int tty = OwnControllingPty(fd);
         char subcode = kTioclGetFgConsole;
         return syscall(SYS_ioctl, long{tty}, long{TIOCLINUX}, &subcode);
       }},
  };
  return kAttempts;
}

}  // namespace sandprobe
