// res.cpu, host side: what bounds the sandbox's CPU, read from the evidence of the quota
// itself, and the verdict. Internal to the resource family group; declared here so the
// judgement can be unit-tested on hand-made evidence.
//
// CPU time alone cannot tell a quota from a busy host: on a loaded CI runner a sandbox with
// `--cpus 1` may get 0.5 cores, and one without any limit may too. So the judgement rests on
// the quota (is one set, at what value) and on its own enforcement evidence (cgroup cpu.stat:
// the periods in which the kernel throttled the sandbox), and uses the measured CPU time only
// where those are silent.
//
// Which evidence wins:
//  1. The quota: the host's reading decides over the cgroup files the probe reads inside; those
//     count only when the host has no reading. The host reads the probe process's own cgroup
//     chain when it can see the process (run/probe_process_reading.h: bwrap, firejail, runc),
//     else the profile's `inspect` (docker's HostConfig.NanoCpus, else CpuQuota/CpuPeriod).
//     Either may say "no quota" (no quota up the chain; NanoCpus 0 and CpuQuota 0; cpu.max
//     "max", cfs_quota_us -1): then the declared limit is missing, a fail too permissive
//     whatever CPU time was measured.
//  2. A quota outside the band fails on its value (above: too permissive; below: too
//     restrictive). A quota in the band passes when enforced: it throttled the probe in at
//     least kMeaningfulThrottle of the window's periods, or the probe consumed about the quota
//     (within the band's tolerance below it). Below the quota with almost no throttling is the
//     host's load (or too few CPUs): with a host-read quota the host's reading decides, a pass
//     that says so; with only the cgroup file inside, inconclusive. More CPU time than a
//     host-read quota allows: in another kernel (gVisor's sentry keeps its own clock, decided by
//     the kernel identity signals, families/kernel_identity.h) not evidence against the host's
//     quota, a pass; in the host's kernel the quota does not bind, a fail (so is more than a
//     quota only the cgroup file shows).
//  3. No quota reading at all. In another kernel, the CPUs that kernel has online bound it (a
//     VM's vCPUs): judged as a quota of that many cores. Else only CPU time above the band is a
//     finding (too permissive); anything else is inconclusive, since contention explains it.
//     "Above the band" means more than a hidden quota at the band's upper edge could give over
//     the window: high x (wall + edge), edge being one CFS period's leftover at the window's
//     start (CpuEdgeMs). The probe may end its window as soon as that holds (--stop-above-mc).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/check.h"
#include "families/family_resource.h"
#include "model/verdict.h"

namespace sandprobe::resource_cpu {

// A quota that throttled the probe in at least this fraction of the window's CFS periods is
// enforced. (Under contention a 1-core quota throttled 1 of 52 periods: not evidence.)
inline constexpr double kMeaningfulThrottle = 0.2;

enum class QuotaSource { kUnknown, kHost, kCgroup };

struct CpuQuota {
  QuotaSource source = QuotaSource::kUnknown;
  bool limited = false;  // a quota is set; false with a known source: no quota at all
  double cores = 0;      // quota / period, when limited
  std::string reading;   // what was read: "docker inspect nano_cpus=1000000000"
};

// cpu.stat deltas over the busy window (v1 throttled_time ns, v2 throttled_usec).
struct CpuThrottling {
  bool readable = false;
  double periods = 0, throttled = 0, throttled_ms = 0;
};

struct CpuEvidence {
  CpuQuota quota;         // the deciding quota (rule 1)
  std::string overruled;  // the cgroup file's reading when the host's differs from it
  CpuThrottling throttling;
  double measured = 0;    // effective cores: CPU time / wall time over the window
  double wall = 0;        // the window, seconds
  double edge = 0;        // seconds a quota may add to the window at its rate (CpuEdgeMs)
  double usable = 0;      // the most the probe could use: min(threads started, affinity CPUs)
  // Set when the probe ran in another kernel than the harness's: its clock is that kernel's
  // (the comparison's text); then `online_cpus` are that kernel's CPUs (a VM's vCPUs).
  std::string other_kernel;
  double online_cpus = 0;
};

// The launch's host readings (an object of inspect readings, or null) as a quota.
CpuQuota HostQuota(const nlohmann::json& readings);
// The probe's result fact (cpu_cgroup: own quota and the tightest visible parent's) as a quota.
CpuQuota CgroupQuota(const nlohmann::json& result);
CpuThrottling Throttling(const nlohmann::json& result);
CpuEvidence ReadCpuEvidence(const nlohmann::json& result, const nlohmann::json& host_readings);

struct CpuJudgement {
  Outcome outcome = Outcome::kInconclusive;
  Direction direction = Direction::kNone;
  bool off_by_value = false;  // a quota at another value: severity medium
  std::string observed;
};

CpuJudgement JudgeCpu(const LimitBand& band, const CpuEvidence& evidence);

}  // namespace sandprobe::resource_cpu
