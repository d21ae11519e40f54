// res.memory and res.cpu for the wasm32-wasi build, in place of resource_memory.cc and
// resource_cpu.cc (which fork a child and start threads): WASI (snapshot preview1) has neither
// processes nor threads. The facts keep the native shape (resource_families.h), with what WASI
// cannot express left out (the cgroup readings, the kernel context, the CPU affinity) or said
// as an errno (a second thread: ENOSYS); probes/wasi/README.md lists them.
#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "contract/errno_name.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {


const std::map<std::string, long> kMemoryArgs = {{"ceiling-mib", kMaxMemoryCeilingMib}, {"every-mib", 1024}};
const std::map<std::string, long> kCpuArgs = {
    {"threads", kMaxCpuThreads}, {"window-ms", kMaxCpuWindowMs}, {"min-periods", 100},
    {"stop-above-mc", kMaxCpuThreads * 1000}, {"edge-ms", 1000}, {"min-window-ms", kMaxCpuWindowMs}};

double CpuSeconds() {
  struct timespec ts {};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0.0;
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

}  // namespace

std::string CheckResMemoryArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.memory", args, kMemoryArgs, false);
}

// The linear memory grows by 1 MiB steps (malloc, every byte written, so nothing is only
// reserved) up to the ceiling: "ENOMEM" when the runtime refuses memory.grow (its limit, or
// wasm32's 4 GiB), "ceiling" when nothing did. In-process: a runtime that kills the instance
// instead ends the launch, and the progress frames are the evidence.
void RunResMemory(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.memory", args, kMemoryArgs, false);
  const long ceiling = parsed.Number("ceiling-mib");
  const long every = parsed.Number("every-mib", 8);
  nlohmann::json result = {{"family", "res.memory"}, {"kind", "result"}, {"ceiling_mib", ceiling}};
  const long start = MonotonicMs();
  std::vector<void*> blocks;
  blocks.reserve(static_cast<std::size_t>(ceiling));
  long reached = 0;
  int stop_errno = 0;
  for (long mib = 1; mib <= ceiling; ++mib) {
    void* block = std::malloc(kMib);
    if (block == nullptr) {
      stop_errno = ENOMEM;
      break;
    }
    std::memset(block, 1, kMib);
    blocks.push_back(block);
    StopIfPastDeadline();  // no signals in WASI: the loop checks the probe's deadline itself
    reached = mib;
    if (mib % every == 0) ctx.out.Emit({{"family", "res.memory"}, {"kind", "progress"}, {"mib", mib}});
  }
  for (void* block : blocks) std::free(block);
  result["ok"] = true;
  result["ms"] = MonotonicMs() - start;
  result["reached_mib"] = reached;
  result["stopped_by"] = stop_errno != 0 ? ErrnoName(stop_errno) : "ceiling";
  ctx.out.Emit(result);
}

std::string CheckResCpuArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.cpu", args, kCpuArgs, false);
}

// The probe's one thread is busy for the window (no sleeping watcher thread to spare): CPU
// time / wall time is the share of a core the runtime gave it. More threads are asked for than
// WASI can start: "threads_started" is 1 and "create_errno" ENOSYS. --stop-above-mc ends the
// window at the first 100 ms checkpoint from --min-window-ms on where the CPU time exceeds that
// many millicores over the elapsed time plus --edge-ms, as the native probe does.
void RunResCpu(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.cpu", args, kCpuArgs, false);
  const long threads = parsed.Number("threads", 2);
  const long window_ms = parsed.Number("window-ms", 2000);
  const long above_mc = parsed.Number("stop-above-mc", 0);
  const long edge_ms = parsed.Number("edge-ms", 0);
  constexpr long kCheckpointMs = 100;
  long checkpoint = above_mc > 0 ? std::max(parsed.Number("min-window-ms", 0), kCheckpointMs) : window_ms;
  nlohmann::json result = {{"family", "res.cpu"}, {"kind", "result"}, {"threads", threads}, {"window_ms", window_ms}};
  const double cpu_before = CpuSeconds();
  const long start = MonotonicMs();
  bool stopped_early = false;
  unsigned long sink = 0;
  for (long elapsed = 0; elapsed < window_ms; elapsed = MonotonicMs() - start) {
    for (int i = 0; i < 10000; ++i) asm volatile("" : "+r"(sink));
    StopIfPastDeadline();
    if (elapsed < checkpoint || above_mc <= 0) continue;
    const double cpu_ms = (CpuSeconds() - cpu_before) * 1000.0;
    if (cpu_ms * 1000.0 > static_cast<double>(above_mc) * static_cast<double>(elapsed + edge_ms)) {
      stopped_early = true;
      break;
    }
    checkpoint += kCheckpointMs;
  }
  const double wall = (MonotonicMs() - start) / 1000.0;
  const double cpu = CpuSeconds() - cpu_before;
  result["threads_started"] = 1;
  if (threads > 1) result["create_errno"] = ErrnoName(ENOSYS);
  if (above_mc > 0) result["stopped_early"] = stopped_early;
  result["cpu_seconds"] = cpu;
  result["wall_seconds"] = wall;
  result["effective_cores"] = wall > 0 ? cpu / wall : 0.0;
  ctx.out.Emit(result);
}

}  // namespace sandprobe
