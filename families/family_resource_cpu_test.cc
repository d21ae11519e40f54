// res.cpu's judgement: by the quota (host reading over the cgroup file inside) and its own
// throttling evidence, CPU time only where those are silent. Hand-made facts as the probe
// writes them (probes/resource_cpu.cc) and host readings as docker inspect gives them.
#include "families/family_resource_cpu.h"

#include <string>

#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using namespace resource_cpu;

const LimitBand kOneCore{1.0, 0.85, 1.15};  // tier-low: cpus 1, ±15%

// A result fact: `cores` measured with 2 threads on 2 CPUs.
json Result(double cores) {
  return {{"effective_cores", cores}, {"threads_started", 2}, {"affinity_cpus", 2}, {"window_ms", 500}};
}

// The probe's cgroup v1 reading: cfs quota (-1: none) and cpu.stat before/after the window.
json WithV1(json result, long quota_us, long periods, long throttled) {
  result["cpu_cgroup"] = {
      {"version", 1}, {"dir", "/sys/fs/cgroup/cpu"}, {"cgroup_path", "/docker/abc"}, {"resolved", true},
      {"quota", {{"quota_us", quota_us}, {"period_us", 100000}}},
      {"stat_dir", "/sys/fs/cgroup/cpu"},
      {"stat_before", {{"nr_periods", 40}, {"nr_throttled", 3}, {"throttled_time", 1000000}}},
      {"stat_after", {{"nr_periods", 40 + periods}, {"nr_throttled", 3 + throttled},
                      {"throttled_time", 1000000 + throttled * 50'000'000L}}}};
  return result;
}

// The same on cgroup v2: cpu.max and throttled_usec.
json WithV2(json result, long quota_us, long periods, long throttled) {
  result["cpu_cgroup"] = {
      {"version", 2}, {"dir", "/sys/fs/cgroup"}, {"cgroup_path", "/"}, {"resolved", true},
      {"quota", {{"quota_us", quota_us}, {"period_us", 100000}}},
      {"stat_dir", "/sys/fs/cgroup"},
      {"stat_before", {{"usage_usec", 10}, {"nr_periods", 0}, {"nr_throttled", 0}, {"throttled_usec", 0}}},
      {"stat_after", {{"usage_usec", 900000}, {"nr_periods", periods}, {"nr_throttled", throttled},
                      {"throttled_usec", throttled * 40000L}}}};
  return result;
}

const json kDockerOneCore = {{"nano_cpus", 1000000000}, {"cpu_quota", 0}, {"cpu_period", 0}};
const json kDockerNoLimit = {{"nano_cpus", 0}, {"cpu_quota", 0}, {"cpu_period", 0}};

CpuJudgement Judge(const json& result, const json& host = nullptr) {
  return JudgeCpu(kOneCore, ReadCpuEvidence(result, host));
}

void ExpectHas(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "want \"" << part << "\" in: " << text;
}

TEST(CpuEvidenceTest, ThrottlingCountersOfV1AndV2) {
  CpuThrottling v1 = Throttling(WithV1(Result(1), 100000, 5, 4));
  EXPECT_TRUE(v1.readable);
  EXPECT_EQ(v1.periods, 5);
  EXPECT_EQ(v1.throttled, 4);
  EXPECT_DOUBLE_EQ(v1.throttled_ms, 200);  // throttled_time is in ns
  CpuThrottling v2 = Throttling(WithV2(Result(1), 100000, 5, 5));
  EXPECT_EQ(v2.periods, 5);
  EXPECT_EQ(v2.throttled, 5);
  EXPECT_DOUBLE_EQ(v2.throttled_ms, 200);  // throttled_usec is in µs
  EXPECT_FALSE(Throttling(Result(1)).readable);
}

TEST(CpuEvidenceTest, QuotaFromTheHostAndFromTheCgroupFiles) {
  CpuQuota nano = HostQuota(kDockerOneCore);
  EXPECT_EQ(nano.source, QuotaSource::kHost);
  EXPECT_TRUE(nano.limited);
  EXPECT_DOUBLE_EQ(nano.cores, 1.0);
  CpuQuota quota = HostQuota({{"nano_cpus", 0}, {"cpu_quota", 150000}, {"cpu_period", 100000}});
  EXPECT_DOUBLE_EQ(quota.cores, 1.5);
  CpuQuota none = HostQuota(kDockerNoLimit);
  EXPECT_EQ(none.source, QuotaSource::kHost);
  EXPECT_FALSE(none.limited);
  // NanoCpus 0 alone says nothing: a --cpu-quota would not show there.
  EXPECT_EQ(HostQuota({{"nano_cpus", 0}}).source, QuotaSource::kUnknown);
  EXPECT_EQ(HostQuota(nullptr).source, QuotaSource::kUnknown);

  EXPECT_DOUBLE_EQ(CgroupQuota(WithV2(Result(1), 50000, 5, 5)).cores, 0.5);
  EXPECT_FALSE(CgroupQuota(WithV2(Result(1), -1, 0, 0)).limited);  // cpu.max "max"
  EXPECT_EQ(CgroupQuota(WithV2(Result(1), -1, 0, 0)).source, QuotaSource::kCgroup);
  // A parent's tighter quota binds.
  json nested = WithV1(Result(1), -1, 5, 5);
  nested["cpu_cgroup"]["ancestor_quota"] = {{"quota_us", 100000}, {"period_us", 100000}, {"dir", "/p"}};
  EXPECT_TRUE(CgroupQuota(nested).limited);
  EXPECT_DOUBLE_EQ(CgroupQuota(nested).cores, 1.0);
  // Facts of the earlier probe (the hierarchy's top): a quota binds, "none" says nothing.
  json legacy = Result(1);
  legacy["cgroup_cfs_quota_us"] = 100000;
  legacy["cgroup_cfs_period_us"] = 100000;
  EXPECT_DOUBLE_EQ(CgroupQuota(legacy).cores, 1.0);
  legacy["cgroup_cfs_quota_us"] = -1;
  EXPECT_EQ(CgroupQuota(legacy).source, QuotaSource::kUnknown);
  // A mount that does not show the probe's cgroup: no reading.
  json unresolved = WithV1(Result(1), 100000, 5, 5);
  unresolved["cpu_cgroup"]["resolved"] = false;
  EXPECT_EQ(CgroupQuota(unresolved).source, QuotaSource::kUnknown);
}

TEST(CpuJudgeTest, QuotaWithThrottlingPasses) {
  CpuJudgement v1 = Judge(WithV1(Result(1.18), 100000, 5, 5), kDockerOneCore);
  EXPECT_EQ(v1.outcome, Outcome::kPass) << v1.observed;
  ExpectHas(v1.observed, "enforced: a 1-core quota that throttled the probe");
  ExpectHas(v1.observed, "throttled in 5 of 5 CFS periods (250 ms)");
  ExpectHas(v1.observed, "host nano_cpus=1000000000");
  // Loaded host: only 0.6 cores, but the quota still throttled in 2 of 5 periods.
  CpuJudgement loaded = Judge(WithV2(Result(0.6), 100000, 5, 2));
  EXPECT_EQ(loaded.outcome, Outcome::kPass) << loaded.observed;
  // No counters, consumption at the quota: enforced too.
  CpuJudgement at = Judge(Result(0.99), kDockerOneCore);
  EXPECT_EQ(at.outcome, Outcome::kPass) << at.observed;
  ExpectHas(at.observed, "consumption at the 1-core quota");
}

TEST(CpuJudgeTest, QuotaWithLowConsumptionAndNoThrottling) {
  // --cpus 1 on a loaded 2-vCPU host, 1 of 52 periods throttled: below the quota is no evidence
  // against it, and the host read the quota itself: the host's reading decides (issue 26, 14:
  // docker-hardened's limits.cpus was inconclusive on every loaded machine).
  CpuJudgement v = Judge(WithV1(Result(0.46), 100000, 52, 1), kDockerOneCore);
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  ExpectHas(v.observed, "the host's 1-core quota decides: the probe got less (the host's load)");
  ExpectHas(v.observed, "measured 0.46 cores");
  ExpectHas(v.observed, "throttled in 1 of 52 CFS periods");
  EXPECT_EQ(Judge(Result(0.7), kDockerOneCore).outcome, Outcome::kPass);
  // Too few CPUs to reach the quota: says so.
  LimitBand four{4, 3.4, 4.6};
  CpuJudgement small = JudgeCpu(four, ReadCpuEvidence(Result(1.98), {{"nano_cpus", 4e9}, {"cpu_quota", 0}}));
  EXPECT_EQ(small.outcome, Outcome::kPass) << small.observed;
  ExpectHas(small.observed, "it could use fewer CPUs");
  // Only the cgroup file inside says so (no host reading): contention stays inconclusive.
  CpuJudgement inside = Judge(WithV1(Result(0.46), 100000, 52, 1));
  EXPECT_EQ(inside.outcome, Outcome::kInconclusive) << inside.observed;
  ExpectHas(inside.observed, "contention, not the sandbox, bounded the measurement");
}

// The host read the probe process's own cgroup chain (run/probe_process_reading.h): bwrap
// started by the harness sits in the harness's cgroup, with no quota on it or its parents.
TEST(CpuJudgeTest, TheHostsCgroupReadingOfTheProbeProcess) {
  const json none = {{"host_cgroup_cpu_quota_cores", -1}, {"host_cgroup_cpu_dir", "/sys/fs/cgroup/cpu,cpuacct/user.slice"}};
  CpuJudgement bwrap = Judge(Result(0.25), none);
  EXPECT_EQ(bwrap.outcome, Outcome::kFail) << bwrap.observed;
  EXPECT_EQ(bwrap.direction, Direction::kTooPermissive);
  ExpectHas(bwrap.observed, "host cgroup /sys/fs/cgroup/cpu,cpuacct/user.slice: no quota on it or its parents");
  const json one = {{"host_cgroup_cpu_quota_cores", 1.0}, {"host_cgroup_cpu_dir", "/sys/fs/cgroup/cpu/docker/abc"}};
  CpuJudgement docker = Judge(Result(0.99), one);
  EXPECT_EQ(docker.outcome, Outcome::kPass) << docker.observed;
  ExpectHas(docker.observed, "host cgroup /sys/fs/cgroup/cpu/docker/abc quota 1 cores");
}

// Emulated is not host (issue 26, 13): runsc's clock inside read 1.23 cores under the host's
// 1-core quota; a VM guest with no host reading is bounded by its online CPUs.
TEST(CpuJudgeTest, AnotherKernelsClockIsNotEvidenceAgainstTheHost) {
  CpuEvidence gvisor = ReadCpuEvidence(Result(1.23), kDockerOneCore);
  gvisor.other_kernel = "another kernel: build '4.4.0'";
  CpuJudgement sentry = JudgeCpu(kOneCore, gvisor);
  EXPECT_EQ(sentry.outcome, Outcome::kPass) << sentry.observed;
  ExpectHas(sentry.observed, "the host's 1-core quota decides: the CPU clock inside belongs to another kernel");
  // The host says no quota: still a fail, whatever kernel.
  CpuEvidence unlimited = ReadCpuEvidence(Result(1.23), kDockerNoLimit);
  unlimited.other_kernel = gvisor.other_kernel;
  EXPECT_EQ(JudgeCpu(kOneCore, unlimited).outcome, Outcome::kFail);
  // A guest of one vCPU, no host reading: its CPUs bound it.
  json one_cpu = Result(0.999);
  one_cpu["online_cpus"] = 1;
  CpuEvidence guest = ReadCpuEvidence(one_cpu, nullptr);
  guest.other_kernel = "another kernel: build '6.1.0-26-amd64'";
  CpuJudgement vm = JudgeCpu(kOneCore, guest);
  EXPECT_EQ(vm.outcome, Outcome::kPass) << vm.observed;
  ExpectHas(vm.observed, "bounded by the 1 CPUs online in another kernel");
  guest.online_cpus = 4;
  CpuJudgement wide = JudgeCpu(kOneCore, guest);
  EXPECT_EQ(wide.outcome, Outcome::kFail) << wide.observed;
  EXPECT_EQ(wide.direction, Direction::kTooPermissive);
  // The harness's own kernel with no reading at all: still only CPU time above the band.
  guest.other_kernel.clear();
  EXPECT_EQ(JudgeCpu(kOneCore, guest).outcome, Outcome::kInconclusive);
}

TEST(CpuJudgeTest, NoQuotaIsTooPermissiveWhateverTheConsumption) {
  for (double cores : {0.4, 1.0, 1.98}) {
    SCOPED_TRACE(cores);
    CpuJudgement host = Judge(Result(cores), kDockerNoLimit);
    EXPECT_EQ(host.outcome, Outcome::kFail) << host.observed;
    EXPECT_EQ(host.direction, Direction::kTooPermissive);
    ExpectHas(host.observed, "no CPU quota: the declared limit is missing");
    ExpectHas(host.observed, "host nano_cpus=0, cpu_quota=0");
    CpuJudgement v1 = Judge(WithV1(Result(cores), -1, 0, 0));
    EXPECT_EQ(v1.direction, Direction::kTooPermissive) << v1.observed;
    CpuJudgement v2 = Judge(WithV2(Result(cores), -1, 0, 0));
    EXPECT_EQ(v2.direction, Direction::kTooPermissive) << v2.observed;
  }
}

TEST(CpuJudgeTest, TheHostsReadingDecidesOverTheCgroupFile) {
  // The cgroup file shows 1 core, the host sets none: the host decides, and the file is named.
  CpuJudgement none = Judge(WithV1(Result(0.5), 100000, 5, 0), kDockerNoLimit);
  EXPECT_EQ(none.direction, Direction::kTooPermissive) << none.observed;
  ExpectHas(none.observed, "the host's reading decides over the cgroup v1 /sys/fs/cgroup/cpu quota 100000/100000");
  // The cgroup file shows none, the host 1 core, throttled: pass.
  EXPECT_EQ(Judge(WithV1(Result(1), -1, 5, 5), kDockerOneCore).outcome, Outcome::kPass);
}

TEST(CpuJudgeTest, QuotaOutsideTheBandFailsOnItsValue) {
  CpuJudgement above = Judge(WithV1(Result(1.49), 150000, 5, 5));
  EXPECT_EQ(above.outcome, Outcome::kFail);
  EXPECT_EQ(above.direction, Direction::kTooPermissive);
  EXPECT_TRUE(above.off_by_value);
  ExpectHas(above.observed, "a quota of 1.5 cores, above the declared 1");
  CpuJudgement below = Judge(Result(0.5), {{"nano_cpus", 5e8}, {"cpu_quota", 0}});
  EXPECT_EQ(below.direction, Direction::kTooRestrictive) << below.observed;
  ExpectHas(below.observed, "a quota of 0.5 cores, below the declared 1");
}

TEST(CpuJudgeTest, CpuTimeBeyondTheQuota) {
  // More than the host's quota allows, in the host's own kernel: the quota does not bind.
  CpuJudgement clock = Judge(Result(1.8), kDockerOneCore);
  EXPECT_EQ(clock.outcome, Outcome::kFail) << clock.observed;
  ExpectHas(clock.observed, "in the host's own kernel: that quota does not bind the sandbox");
  // More than a quota only the cgroup file shows, without throttling: that file does not bind.
  CpuJudgement file = Judge(WithV1(Result(1.9), 100000, 5, 0));
  EXPECT_EQ(file.direction, Direction::kTooPermissive) << file.observed;
}

TEST(CpuJudgeTest, WithoutAnyQuotaReadingOnlyCpuTimeAboveTheBandIsAFinding) {
  CpuJudgement all = Judge(Result(1.98));
  EXPECT_EQ(all.direction, Direction::kTooPermissive) << all.observed;
  ExpectHas(all.observed, "not enforced up to 2 cores (every thread got a core; declared 1)");
  EXPECT_EQ(Judge(Result(1.3)).direction, Direction::kTooPermissive);
  // In the band or below it: a busy host explains it as well as a limit does.
  for (double cores : {1.0, 0.5}) {
    CpuJudgement v = Judge(Result(cores));
    EXPECT_EQ(v.outcome, Outcome::kInconclusive) << v.observed;
    ExpectHas(v.observed, "no CPU quota readable");
  }
  // One usable CPU: cannot measure above it.
  json one = Result(0.98);
  one["affinity_cpus"] = 1;
  CpuJudgement capped = Judge(one);
  EXPECT_EQ(capped.outcome, Outcome::kInconclusive);
  ExpectHas(capped.observed, "cannot measure above 1 cores");
}

// Without a quota reading, "above the band" is more than a hidden quota at the band's edge
// (1.15 cores) could give over the window with one CFS period's leftover (edge 0.12 s for two
// threads): 1.15 x (1 + 0.12 / wall). The probe's early stop uses the same bound, so a 0.3 s
// window that stopped early at 1.9 cores fails, and 1.5 cores in 0.3 s proves nothing.
CpuJudgement JudgeWindow(double cores, double wall) {
  json result = Result(cores);
  result["wall_seconds"] = wall;
  CpuEvidence e = ReadCpuEvidence(result, nullptr);
  e.edge = 0.12;
  return JudgeCpu(kOneCore, e);
}

TEST(CpuJudgeTest, WithoutAQuotaReadingTheWindowsEdgeSlackIsNotAFinding) {
  EXPECT_EQ(JudgeWindow(1.9, 0.3).outcome, Outcome::kFail);       // above 1.15 x 1.4 = 1.61
  ExpectHas(JudgeWindow(1.9, 0.3).observed, "measured 1.9 cores (2 usable) over 0.3 s");
  CpuJudgement short_window = JudgeWindow(1.5, 0.3);
  EXPECT_EQ(short_window.outcome, Outcome::kInconclusive) << short_window.observed;
  ExpectHas(short_window.observed, "no more than a quota at the band's edge (1.15 cores) could give");
  EXPECT_EQ(JudgeWindow(1.25, 2.0).outcome, Outcome::kFail);      // above 1.15 x 1.06 = 1.219
  EXPECT_EQ(JudgeWindow(1.2, 2.0).outcome, Outcome::kInconclusive);
  EXPECT_EQ(JudgeWindow(1.0, 2.0).outcome, Outcome::kInconclusive);
}

// Through Evaluate: the plan's band, the launch's host readings, severity and evidence.
Verdict Evaluated(json result, json host_readings) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.cpus = 1.0;
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.cpu"}), PlanContext{"/c", "/w", {}});
  EXPECT_TRUE(plan.ok());
  return testing::JudgeOneResult(*plan, "res.cpu", std::move(result), host_readings);
}

TEST(CpuJudgeTest, TheVerdictCarriesTheEvidence) {
  Verdict pass = Evaluated(WithV1(Result(1.1), 100000, 5, 5), kDockerOneCore);
  EXPECT_EQ(pass.check.id, "limits.cpus:1");
  EXPECT_EQ(pass.outcome, Outcome::kPass) << pass.observed;
  EXPECT_EQ(pass.evidence.frame_indexes, std::vector<int>{1});
  ExpectHas(pass.observed, "; host: cpu_period=0, cpu_quota=0, nano_cpus=1000000000");
  EXPECT_FALSE(pass.remediation.empty());
  Verdict none = Evaluated(Result(0.5), kDockerNoLimit);
  EXPECT_EQ(none.outcome, Outcome::kFail);
  EXPECT_EQ(none.check.severity, Severity::kMedium);
  Verdict off = Evaluated(Result(2), {{"nano_cpus", 2e9}, {"cpu_quota", 0}});
  EXPECT_EQ(off.direction, Direction::kTooPermissive);
  EXPECT_EQ(off.check.severity, Severity::kMedium);
}

// JudgeResCpu takes the edge from the plan's own thread count, not from the probe's facts.
TEST(CpuJudgeTest, TheEdgeComesFromThePlan) {
  EXPECT_EQ(CpuEdgeMs(CpuThreads(1.0)), 120);
  json early = Result(1.5);
  early["wall_seconds"] = 0.3;
  EXPECT_EQ(Evaluated(early, nullptr).outcome, Outcome::kInconclusive);
  // 64 threads would mean a 0.74 s edge (1.9 < 1.15 x 3.5): the probe's count moves nothing.
  early["effective_cores"] = 1.9;
  early["threads_started"] = 64;
  EXPECT_EQ(Evaluated(early, nullptr).outcome, Outcome::kFail);
}

}  // namespace
}  // namespace sandprobe
