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
