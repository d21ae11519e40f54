#include "run/probe_process_reading.h"

#include <unistd.h>

#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "launch/launcher.h"

namespace sandprobe {
namespace {

// A cgroup v1 host (this project's CI VM): cpu,cpuacct and pids hierarchies and the unified one.
const char kHybridMountinfo[] =
    "30 23 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n"
    "33 23 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
    "35 23 0:31 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n";
const char kDockerCgroup[] =
    "12:pids:/docker/abc\n"
    "4:cpu,cpuacct:/docker/abc\n"
    "0::/system.slice/docker-abc.scope\n";

using Files = std::map<std::string, std::string>;
auto Reader(const Files& files) {
  return [files](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ProbeProcessReadingTest, AContainersQuotaAndPidsLimitOnAHybridHost) {
  const Files files = {{"/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "100000"},
                       {"/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000"},
                       {"/sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us", "-1"},
                       {"/sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us", "100000"},
                       {"/sys/fs/cgroup/pids/docker/abc/pids.max", "50"},
                       {"/sys/fs/cgroup/pids/docker/pids.max", "max"}};
  CgroupLimits limits = ReadCgroupLimits(kDockerCgroup, kHybridMountinfo, Reader(files));
  EXPECT_EQ(limits.cpu_dir, "/sys/fs/cgroup/cpu,cpuacct/docker/abc");
  ASSERT_TRUE(limits.cpu_cores.has_value());
  EXPECT_DOUBLE_EQ(*limits.cpu_cores, 1.0);
  EXPECT_EQ(limits.pids_dir, "/sys/fs/cgroup/pids/docker/abc");
  EXPECT_EQ(limits.pids_max, 50);
  nlohmann::json readings = LimitsAsReadings(42, limits);
  EXPECT_EQ(readings["host_cgroup_cpu_quota_cores"], 1.0);
  EXPECT_EQ(readings["host_cgroup_pids_max"], 50);
  EXPECT_EQ(readings["probe_host_pid"], 42);
}

// bwrap started by the harness: the harness's own cgroup, no quota anywhere up the chain.
TEST(ProbeProcessReadingTest, NoQuotaAnywhereIsMinusOne) {
  const char cgroup[] = "4:cpu,cpuacct:/user.slice\n12:pids:/user.slice/session-1.scope\n0::/user.slice\n";
  const Files files = {{"/sys/fs/cgroup/cpu,cpuacct/user.slice/cpu.cfs_quota_us", "-1"},
                       {"/sys/fs/cgroup/cpu,cpuacct/user.slice/cpu.cfs_period_us", "100000"},
                       {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1"},
                       {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000"}};
  CgroupLimits limits = ReadCgroupLimits(cgroup, kHybridMountinfo, Reader(files));
  EXPECT_EQ(limits.cpu_dir, "/sys/fs/cgroup/cpu,cpuacct/user.slice");
  EXPECT_FALSE(limits.cpu_cores.has_value());
  EXPECT_FALSE(limits.pids_max.has_value());
  EXPECT_EQ(LimitsAsReadings(7, limits)["host_cgroup_cpu_quota_cores"], -1);
}

// cgroup v2 only: cpu.max, and a parent's tighter quota binds.
TEST(ProbeProcessReadingTest, UnifiedHierarchyTakesTheTightestQuotaUpTheChain) {
  const char mountinfo[] = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
  const char cgroup[] = "0::/ci/job/step\n";
  const Files files = {{"/sys/fs/cgroup/ci/job/step/cpu.max", "max 100000"},
                       {"/sys/fs/cgroup/ci/job/cpu.max", "50000 100000"},
                       {"/sys/fs/cgroup/ci/cpu.max", "200000 100000"},
                       {"/sys/fs/cgroup/ci/job/step/pids.max", "max"},
                       {"/sys/fs/cgroup/ci/pids.max", "100"}};
  CgroupLimits limits = ReadCgroupLimits(cgroup, mountinfo, Reader(files));
  ASSERT_TRUE(limits.cpu_cores.has_value());
  EXPECT_DOUBLE_EQ(*limits.cpu_cores, 0.5);
  EXPECT_EQ(limits.pids_max, 100);
}

// A mount that does not show the process's cgroup (its root is another cgroup): no reading,
// never the mount's top read as if it were the process's.
TEST(ProbeProcessReadingTest, AMountThatDoesNotShowTheCgroupGivesNoReading) {
  const char mountinfo[] = "33 23 0:29 /docker/other /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
  CgroupLimits limits = ReadCgroupLimits("4:cpu:/user.slice\n", mountinfo, Reader({}));
  EXPECT_EQ(limits.cpu_dir, "");
  EXPECT_EQ(LimitsAsReadings(7, limits).count("host_cgroup_cpu_quota_cores"), 0u);
}

// Memory, v1 (this machine): memory.limit_in_bytes up the chain, v1's page-rounded LLONG_MAX
// for "none"; the peak comes from memory.max_usage_in_bytes.
TEST(ProbeProcessReadingTest, AContainersMemoryLimitOnAHybridHost) {
  const std::string mountinfo = std::string(kHybridMountinfo) +
                                "36 23 0:32 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n";
  const std::string cgroup = std::string(kDockerCgroup) + "9:memory:/docker/abc\n";
  const Files files = {{"/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "536870912"},
                       {"/sys/fs/cgroup/memory/docker/memory.limit_in_bytes", "9223372036854771712"},
                       {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712"}};
  CgroupLimits limits = ReadCgroupLimits(cgroup, mountinfo, Reader(files));
  EXPECT_EQ(limits.memory_dir, "/sys/fs/cgroup/memory/docker/abc");
  EXPECT_EQ(limits.memory_limit_bytes, 536870912);
  EXPECT_EQ(MemoryPeakFile(limits.memory_dir, limits.memory_version),
            "/sys/fs/cgroup/memory/docker/abc/memory.max_usage_in_bytes");
  EXPECT_EQ(LimitsAsReadings(7, limits)["host_cgroup_memory_limit_bytes"], 536870912);
}

// Memory, v2: memory.max ("max": none), a parent's tighter limit binds; the peak is memory.peak.
TEST(ProbeProcessReadingTest, UnifiedMemoryMaxTakesTheTightestUpTheChain) {
  const char mountinfo[] = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
  const Files files = {{"/sys/fs/cgroup/ci/job/step/memory.max", "max"},
                       {"/sys/fs/cgroup/ci/job/memory.max", "268435456"},
                       {"/sys/fs/cgroup/ci/memory.max", "1073741824"}};
  CgroupLimits limits = ReadCgroupLimits("0::/ci/job/step\n", mountinfo, Reader(files));
  EXPECT_EQ(limits.memory_limit_bytes, 268435456);
  EXPECT_EQ(MemoryPeakFile(limits.memory_dir, limits.memory_version), "/sys/fs/cgroup/ci/job/step/memory.peak");
  CgroupLimits none = ReadCgroupLimits("0::/ci\n", mountinfo, Reader({{"/sys/fs/cgroup/ci/memory.max", "max"}}));
  EXPECT_FALSE(none.memory_limit_bytes.has_value());
  EXPECT_EQ(LimitsAsReadings(7, none)["host_cgroup_memory_limit_bytes"], -1);
}

// The watch finds a real process by the binary's identity and the nonce among its argv, and
// nothing for a nonce no process carries.
TEST(ProbeProcessReadingTest, TheWatchFindsTheProcessByIdentityAndNonce) {
  ProcessLauncher launcher;
  const std::string sleep = "/bin/sleep";
  ProbeProcessWatch watch(sleep, "0.7");
  ProbeProcessWatch other(sleep, "no-such-nonce");
  LaunchSpec spec;
  spec.argv = {sleep, "0.7"};
  StatusOr<LaunchResult> r = launcher.Launch(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  nlohmann::json seen = watch.Stop();
  EXPECT_EQ(seen.value("probe_host_pid", 0), r->pid) << seen.dump();
  EXPECT_TRUE(other.Stop().empty());
}

}  // namespace

TEST(ProbeProcessReadingTest, SessionIsTheSixthFieldCountedAfterTheCommandName) {
  EXPECT_EQ(SessionOfStat("4242 (sandprobe-probe) S 4241 4240 4200 0 -1 4194560 99"), 4200);
  // A command name may hold spaces and ")": the fields start after the last one.
  EXPECT_EQ(SessionOfStat("7 (a) b) (c) R 1 7 7 34816 7"), 7);
  EXPECT_EQ(SessionOfStat("7 (a) R 1 7"), std::nullopt);
  EXPECT_EQ(SessionOfStat("no stat here"), std::nullopt);
  EXPECT_EQ(SessionOfStat("7 (a) R 1 7 x9"), std::nullopt);
}

}  // namespace sandprobe
