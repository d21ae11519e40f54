// res.memory: how much memory may the sandbox use? A forked child maps and touches 1 MiB
// steps (every page written) up to the ceiling; the probe itself stays small and watches.
//
// Why a child: an OOM kill is the expected end of this probe, and the kernel's OOM killer
// picks the largest task (the child also raises its oom_score_adj). The probe survives, sees
// how the child ended (SIGKILL vs ENOMEM from mmap vs the ceiling), and reports it with the
// last MiB the child reached (a shared counter, exact to the step). So the launch ends
// cleanly: an OOM kill is a fact, not a crashed launch. Progress frames every K MiB are the
// fallback evidence if the whole sandbox is killed.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "contract/errno_name.h"
#include "contract/signal_name.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {

// MADV_POPULATE_WRITE (Linux 5.14), spelled out for older headers.
#ifdef MADV_POPULATE_WRITE
constexpr int kMadvPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kMadvPopulateWrite = 23;
#endif

struct Shared {
  std::atomic<long> reached_mib;
  std::atomic<int> stop_errno;
};

[[noreturn]] void AllocateUpTo(const ProbeContext& ctx, Shared* shared, long ceiling, long every) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!::write(fd, "1000", 4);
    ::close(fd);
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  for (long mib = 1; mib <= ceiling; ++mib) {
    void* block = ::mmap(nullptr, kMib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) {
      shared->stop_errno = errno;
      ::_exit(0);
    }
    // One call faults the whole step in (a third faster than 256 page faults here); any
    // refusal (an older kernel, gVisor, a memcg at its limit) falls back to touching every
    // page, so the end at the limit is the same OOM kill or mmap error as ever.
    if (::madvise(block, kMib, kMadvPopulateWrite) != 0) {
      char* bytes = static_cast<char*>(block);
      for (std::size_t off = 0; off < kMib; off += static_cast<std::size_t>(page)) bytes[off] = 1;
    }
    shared->reached_mib = mib;
    if (mib % every == 0) {
      ctx.out.Emit({{"family", "res.memory"}, {"kind", "progress"}, {"mib", mib}});
    }
  }
  ::_exit(0);  // the ceiling; the kernel frees everything
}

void AddCgroupReadings(nlohmann::json& fact) {
  AddFileReading(fact, "cgroup_memory_limit_bytes", "/sys/fs/cgroup/memory/memory.limit_in_bytes");
  AddFileReading(fact, "cgroup_memsw_limit_bytes", "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes");
  AddFileReading(fact, "cgroup_memory_max_usage_bytes", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes");
  AddFileReading(fact, "cgroup_memory_failcnt", "/sys/fs/cgroup/memory/memory.failcnt");
  AddFileReading(fact, "cgroup2_memory_max", "/sys/fs/cgroup/memory.max");
}

}  // namespace

std::string CheckResMemoryArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.memory", args,
                      {{"ceiling-mib", kMaxMemoryCeilingMib}, {"every-mib", 1024}}, false);
}

void RunResMemory(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.memory", args, {{"ceiling-mib", kMaxMemoryCeilingMib}, {"every-mib", 1024}},
               false);
  const long ceiling = parsed.Number("ceiling-mib");
  const long every = parsed.Number("every-mib", 8);
  nlohmann::json result = {{"family", "res.memory"}, {"kind", "result"}, {"ceiling_mib", ceiling}};
  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                      -1, 0);
  if (page == MAP_FAILED) {
    result["ok"] = false;
    result["step"] = "mmap";
    result["errno"] = ErrnoName(errno);
    ctx.out.Emit(result);
    return;
  }
  auto* shared = new (page) Shared{};
  const long start = MonotonicMs();
  pid_t child = ::fork();
  if (child < 0) {
    result["ok"] = false;
    result["step"] = "fork";
    result["errno"] = ErrnoName(errno);
    ctx.out.Emit(result);
    return;
  }
  if (child == 0) AllocateUpTo(ctx, shared, ceiling, every);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  result["ok"] = true;
  result["ms"] = MonotonicMs() - start;
  result["reached_mib"] = shared->reached_mib.load();
  if (WIFSIGNALED(status)) {
    result["stopped_by"] = SignalName(WTERMSIG(status));
  } else if (shared->stop_errno != 0) {
    result["stopped_by"] = ErrnoName(shared->stop_errno);
  } else {
    result["stopped_by"] = "ceiling";
  }
  AddCgroupReadings(result);
  ::munmap(page, sizeof(Shared));
  ctx.out.Emit(result);
}

}  // namespace sandprobe
