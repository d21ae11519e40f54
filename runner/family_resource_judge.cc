// Judges of the resource families: the measured limit, the mechanism that stopped the probe,
// and one of three outcomes (see ClassifyLimit in family_resource.h).
#include <cmath>

#include <fmt/format.h>

#include "runner/family.h"
#include "runner/family_resource.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// The last fact of the check's family with kind == `kind`; nullptr when there is none.
const json* LastFact(const JudgeInput& in, const char* kind, Verdict* v) {
  const std::vector<int>& indexes = in.facts.OfFamily(in.check.family);
  for (auto it = indexes.rbegin(); it != indexes.rend(); ++it) {
    const json& fact = in.facts.Fact(*it);
    if (fact.value("kind", "") != kind) continue;
    if (v) v->evidence.frame_indexes.push_back(*it);
    return &fact;
  }
  return nullptr;
}

double Number(const json& fact, const char* key, double fallback = 0) {
  auto it = fact.find(key);
  return it != fact.end() && it->is_number() ? it->get<double>() : fallback;
}

// "oom_killed=true, memory_bytes=536870912": what the profile's `inspect` read for this launch.
std::string HostReadings(const JudgeInput& in, Verdict& v) {
  auto all = in.witnesses.observed.find("host_readings");
  if (all == in.witnesses.observed.end() || !all->second.is_object()) return "";
  auto mine = all->second.find(in.result.launch_id);
  if (mine == all->second.end() || !mine->is_object() || mine->empty()) return "";
  std::string text;
  for (const auto& [key, value] : mine->items()) {
    if (!text.empty()) text += ", ";
    text += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  v.evidence.witness_facts.push_back("host readings: " + text);
  return text;
}

std::string Num(double value) { return fmt::format("{:.4g}", value); }

struct Measurement {
  double measured = 0;
  bool reached_ceiling = false;
  double ceiling = 0;
  std::string unit;       // "tasks", "MiB", "cores", "s", "fds"
  std::string mechanism;  // what stopped the probe: "pids cgroup (EAGAIN, pids.max=50)"
};

// Turns a measurement into the verdict: pass, fail at another value (either direction) or
// fail "not enforced up to N". `remediation` says how to set the declared value.
void Conclude(const JudgeInput& in, Verdict& v, const LimitBand& band, const Measurement& m,
              const std::string& remediation) {
  v.expected = fmt::format("enforced at {} {} (band {}..{})", Num(band.declared), m.unit,
                           Num(band.low), Num(band.high));
  v.remediation = remediation;
  switch (ClassifyLimit(band, m.measured, m.reached_ceiling)) {
    case LimitOutcome::kAtDeclared:
      v.observed = fmt::format("measured {} {}: enforced at the declared value; stopped by {}",
                               Num(m.measured), m.unit, m.mechanism);
      Judge(v, true, Direction::kNone);
      break;
    case LimitOutcome::kAtOtherValue: {
      bool higher = m.measured > band.high;
      v.observed = fmt::format("measured {} {} vs declared {}: enforced {}; stopped by {}",
                               Num(m.measured), m.unit, Num(band.declared),
                               higher ? "above the declared value" : "below the declared value",
                               m.mechanism);
      Judge(v, false, higher ? Direction::kTooPermissive : Direction::kTooRestrictive);
      v.check.severity = Severity::kMedium;
      break;
    }
    case LimitOutcome::kNotEnforced:
      v.observed = fmt::format("measured {} {}: not enforced up to {} {} (the probe's ceiling; "
                               "declared {})", Num(m.measured), m.unit, Num(m.ceiling), m.unit,
                               Num(band.declared));
      Judge(v, false, Direction::kTooPermissive);
      break;
  }
  std::string host = HostReadings(in, v);
  if (!host.empty()) v.observed += "; host: " + host;
}

LimitBand Absolute(double declared, double tolerance) {
  return {declared, declared - tolerance, declared + tolerance};
}
LimitBand Percent(double declared, double percent) {
  return {declared, declared * (1 - percent / 100), declared * (1 + percent / 100)};
}

// The declared value is the id's part after ':' ("limits.pids.max:50"); the tolerance is the
// check's variant ("±1" absolute, "±5%" relative), both written by Expand from the policy.
LimitBand BandOf(const Check& check) {
  double declared = std::stod(check.id.substr(check.id.rfind(':') + 1));
  std::string tol = check.variant.rfind("±", 0) == 0 ? check.variant.substr(2) : "0";
  bool percent = !tol.empty() && tol.back() == '%';
  double value = std::stod(percent ? tol.substr(0, tol.size() - 1) : tol);
  return percent ? Percent(declared, value) : Absolute(declared, value);
}

// No result frame: a fail when the progress frames alone go beyond the band (a streamed frame
// is a real fact), else inconclusive.
Verdict MissingResult(const JudgeInput& in, Verdict v, const char* progress_key,
                      const LimitBand& band, const std::string& unit) {
  const json* progress = LastFact(in, "progress", &v);
  double reached = progress ? Number(*progress, progress_key) : 0;
  v.expected = fmt::format("enforced at {} {}", Num(band.declared), unit);
  if (progress && reached > band.high) {
    v.observed = fmt::format("reached at least {} {} (declared {}) before the launch ended "
                             "without a result", Num(reached), unit, Num(band.declared));
    Judge(v, false, Direction::kTooPermissive);
  } else {
    v.outcome = Outcome::kInconclusive;
    v.observed = progress ? fmt::format("no result frame; last progress {} {}", Num(reached), unit)
                          : std::string("the probe reported no result for this limit");
  }
  HostReadings(in, v);
  return v;
}

std::string ErrnoOf(const json& fact) { return fact.value("stopped_by", "?"); }

}  // namespace

Verdict JudgeResPids(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  LimitBand band = BandOf(in.check);
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "children", {band.declared, band.low, 1e18}, "children");
  Measurement m;
  m.unit = "tasks";
  double before = Number(*fact, "tasks_before", 1);
  m.measured = before + Number(*fact, "children");
  m.reached_ceiling = ErrnoOf(*fact) == "ceiling";
  m.ceiling = m.measured;
  double pids_max = Number(*fact, "cgroup_pids_max", -1);
  double nproc = Number(*fact, "rlimit_nproc", -1);
  bool root = Number(*fact, "uid", 0) == 0;
  if (pids_max > 0 && std::fabs(pids_max - m.measured) <= 2) {
    m.mechanism = fmt::format("the pids cgroup ({}, pids.max={})", ErrnoOf(*fact), Num(pids_max));
  } else if (nproc > 0 && !root) {
    m.mechanism = fmt::format("{} with RLIMIT_NPROC={} (counted per uid across the host)",
                              ErrnoOf(*fact), Num(nproc));
  } else {
    m.mechanism = fmt::format("{} from fork (no pids.max readable inside; {} tasks before)",
                              ErrnoOf(*fact), Num(before));
  }
  Conclude(in, v, band, m,
           fmt::format("limit the sandbox's pids cgroup to {} (docker --pids-limit {}); "
                       "RLIMIT_NPROC does not bind root and counts per uid host-wide",
                       Num(band.declared), Num(band.declared)));
  return v;
}

Verdict JudgeResMemory(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  LimitBand band = BandOf(in.check);
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "mib", band, "MiB");
  if (!FactOk(*fact)) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe could not start its allocator: " + DescribeFailure(*fact);
    return v;
  }
  Measurement m;
  m.unit = "MiB";
  m.measured = Number(*fact, "reached_mib");
  m.ceiling = Number(*fact, "ceiling_mib");
  std::string stop = ErrnoOf(*fact);
  m.reached_ceiling = stop == "ceiling";
  double limit = Number(*fact, "cgroup_memory_limit_bytes", -1);
  std::string cgroup = limit > 0 && limit < 1e15
                           ? fmt::format(", memory.limit_in_bytes={} MiB", Num(limit / 1048576))
                           : "";
  if (stop == "SIGKILL") {
    m.mechanism = "the OOM killer (the allocating child got SIGKILL" + cgroup + ")";
  } else if (stop == "ENOMEM") {
    m.mechanism = "ENOMEM from mmap (RLIMIT_AS or overcommit, not a cgroup" + cgroup + ")";
  } else {
    m.mechanism = stop + cgroup;
  }
  Conclude(in, v, band, m,
           fmt::format("limit the sandbox's memory cgroup to {} MiB, swap included (docker "
                       "--memory {}m --memory-swap {}m)", Num(band.declared), Num(band.declared),
                       Num(band.declared)));
  return v;
}

Verdict JudgeResCpu(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  LimitBand band = BandOf(in.check);
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "cores", band, "cores");
  Measurement m;
  m.unit = "cores";
  m.measured = Number(*fact, "effective_cores");
  double threads = Number(*fact, "threads_started", 1);
  double cpus = Number(*fact, "affinity_cpus", threads);
  m.ceiling = std::min(threads, cpus);
  // Every thread got a core of its own: nothing held the probe back.
  m.reached_ceiling = m.ceiling > band.high && m.measured >= 0.9 * m.ceiling;
  double quota = Number(*fact, "cgroup_cfs_quota_us", -1);
  double period = Number(*fact, "cgroup_cfs_period_us", 100000);
  m.mechanism = quota > 0 ? fmt::format("the CFS quota ({} cores: cfs_quota_us={}, period={})",
                                        Num(quota / period), Num(quota), Num(period))
                          : fmt::format("no CFS quota readable inside; {} CPUs in the affinity mask",
                                        Num(cpus));
  Conclude(in, v, band, m,
           fmt::format("give the sandbox a CPU quota of {} cores (docker --cpus {})",
                       Num(band.declared), Num(band.declared)));
  // CPU time is also what a busy host leaves over: without a quota the probe can see, a
  // measurement inside the band may be contention, not a limit. That proves nothing.
  if (v.outcome == Outcome::kPass && quota <= 0) {
    v.outcome = Outcome::kInconclusive;
    v.observed += "; but no CPU quota is visible inside, so the host's load may explain it";
  }
  return v;
}

Verdict JudgeResWall(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  LimitBand band = BandOf(in.check);
  v.expected = fmt::format("a launch is ended after {} s", Num(band.declared));
  v.remediation = fmt::format("end the sandbox after {} s (a timeout around the sandbox)",
                              Num(band.declared));
  if (band.declared > 10) {
    v.outcome = Outcome::kSkip;
    v.observed = fmt::format("declared {} s: only wall limits up to 10 s are measured (the "
                             "probe would have to sleep past it)", Num(band.declared));
    return v;
  }
  const json* fact = LastFact(in, "result", &v);
  if (!fact) {
    // The expected end: killed by the sandbox. The last progress second is the measurement;
    // the launch is incomplete, so Evaluate will not let this pass on its own.
    const json* progress = LastFact(in, "progress", &v);
    double reached = progress ? Number(*progress, "seconds") : 0;
    Measurement m{reached, false, 0, "s", "the sandbox ending the launch"};
    Conclude(in, v, band, m, v.remediation);
    return v;
  }
  Measurement m{Number(*fact, "elapsed_ms") / 1000.0, true, Number(*fact, "ceiling_seconds"), "s",
                "nothing"};
  Conclude(in, v, band, m, v.remediation);
  return v;
}

Verdict JudgeResDisk(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  LimitBand band = BandOf(in.check);
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "mib", band, "MiB");
  if (!FactOk(*fact)) {
    v.outcome = Outcome::kInconclusive;
    v.observed = fmt::format("could not create a file in {}: {}", in.check.resolved_target,
                             DescribeFailure(*fact));
    return v;
  }
  Measurement m;
  m.unit = "MiB";
  m.measured = Number(*fact, "written_mib");
  m.ceiling = Number(*fact, "ceiling_mib");
  std::string stop = ErrnoOf(*fact);
  m.reached_ceiling = stop == "ceiling";
  m.mechanism = stop == "ENOSPC"   ? fmt::format("a full filesystem (ENOSPC; {} is {} MiB)",
                                                 in.check.resolved_target, Num(Number(*fact, "fs_size_mib")))
                : stop == "EDQUOT" ? std::string("a disk quota (EDQUOT)")
                : stop == "EFBIG"  ? std::string("RLIMIT_FSIZE (EFBIG)")
                                   : stop;
  if (!fact->value("removed", true)) m.mechanism += "; the probe could not remove its file";
  Conclude(in, v, band, m,
           fmt::format("mount {} as a tmpfs of {} MiB (docker --tmpfs {}:size={}m)",
                       in.check.resolved_target, Num(band.declared), in.check.resolved_target,
                       Num(band.declared)));
  return v;
}

Verdict JudgeResFds(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  LimitBand band = BandOf(in.check);
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "open_total", band, "fds");
  Measurement m;
  m.unit = "fds";
  m.measured = Number(*fact, "open_total");
  m.ceiling = Number(*fact, "ceiling");
  std::string stop = ErrnoOf(*fact);
  m.reached_ceiling = stop == "ceiling";
  m.mechanism = stop == "EMFILE" ? fmt::format("RLIMIT_NOFILE (EMFILE; soft limit {})",
                                               Num(Number(*fact, "rlimit_nofile")))
                : stop == "ENFILE" ? std::string("the system-wide file table (ENFILE)")
                                   : stop;
  Conclude(in, v, band, m,
           fmt::format("set RLIMIT_NOFILE to {} (docker --ulimit nofile={}:{})", Num(band.declared),
                       Num(band.declared), Num(band.declared)));
  return v;
}

}  // namespace sandprobe
