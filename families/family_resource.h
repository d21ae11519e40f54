// Resource families, host side: the ceilings the planner gives each probe, and the banded
// judgement of a measured limit against the declared one (family_resource.cc).
#pragma once

#include <cstdint>
#include <string>

#include "model/plan_types.h"

namespace sandprobe {

// Ceilings: always above the declared limit, so "not enforced" is found at a bounded cost.
// (The probe refuses anything above its own caps, see probes/resource_families.h.)
std::int64_t PidsCeiling(std::int64_t declared);      // max(4 x declared, 256), at most 4096
// Memory, /tmp and open files climb just past the band's upper edge (`band_high`, the check's
// Tolerance::High()): ceil(band_high) + max(declared / 4, floor), at most the probe's cap. The
// judge needs no more: a ceiling above the band makes reaching it a fail, "not enforced up to
// N" (ClassifyLimit), and a limit in or below the band stops the probe before it, whatever the
// ceiling; only a limit above the ceiling reads "not enforced up to N" instead of its value,
// still a fail. The climb is the time (bwrap sets no memory limit: 2 x declared cost 0.15 s
// more of the audit than this on a 512 MiB policy). A ceiling at the cap that is not above the
// band stays "cannot measure above N", as before.
std::int64_t MemoryCeilingMib(std::int64_t declared, double band_high);  // floor 16, cap 4096
std::int64_t DiskCeilingMib(std::int64_t declared, double band_high);    // floor 16, cap 2048
std::int64_t FdsCeiling(std::int64_t declared, double band_high);        // floor 64, cap 65536
int CpuThreads(double declared);                      // ceil(2 x declared), 2..64

// res.cpu's early stop (no quota readable, CPU time alone decides): a quota of q cores with a
// CFS period of P ms gives at most q x (t + P) ms of CPU time in t ms (every period the window
// touches, the first one's leftover included), plus the runtime slices (5 ms by default) the
// CPUs that ran its threads may still hold from the period before. CpuEdgeMs is that slack: the
// kernel's and docker's default 100 ms period plus two slices per probe thread (the CPU it
// runs on and one it left). Assumed: that default period and no cpu.cfs_burst_us, as the 2 s
// window's "one period's slack" always assumed. The probe ends
// the window as soon as its CPU time exceeds that bound at the band's upper edge, and the judge
// calls CPU time "above the band" by the same bound.
inline constexpr std::int64_t kCfsPeriodMs = 100;
inline constexpr std::int64_t kCfsSliceMs = 5;
std::int64_t CpuEdgeMs(int threads);  // kCfsPeriodMs + 2 x kCfsSliceMs x threads
// The band's upper edge in millicores, rounded up (the stop never comes below the band).
std::int64_t CpuStopAboveMc(double band_high);

// Wall limits are measured only up to this many seconds (the probe sleeps past the limit); a
// longer one would hold the suite for minutes, so its check is a skip with that reason.
inline constexpr std::int64_t kMaxMeasuredWallSeconds = 10;

// Each resource launch gets its own timeout (its probe's worst case plus docker start-up):
// res.memory and res.disk 90 s, res.wall its sleep + 20 s, the others 60 s. The family
// table's launch_timeout_seconds column (the planner applies it, ApplyLaunchTimeouts).
int ResourceTimeoutSeconds(const ProbeInvocation& inv);

// The outcomes a measured limit can have.
enum class LimitOutcome {
  kAtDeclared,     // stopped within [low, high]: pass
  kAtOtherValue,   // stopped outside the band: fail, too permissive (above) or too restrictive
  kNotEnforced,    // reached the probe's ceiling, above the band: fail, too permissive,
                   // "not enforced up to N"
  kBeyondCeiling,  // reached the probe's ceiling, which is not above the band (a declared
                   // limit above the probe's caps): inconclusive, "cannot measure above N"
};

struct LimitBand {
  double declared = 0, low = 0, high = 0;
};

// `reached_ceiling`: the probe stopped at its own ceiling (`ceiling`, in the measured unit),
// not at a limit.
LimitOutcome ClassifyLimit(const LimitBand& band, double measured, bool reached_ceiling,
                           double ceiling);

}  // namespace sandprobe
