// res.pids: how many processes may the sandbox hold? Forks children that pause() until fork
// fails or the ceiling is reached, then kills and reaps every one of them.
//
// Facts: a progress frame every 16 children; then one result frame with the children forked,
// the tasks that existed before (this probe included), the errno at the stop, RLIMIT_NPROC and
// the pids cgroup knobs when readable, so the host can tell pids.max from RLIMIT_NPROC.
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <vector>

#include "contract/errno_name.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {

// Processes visible in /proc (in a pid namespace: the sandbox's own), this probe included.
long VisibleProcesses() {
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return -1;
  long count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) ++count;
  }
  ::closedir(dir);
  return count;
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
  nlohmann::json result = {{"family", "res.pids"}, {"kind", "result"}, {"ceiling", ceiling}};
  result["tasks_before"] = VisibleProcesses() - 1 + OwnThreads();
  struct rlimit nproc {};
  if (::getrlimit(RLIMIT_NPROC, &nproc) == 0) {
    result["rlimit_nproc"] = nproc.rlim_cur == RLIM_INFINITY ? -1 : static_cast<long>(nproc.rlim_cur);
  }
  result["uid"] = static_cast<long>(::getuid());
  AddFileReading(result, "cgroup_pids_max", "/sys/fs/cgroup/pids/pids.max");
  AddFileReading(result, "cgroup_pids_current_before", "/sys/fs/cgroup/pids/pids.current");
  AddFileReading(result, "cgroup2_pids_max", "/sys/fs/cgroup/pids.max");

  const pid_t parent = ::getpid();
  std::vector<pid_t> children;
  children.reserve(static_cast<std::size_t>(ceiling));
  const long start = MonotonicMs();
  int stop_errno = 0;
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
      if (children.size() % 16 == 0) {
        ctx.out.Emit({{"family", "res.pids"}, {"kind", "progress"},
                      {"children", static_cast<long>(children.size())}});
      }
    }
    result["children"] = static_cast<long>(children.size());
    result["ms"] = MonotonicMs() - start;
    AddFileReading(result, "cgroup_pids_current_peak", "/sys/fs/cgroup/pids/pids.current");
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
