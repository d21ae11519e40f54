// Resource families, host side: res.pids, res.memory, res.cpu, res.wall, res.disk, res.fds.
//
// Each runs in its own exclusive launch with its own timeout, except res.cpu, res.disk and
// res.fds, which share one when the suite lists them one after the other (their exclusive
// group "res.shared"): one process runs them in turn, and none leaves anything behind that
// could move the next one's measurement (the busy threads are joined, the file removed, the
// descriptors closed; cpu.stat is read as deltas over the window). The suite lists res.cpu
// first, so its window runs in a fresh sandbox as before. The launch's timeout is the longest
// of theirs. Expand turns a declared limit
// into one check and the probe's ceiling; Judge reads the probe's result frame, computes the
// measured limit and the mechanism that stopped the probe, and sorts it into one of three
// outcomes (ClassifyLimit; a fourth, inconclusive, when the declared limit is above what the
// probe may measure). Host readings of the launch (profile `inspect`, e.g. docker
// inspect: OOMKilled, HostConfig limits) are shown next to the measurement.
//
// What "complete" means here: the memory probe lets a forked child be OOM-killed and reports
// it itself, so an OOM kill normally still ends in a clean, complete launch. Two families
// expect a kill of the whole launch by the sandbox and judge it themselves
// (FamilyRow::judges_incomplete_launch, family_resource_end.cc): res.wall (the sandbox ends
// the launch at its wall limit) and res.memory (the OOM killer takes the whole sandbox). They
// pass only on positive evidence of that end; any other incomplete launch keeps only a fail
// (e.g. progress frames beyond the band), never a pass.
#include "families/family_resource.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "families/family.h"

namespace sandprobe {
namespace {

using nlohmann::json;

PolicyRef LimitReference(const ExpandInput& in, const char* key) {
  return in.policy.Ref(fmt::format("/limits/{}", key));
}

// The check of one declared limit; its band comes from the policy's `limits.tolerance`.
Check LimitCheck(const ExpandInput& in, const char* family, const char* key, double declared,
                 Severity severity) {
  const LimitsTolerance& t = in.policy.limits.tolerance;
  const std::string k = key;
  Check check;
  check.family = family;
  // Integral limits print as integers ("limits.memory_mib:1048576", not "1.04858e+06").
  std::string value = std::floor(declared) == declared && std::fabs(declared) < 1e15
                          ? std::to_string(static_cast<std::int64_t>(declared))
                          : fmt::format("{:g}", declared);
  check.id = fmt::format("limits.{}:{}", k == "pids" ? "pids.max" : key, value);
  check.expect = Expectation::kDenied;  // going beyond the limit must be denied
  check.severity = severity;
  check.target = key;
  check.reference = LimitReference(in, key);
  Tolerance band{declared, 0, false};
  if (k == "pids") band.plus_minus = static_cast<double>(t.pids);
  if (k == "memory_mib") band = {declared, t.memory_percent, true};
  if (k == "cpus") band = {declared, t.cpus_percent, true};
  if (k == "wall_seconds") band.plus_minus = static_cast<double>(t.wall_seconds);
  if (k == "tmp_mib") band = {declared, t.tmp_percent, true};
  if (k == "open_files") band.plus_minus = static_cast<double>(t.open_files);
  check.tolerance = band;
  return check;
}

// ApplyResourceTimeouts (run.cc, after planning) sets it on the batch: BatchBuilder offers no setter.
// Resource checks put the sandbox's own readings (docker inspect) next to the measurement.
Status AddExclusive(BatchBuilder& batch, Check check, const char* family,
                    std::vector<std::string> args) {
  batch.current().host_readings = true;
  batch.Invocation(family).args = std::move(args);
  return batch.AddCheck(std::move(check));
}

// res.pids and res.memory may run beside other launches where each launch is a sandbox instance
// of its own (a one-shot profile): their judges count only their own probe's children and read
// the host's reading of their own instance (its cgroup's counters, docker inspect's OOMKilled),
// which another instance's work does not move. A session's launches share one instance.
void MayRunBesideOthers(const ExpandInput& in, BatchBuilder& batch, const char* chain) {
  if (!in.context.session) batch.current().overlap_chain = chain;
}

Status ExpandPids(const ExpandInput& in, BatchBuilder& batch) {
  if (!in.policy.limits.pids) return Status::Ok();
  std::int64_t declared = *in.policy.limits.pids;
  MayRunBesideOthers(in, batch, "res.pids");
  return AddExclusive(batch,
                      LimitCheck(in, "res.pids", "pids", static_cast<double>(declared), Severity::kHigh),
                      "res.pids", {"--ceiling", std::to_string(PidsCeiling(declared))});
}

Status ExpandMemory(const ExpandInput& in, BatchBuilder& batch) {
  if (!in.policy.limits.memory_mib) return Status::Ok();
  std::int64_t declared = *in.policy.limits.memory_mib;
  MayRunBesideOthers(in, batch, "res.memory");
  Check check = LimitCheck(in, "res.memory", "memory_mib", static_cast<double>(declared),
                           Severity::kHigh);
  const std::int64_t ceiling = MemoryCeilingMib(declared, check.tolerance->High());
  return AddExclusive(batch, std::move(check), "res.memory",
                      {"--ceiling-mib", std::to_string(ceiling), "--every-mib", "8"});
}

// The busy window: three CFS periods (300 ms at docker's 100 ms period) when the probe can read
// its cgroup's quota and cpu.stat, since the judge then decides by the quota and its throttling
// (family_resource_cpu.h): an enforced quota throttles a probe that runs more threads than it
// has cores in nearly every period, and 1 throttled period of 3 already meets
// kMeaningfulThrottle; where the host reads the quota itself (docker inspect, the probe
// process's host cgroup) that reading decides and the window only shows it enforced. Five
// periods (500 ms) cost 0.2 s of docker-hardened's full audit on the one launch that runs
// alone, for a second and third throttled period the judgement does not need.
// Without those counters CPU time alone decides, and the probe keeps the 2 s window, which
// holds a 15% band against one period's slack at the window's edges, unless it has already seen more CPU time than any quota in the band can give (CpuEdgeMs):
// then the fail it proves cannot be undone by a longer window, and it stops.
constexpr int kCpuWindowPeriods = 3;
constexpr int kCpuMinWindowMs = 300;

Status ExpandCpu(const ExpandInput& in, BatchBuilder& batch) {
  if (!in.policy.limits.cpus) return Status::Ok();
  double declared = *in.policy.limits.cpus;
  Check check = LimitCheck(in, "res.cpu", "cpus", declared, Severity::kMedium);
  const int threads = CpuThreads(declared);
  std::int64_t stop_above = CpuStopAboveMc(check.tolerance->High());
  return AddExclusive(batch, std::move(check), "res.cpu",
                      {"--threads", std::to_string(threads), "--window-ms", "2000",
                       "--min-periods", std::to_string(kCpuWindowPeriods),
                       "--stop-above-mc", std::to_string(stop_above),
                       "--edge-ms", std::to_string(CpuEdgeMs(threads)),
                       "--min-window-ms", std::to_string(kCpuMinWindowMs)});
}

// Only limits of at most kMaxMeasuredWallSeconds are measured; the judge skips a longer one
// whatever the launch shows (JudgeResWall), so the plan already knows that verdict: when the
// runner judges launchless batches, the check gets no launch at all; otherwise a 1 s probe
// runs so the check has a launch.

Status ExpandWall(const ExpandInput& in, BatchBuilder& batch) {
  if (!in.policy.limits.wall_seconds) return Status::Ok();
  std::int64_t declared = *in.policy.limits.wall_seconds;
  bool measured = declared <= kMaxMeasuredWallSeconds;
  Check check = LimitCheck(in, "res.wall", "wall_seconds", static_cast<double>(declared),
                           Severity::kMedium);
  if (!measured && in.context.launchless_checks) return batch.AddCheck(std::move(check));
  std::int64_t sleep = measured ? declared + 5 : 1;
  return AddExclusive(batch, std::move(check), "res.wall",
                      {"--ceiling-seconds", std::to_string(sleep)});
}

Status ExpandDisk(const ExpandInput& in, BatchBuilder& batch) {
  if (!in.policy.limits.tmp_mib) return Status::Ok();
  std::int64_t declared = *in.policy.limits.tmp_mib;
  StatusOr<std::string> dir = WritableScratchDir(in);  // res.disk fills it
  if (!dir.ok()) return dir.status();
  Check check = LimitCheck(in, "res.disk", "tmp_mib", static_cast<double>(declared), Severity::kMedium);
  check.resolved_target = *dir;
  const std::int64_t ceiling = DiskCeilingMib(declared, check.tolerance->High());
  return AddExclusive(batch, std::move(check), "res.disk",
                      {"--dir", *dir, "--ceiling-mib", std::to_string(ceiling)});
}

Status ExpandFds(const ExpandInput& in, BatchBuilder& batch) {
  if (!in.policy.limits.open_files) return Status::Ok();
  std::int64_t declared = *in.policy.limits.open_files;
  Check check = LimitCheck(in, "res.fds", "open_files", static_cast<double>(declared),
                           Severity::kMedium);
  const std::int64_t ceiling = FdsCeiling(declared, check.tolerance->High());
  return AddExclusive(batch, std::move(check), "res.fds", {"--ceiling", std::to_string(ceiling)});
}

}  // namespace

std::int64_t PidsCeiling(std::int64_t declared) {
  return std::min<std::int64_t>(std::max<std::int64_t>(4 * declared, 256), 4096);
}
namespace {
// Just past the band's upper edge (family_resource.h): ceil(band_high) + max(declared / 4,
// floor), at most `cap`. In doubles until the cap: a declared limit may be up to 2^30 MiB.
std::int64_t PastTheBand(std::int64_t declared, double band_high, std::int64_t floor,
                         std::int64_t cap) {
  const double past = std::ceil(band_high) + std::max<double>(static_cast<double>(declared) / 4,
                                                              static_cast<double>(floor));
  return past >= static_cast<double>(cap) ? cap : static_cast<std::int64_t>(past);
}
}  // namespace

std::int64_t MemoryCeilingMib(std::int64_t declared, double band_high) {
  return PastTheBand(declared, band_high, 16, 4096);
}
std::int64_t DiskCeilingMib(std::int64_t declared, double band_high) {
  return PastTheBand(declared, band_high, 16, 2048);
}
std::int64_t FdsCeiling(std::int64_t declared, double band_high) {
  return PastTheBand(declared, band_high, 64, 65536);
}
int CpuThreads(double declared) {
  return static_cast<int>(std::clamp(std::ceil(2 * declared), 2.0, 64.0));
}
std::int64_t CpuEdgeMs(int threads) { return kCfsPeriodMs + 2 * kCfsSliceMs * threads; }
std::int64_t CpuStopAboveMc(double band_high) {
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(band_high * 1000)), 1, 64'000);
}

int ResourceTimeoutSeconds(const ProbeInvocation& inv) {
  if (inv.family == "res.wall") {
    for (std::size_t i = 0; i + 1 < inv.args.size(); ++i) {
      if (inv.args[i] == "--ceiling-seconds") return std::stoi(inv.args[i + 1]) + 20;
    }
  }
  if (inv.family == "res.memory" || inv.family == "res.disk") return 90;
  if (inv.family.rfind("res.", 0) == 0) return 60;
  return 0;
}

LimitOutcome ClassifyLimit(const LimitBand& band, double measured, bool reached_ceiling,
                           double ceiling) {
  // Stopping at a ceiling inside or below the band proves only "enforced no lower than N".
  if (reached_ceiling) {
    return ceiling > band.high ? LimitOutcome::kNotEnforced : LimitOutcome::kBeyondCeiling;
  }
  if (measured >= band.low && measured <= band.high) return LimitOutcome::kAtDeclared;
  return LimitOutcome::kAtOtherValue;
}

// Judges: family_resource_judge.cc (pids, cpu, disk, fds), family_resource_end.cc (memory, wall).
Verdict JudgeResPids(const JudgeInput& in);
Verdict JudgeResMemory(const JudgeInput& in);
Verdict JudgeResCpu(const JudgeInput& in);
Verdict JudgeResWall(const JudgeInput& in);
Verdict JudgeResDisk(const JudgeInput& in);
Verdict JudgeResFds(const JudgeInput& in);

std::vector<FamilyRow> ResourceFamilies() {
  // res.memory and res.wall judge an incomplete launch themselves: an OOM kill of the whole
  // sandbox, or the sandbox ending the launch at its wall limit, is what they measure; so does
  // res.pids, whose sandbox may die at its host pids limit (gVisor) instead of refusing a fork.
  // res.pids cannot join a group: on gVisor its fork climb kills the whole sandbox; res.memory
  // may end in an OOM kill of the whole sandbox, and leaves the memory cgroup's counters high;
  // res.wall's expected end is the sandbox ending the launch.
  auto row = [](const char* name, auto expand, auto judge, bool judges_incomplete_launch,
                const char* group = nullptr) {
    return FamilyRow{.name = name, .expand = expand, .judge = judge, .exclusive = true,
                     .exclusive_group = group,
                     .judges_incomplete_launch = judges_incomplete_launch,
                     .launch_timeout_seconds = ResourceTimeoutSeconds};
  };
  return {row("res.pids", ExpandPids, JudgeResPids, true),
          row("res.memory", ExpandMemory, JudgeResMemory, true),
          row("res.cpu", ExpandCpu, JudgeResCpu, false, "res.shared"),
          row("res.wall", ExpandWall, JudgeResWall, true),
          row("res.disk", ExpandDisk, JudgeResDisk, false, "res.shared"),
          row("res.fds", ExpandFds, JudgeResFds, false, "res.shared")};
}

}  // namespace sandprobe
