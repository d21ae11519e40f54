// Judges of the resource families whose expected end may be a kill by the sandbox: res.wall
// (the sandbox ends the launch at its wall limit) and res.memory (the OOM killer may take the
// whole sandbox rather than the probe's allocating child). Their rows set
// FamilyRow::judges_incomplete_launch, so Evaluate keeps what these judges decide about an
// incomplete launch, provided the verdict names the end it saw (Evidence::expected_end).
//
// Garbage is still never a pass: expected_end is set only with positive evidence (see
// SandboxKill): no harness timeout or harness error, no protocol error, progress frames that
// climb, and a kill status from the sandbox's process; for memory also the host's own reading
// that the OOM killer struck (profile `inspect`: docker's OOMKilled).
#include <cmath>

#include <fmt/format.h>

#include "families/family_resource_measure.h"

namespace sandprobe {

using namespace resource_measure;
using nlohmann::json;

namespace {

// The whole sandbox was OOM-killed, so the probe could not report its child's end: the last
// progress frame (every 8 MiB) is the measurement, a lower bound within one step.
Verdict MemoryKilledWhole(const JudgeInput& in, Verdict v, const LimitBand& band,
                          const std::string& remediation) {
  std::optional<std::string> kill = SandboxKill(in.result, /*kill_only=*/true);
  const json* oom = HostReading(in, "oom_killed");
  bool oom_killed = oom != nullptr && oom->is_boolean() && oom->get<bool>();
  if (!kill || !oom_killed || !ProgressClimbs(in, "mib")) {
    return MissingResult(in, v, "mib", band, "MiB");
  }
  const json* progress = LastFact(in, "progress", &v);
  Measurement m{Number(*progress, "mib"), false, 0, "MiB",
                "the OOM killer ending the whole sandbox (SIGKILL; the host read OOMKilled=true); "
                "the last progress frame is a lower bound within 8 MiB"};
  Conclude(in, v, band, m, remediation);
  v.evidence.expected_end = ExpectedEnd(*kill) + "; the host read oom_killed=true";
  return v;
}

// The probe's clock runs inside the harness's (BatchResult::wall_ms, spawn to exit), so a time
// the probe reports past the harness's own is made up: an error, never the basis of a pass.
// A pass whose launch the harness also saw end within the band is measured by the harness.
// Allowance for the two clocks' granularity: 100 ms.
void HoldAgainstHarnessClock(const JudgeInput& in, const LimitBand& band, double probe_seconds, Verdict& v) {
  if (in.result.wall_ms <= 0) return;  // an older record: the probe's word stands, reported
  const double harness_seconds = static_cast<double>(in.result.wall_ms) / 1000.0;
  if (probe_seconds > harness_seconds + 0.1) {
    v.outcome = Outcome::kError;
    v.direction = Direction::kNone;
    v.evidence.tier = EvidenceTier::kMeasured;
    v.observed += fmt::format("; but the harness's own clock measured the whole launch at {} s, "
                              "shorter than the probe's {} s: the probe's figure is not believed",
                              Num(harness_seconds), Num(probe_seconds));
    return;
  }
  v.observed += fmt::format(" (the harness's clock: the launch took {} s)", Num(harness_seconds));
  if (v.outcome == Outcome::kPass && harness_seconds <= band.high) v.evidence.tier = EvidenceTier::kMeasured;
}

// The host's own reading of the probe's memory cgroup (run/probe_process_reading.h): the
// tightest limit along its chain. A probe whose cgroup figure disagrees with it (beyond a page)
// is not believed: an error, never the basis of a pass. A pass whose limit the host read within
// the band is measured by the harness.
void HoldAgainstHostMemoryLimit(const JudgeInput& in, const LimitBand& band, const json& fact, Verdict& v) {
  const json* host = HostReading(in, "host_cgroup_memory_limit_bytes");
  if (host == nullptr || !host->is_number()) return;  // the host saw no probe process: reported
  const double host_bytes = host->get<double>();
  const double probe_bytes = Number(fact, "cgroup_memory_limit_bytes", -1);
  const bool host_limited = host_bytes > 0;
  const bool probe_limited = probe_bytes > 0 && probe_bytes < 1e15;
  const std::string host_text =
      host_limited ? fmt::format("{} MiB", Num(host_bytes / 1048576)) : std::string("no limit");
  const bool disagree = fact.contains("cgroup_memory_limit_bytes") &&
                        (host_limited != probe_limited ||
                         (host_limited && std::abs(host_bytes - probe_bytes) > 4096));
  if (disagree) {
    v.outcome = Outcome::kError;
    v.direction = Direction::kNone;
    v.evidence.tier = EvidenceTier::kMeasured;
    v.observed += fmt::format("; but the host read the probe's memory cgroup limit as {}, where the probe "
                              "reported {}: the probe's figure is not believed",
                              host_text, probe_limited ? fmt::format("{} MiB", Num(probe_bytes / 1048576))
                                                       : std::string("no limit"));
    return;
  }
  v.observed += fmt::format(" (the host read its memory cgroup limit: {})", host_text);
  const double host_mib = host_bytes / 1048576;
  if (v.outcome == Outcome::kPass && host_limited && host_mib >= band.low && host_mib <= band.high) {
    v.evidence.tier = EvidenceTier::kMeasured;
  }
}

}  // namespace

Verdict JudgeResMemory(const JudgeInput& in) {
  Verdict v;
  std::optional<LimitBand> band = StartLimit(in, v);
  if (!band) return v;
  std::string remediation =
      fmt::format("limit the sandbox's memory cgroup to {} MiB, swap included (docker --memory "
                  "{}m --memory-swap {}m)", Num(band->declared), Num(band->declared),
                  Num(band->declared));
  const json* fact = LastFact(in, "result", &v);
  if (!fact) return MemoryKilledWhole(in, v, *band, remediation);
  if (!FactOk(*fact)) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe could not start its allocator: " + DescribeFailure(*fact);
    return v;
  }
  Measurement m = MeasuredAgainstCeiling(*fact, "reached_mib", "ceiling_mib", "MiB");
  std::string stop = StoppedBy(*fact);
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
  Conclude(in, v, *band, m, remediation);
  HoldAgainstHostMemoryLimit(in, *band, *fact, v);
  return v;
}

Verdict JudgeResWall(const JudgeInput& in) {
  Verdict v;
  std::optional<LimitBand> band = StartLimit(in, v);
  if (!band) return v;
  v.expected = fmt::format("a launch is ended after {} s", Num(band->declared));
  std::string remediation = fmt::format("end the sandbox after {} s (a timeout around the sandbox)",
                                        Num(band->declared));
  v.remediation = remediation;
  if (band->declared > kMaxMeasuredWallSeconds) {
    v.outcome = Outcome::kSkip;
    v.observed = fmt::format("declared {} s: only wall limits up to {} s are measured (the "
                             "probe would have to sleep past it)", Num(band->declared),
                             kMaxMeasuredWallSeconds);
    return v;
  }
  if (const json* fact = LastFact(in, "result", &v)) {
    Measurement m{Number(*fact, "elapsed_ms") / 1000.0, true, Number(*fact, "ceiling_seconds"),
                  "s", "nothing"};
    Conclude(in, v, *band, m, remediation);
    HoldAgainstHarnessClock(in, *band, m.measured, v);
    return v;
  }
  // The expected end: the sandbox killed the probe mid-sleep. The last progress frame (every
  // 250 ms) is the measurement, counted from the probe's start.
  std::optional<std::string> kill = SandboxKill(in.result, /*kill_only=*/false);
  const json* progress = LastFact(in, "progress", &v);
  if (!kill || !progress || !ProgressClimbs(in, "elapsed_ms")) {
    v.outcome = Outcome::kInconclusive;
    v.observed = fmt::format(
        "the launch ended {} without a result frame, and nothing shows that the sandbox ended it",
        progress ? fmt::format("after at least {} s", Num(Number(*progress, "elapsed_ms") / 1000))
                 : std::string("before any progress frame"));
    return v;
  }
  Measurement m{Number(*progress, "elapsed_ms") / 1000.0, false, 0, "s",
                "the sandbox killing the launch (" + *kill + ")"};
  Conclude(in, v, *band, m, remediation);
  v.evidence.expected_end = ExpectedEnd(*kill);
  HoldAgainstHarnessClock(in, *band, m.measured, v);
  return v;
}

}  // namespace sandprobe
