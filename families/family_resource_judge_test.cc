// The judges of res.pids, res.disk and res.fds (res.cpu: family_resource_cpu_test.cc): for each, the three outcomes a user
// must tell apart (enforced at the declared value: pass; enforced at another value: fail with
// measured vs declared, too permissive above the band and too restrictive below it; not
// enforced up to the ceiling: fail, too permissive) and the mechanism that stopped the probe.
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/family_resource.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// tier-low's limits: pids 50 (±1), cpus 1 (±15%), /tmp 100 MiB (±5%), open files 1024 (±0).
Policy LimitsPolicy() {
  Policy policy = testing::TierLowPolicy();
  policy.limits.pids = 50;
  policy.limits.cpus = 1.0;
  policy.limits.tmp_mib = 100;
  policy.limits.open_files = 1024;
  return policy;
}

// The one check of `family`, judged from a clean, complete launch that reported `result`.
Verdict JudgeResult(const char* family, json result, json host_readings = nullptr) {
  auto plan = ExpandChecks(LimitsPolicy(), testing::SuiteOf({family}), PlanContext{"/c", "/w", {}});
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->checks.size(), 1u);
  return testing::JudgeOneResult(*plan, family, std::move(result), host_readings);
}

struct Case {
  const char* name;
  json result;
  Outcome outcome;
  Direction direction;
  std::vector<std::string> observed;  // substrings the observation must hold
  // Enforced at another value: that value, as a number in the evidence (infer takes it).
  std::optional<double> enforced_instead = std::nullopt;
};

void ExpectCases(const char* family, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(family) + ": " + c.name);
    Verdict v = JudgeResult(family, c.result);
    EXPECT_EQ(OutcomeName(v.outcome), OutcomeName(c.outcome)) << v.observed;
    EXPECT_EQ(DirectionName(v.direction), DirectionName(c.direction)) << v.observed;
    for (const std::string& part : c.observed) {
      EXPECT_NE(v.observed.find(part), std::string::npos) << "want \"" << part << "\" in: " << v.observed;
    }
    EXPECT_EQ(v.evidence.launch_id, "L1");
    EXPECT_EQ(v.evidence.frame_indexes, std::vector<int>{1}) << "the result frame is the evidence";
    EXPECT_TRUE(v.evidence.expected_end.empty()) << "a launch that ended by itself";
    EXPECT_EQ(v.evidence.enforced_instead, c.enforced_instead) << v.observed;
    EXPECT_FALSE(v.remediation.empty());
  }
}

TEST(ResourceJudgeTest, PidsThreeOutcomesAndMechanism) {
  // Measured = tasks before the first fork (the probe itself included) + children forked.
  ExpectCases("res.pids", {
      {"pids.max at 50", {{"tasks_before", 1}, {"children", 49}, {"stopped_by", "EAGAIN"},
                          {"cgroup_pids_max", 50}, {"uid", 1000}},
       Outcome::kPass, Direction::kNone,
       {"measured 50 tasks: enforced at the declared value", "the pids cgroup (EAGAIN, pids.max=50)"}},
      {"within the ±1 band", {{"tasks_before", 2}, {"children", 49}, {"stopped_by", "EAGAIN"},
                              {"cgroup_pids_max", 50}, {"uid", 1000}},
       Outcome::kPass, Direction::kNone, {"measured 51 tasks"}},
      {"pids.max at 100", {{"tasks_before", 1}, {"children", 99}, {"stopped_by", "EAGAIN"},
                           {"cgroup_pids_max", 100}, {"uid", 1000}},
       Outcome::kFail, Direction::kTooPermissive,
       {"measured 100 tasks vs declared 50: enforced above the declared value", "pids.max=100"}, 100},
      {"pids.max at 20", {{"tasks_before", 1}, {"children", 19}, {"stopped_by", "EAGAIN"},
                          {"cgroup_pids_max", 20}, {"uid", 1000}},
       Outcome::kFail, Direction::kTooRestrictive,
       {"measured 20 tasks vs declared 50: enforced below the declared value"}, 20},
      {"no limit up to the ceiling", {{"tasks_before", 1}, {"children", 256}, {"stopped_by", "ceiling"},
                                      {"uid", 0}},
       Outcome::kFail, Direction::kTooPermissive,
       {"measured 257 tasks: not enforced up to 257 tasks", "declared 50"}},
      {"RLIMIT_NPROC for a non-root uid", {{"tasks_before", 1}, {"children", 49},
                                           {"stopped_by", "EAGAIN"}, {"rlimit_nproc", 50}, {"uid", 1000}},
       Outcome::kPass, Direction::kNone,
       {"EAGAIN with RLIMIT_NPROC=50 (counted per uid across the host)"}},
      {"no visible mechanism", {{"tasks_before", 3}, {"children", 47}, {"stopped_by", "EAGAIN"},
                                {"uid", 0}},
       Outcome::kPass, Direction::kNone, {"EAGAIN from fork (no pids.max readable inside; 3 tasks before)"}},
  });
}

// Issue 26, 7: with the host's pid namespace the probe sees 136 processes, of which one is the
// sandbox's; the cgroup's own counter at the stop is the measurement.
TEST(ResourceJudgeTest, PidsCountsOnlyWhatTheSandboxMade) {
  ExpectCases("res.pids", {
      {"the cgroup's own counter", {{"tasks_before", 1}, {"visible_processes", 136}, {"children", 49},
                                    {"stopped_by", "EAGAIN"}, {"cgroup_pids_max", 50},
                                    {"cgroup_pids_current_peak", 50}, {"uid", 1000}},
       Outcome::kPass, Direction::kNone,
       {"measured 50 tasks", "counted by the cgroup's own pids.current, 49 children forked",
        "136 processes visible, the others not the sandbox's"}},
      {"no counter: the probe's own cgroup", {{"tasks_before", 1}, {"visible_processes", 136}, {"children", 49},
                                              {"stopped_by", "EAGAIN"}, {"uid", 0}},
       Outcome::kPass, Direction::kNone, {"49 children + 1 tasks of the probe's own cgroups before"}},
      {"the counter beyond the band", {{"tasks_before", 1}, {"children", 60}, {"stopped_by", "EAGAIN"},
                                       {"cgroup_pids_max", 64}, {"cgroup_pids_current_peak", 64}, {"uid", 1000}},
       Outcome::kFail, Direction::kTooPermissive, {"measured 64 tasks vs declared 50"}, 64},
  });
}

TEST(ResourceJudgeTest, PidsSeverityFollowsTheOutcomeAndHostReadingsAreShown) {
  Verdict open = JudgeResult("res.pids", {{"tasks_before", 1}, {"children", 256},
                                          {"stopped_by", "ceiling"}, {"uid", 0}});
  EXPECT_EQ(open.check.severity, Severity::kHigh) << "a missing limit stays high";
  Verdict off = JudgeResult("res.pids", {{"tasks_before", 1}, {"children", 99}, {"stopped_by", "EAGAIN"},
                                         {"cgroup_pids_max", 100}, {"uid", 1000}});
  EXPECT_EQ(off.check.severity, Severity::kMedium) << "a limit off by more than the band is medium";
  Verdict host = JudgeResult("res.pids", {{"tasks_before", 1}, {"children", 49}, {"stopped_by", "EAGAIN"},
                                          {"cgroup_pids_max", 50}, {"uid", 1000}},
                             {{"pids_limit", 50}});
  EXPECT_NE(host.observed.find("; host: pids_limit=50"), std::string::npos) << host.observed;
  EXPECT_EQ(host.evidence.witness_facts, std::vector<std::string>{"host readings: pids_limit=50"});
}

// res.cpu: family_resource_cpu_test.cc.

json Disk(double written, const char* stopped_by) {
  return {{"ok", true}, {"dir", "/tmp"}, {"written_mib", written}, {"ceiling_mib", 200},
          {"fs_size_mib", 100}, {"stopped_by", stopped_by}, {"removed", true}};
}

TEST(ResourceJudgeTest, DiskThreeOutcomesAndMechanism) {
  ExpectCases("res.disk", {
      {"tmpfs of 100 MiB", Disk(100, "ENOSPC"), Outcome::kPass, Direction::kNone,
       {"measured 100 MiB: enforced at the declared value", "a full filesystem (ENOSPC; /tmp is 100 MiB)"}},
      {"quota at 150 MiB", Disk(150, "EDQUOT"), Outcome::kFail, Direction::kTooPermissive,
       {"measured 150 MiB vs declared 100: enforced above the declared value", "a disk quota (EDQUOT)"}, 150},
      {"RLIMIT_FSIZE on a new, empty file", Disk(50, "EFBIG"), Outcome::kFail, Direction::kTooRestrictive,
       {"measured 50 MiB vs declared 100: enforced below the declared value", "RLIMIT_FSIZE (EFBIG) on a new, empty file"}, 50},
      {"nothing up to 200 MiB", Disk(200, "ceiling"), Outcome::kFail, Direction::kTooPermissive,
       {"measured 200 MiB: not enforced up to 200 MiB"}},
  });
  // Issue 26, 8: a per-file limit only splits the total; 200 MiB as two files is not enforced.
  json split = Disk(200, "ceiling");
  split["files"] = 2;
  split["file_limit_mib"] = 100;
  Verdict two = JudgeResult("res.disk", split);
  EXPECT_EQ(two.outcome, Outcome::kFail) << two.observed;
  EXPECT_NE(two.observed.find("not enforced up to 200 MiB"), std::string::npos) << two.observed;
  json stuck = Disk(100, "ENOSPC");
  stuck["removed"] = false;
  Verdict v = JudgeResult("res.disk", stuck);
  EXPECT_NE(v.observed.find("the probe could not remove its file"), std::string::npos) << v.observed;
  Verdict no_file = JudgeResult("res.disk", {{"ok", false}, {"step", "open"}, {"errno", "EROFS"}});
  EXPECT_EQ(no_file.outcome, Outcome::kInconclusive) << "no write at all measures nothing";
  EXPECT_NE(no_file.observed.find("could not create a file in /tmp: open: EROFS"), std::string::npos)
      << no_file.observed;
}

json Fds(int total, const char* stopped_by, int rlimit) {
  return {{"open_before", 3}, {"opened", total - 3}, {"open_total", total}, {"ceiling", 2048},
          {"rlimit_nofile", rlimit}, {"stopped_by", stopped_by}};
}

TEST(ResourceJudgeTest, FdsThreeOutcomesAndMechanism) {
  ExpectCases("res.fds", {
      {"nofile 1024", Fds(1024, "EMFILE", 1024), Outcome::kPass, Direction::kNone,
       {"measured 1024 fds: enforced at the declared value", "RLIMIT_NOFILE (EMFILE; soft limit 1024)"}},
      {"nofile 1025 (tolerance 0)", Fds(1025, "EMFILE", 1025), Outcome::kFail, Direction::kTooPermissive,
       {"measured 1025 fds vs declared 1024: enforced above the declared value"}, 1025},
      {"nofile 256", Fds(256, "EMFILE", 256), Outcome::kFail, Direction::kTooRestrictive,
       {"measured 256 fds vs declared 1024: enforced below the declared value", "soft limit 256"}, 256},
      {"system table full", Fds(900, "ENFILE", 65536), Outcome::kFail, Direction::kTooRestrictive,
       {"the system-wide file table (ENFILE)"}, 900},
      {"nothing up to 2048", Fds(2048, "ceiling", 65536), Outcome::kFail, Direction::kTooPermissive,
       {"measured 2048 fds: not enforced up to 2048 fds"}},
  });
}

// A declared limit above what the probe may measure (its caps: 4096 tasks, 4096 MiB of memory,
// 2048 MiB of disk, 65536 fds): reaching the ceiling is "cannot measure above N", never a fail.
TEST(ResourceJudgeTest, ADeclaredLimitAboveTheProbesCeilingIsInconclusive) {
  Policy policy = testing::TierLowPolicy();
  policy.limits = {};
  policy.limits.pids = 10000;
  policy.limits.memory_mib = 8192;
  policy.limits.tmp_mib = 4096;
  policy.limits.open_files = 100000;
  struct Row {
    const char* family;
    json result;
    const char* ceiling;  // in the observation
  };
  const Row rows[] = {
      {"res.pids", {{"tasks_before", 1}, {"children", 4096}, {"stopped_by", "ceiling"}, {"uid", 0}},
       "cannot measure above 4097 tasks (the probe's ceiling; declared 10000)"},
      {"res.memory", {{"ok", true}, {"reached_mib", 4096}, {"ceiling_mib", 4096}, {"stopped_by", "ceiling"}},
       "cannot measure above 4096 MiB (the probe's ceiling; declared 8192)"},
      {"res.disk", {{"ok", true}, {"dir", "/tmp"}, {"written_mib", 2048}, {"ceiling_mib", 2048},
                    {"stopped_by", "ceiling"}, {"removed", true}},
       "cannot measure above 2048 MiB (the probe's ceiling; declared 4096)"},
      {"res.fds", {{"open_before", 3}, {"opened", 65533}, {"open_total", 65536}, {"ceiling", 65536},
                   {"rlimit_nofile", 1048576}, {"stopped_by", "ceiling"}},
       "cannot measure above 65536 fds (the probe's ceiling; declared 100000)"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.family);
    auto plan = ExpandChecks(policy, testing::SuiteOf({row.family}), PlanContext{"/c", "/w", {}});
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    ASSERT_EQ(plan->checks.size(), 1u);
    Verdict v = testing::JudgeOneResult(*plan, row.family, row.result);
    EXPECT_EQ(OutcomeName(v.outcome), OutcomeName(Outcome::kInconclusive)) << v.observed;
    EXPECT_EQ(v.direction, Direction::kNone);
    EXPECT_NE(v.observed.find(row.ceiling), std::string::npos) << v.observed;
  }
  // Stopped below the declared value by a real limit: still a finding.
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.memory"}), PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(plan.ok());
  BatchResult ran;
  ran.state = BatchResult::State::kRan;
  ran.launch_id = "L1";
  ran.complete = true;
  ran.frames.done = true;
  ran.frames.facts = {{{"family", "res.memory"}, {"kind", "result"}, {"ok", true}, {"reached_mib", 512},
                       {"ceiling_mib", 4096}, {"stopped_by", "SIGKILL"}}};
  ran.end.exit_code = 0;
  Verdict low = Evaluate(*plan, {ran}, WitnessFacts{}).at(0);
  EXPECT_EQ(low.outcome, Outcome::kFail) << low.observed;
  EXPECT_EQ(low.direction, Direction::kTooRestrictive);
}

TEST(ResourceJudgeTest, AMissingResultIsNeverAPass) {
  for (const char* family : {"res.pids", "res.cpu", "res.disk", "res.fds"}) {
    auto plan = ExpandChecks(LimitsPolicy(), testing::SuiteOf({family}), PlanContext{"/c", "/w", {}});
    ASSERT_TRUE(plan.ok());
    BatchResult ran;
    ran.state = BatchResult::State::kRan;
    ran.launch_id = "L1";
    ran.complete = true;
    ran.frames.done = true;
    Verdict v = Evaluate(*plan, {ran}, WitnessFacts{}).at(0);
    EXPECT_EQ(v.outcome, Outcome::kInconclusive) << family << ": " << v.observed;
  }
}

TEST(ResourceJudgeTest, ACheckWithoutABandIsAnError) {
  Plan plan;
  Check check;
  check.id = "limits.pids.max:50";
  check.family = "res.pids";
  plan.checks = {check};
  plan.batches = {{"B1", {{"res.pids", {}}}, {0}, true, 60}};
  BatchResult ran;
  ran.state = BatchResult::State::kRan;
  ran.complete = true;
  ran.frames.done = true;
  ran.frames.facts = {{{"family", "res.pids"}, {"kind", "result"}, {"children", 49}}};
  Verdict v = Evaluate(plan, {ran}, WitnessFacts{}).at(0);
  EXPECT_EQ(v.outcome, Outcome::kError);
  EXPECT_NE(v.observed.find("no declared value and tolerance"), std::string::npos) << v.observed;
}

}  // namespace
}  // namespace sandprobe
