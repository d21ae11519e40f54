// Judges of the resource families whose launch ends by itself (pids, cpu, disk, fds): the
// measured limit, the mechanism that stopped the probe, and one of three outcomes
// (ClassifyLimit, through Conclude in family_resource_measure.h).
#include "runner/family_resource_measure.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace sandprobe {

using namespace resource_measure;
using nlohmann::json;

Verdict JudgeResPids(const JudgeInput& in) {
  Verdict v;
  std::optional<LimitBand> band = StartLimit(in, v);
  if (!band) return v;
  const json* fact = LastFact(in, "result", &v);
  if (!fact) {
    return MissingResult(in, v, "children", {band->declared, band->low, 1e18}, "children");
  }
  Measurement m;
  m.unit = "tasks";
  double before = Number(*fact, "tasks_before", 1);
  m.measured = before + Number(*fact, "children");
  m.reached_ceiling = StoppedBy(*fact) == "ceiling";
  m.ceiling = m.measured;
  double pids_max = Number(*fact, "cgroup_pids_max", -1);
  double nproc = Number(*fact, "rlimit_nproc", -1);
  bool root = Number(*fact, "uid", 0) == 0;
  if (pids_max > 0 && std::fabs(pids_max - m.measured) <= 2) {
    m.mechanism = fmt::format("the pids cgroup ({}, pids.max={})", StoppedBy(*fact), Num(pids_max));
  } else if (nproc > 0 && !root) {
    m.mechanism = fmt::format("{} with RLIMIT_NPROC={} (counted per uid across the host)",
                              StoppedBy(*fact), Num(nproc));
  } else {
    m.mechanism = fmt::format("{} from fork (no pids.max readable inside; {} tasks before)",
                              StoppedBy(*fact), Num(before));
  }
  Conclude(in, v, *band, m,
           fmt::format("limit the sandbox's pids cgroup to {} (docker --pids-limit {}); "
                       "RLIMIT_NPROC does not bind root and counts per uid host-wide",
                       Num(band->declared), Num(band->declared)));
  return v;
}

namespace {

// The host's own reading of the sandbox's CPU quota in cores (profile `inspect`: docker's
// HostConfig.NanoCpus); -1 when there is none.
double HostCores(const JudgeInput& in) {
  const json* nano = HostReading(in, "nano_cpus");
  return nano && nano->is_number() && nano->get<double>() > 0 ? nano->get<double>() / 1e9 : -1;
}

// Weighs a CPU verdict against what the probe could see and what the host reads.
void CrossCheckCpu(const JudgeInput& in, Verdict& v, const LimitBand& band, double measured,
                   bool quota_inside, double host_cores) {
  // CPU time is also what a busy host leaves over: without a quota the probe can see, a
  // measurement inside the band may be contention, not a limit. That proves nothing, unless
  // the host itself sets a quota in the band.
  bool host_in_band = host_cores >= band.low && host_cores <= band.high;
  if (v.outcome == Outcome::kPass && !quota_inside && !host_in_band) {
    v.outcome = Outcome::kInconclusive;
    v.observed += "; but no CPU quota is visible inside, so the host's load may explain it";
  }
  // More CPU time than the host's quota lets the sandbox have cannot be real: the clock inside
  // is not the host's. (gVisor's sentry accounts its tasks' CPU time itself and counts the
  // time a throttled task waits as running: 1.0-1.8 cores measured inside under a 1-core
  // quota that the host's cpuacct shows holding.) Nothing is proven either way.
  if (v.outcome == Outcome::kFail && v.direction == Direction::kTooPermissive && host_cores > 0 &&
      measured > host_cores * band.high / band.declared) {
    v.outcome = Outcome::kInconclusive;
    v.direction = Direction::kNone;
    v.check.severity = in.check.severity;
    v.observed += fmt::format("; but the host caps the sandbox at {} cores, so CPU time beyond "
                              "that is not real: the CPU clock inside is not the host's",
                              Num(host_cores));
  }
}

}  // namespace

Verdict JudgeResCpu(const JudgeInput& in) {
  Verdict v;
  std::optional<LimitBand> band = StartLimit(in, v);
  if (!band) return v;
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "cores", *band, "cores");
  Measurement m;
  m.unit = "cores";
  m.measured = Number(*fact, "effective_cores");
  double threads = Number(*fact, "threads_started", 1);
  double cpus = Number(*fact, "affinity_cpus", threads);
  m.ceiling = std::min(threads, cpus);
  // Every thread got a core of its own: nothing held the probe back.
  m.reached_ceiling = m.ceiling > band->high && m.measured >= 0.9 * m.ceiling;
  double quota = Number(*fact, "cgroup_cfs_quota_us", -1);
  double period = Number(*fact, "cgroup_cfs_period_us", 100000);
  double host_cores = HostCores(in);
  if (quota > 0) {
    m.mechanism = fmt::format("the CFS quota ({} cores: cfs_quota_us={}, period={})",
                              Num(quota / period), Num(quota), Num(period));
  } else if (host_cores > 0) {
    m.mechanism = fmt::format("the host's CPU quota ({} cores, not readable inside; {} CPUs in "
                              "the affinity mask)", Num(host_cores), Num(cpus));
  } else {
    m.mechanism = fmt::format("nothing visible (no CFS quota readable inside; {} CPUs in the "
                              "affinity mask)", Num(cpus));
  }
  Conclude(in, v, *band, m,
           fmt::format("give the sandbox a CPU quota of {} cores (docker --cpus {})",
                       Num(band->declared), Num(band->declared)));
  CrossCheckCpu(in, v, *band, m.measured, quota > 0, host_cores);
  return v;
}

Verdict JudgeResDisk(const JudgeInput& in) {
  Verdict v;
  std::optional<LimitBand> band = StartLimit(in, v);
  if (!band) return v;
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "mib", *band, "MiB");
  if (!FactOk(*fact)) {
    v.outcome = Outcome::kInconclusive;
    v.observed = fmt::format("could not create a file in {}: {}", in.check.resolved_target,
                             DescribeFailure(*fact));
    return v;
  }
  Measurement m = MeasuredAgainstCeiling(*fact, "written_mib", "ceiling_mib", "MiB");
  std::string stop = StoppedBy(*fact);
  m.mechanism = stop == "ENOSPC"   ? fmt::format("a full filesystem (ENOSPC; {} is {} MiB)",
                                                 in.check.resolved_target, Num(Number(*fact, "fs_size_mib")))
                : stop == "EDQUOT" ? std::string("a disk quota (EDQUOT)")
                : stop == "EFBIG"  ? std::string("RLIMIT_FSIZE (EFBIG)")
                                   : stop;
  if (!fact->value("removed", true)) m.mechanism += "; the probe could not remove its file";
  Conclude(in, v, *band, m,
           fmt::format("mount {} as a tmpfs of {} MiB (docker --tmpfs {}:size={}m)",
                       in.check.resolved_target, Num(band->declared), in.check.resolved_target,
                       Num(band->declared)));
  return v;
}

Verdict JudgeResFds(const JudgeInput& in) {
  Verdict v;
  std::optional<LimitBand> band = StartLimit(in, v);
  if (!band) return v;
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "open_total", *band, "fds");
  Measurement m = MeasuredAgainstCeiling(*fact, "open_total", "ceiling", "fds");
  std::string stop = StoppedBy(*fact);
  m.mechanism = stop == "EMFILE" ? fmt::format("RLIMIT_NOFILE (EMFILE; soft limit {})",
                                               Num(Number(*fact, "rlimit_nofile")))
                : stop == "ENFILE" ? std::string("the system-wide file table (ENFILE)")
                                   : stop;
  Conclude(in, v, *band, m,
           fmt::format("set RLIMIT_NOFILE to {} (docker --ulimit nofile={}:{})",
                       Num(band->declared), Num(band->declared), Num(band->declared)));
  return v;
}

}  // namespace sandprobe
