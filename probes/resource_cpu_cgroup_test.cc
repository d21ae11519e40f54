// Unit tests for res.cpu's cgroup readings: cpu.stat and cpu.max texts of cgroup v1 and v2
// (fixture text as the kernel writes it), and finding the probe's own cgroup directory from
// mountinfo in the layouts sandboxes produce.
#include <gtest/gtest.h>

#include "probes/resource_families.h"

namespace sandprobe {
namespace {

using nlohmann::json;

TEST(CpuCgroupText, ParsesV1CpuStat) {
  // cgroup v1 cpu.stat (throttled_time in ns), as a docker --cpus 1 container shows it.
  json stat = ParseCgroupKeyValues(
      "nr_periods 52\nnr_throttled 1\nthrottled_time 4512345\nnr_bursts 0\nburst_time 0\n");
  EXPECT_EQ(stat, (json{{"nr_periods", 52}, {"nr_throttled", 1}, {"throttled_time", 4512345},
                        {"nr_bursts", 0}, {"burst_time", 0}}));
}

TEST(CpuCgroupText, ParsesV2CpuStat) {
  // cgroup v2 cpu.stat: usage in microseconds, throttled_usec instead of throttled_time.
  json stat = ParseCgroupKeyValues(
      "usage_usec 2035463\nuser_usec 2031101\nsystem_usec 4362\ncore_sched.force_idle_usec 0\n"
      "nr_periods 21\nnr_throttled 19\nthrottled_usec 1893812\nnr_bursts 0\nburst_usec 0\n");
  EXPECT_EQ(stat["nr_periods"], 21);
  EXPECT_EQ(stat["nr_throttled"], 19);
  EXPECT_EQ(stat["throttled_usec"], 1893812);
  EXPECT_EQ(stat["usage_usec"], 2035463);
  EXPECT_EQ(stat["core_sched.force_idle_usec"], 0);
  EXPECT_FALSE(stat.contains("throttled_time"));
}

TEST(CpuCgroupText, SkipsLinesThatAreNotKeyAndInteger) {
  EXPECT_EQ(ParseCgroupKeyValues("nr_periods x\n\nnoval\nnr_throttled 3\n"),
            (json{{"nr_throttled", 3}}));
  EXPECT_EQ(ParseCgroupKeyValues(""), json::object());
}

TEST(CpuCgroupText, ParsesV2CpuMax) {
  EXPECT_EQ(ParseCpuMax("max 100000\n"), (json{{"quota_us", -1}, {"period_us", 100000}}));
  EXPECT_EQ(ParseCpuMax("150000 100000\n"), (json{{"quota_us", 150000}, {"period_us", 100000}}));
  EXPECT_TRUE(ParseCpuMax("").is_null());
  EXPECT_TRUE(ParseCpuMax("max").is_null());
  EXPECT_TRUE(ParseCpuMax("lots 100000").is_null());
}

// mountinfo lines: "id parent dev root mountpoint opts [optional] - fstype source superopts".
constexpr char kHybridHost[] =
    "30 24 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "34 30 0:30 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 cgroup2 rw\n"
    "35 30 0:31 / /sys/fs/cgroup/cpu rw shared:11 - cgroup cgroup rw,cpu\n"
    "36 30 0:32 / /sys/fs/cgroup/cpuacct rw shared:12 - cgroup cgroup rw,cpuacct\n";

TEST(CpuCgroupDirTest, HybridHostPicksTheV1CpuHierarchyAndTheOwnPath) {
  std::optional<CpuCgroupDir> at = ResolveCpuCgroup(kHybridHost, "/user.slice/x", "/user.slice/x");
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->version, 1);
  EXPECT_EQ(at->dir, "/sys/fs/cgroup/cpu/user.slice/x");
  EXPECT_TRUE(at->resolved);
  // A process in the root cgroup (firejail here) reads the hierarchy's top.
  EXPECT_EQ(ResolveCpuCgroup(kHybridHost, "/", "/")->dir, "/sys/fs/cgroup/cpu");
}

TEST(CpuCgroupDirTest, DockerV1MountShowsOnlyTheContainersCgroup) {
  // Without a cgroup namespace the path names the container; the mount's root is that path.
  std::string mountinfo =
      "612 603 0:31 /docker/abc /sys/fs/cgroup/cpu ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n";
  std::optional<CpuCgroupDir> at = ResolveCpuCgroup(mountinfo, "/docker/abc", std::nullopt);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->dir, "/sys/fs/cgroup/cpu");
  EXPECT_TRUE(at->resolved);
  // A path outside the mount cannot be read: the top is a guess, and says so.
  std::optional<CpuCgroupDir> other = ResolveCpuCgroup(mountinfo, "/elsewhere", std::nullopt);
  EXPECT_EQ(other->dir, "/sys/fs/cgroup/cpu");
  EXPECT_FALSE(other->resolved);
}

TEST(CpuCgroupDirTest, UnifiedV2WithACgroupNamespace) {
  std::string mountinfo =
      "700 690 0:28 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw,nsdelegate\n";
  std::optional<CpuCgroupDir> at = ResolveCpuCgroup(mountinfo, std::nullopt, "/");
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->version, 2);
  EXPECT_EQ(at->dir, "/sys/fs/cgroup");
  EXPECT_EQ(ResolveCpuCgroup(mountinfo, std::nullopt, "/sub")->dir, "/sys/fs/cgroup/sub");
}

TEST(CpuCgroupDirTest, NoCgroupMountIsNoDirectory) {
  // bwrap's root: /proc and /dev, no /sys.
  std::string mountinfo = "1 0 0:40 / / ro - tmpfs tmpfs rw\n2 1 0:41 / /proc rw - proc proc rw\n";
  EXPECT_FALSE(ResolveCpuCgroup(mountinfo, "/", "/").has_value());
  EXPECT_FALSE(ResolveCpuCgroup(kHybridHost, std::nullopt, std::nullopt).has_value());
}

}  // namespace
}  // namespace sandprobe
