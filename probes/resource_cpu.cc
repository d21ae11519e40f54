// res.cpu: how much CPU may the sandbox use? N threads spin for a short window; the CPU time
// the process got divided by the wall time is the effective number of cores. Around the
// window the probe reads its own CPU cgroup (resource_cpu_cgroup.cc): the quota, and cpu.stat
// before and after, whose nr_periods/nr_throttled say whether the quota itself held the
// threads back, or a busy host did.
#include <pthread.h>
#include <unistd.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "contract/errno_name.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {

std::atomic<bool> g_spin{true};

void* Spin(void*) {
  unsigned long sink = 0;
  while (g_spin.load(std::memory_order_relaxed)) asm volatile("" : "+r"(sink));
  return nullptr;
}

double CpuSeconds() {
  struct timespec ts {};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

const std::map<std::string, long> kCpuArgs = {
    {"threads", kMaxCpuThreads}, {"window-ms", kMaxCpuWindowMs}, {"min-periods", 100},
    {"stop-above-mc", kMaxCpuThreads * 1000}, {"edge-ms", 1000}, {"min-window-ms", kMaxCpuWindowMs}};

// How often an early stop is considered once the minimum window has passed.
constexpr long kCheckpointMs = 100;

// An early end of the window: at a checkpoint, the CPU time so far is more than `above_mc`
// millicores could have had over the elapsed time plus `edge_ms` (what a quota of that many
// cores can give at most, one period's leftover at the window's start included). A longer
// window could only dilute that fact, never undo it.
struct EarlyStop {
  long above_mc = 0;  // 0: never stop early
  long edge_ms = 0;
  long min_ms = 0;
};

// The busy window: `periods` CFS periods when the cgroup's quota and throttling counters are
// readable (the judge reads those then), else the whole `window_ms`.
long WindowMs(const nlohmann::json& cgroup, bool stat_readable, long window_ms, long periods) {
  if (periods <= 0 || !stat_readable || !cgroup.is_object() || !cgroup["quota"].is_object()) {
    return window_ms;
  }
  const nlohmann::json& binding = cgroup.contains("ancestor_quota") &&
                                  cgroup["stat_dir"] == cgroup["ancestor_quota"]["dir"]
                                      ? cgroup["ancestor_quota"] : cgroup["quota"];
  long period_ms = static_cast<long>(binding["period_us"].get<long long>() / 1000);
  return std::clamp(periods * std::max(period_ms, 1L), 100L, window_ms);
}

// Sleeps until `window_ms` after `start`, or the first checkpoint where `stop` holds; returns
// whether it stopped early. Bounded: one sleep per checkpoint, window_ms / kCheckpointMs + 1.
bool SleepOutWindow(long window_ms, const EarlyStop& stop, double cpu_before, long start) {
  long at = stop.above_mc > 0 ? std::clamp(stop.min_ms, kCheckpointMs, window_ms) : window_ms;
  for (;;) {
    long left = at - (MonotonicMs() - start);
    struct timespec nap = {std::max(left, 0L) / 1000, (std::max(left, 0L) % 1000) * 1'000'000};
    while (nanosleep(&nap, &nap) != 0) {
    }
    if (at >= window_ms) return false;
    // CPU time first: the elapsed time read after it can only be longer (the stop is cautious).
    const double cpu_ms = (CpuSeconds() - cpu_before) * 1000.0;
    const long elapsed = MonotonicMs() - start;
    if (cpu_ms * 1000.0 > static_cast<double>(stop.above_mc) * static_cast<double>(elapsed + stop.edge_ms)) {
      return true;
    }
    at = std::min(at + kCheckpointMs, window_ms);
  }
}

}  // namespace

std::string CheckResCpuArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.cpu", args, kCpuArgs, false);
}

void RunResCpu(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.cpu", args, kCpuArgs, false);
  const long threads = parsed.Number("threads", 2);
  // The kernel that keeps the clock read below: in another kernel (a VM's guest, gVisor's
  // sentry) the host decides by its own readings, and a guest's online CPUs are its vCPUs.
  nlohmann::json result = {{"family", "res.cpu"}, {"kind", "result"}, {"threads", threads},
                            {"kernel", KernelContext()}};
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) result["affinity_cpus"] = CPU_COUNT(&set);
  if (const long online = ::sysconf(_SC_NPROCESSORS_ONLN); online > 0) result["online_cpus"] = online;
  nlohmann::json cgroup = nullptr;
  nlohmann::json stat_before = nullptr;
  if (std::optional<CpuCgroupDir> at = FindCpuCgroup()) {
    cgroup = DescribeCpuCgroup(*at);
    stat_before = ReadCpuStat(cgroup["stat_dir"].get<std::string>());
  }
  const long window_ms = WindowMs(cgroup, stat_before.is_object(), parsed.Number("window-ms", 2000),
                                  parsed.Number("min-periods", 0));
  result["window_ms"] = window_ms;

  g_spin = true;
  std::vector<pthread_t> started;
  int create_errno = 0;
  const double cpu_before = CpuSeconds();
  const long start = MonotonicMs();
  for (long i = 0; i < threads; ++i) {
    pthread_t thread;
    if (int err = pthread_create(&thread, nullptr, Spin, nullptr)) {
      create_errno = err;
      break;
    }
    started.push_back(thread);
  }
  const EarlyStop stop{parsed.Number("stop-above-mc", 0), parsed.Number("edge-ms", 0),
                       parsed.Number("min-window-ms", 0)};
  const bool stopped_early = SleepOutWindow(window_ms, stop, cpu_before, start);
  g_spin = false;
  for (pthread_t thread : started) pthread_join(thread, nullptr);
  const double wall = (MonotonicMs() - start) / 1000.0;
  const double cpu = CpuSeconds() - cpu_before;
  result["threads_started"] = static_cast<long>(started.size());
  if (stop.above_mc > 0) result["stopped_early"] = stopped_early;
  if (create_errno != 0) result["create_errno"] = ErrnoName(create_errno);
  result["cpu_seconds"] = cpu;
  result["wall_seconds"] = wall;
  result["effective_cores"] = wall > 0 ? cpu / wall : 0.0;
  if (cgroup.is_object()) {
    cgroup["stat_before"] = stat_before;
    cgroup["stat_after"] = ReadCpuStat(cgroup["stat_dir"].get<std::string>());
    result["cpu_cgroup"] = cgroup;
  }
  ctx.out.Emit(result);
}

}  // namespace sandprobe
