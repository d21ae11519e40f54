// res.cpu, host side: the quota and its own evidence out of the facts, and the judgement
// (family_resource_cpu.h says which evidence wins).
#include "families/family_resource_cpu.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "families/family_resource_measure.h"
#include "families/kernel_identity.h"
#include "model/verdict.h"

namespace sandprobe {
namespace resource_cpu {

using nlohmann::json;
using resource_measure::Num;

namespace {

// readings[key] when it is a number.
std::optional<double> Reading(const json& readings, const char* key) {
  if (!readings.is_object()) return std::nullopt;
  auto it = readings.find(key);
  if (it == readings.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// {"quota_us", "period_us"} -> cores; <= 0 when there is no quota.
double QuotaCores(const json& quota) {
  double q = resource_measure::Number(quota, "quota_us", -1);
  double p = resource_measure::Number(quota, "period_us", 0);
  return q > 0 && p > 0 ? q / p : -1;
}

std::string QuotaText(const json& quota) {
  return fmt::format("{}/{}", Num(resource_measure::Number(quota, "quota_us", -1)),
                     Num(resource_measure::Number(quota, "period_us", 0)));
}

// Facts written before cpu_cgroup existed: cfs_quota_us/period of the v1 hierarchy's top,
// whichever cgroup the probe was in. A quota there binds everything below it; "none" there
// says nothing about the probe's own cgroup.
CpuQuota LegacyCgroupQuota(const json& result) {
  double q = resource_measure::Number(result, "cgroup_cfs_quota_us", -1);
  double p = resource_measure::Number(result, "cgroup_cfs_period_us", 100000);
  if (q <= 0 || p <= 0) return {};
  return {QuotaSource::kCgroup, true, q / p,
          fmt::format("cgroup v1 cfs_quota_us={}, cfs_period_us={}", Num(q), Num(p))};
}

double Delta(const json& before, const json& after, const char* key) {
  return resource_measure::Number(after, key) - resource_measure::Number(before, key);
}

}  // namespace

CpuQuota HostQuota(const json& readings) {
  // The probe process's own cgroup chain, read by the host (run/probe_process_reading.h).
  if (std::optional<double> cores = Reading(readings, "host_cgroup_cpu_quota_cores")) {
    const std::string dir = readings.value("host_cgroup_cpu_dir", "?");
    if (*cores > 0) return {QuotaSource::kHost, true, *cores, fmt::format("host cgroup {} quota {} cores", dir, Num(*cores))};
    return {QuotaSource::kHost, false, 0, fmt::format("host cgroup {}: no quota on it or its parents", dir)};
  }
  std::optional<double> nano = Reading(readings, "nano_cpus");
  std::optional<double> quota = Reading(readings, "cpu_quota");
  std::optional<double> period = Reading(readings, "cpu_period");
  if (nano && *nano > 0) {
    return {QuotaSource::kHost, true, *nano / 1e9, fmt::format("host nano_cpus={}", Num(*nano))};
  }
  if (quota && *quota > 0) {
    double p = period && *period > 0 ? *period : 100000;  // docker's default CFS period
    return {QuotaSource::kHost, true, *quota / p,
            fmt::format("host cpu_quota={}, cpu_period={}", Num(*quota), Num(p))};
  }
  // "None" needs both: --cpus sets NanoCpus, --cpu-quota sets CpuQuota.
  if (nano && quota) {
    return {QuotaSource::kHost, false, 0,
            fmt::format("host nano_cpus={}, cpu_quota={}", Num(*nano), Num(*quota))};
  }
  return {};
}

CpuQuota CgroupQuota(const json& result) {
  auto it = result.find("cpu_cgroup");
  if (it == result.end() || !it->is_object()) return LegacyCgroupQuota(result);
  const json& cgroup = *it;
  // A mount that does not show the probe's own cgroup says nothing about it.
  if (!cgroup.value("resolved", false) || !cgroup["quota"].is_object()) return {};
  std::string where = fmt::format("cgroup v{} {}", cgroup.value("version", 0), cgroup.value("dir", "?"));
  CpuQuota quota{QuotaSource::kCgroup, false, 0, where + " quota " + QuotaText(cgroup["quota"])};
  double own = QuotaCores(cgroup["quota"]);
  if (own > 0) {
    quota.limited = true;
    quota.cores = own;
  }
  auto parent = cgroup.find("ancestor_quota");
  if (parent != cgroup.end() && parent->is_object()) {
    double cores = QuotaCores(*parent);
    if (cores > 0 && (!quota.limited || cores < quota.cores)) {
      quota.limited = true;
      quota.cores = cores;
      quota.reading += fmt::format(", parent {} quota {}", parent->value("dir", "?"), QuotaText(*parent));
    }
  }
  return quota;
}

CpuThrottling Throttling(const json& result) {
  CpuThrottling t;
  auto it = result.find("cpu_cgroup");
  if (it == result.end() || !it->is_object()) return t;
  const json& before = (*it)["stat_before"];
  const json& after = (*it)["stat_after"];
  if (!before.is_object() || !after.is_object() || !after.contains("nr_periods") ||
      !after.contains("nr_throttled")) {
    return t;
  }
  t.readable = true;
  t.periods = Delta(before, after, "nr_periods");
  t.throttled = Delta(before, after, "nr_throttled");
  t.throttled_ms = after.contains("throttled_usec") ? Delta(before, after, "throttled_usec") / 1e3
                                                    : Delta(before, after, "throttled_time") / 1e6;
  return t;
}

CpuEvidence ReadCpuEvidence(const json& result, const json& host_readings) {
  CpuEvidence e;
  CpuQuota host = HostQuota(host_readings);
  CpuQuota inside = CgroupQuota(result);
  e.quota = host.source == QuotaSource::kHost ? host : inside;
  if (host.source == QuotaSource::kHost && inside.source == QuotaSource::kCgroup &&
      (host.limited != inside.limited || (host.limited && std::abs(host.cores - inside.cores) > 0.01))) {
    e.overruled = inside.reading;
  }
  e.throttling = Throttling(result);
  e.measured = resource_measure::Number(result, "effective_cores");
  e.wall = resource_measure::Number(result, "wall_seconds");
  double threads = resource_measure::Number(result, "threads_started", 1);
  e.usable = std::min(threads, resource_measure::Number(result, "affinity_cpus", threads));
  e.online_cpus = resource_measure::Number(result, "online_cpus", 0);
  return e;
}

namespace {

std::string Facts(const CpuEvidence& e) {
  std::string text = fmt::format("measured {} cores ({} usable)", Num(e.measured), Num(e.usable));
  if (e.wall > 0) text += fmt::format(" over {} s", Num(e.wall));
  if (e.quota.source != QuotaSource::kUnknown) text += "; " + e.quota.reading;
  if (!e.overruled.empty()) text += " (the host's reading decides over the " + e.overruled + ")";
  const CpuThrottling& t = e.throttling;
  text += t.readable ? fmt::format("; throttled in {} of {} CFS periods ({} ms)", Num(t.throttled),
                                   Num(t.periods), Num(t.throttled_ms))
                     : std::string("; no cpu.stat throttling counters readable");
  return text;
}

CpuJudgement Judged(Outcome outcome, Direction direction, std::string why, const CpuEvidence& e) {
  return {outcome, direction, false, why + ": " + Facts(e)};
}

// A quota in the band: enforced, contention, or a clock that is not the host's.
CpuJudgement QuotaInBand(const LimitBand& band, const CpuEvidence& e) {
  const CpuThrottling& t = e.throttling;
  const double q = e.quota.cores;
  if (!e.other_kernel.empty() && e.quota.source == QuotaSource::kHost) {
    // Emulated is not host: the clock inside is that kernel's, evidence neither for nor against
    // the quota the host's kernel enforces on the whole sandbox.
    return Judged(Outcome::kPass, Direction::kNone,
                   fmt::format("the host's {}-core quota decides: the CPU clock inside belongs to {}", Num(q),
                               e.other_kernel), e);
  }
  if (t.readable && t.periods > 0 && t.throttled >= kMeaningfulThrottle * t.periods) {
    return Judged(Outcome::kPass, Direction::kNone,
                   fmt::format("enforced: a {}-core quota that throttled the probe", Num(q)), e);
  }
  const double low = q * band.low / band.declared, high = q * band.high / band.declared;
  if (e.measured >= low && e.measured <= high) {
    return Judged(Outcome::kPass, Direction::kNone,
                   fmt::format("enforced: consumption at the {}-core quota", Num(q)), e);
  }
  if (e.measured > high && e.quota.source == QuotaSource::kHost) {
    return Judged(Outcome::kFail, Direction::kTooPermissive,
                   fmt::format("more CPU time than the host's {}-core quota allows, in the host's own kernel: "
                               "that quota does not bind the sandbox", Num(q)), e);
  }
  if (e.measured > high) {
    return Judged(Outcome::kFail, Direction::kTooPermissive,
                   fmt::format("more CPU time than the cgroup's {}-core quota allows, without "
                               "throttling: that quota does not bind the sandbox", Num(q)), e);
  }
  if (e.quota.source == QuotaSource::kHost) {
    // Below the quota: not evidence against it (the host's load, or too few CPUs); the host's
    // own reading of the quota decides.
    return Judged(Outcome::kPass, Direction::kNone,
                   fmt::format("the host's {}-core quota decides: the probe got less ({}), never more", Num(q),
                               e.usable < low ? "it could use fewer CPUs" : "the host's load"), e);
  }
  if (e.usable < low) {
    return Judged(Outcome::kInconclusive, Direction::kNone,
                   fmt::format("cannot measure up to the {}-core quota: the probe could use {} "
                               "cores at most", Num(q), Num(e.usable)), e);
  }
  return Judged(Outcome::kInconclusive, Direction::kNone,
                 fmt::format("contention, not the sandbox, bounded the measurement: far below the "
                             "{}-core quota with almost no throttling", Num(q)), e);
}

// No quota reading at all: CPU time above the band is the only finding, when no quota at the
// band's upper edge could have given it, even with a period's leftover at the window's start.
CpuJudgement QuotaUnknown(const LimitBand& band, const CpuEvidence& e) {
  const double beyond_edge = e.wall > 0 ? band.high * (1 + e.edge / e.wall) : band.high;
  if (e.measured > beyond_edge) {
    bool every_thread = e.usable > band.high && e.measured >= 0.9 * e.usable;
    return Judged(Outcome::kFail, Direction::kTooPermissive,
                   every_thread ? fmt::format("not enforced up to {} cores (every thread got a core; "
                                              "declared {})", Num(e.usable), Num(band.declared))
                                : fmt::format("more CPU than the declared {} cores, and no quota "
                                              "readable", Num(band.declared)), e);
  }
  if (e.measured > band.high) {
    return Judged(Outcome::kInconclusive, Direction::kNone,
                   fmt::format("more CPU than the declared {} cores, but no more than a quota at the "
                               "band's edge ({} cores) could give in {} s with one CFS period's "
                               "leftover ({} cores), and no CPU quota readable", Num(band.declared),
                               Num(band.high), Num(e.wall), Num(beyond_edge)), e);
  }
  if (e.usable <= band.high && e.measured >= 0.9 * e.usable) {
    return Judged(Outcome::kInconclusive, Direction::kNone,
                   fmt::format("cannot measure above {} cores (threads x CPUs the probe may use), and "
                               "no quota readable", Num(e.usable)), e);
  }
  return Judged(Outcome::kInconclusive, Direction::kNone,
                 "no CPU quota readable (no host reading, no cgroup file inside), so the host's "
                 "load explains this as well as a limit", e);
}

}  // namespace

// Another kernel with no host reading (a VM's guest): it cannot run more than its online CPUs
// at once, whatever the host's load; that many cores is its bound.
CpuJudgement GuestCpus(const LimitBand& band, const CpuEvidence& e) {
  const double cpus = e.online_cpus;
  if (cpus > band.high || cpus < band.low) {
    const bool above = cpus > band.high;
    CpuJudgement j = Judged(Outcome::kFail, above ? Direction::kTooPermissive : Direction::kTooRestrictive,
                            fmt::format("{} CPUs online in {}: {} the declared {} cores", Num(cpus), e.other_kernel,
                                        above ? "above" : "below", Num(band.declared)), e);
    j.off_by_value = true;
    return j;
  }
  return Judged(Outcome::kPass, Direction::kNone,
                fmt::format("bounded by the {} CPUs online in {} (its vCPUs; no host cgroup reading)", Num(cpus),
                            e.other_kernel), e);
}

CpuJudgement JudgeCpu(const LimitBand& band, const CpuEvidence& e) {
  if (e.quota.source == QuotaSource::kUnknown && !e.other_kernel.empty() && e.online_cpus > 0) {
    return GuestCpus(band, e);
  }
  if (e.quota.source == QuotaSource::kUnknown) return QuotaUnknown(band, e);
  if (!e.quota.limited) {
    return Judged(Outcome::kFail, Direction::kTooPermissive,
                   "no CPU quota: the declared limit is missing, whatever CPU time the host left over", e);
  }
  if (e.quota.cores < band.low || e.quota.cores > band.high) {
    bool above = e.quota.cores > band.high;
    CpuJudgement j = Judged(Outcome::kFail, above ? Direction::kTooPermissive : Direction::kTooRestrictive,
                             fmt::format("a quota of {} cores, {} the declared {}", Num(e.quota.cores),
                                         above ? "above" : "below", Num(band.declared)), e);
    j.off_by_value = true;
    return j;
  }
  return QuotaInBand(band, e);
}

}  // namespace resource_cpu

using namespace resource_measure;
using nlohmann::json;

Verdict JudgeResCpu(const JudgeInput& in) {
  Verdict v;
  std::optional<LimitBand> band = StartLimit(in, v);
  if (!band) return v;
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MissingResult(in, v, "cores", *band, "cores");
  const json* readings = LaunchReadings(in);
  resource_cpu::CpuEvidence evidence =
      resource_cpu::ReadCpuEvidence(*fact, readings ? *readings : json(nullptr));
  // The harness's own thread count (the plan's), not the probe's report of it.
  evidence.edge = static_cast<double>(CpuEdgeMs(CpuThreads(band->declared))) / 1000.0;
  if (const KernelComparison kernel = LaunchKernel(in, v); kernel.another) evidence.other_kernel = kernel.text;
  resource_cpu::CpuJudgement j = resource_cpu::JudgeCpu(*band, evidence);
  v.expected = fmt::format("a CPU quota of {} cores (band {}..{}), enforced", Num(band->declared),
                           Num(band->low), Num(band->high));
  v.remediation = fmt::format("give the sandbox a CPU quota of {} cores (docker --cpus {})",
                              Num(band->declared), Num(band->declared));
  v.outcome = j.outcome;
  v.direction = j.direction;
  v.observed = j.observed;
  if (j.off_by_value) v.check.severity = Severity::kMedium;
  std::string host = HostReadings(in, v);
  if (!host.empty()) v.observed += "; host: " + host;
  return v;
}

}  // namespace sandprobe
