// res.pids: how many processes may the sandbox hold? Forks children that pause() until fork
// fails or the ceiling is reached, then kills and reaps every one of them.
//
// Facts: a progress frame when the climb starts and every 8 children; then one result frame
// with the children forked, the tasks of the sandbox that existed before (this probe
// included), the errno at the stop, RLIMIT_NPROC and the probe's own pids cgroup (resolved, as
// res.cpu's) with its pids.max and its own counter pids.current before and at the stop, so the
// host can tell pids.max from RLIMIT_NPROC.
//
// Only what the sandbox made counts: with the host's pid namespace /proc shows every host
// process, so "tasks before" are the processes in the probe's own cgroups (the same
// /proc/<pid>/cgroup as its own), never all of /proc; and the cgroup's own counter at the stop
// is the measurement whenever it can be read.
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <vector>

#include "contract/errno_name.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {

constexpr long kMaxProcessesScanned = 8192;
constexpr std::size_t kMaxCgroupText = 8192;

std::string CgroupText(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/cgroup");
  std::string text(kMaxCgroupText, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// Processes visible in /proc, and those in the probe's own cgroups (this probe included).
struct ProcessCount {
  long visible = 0;
  long same_cgroup = 0;
};
ProcessCount CountProcesses() {
  ProcessCount n;
  const std::string own = CgroupText("self");
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return {-1, -1};
  while (const dirent* entry = ::readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    if (++n.visible > kMaxProcessesScanned) break;
    // No cgroup text to compare (no /proc/self/cgroup): every visible process is the sandbox's.
    if (own.empty() || CgroupText(entry->d_name) == own) ++n.same_cgroup;
  }
  ::closedir(dir);
  return n;
}

// Tasks (threads) of this process: each counts against pids.max.
long OwnThreads() {
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return 1;
  long count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count;
}

}  // namespace

std::string CheckResPidsArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.pids", args, {{"ceiling", kMaxPidsCeiling}}, false);
}

void RunResPids(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.pids", args, {{"ceiling", kMaxPidsCeiling}}, false);
  const long ceiling = parsed.Number("ceiling");
  nlohmann::json result = {{"family", "res.pids"}, {"kind", "result"}, {"ceiling", ceiling},
                            {"kernel", KernelContext()}};
  const ProcessCount processes = CountProcesses();
  result["visible_processes"] = processes.visible;
  result["tasks_before"] = processes.same_cgroup - 1 + OwnThreads();
  struct rlimit nproc {};
  if (::getrlimit(RLIMIT_NPROC, &nproc) == 0) {
    result["rlimit_nproc"] = nproc.rlim_cur == RLIM_INFINITY ? -1 : static_cast<long>(nproc.rlim_cur);
  }
  result["uid"] = static_cast<long>(::getuid());
  // The probe's own pids cgroup, only where the mount shows it: the top of a mount that does
  // not (the host's cgroupfs bound in) is the host's root cgroup, whose counter is the host's.
  const std::optional<CpuCgroupDir> cgroup = FindCgroup("pids");
  const bool own_cgroup = cgroup && cgroup->resolved;
  if (cgroup) {
    result["pids_cgroup"] = {{"version", cgroup->version}, {"dir", cgroup->dir}, {"resolved", cgroup->resolved}};
  }
  if (own_cgroup) {
    AddFileReading(result, "cgroup_pids_max", cgroup->dir + "/pids.max");
    AddFileReading(result, "cgroup_pids_current_before", cgroup->dir + "/pids.current");
  }

  const pid_t parent = ::getpid();
  std::vector<pid_t> children;
  children.reserve(static_cast<std::size_t>(ceiling));
  const long start = MonotonicMs();
  int stop_errno = 0;
  // The climb has started: a sandbox that dies of it (gVisor at its host pids limit) leaves
  // this frame as the proof that the probe was forking.
  ctx.out.Emit({{"family", "res.pids"}, {"kind", "progress"}, {"children", 0L}});
  {
    DeadlineHold hold;  // the children must be reaped before the deadline may end the probe
    while (static_cast<long>(children.size()) < ceiling) {
      pid_t pid = ::fork();
      if (pid < 0) {
        if (errno == EINTR) continue;
        stop_errno = errno;
        break;
      }
      if (pid == 0) {
        // A child never outlives the probe, even when the probe is SIGKILLed.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(0);
        for (;;) ::pause();
      }
      children.push_back(pid);
      if (children.size() % 8 == 0) {
        ctx.out.Emit({{"family", "res.pids"}, {"kind", "progress"},
                      {"children", static_cast<long>(children.size())}});
      }
    }
    result["children"] = static_cast<long>(children.size());
    result["ms"] = MonotonicMs() - start;
    if (own_cgroup) AddFileReading(result, "cgroup_pids_current_peak", cgroup->dir + "/pids.current");
    for (pid_t pid : children) ::kill(pid, SIGKILL);
    long reaped = 0;
    for (pid_t pid : children) {
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      ++reaped;
    }
    result["reaped"] = reaped;
  }
  result["stopped_by"] = stop_errno != 0 ? ErrnoName(stop_errno) : "ceiling";
  ctx.out.Emit(result);
}

}  // namespace sandprobe
