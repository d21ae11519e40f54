#include "launch/pinned_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "model/errno_text.h"
#include "launch/proc_info.h"

namespace sandprobe {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Rounds of "list the descendants, pin and stop the new ones" before giving up on a tree that
// keeps growing (each round stops every process it found, so a real tree settles in a few).
constexpr int kMaxRounds = 100;
constexpr std::size_t kMaxTree = 100000;

bool StoppedOrDead(int pid) {
  std::optional<ProcStat> stat = ReadProcStat(pid);
  return !stat || stat->dead() || stat->state == 'T' || stat->state == 't';
}

// SIGKILL to every pinned process, then one shared deadline for all of them to die.
void KillAll(const std::vector<PinnedProcess>& pinned, std::vector<LeftoverProcess> argvs,
             milliseconds wait, KillOutcome& out) {
  std::vector<bool> sent(pinned.size(), false);
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    int err = pinned[i].Signal(SIGKILL);
    if (err == 0) sent[i] = true;
    else if (err != ESRCH)
      out.errors.push_back(fmt::format("kill({}, SIGKILL): {}", pinned[i].pid(), ErrnoText(err)));
  }
  auto deadline = Clock::now() + wait;
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    if (!sent[i]) continue;
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (!pinned[i].WaitExit(std::max(left, milliseconds(0)))) {
      out.errors.push_back(fmt::format("process {} did not die within {} ms of SIGKILL",
                                       pinned[i].pid(), wait.count()));
    }
    out.killed.push_back(std::move(argvs[i]));
  }
}

LeftoverProcess Describe(int pid) {
  return {pid, CmdlineForDisplay(ReadProcFile(pid, "cmdline"), kLeftoverArgvCap)};
}

}  // namespace

std::optional<PinnedProcess> PinnedProcess::Open(int pid) {
  if (pid <= 0) return std::nullopt;
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd >= 0) return PinnedProcess(pid, fd);
  if (errno == ESRCH) return std::nullopt;
  // No pidfds (ENOSYS on Linux < 5.3): the bare pid, while it exists.
  if (::kill(pid, 0) != 0 && errno == ESRCH) return std::nullopt;
  return PinnedProcess(pid, -1);
}

PinnedProcess::PinnedProcess(PinnedProcess&& other) noexcept
    : pid_(other.pid_), fd_(std::exchange(other.fd_, -1)) {}

PinnedProcess& PinnedProcess::operator=(PinnedProcess&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    pid_ = other.pid_;
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

PinnedProcess::~PinnedProcess() {
  if (fd_ >= 0) ::close(fd_);
}

int PinnedProcess::Signal(int signal_number) const {
  long rc = fd_ >= 0 ? ::syscall(SYS_pidfd_send_signal, fd_, signal_number, nullptr, 0)
                     : ::kill(pid_, signal_number);
  return rc == 0 ? 0 : errno;
}

bool PinnedProcess::WaitExit(milliseconds limit) const {
  if (fd_ >= 0) {
    struct pollfd exited = {fd_, POLLIN, 0};
    int rc;
    while ((rc = ::poll(&exited, 1, static_cast<int>(limit.count()))) < 0 && errno == EINTR) {
    }
    return rc == 1;
  }
  for (auto end = Clock::now() + limit;; std::this_thread::sleep_for(milliseconds(20))) {
    std::optional<ProcStat> stat = ReadProcStat(pid_);
    if (!stat || stat->dead()) return true;
    if (Clock::now() >= end) return false;
  }
}

KillOutcome KillPinned(int pid, const std::function<bool(int)>& confirm, milliseconds wait) {
  KillOutcome out;
  std::optional<PinnedProcess> pinned = PinnedProcess::Open(pid);
  if (!pinned || !confirm(pid)) return out;
  std::vector<PinnedProcess> one;
  one.push_back(std::move(*pinned));
  KillAll(one, {Describe(pid)}, wait, out);
  return out;
}

KillOutcome KillProcessTree(int root, const std::function<bool(int)>& confirm,
                            const std::set<int>& untouchable, milliseconds wait) {
  KillOutcome out;
  if (untouchable.count(root)) return out;
  std::optional<PinnedProcess> pinned_root = PinnedProcess::Open(root);
  if (!pinned_root || !confirm(root)) return out;
  std::vector<PinnedProcess> tree;
  std::vector<LeftoverProcess> argvs;
  std::set<int> in_tree;
  auto hold = [&](PinnedProcess p) {
    argvs.push_back(Describe(p.pid()));
    p.Signal(SIGSTOP);  // cannot fork any more; SIGKILL still ends it
    in_tree.insert(p.pid());
    tree.push_back(std::move(p));
  };
  hold(std::move(*pinned_root));
  for (int round = 0; round < kMaxRounds && tree.size() < kMaxTree; ++round) {
    // A SIGSTOP is taken at the process's next return to user space, so it may still fork
    // until then: list only once everything pinned has really stopped.
    for (int spin = 0; spin < 200; ++spin) {
      bool all_stopped = std::all_of(tree.begin(), tree.end(),
                                     [](const PinnedProcess& p) { return StoppedOrDead(p.pid()); });
      if (all_stopped) break;
      std::this_thread::sleep_for(milliseconds(5));
    }
    std::optional<std::vector<int>> below = ListDescendants(root);
    std::vector<int> candidates = below ? *below : ListPids();
    bool round_grew = false;
    // Parents before children: passes over the list until one adds nothing.
    for (bool grew = true; grew;) {
      grew = false;
      for (int pid : candidates) {
        if (in_tree.count(pid) || untouchable.count(pid)) continue;
        std::optional<PinnedProcess> p = PinnedProcess::Open(pid);
        if (!p) continue;
        // Read after the pin: a child of a stopped process of the tree is really below it.
        std::optional<ProcStat> stat = ReadProcStat(pid);
        if (!stat || stat->dead() || !in_tree.count(stat->ppid)) continue;
        hold(std::move(*p));
        grew = round_grew = true;
      }
    }
    if (!round_grew) break;  // listed while everything was stopped: the whole tree
  }
  KillAll(tree, std::move(argvs), wait, out);
  return out;
}

}  // namespace sandprobe
