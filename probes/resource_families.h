// The resource probe families (resource_*.cc): each pushes one limit up to a ceiling the
// planner computed from the policy, streams how far it got, and reports what stopped it.
//
// Every loop stops at its ceiling, so a sandbox without the limit costs the host at most the
// ceiling (and the harness's envelope bounds even that). Facts only: the host decides whether
// the stopping point matches the declared limit.
#pragma once

#include <map>
#include <cstddef>
#include <optional>
#include <string>

#include "probes/families.h"

namespace sandprobe {

// The unit the memory and disk climbs step by.
inline constexpr std::size_t kMib = 1 << 20;

// Hard caps on what any ceiling argument may ask for, whatever the policy says.
inline constexpr long kMaxPidsCeiling = 4096;
inline constexpr long kMaxMemoryCeilingMib = 4096;
inline constexpr long kMaxDiskCeilingMib = 2048;
inline constexpr long kMaxFdsCeiling = 65536;
inline constexpr long kMaxCpuThreads = 64;
inline constexpr long kMaxCpuWindowMs = 10'000;
inline constexpr long kMaxWallSeconds = 20;

// `--name VALUE` pairs of a resource family. Parse() returns "" or the usage error.
class ResourceArgs {
 public:
  std::string Parse(const std::string& family, const FamilyArgs& args,
                    const std::map<std::string, long>& numeric_max,  // name -> largest value
                    bool wants_dir);
  long Number(const std::string& name, long fallback = 0) const;
  const std::string& dir() const { return dir_; }

 private:
  std::map<std::string, long> numbers_;
  std::string dir_;
};

// Which kernel answered (probes/priv_context.cc): res.cpu's clock and res.pids' counters are
// that kernel's, which the host compares with its own.
nlohmann::json KernelContext();

// The first line of a small file (cgroup knobs: "max", "52428800"), when readable.
std::optional<std::string> ReadSmallFile(const std::string& path);
// Adds `key`: the first line of `path` (as a number when it is one), when readable.
void AddFileReading(nlohmann::json& fact, const std::string& key, const std::string& path);
long MonotonicMs();

// The probe's own CPU cgroup directory (probes/resource_cpu_cgroup.cc).
struct CpuCgroupDir {
  int version = 0;          // 1: the v1 "cpu" hierarchy; 2: unified
  std::string mountpoint;   // where the hierarchy is mounted
  std::string cgroup_path;  // the probe's cgroup as /proc/self/cgroup names it
  std::string dir;          // the directory of that cgroup under the mount
  bool resolved = true;     // false: the mount does not show it, `dir` is the mount's top
};
// Picks the v1 cpu hierarchy (else v2) in `mountinfo` text and the probe's directory in it,
// from its cgroup paths (/proc/self/cgroup: the v1 "cpu" line, the v2 "0::" line).
std::optional<CpuCgroupDir> ResolveCpuCgroup(const std::string& mountinfo,
                                             const std::optional<std::string>& v1_path,
                                             const std::optional<std::string>& v2_path);
std::optional<CpuCgroupDir> FindCpuCgroup();  // the same, from /proc/self
// The same for any controller's hierarchy ("pids"): the v1 one holding it, else the v2 one.
std::optional<CpuCgroupDir> ResolveCgroup(const std::string& mountinfo, const std::string& controller,
                                          const std::optional<std::string>& v1_path,
                                          const std::optional<std::string>& v2_path);
std::optional<CpuCgroupDir> FindCgroup(const std::string& controller);
// "nr_periods 52\nnr_throttled 1\n..." -> {"nr_periods": 52, ...}: integer values only.
nlohmann::json ParseCgroupKeyValues(const std::string& text);
// cgroup v2 cpu.max ("max 100000", "50000 100000") -> {"quota_us", "period_us"} (-1: no
// quota); null when it is neither.
nlohmann::json ParseCpuMax(const std::string& text);
// {"version", "dir", "cgroup_path", "resolved", "quota", "ancestor_quota"?, "stat_dir"}: the
// quota of the cgroup and the tightest of its visible parents, and where throttling is counted.
nlohmann::json DescribeCpuCgroup(const CpuCgroupDir& at);
// `dir`/cpu.stat parsed (ParseCgroupKeyValues); null when unreadable.
nlohmann::json ReadCpuStat(const std::string& dir);

std::string CheckResPidsArgs(const FamilyArgs& args);
std::string CheckResMemoryArgs(const FamilyArgs& args);
std::string CheckResCpuArgs(const FamilyArgs& args);
std::string CheckResWallArgs(const FamilyArgs& args);
std::string CheckResDiskArgs(const FamilyArgs& args);
std::string CheckResFdsArgs(const FamilyArgs& args);

// res.pids --ceiling N: fork children that pause() until fork fails or N children exist.
void RunResPids(const ProbeContext& ctx, const FamilyArgs& args);
// res.memory --ceiling-mib N [--every-mib K]: a child maps and touches 1 MiB steps up to N.
void RunResMemory(const ProbeContext& ctx, const FamilyArgs& args);
// res.cpu --threads N --window-ms M [--min-periods K] [--stop-above-mc H --edge-ms E
// --min-window-ms W]: N busy threads; CPU time / wall time, with the cgroup's quota and
// cpu.stat before and after. With --min-periods and a readable cpu.stat the window is K CFS
// periods (the judge reads the throttling counters then). With --stop-above-mc the window ends
// at the first 100 ms checkpoint from W ms on where the CPU time exceeds H millicores over
// the elapsed time plus E ms ("stopped_early": true): more than a quota of H cores can give.
void RunResCpu(const ProbeContext& ctx, const FamilyArgs& args);
// res.wall --ceiling-seconds N: sleeps N seconds, a progress frame (elapsed_ms) every 250 ms.
void RunResWall(const ProbeContext& ctx, const FamilyArgs& args);
// res.disk --dir D --ceiling-mib N: write zeros in 1 MiB steps up to N, then delete.
void RunResDisk(const ProbeContext& ctx, const FamilyArgs& args);
// res.fds --ceiling N: open /dev/null until EMFILE or N descriptors are open.
void RunResFds(const ProbeContext& ctx, const FamilyArgs& args);

}  // namespace sandprobe
