#include "launch/launch_leftovers.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include <fmt/format.h>

namespace sandprobe {
namespace {

// Ceiling on kill-and-rescan rounds: each round kills a generation (killing a daemon
// reparents its children to us), so this bounds a tree's depth, not its width.
constexpr int kMaxOrphanRounds = 64;

struct Registry {
  std::mutex mu;
  std::vector<LiveLaunch> live;
  std::set<int> claimed;  // orphans some launch is killing or reaping right now
  // Orphans a launch left alive on purpose (LaunchSpec::spare_processes_with_arg): no launch
  // attributes them to itself while they live; once dead, the next scan reaps them. By pid and
  // start time, so a pid reused after the spared process was reaped elsewhere is not spared.
  std::set<std::pair<int, unsigned long long>> spared;
  std::uint64_t next_seq = 0;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: launches may outlive main
  return *registry;
}

bool IsChildSubreaper() {
  int on = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &on) == 0 && on != 0;
}

// The value of `name` in a raw NUL-separated environment, or nullopt.
std::optional<std::string_view> EnvValue(std::string_view environ, std::string_view name) {
  for (std::size_t start = 0; start < environ.size();) {
    std::size_t end = environ.find('\0', start);
    if (end == std::string_view::npos) end = environ.size();
    std::string_view entry = environ.substr(start, end - start);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
        entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
    start = end + 1;
  }
  return std::nullopt;
}

void Reap(int pid) {
  while (::waitpid(pid, nullptr, 0) == -1 && errno == EINTR) {
  }
}

}  // namespace

std::optional<std::uint64_t> AttributeOrphan(const ProcStat& orphan, std::string_view environ,
                                             const std::vector<LiveLaunch>& live, std::string_view cmdline) {
  for (const LiveLaunch& launch : live) {
    if (orphan.pgid == launch.child_pid) return launch.seq;
  }
  if (std::optional<std::string_view> marker = EnvValue(environ, kLaunchMarkerEnv)) {
    for (const LiveLaunch& launch : live) {
      if (*marker == launch.marker) return launch.seq;
    }
  }
  if (!cmdline.empty()) {
    for (const LiveLaunch& launch : live) {
      if (!launch.orphan_tag.empty() && CmdlineHasArg(cmdline, launch.orphan_tag)) return launch.seq;
    }
  }
  const LiveLaunch* latest = nullptr;
  for (const LiveLaunch& launch : live) {
    if (launch.start_ticks > orphan.start_ticks) continue;
    if (!latest || launch.start_ticks > latest->start_ticks ||
        (launch.start_ticks == latest->start_ticks && launch.seq > latest->seq)) {
      latest = &launch;
    }
  }
  if (latest) return latest->seq;
  return std::nullopt;
}

LaunchRegistration::LaunchRegistration() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  seq_ = ++registry.next_seq;
  marker_ = fmt::format("{}-{}", ::getpid(), seq_);
}

LaunchRegistration::~LaunchRegistration() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  std::erase_if(registry.live, [this](const LiveLaunch& l) { return l.seq == seq_; });
}

std::unique_lock<std::mutex> LaunchRegistration::LockSpawns() {
  return std::unique_lock<std::mutex>(TheRegistry().mu);
}

void LaunchRegistration::Register(int child_pid, const std::unique_lock<std::mutex>&) {
  child_pid_ = child_pid;
  std::optional<ProcStat> stat = ReadProcStat(child_pid);
  // Unreadable /proc: start time 0 keeps rule 3 from ever preferring this launch wrongly
  // over a later one; rules 1 and 2 still work.
  TheRegistry().live.push_back(
      {.seq = seq_, .child_pid = child_pid, .start_ticks = stat ? stat->start_ticks : 0,
       .marker = marker_, .orphan_tag = orphan_tag_});
}

void LaunchRegistration::MarkReaped() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  for (LiveLaunch& l : registry.live) {
    if (l.seq == seq_) l.child_reaped = true;
  }
}

std::vector<LeftoverProcess> LaunchRegistration::KillOrphans(const std::string& spare_arg,
                                                             std::vector<LeftoverProcess>* spared) {
  std::vector<LeftoverProcess> killed;
  if (!IsChildSubreaper()) return killed;
  Registry& registry = TheRegistry();
  const int self = ::getpid();
  for (int round = 0; round < kMaxOrphanRounds; ++round) {
    std::vector<ProcStat> mine;
    {
      std::lock_guard<std::mutex> lock(registry.mu);
      std::set<int> tracked = registry.claimed;
      for (const LiveLaunch& l : registry.live) {
        if (!l.child_reaped) tracked.insert(l.child_pid);
      }
      for (int pid : ListOwnChildrenOrAllPids()) {
        if (tracked.count(pid)) continue;
        std::optional<ProcStat> stat = ReadProcStat(pid);
        if (!stat || stat->ppid != self) continue;
        const std::pair<int, unsigned long long> identity{pid, stat->start_ticks};
        if (registry.spared.count(identity) && !stat->dead()) continue;
        std::string environ = stat->dead() ? "" : ReadProcFile(pid, "environ");
        std::string cmdline = stat->dead() ? "" : ReadProcFile(pid, "cmdline");
        if (AttributeOrphan(*stat, environ, registry.live, cmdline) != seq_) continue;
        registry.spared.erase(identity);  // dead now: reaped below like any other
        if (!spare_arg.empty() && spared != nullptr && !stat->dead()) {
          if (CmdlineHasArg(cmdline, spare_arg)) {
            registry.spared.insert(identity);
            spared->push_back({pid, CmdlineForDisplay(cmdline, kLeftoverArgvCap)});
            continue;
          }
        }
        mine.push_back(*stat);
        registry.claimed.insert(pid);
      }
    }
    if (mine.empty()) break;
    // Ours alone now (claimed, and our child until reaped): the pid cannot be reused.
    for (const ProcStat& orphan : mine) {
      // Members of our own group were listed by StopAndListGroup before the group kill; here
      // they are only dying or zombies to reap.
      if (!orphan.dead() && orphan.pgid != child_pid_) {
        std::string argv = CmdlineForDisplay(ReadProcFile(orphan.pid, "cmdline"), kLeftoverArgvCap);
        ::kill(orphan.pid, SIGKILL);
        killed.push_back({orphan.pid, std::move(argv)});
      }
      Reap(orphan.pid);
      std::lock_guard<std::mutex> lock(registry.mu);
      registry.claimed.erase(orphan.pid);
    }
  }
  return killed;
}

std::vector<LeftoverProcess> StopAndListGroup(int pgid) {
  std::vector<LeftoverProcess> members;
  if (::killpg(pgid, SIGSTOP) != 0) return members;  // ESRCH: nothing left
  // A subreaper has every member below it: the child's descendants stay ours when their
  // parents die, so walking our own tree beats reading every process on the machine. (Only a
  // process outside that tree joining the group on purpose, by setpgid within our session,
  // would be missed; it is no leftover of the launch.) Otherwise orphans go to init: scan all.
  const std::vector<int> candidates =
      IsChildSubreaper() ? ListOwnDescendantsOrAllPids() : ListPids();
  for (int pid : candidates) {
    if (pid == pgid) continue;
    std::optional<ProcStat> stat = ReadProcStat(pid);
    if (!stat || stat->pgid != pgid || stat->dead()) continue;
    members.push_back({pid, CmdlineForDisplay(ReadProcFile(pid, "cmdline"), kLeftoverArgvCap)});
  }
  return members;
}

}  // namespace sandprobe
