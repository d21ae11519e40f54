// Judges of the resource families whose launch ends by itself (pids, disk, fds): the
// measured limit, the mechanism that stopped the probe, and one of three outcomes
// (ClassifyLimit, through Conclude in family_resource_measure.h).
#include "families/family_resource_measure.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace sandprobe {

using namespace resource_measure;
using nlohmann::json;

namespace {

// res.pids without a result frame. gVisor's sentry dies (exit 2) when the host's pids cgroup
// refuses it a thread, so the sandbox, not a fork's EAGAIN, ends the climb. With positive
// evidence of that end -- the progress frames climbed from the climb's start, the harness
// neither timed out nor erred, the sandbox's process ended on its own, and the host read a pids
// limit on this sandbox -- the last progress frame bounds the tasks reached: below the band a
// fail too restrictive (the workload cannot hold the declared tasks), above it too permissive.
// Otherwise MissingResult (inconclusive, or a fail above the band).
Verdict PidsEndedBySandbox(const JudgeInput& in, Verdict v, const LimitBand& band) {
  const BatchResult::End& end = in.result.end;
  const bool ended_itself = !end.timed_out && end.error.empty() && !in.result.frames.done &&
                            in.result.frames.protocol_errors.empty() &&
                            (end.signal || (end.exit_code && *end.exit_code != 0));
  const json* limit = HostReading(in, "pids_limit");
  const bool host_limit = limit != nullptr && limit->is_number() && limit->get<double>() > 0;
  const json* progress = LastFact(in, "progress", &v);
  if (!ended_itself || !host_limit || progress == nullptr || !ProgressClimbs(in, "children")) {
    return MissingResult(in, v, "children", {band.declared, band.low, 1e18}, "children");
  }
  // Progress comes every 8 children: the probe itself plus at most 7 unreported ones.
  const double at_least = Number(*progress, "children") + 1, at_most = at_least + 7;
  const std::string how = end.signal ? fmt::format("signal {}", *end.signal) : fmt::format("exit {}", *end.exit_code);
  v.expected = fmt::format("enforced at {} tasks (band {}..{})", Num(band.declared), Num(band.low), Num(band.high));
  v.remediation = fmt::format("give the sandbox a pids limit its own tasks do not eat into: {} tasks for the "
                              "workload, with the runtime's own above that", Num(band.declared));
  if (at_most < band.low || at_least > band.high) {
    const bool below = at_most < band.low;
    v.observed = fmt::format("the sandbox ended the launch ({}) while the probe was forking, at {}..{} tasks "
                             "(the last progress frame: {} children) vs declared {}: {}",
                             how, Num(at_least), Num(at_most), Num(at_least - 1), Num(band.declared),
                             below ? "the workload cannot hold the declared tasks" : "beyond the declared limit");
    Judge(v, false, below ? Direction::kTooRestrictive : Direction::kTooPermissive);
    v.check.severity = below ? Severity::kMedium : v.check.severity;
    v.evidence.expected_end = fmt::format("ended by the sandbox ({}), not by the harness; the host read "
                                          "pids_limit={}", how, Num(limit->get<double>()));
    std::string host = HostReadings(in, v);
    if (!host.empty()) v.observed += "; host: " + host;
    return v;
  }
  return MissingResult(in, v, "children", {band.declared, band.low, 1e18}, "children");
}

}  // namespace

// Only what the sandbox made counts (issue 26, 7): the cgroup's own counter at the stop when
// the probe could read it, else the probe's children plus the tasks of its own cgroups before.
// With the host's pid namespace /proc holds every host process; none of them is counted.
Verdict JudgeResPids(const JudgeInput& in) {
  Verdict v;
  std::optional<LimitBand> band = StartLimit(in, v);
  if (!band) return v;
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return PidsEndedBySandbox(in, v, *band);
  Measurement m;
  m.unit = "tasks";
  const double before = Number(*fact, "tasks_before", 1);
  const double children = Number(*fact, "children");
  const double peak = Number(*fact, "cgroup_pids_current_peak", -1);
  m.reached_ceiling = StoppedBy(*fact) == "ceiling";
  const bool counter = peak > 0 && !m.reached_ceiling;
  m.measured = counter ? peak : before + children;
  m.ceiling = before + children;
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
  m.mechanism += counter ? fmt::format("; counted by the cgroup's own pids.current, {} children forked", Num(children))
                         : fmt::format("; {} children + {} tasks of the probe's own cgroups before", Num(children),
                                       Num(before));
  if (fact->contains("visible_processes") && Number(*fact, "visible_processes") > before + 1) {
    m.mechanism += fmt::format(" ({} processes visible, the others not the sandbox's)",
                               Num(Number(*fact, "visible_processes")));
  }
  Conclude(in, v, *band, m,
           fmt::format("limit the sandbox's pids cgroup to {} (docker --pids-limit {}); "
                       "RLIMIT_NPROC does not bind root and counts per uid host-wide",
                       Num(band->declared), Num(band->declared)));
  return v;
}

// res.cpu: family_resource_cpu.cc (judged by the quota's own evidence, not CPU time alone).

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
  // The total of every file the probe wrote: a per-file limit (RLIMIT_FSIZE) made it go on in
  // a new file, so only a bound on the whole directory stops the measurement below the ceiling.
  Measurement m = MeasuredAgainstCeiling(*fact, "written_mib", "ceiling_mib", "MiB");
  std::string stop = StoppedBy(*fact);
  m.mechanism = stop == "ENOSPC"   ? fmt::format("a full filesystem (ENOSPC; {} is {} MiB)",
                                                 in.check.resolved_target, Num(Number(*fact, "fs_size_mib")))
                : stop == "EDQUOT" ? std::string("a disk quota (EDQUOT)")
                : stop == "EFBIG"  ? std::string("RLIMIT_FSIZE (EFBIG) on a new, empty file")
                                   : stop;
  const double files = Number(*fact, "files", 1);
  if (fact->contains("file_limit_mib")) {
    m.mechanism += fmt::format("; a per-file limit (EFBIG at {} MiB) only split it into {} files",
                               Num(Number(*fact, "file_limit_mib")), Num(files));
  }
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
