#include "families/family_resource.h"

#include <map>

#include <gtest/gtest.h>

#include "gate/check_selection.h"
#include "families/evaluate.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;

TEST(FamilyResourceTest, CeilingsStayAboveTheDeclaredValueAndUnderTheCaps) {
  EXPECT_EQ(PidsCeiling(50), 256);
  EXPECT_EQ(PidsCeiling(100), 400);
  EXPECT_EQ(PidsCeiling(100000), 4096);
  // Just past the band's upper edge: ceil(high) + max(declared / 4, floor), under the cap.
  EXPECT_EQ(MemoryCeilingMib(512, 537.6), 538 + 128);
  EXPECT_EQ(MemoryCeilingMib(8192, 8601.6), 4096);
  EXPECT_EQ(MemoryCeilingMib(16, 16.8), 17 + 16);
  EXPECT_EQ(DiskCeilingMib(100, 105), 105 + 25);
  EXPECT_EQ(DiskCeilingMib(4096, 4300.8), 2048);
  EXPECT_EQ(FdsCeiling(1024, 1024), 1024 + 256);
  EXPECT_EQ(FdsCeiling(100, 100), 100 + 64);
  EXPECT_EQ(FdsCeiling(100000, 100000), 65536);
  EXPECT_EQ(CpuThreads(1.0), 2);
  EXPECT_EQ(CpuThreads(0.5), 2);
}

// What the judge needs of a ceiling: above the band wherever the cap allows, so reaching it
// is "not enforced up to N" (a fail) and never "cannot measure above N"; at the cap otherwise,
// where reaching it stays inconclusive. Every limit in or below the band stops the probe first.
TEST(FamilyResourceTest, CeilingsSitAboveTheBandUnlessCapped) {
  for (std::int64_t declared : {1, 8, 50, 100, 512, 1000, 1024, 2000, 3900, 4096, 8192, 1 << 30}) {
    for (double percent : {0.0, 5.0, 50.0, 100.0}) {
      const double high = static_cast<double>(declared) * (1 + percent / 100);
      const std::pair<std::int64_t, std::int64_t> ceilings[] = {
          {MemoryCeilingMib(declared, high), 4096}, {DiskCeilingMib(declared, high), 2048},
          {FdsCeiling(declared, high), 65536}};
      for (const auto& [ceiling, cap] : ceilings) {
        EXPECT_LE(ceiling, cap) << declared << " " << percent;
        const bool above = high < static_cast<double>(cap);
        EXPECT_EQ(ceiling > high, above) << declared << " " << percent;
        EXPECT_EQ(ClassifyLimit({static_cast<double>(declared), 0, high}, static_cast<double>(ceiling),
                                true, static_cast<double>(ceiling)),
                  above ? LimitOutcome::kNotEnforced : LimitOutcome::kBeyondCeiling);
      }
    }
  }
}

TEST(FamilyResourceTest, ClassifyTellsTheOutcomesApart) {
  LimitBand band{512, 486.4, 537.6};
  EXPECT_EQ(ClassifyLimit(band, 510, false, 1024), LimitOutcome::kAtDeclared);
  EXPECT_EQ(ClassifyLimit(band, 255, false, 1024), LimitOutcome::kAtOtherValue);
  EXPECT_EQ(ClassifyLimit(band, 1024, true, 1024), LimitOutcome::kNotEnforced);
  // A ceiling inside or below the band measures nothing about the declared value.
  LimitBand large{8192, 7782.4, 8601.6};
  EXPECT_EQ(ClassifyLimit(large, 4096, true, 4096), LimitOutcome::kBeyondCeiling);
  EXPECT_EQ(ClassifyLimit(band, 530, true, 530), LimitOutcome::kBeyondCeiling);
  // Stopped by a limit below the ceiling: still a measurement.
  EXPECT_EQ(ClassifyLimit(large, 2000, false, 4096), LimitOutcome::kAtOtherValue);
}

Plan MemoryPlan(Policy& policy) {
  policy.limits.memory_mib = 512;
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.memory"}), PlanContext{"/c", "/w", {}});
  EXPECT_TRUE(plan.ok());
  return *plan;
}

Verdict JudgeMemory(const json& result) {
  Policy policy = testing::TierLowPolicy();
  Plan plan = MemoryPlan(policy);
  BatchResult ran;
  ran.state = BatchResult::State::kRan;
  ran.launch_id = "L1";
  ran.complete = true;
  ran.frames.done = true;
  ran.frames.facts = {{{"family", "res.memory"}, {"kind", "progress"}, {"mib", 248}}, result};
  WitnessFacts witnesses;
  witnesses.observed["host_readings"] = {{"L1", {{"oom_killed", true}}}};
  return Evaluate(plan, {ran}, witnesses).at(0);
}

TEST(FamilyResourceTest, PlansOneExclusiveLaunchWithTheCeilingAndTolerance) {
  Policy policy = testing::TierLowPolicy();
  Plan plan = MemoryPlan(policy);
  ASSERT_EQ(plan.batches.size(), 1u);
  EXPECT_TRUE(plan.batches[0].exclusive);
  EXPECT_EQ(plan.batches[0].invocations[0].args,
            (std::vector<std::string>{"--ceiling-mib", "666", "--every-mib", "8"}));
  EXPECT_EQ(plan.checks[0].id, "limits.memory_mib:512");
  ASSERT_TRUE(plan.checks[0].tolerance.has_value());
  EXPECT_EQ(plan.checks[0].tolerance->declared, 512);
  EXPECT_TRUE(plan.checks[0].tolerance->percent);
  EXPECT_DOUBLE_EQ(plan.checks[0].tolerance->Low(), 486.4);
  EXPECT_DOUBLE_EQ(plan.checks[0].tolerance->High(), 537.6);
  EXPECT_EQ(plan.checks[0].variant, "") << "the band has its own field now";
  EXPECT_EQ(plan.batches[0].timeout_seconds, 90) << "the family table's launch timeout";
}

TEST(FamilyResourceTest, EveryLimitCarriesThePolicysTolerance) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.pids = 50;
  policy.limits.cpus = 1.5;
  policy.limits.wall_seconds = 5;
  policy.limits.open_files = 1024;
  policy.limits.tolerance.pids = 2;
  policy.limits.tolerance.open_files = 3;
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.pids", "res.cpu", "res.wall", "res.fds"}),
                           PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->checks.size(), 4u);
  std::map<std::string, Tolerance> by_id;
  for (const Check& c : plan->checks) {
    ASSERT_TRUE(c.tolerance) << c.id;
    by_id[c.id] = *c.tolerance;
  }
  EXPECT_EQ(by_id.at("limits.pids.max:50").High(), 52);
  EXPECT_FALSE(by_id.at("limits.pids.max:50").percent);
  EXPECT_DOUBLE_EQ(by_id.at("limits.cpus:1.5").Low(), 1.5 * 0.85);
  EXPECT_EQ(by_id.at("limits.wall_seconds:5").Low(), 4);
  EXPECT_EQ(by_id.at("limits.open_files:1024").Absolute(), 3);
}

// A wall limit above the measured range: the judge skips it whatever the launch shows, so with
// a runner that judges launchless batches the plan gives it no launch, and the verdict is the
// one the 1 s probe launch got (same outcome, reason, expectation, remediation).
TEST(FamilyResourceTest, UnmeasurableWallIsDecidedWithoutALaunchAndTheSameVerdict) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.wall_seconds = 60;
  PlanContext launched{"/c", "/w", {}};
  PlanContext launchless = launched;
  launchless.launchless_checks = true;
  auto old_plan = ExpandChecks(policy, testing::SuiteOf({"res.wall"}), launched);
  auto new_plan = ExpandChecks(policy, testing::SuiteOf({"res.wall"}), launchless);
  ASSERT_TRUE(old_plan.ok() && new_plan.ok());
  ASSERT_EQ(old_plan->batches.size(), 1u);
  EXPECT_EQ(old_plan->batches[0].invocations.at(0).args,
            (std::vector<std::string>{"--ceiling-seconds", "1"}));
  ASSERT_EQ(new_plan->batches.size(), 1u);
  EXPECT_TRUE(new_plan->batches[0].invocations.empty());
  EXPECT_FALSE(new_plan->batches[0].host_readings) << "no launch to inspect";
  EXPECT_EQ(new_plan->batches[0].check_indexes, (std::vector<std::size_t>{0}));
  EXPECT_EQ(new_plan->checks.at(0).id, old_plan->checks.at(0).id);

  BatchResult slept;  // what the 1 s probe launch reported
  slept.state = BatchResult::State::kRan;
  slept.launch_id = "L1";
  slept.complete = true;
  slept.frames.done = true;
  slept.frames.facts = {{{"family", "res.wall"}, {"kind", "result"}, {"ok", true},
                         {"elapsed_ms", 1000}, {"ceiling_seconds", 1}}};
  BatchResult none;  // what the runner hands a launchless batch
  none.state = BatchResult::State::kRan;
  none.complete = true;
  Verdict before = Evaluate(*old_plan, {slept}, WitnessFacts{}).at(0);
  Verdict after = Evaluate(*new_plan, {none}, WitnessFacts{}).at(0);
  EXPECT_EQ(before.outcome, Outcome::kSkip);
  EXPECT_EQ(after.outcome, before.outcome);
  EXPECT_EQ(after.observed, before.observed);
  EXPECT_EQ(after.expected, before.expected);
  EXPECT_EQ(after.remediation, before.remediation);
  EXPECT_EQ(after.evidence.launch_id, "") << "no launch was involved";
}

TEST(FamilyResourceTest, MeasurableWallStillSleepsPastTheLimit) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.wall_seconds = 5;
  PlanContext launchless{"/c", "/w", {}};
  launchless.launchless_checks = true;
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.wall"}), launchless);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->batches.size(), 1u);
  EXPECT_EQ(plan->batches[0].invocations.at(0).args,
            (std::vector<std::string>{"--ceiling-seconds", "10"}));
  EXPECT_TRUE(plan->batches[0].host_readings);
}

// res.cpu, res.disk and res.fds share one exclusive launch when the suite lists them one after
// the other, in that order; pids and memory keep their own. The shared launch takes the longest
// timeout (disk's 90 s).
TEST(FamilyResourceTest, CpuDiskAndFdsShareOneLaunchTheOthersKeepTheirOwn) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.pids = 50;
  policy.limits.memory_mib = 512;
  policy.limits.cpus = 1;
  policy.limits.tmp_mib = 100;
  policy.limits.open_files = 1024;
  auto plan = ExpandChecks(
      policy, testing::SuiteOf({"res.pids", "res.memory", "res.cpu", "res.disk", "res.fds"}),
      PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->batches.size(), 3u);
  for (const LaunchBatch& b : plan->batches) EXPECT_TRUE(b.exclusive);
  const LaunchBatch& shared = plan->batches[2];
  ASSERT_EQ(shared.invocations.size(), 3u);
  EXPECT_EQ(shared.invocations[0].family, "res.cpu") << "first: its window in a fresh sandbox";
  EXPECT_EQ(shared.invocations[1].family, "res.disk");
  EXPECT_EQ(shared.invocations[2].family, "res.fds");
  EXPECT_EQ(shared.check_indexes.size(), 3u);
  EXPECT_EQ(shared.timeout_seconds, 90);
  EXPECT_TRUE(shared.host_readings);
  // Apart in the suite (another exclusive family between them): two launches again.
  auto apart = ExpandChecks(policy, testing::SuiteOf({"res.disk", "res.pids", "res.fds"}),
                            PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(apart.ok());
  EXPECT_EQ(apart->batches.size(), 3u);
  // Each is judged from its own family's result in the shared launch.
  BatchResult ran;
  ran.state = BatchResult::State::kRan;
  ran.launch_id = "L3";
  ran.complete = true;
  ran.frames.done = true;
  ran.frames.facts = {
      {{"family", "res.disk"}, {"kind", "result"}, {"ok", true}, {"dir", "/tmp"}, {"ceiling_mib", 200},
       {"written_mib", 100}, {"stopped_by", "ENOSPC"}, {"removed", true}},
      {{"family", "res.fds"}, {"kind", "result"}, {"ceiling", 2048}, {"open_before", 3},
       {"opened", 2045}, {"open_total", 2048}, {"stopped_by", "ceiling"}}};
  std::vector<BatchResult> results(3);
  for (int i = 0; i < 2; ++i) results[i].state = BatchResult::State::kSkipped;
  results[2] = ran;
  std::vector<Verdict> verdicts = Evaluate(*plan, results, WitnessFacts{});
  ASSERT_EQ(verdicts.size(), 5u);
  for (const Verdict& v : verdicts) {
    if (v.check.family == "res.disk") {
      EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
    }
    if (v.check.family == "res.fds") {
      EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
      EXPECT_EQ(v.direction, Direction::kTooPermissive);
    }
  }
}

// --skip of one of them runs only the other in the shared launch.
TEST(FamilyResourceTest, SkippingOneOfASharedLaunchDropsItsProbe) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.tmp_mib = 100;
  policy.limits.open_files = 1024;
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.disk", "res.fds"}), PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->batches.size(), 1u);
  ASSERT_TRUE(SelectChecks(*plan, CheckSelection{{}, {"limits.tmp_mib*"}}).ok());
  ASSERT_EQ(plan->batches.size(), 1u);
  ASSERT_EQ(plan->batches[0].invocations.size(), 1u);
  EXPECT_EQ(plan->batches[0].invocations[0].family, "res.fds");
}

// In a one-shot profile (each launch an instance of its own) pids and memory may run beside the
// other launches, each its own chain; the CPU and wall-clock measurements never; in a session
// (one instance for every launch) none of them.
TEST(FamilyResourceTest, PidsAndMemoryRunBesideOthersOnlyWhereEachLaunchIsItsOwnInstance) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.pids = 50;
  policy.limits.memory_mib = 512;
  policy.limits.cpus = 1;
  policy.limits.wall_seconds = 5;
  const Suite suite = testing::SuiteOf({"res.pids", "res.memory", "res.cpu", "res.wall"});
  auto oneshot = ExpandChecks(policy, suite, PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(oneshot.ok()) << oneshot.status().message();
  ASSERT_EQ(oneshot->batches.size(), 4u);
  EXPECT_EQ(oneshot->batches[0].overlap_chain, "res.pids");
  EXPECT_EQ(oneshot->batches[1].overlap_chain, "res.memory");
  EXPECT_EQ(oneshot->batches[2].overlap_chain, "") << "res.cpu runs alone";
  EXPECT_EQ(oneshot->batches[3].overlap_chain, "") << "res.wall runs alone";
  PlanContext session{"/c", "/w", {}};
  session.session = true;
  auto shared_instance = ExpandChecks(policy, suite, session);
  ASSERT_TRUE(shared_instance.ok()) << shared_instance.status().message();
  for (const LaunchBatch& b : shared_instance->batches) EXPECT_EQ(b.overlap_chain, "") << b.id;
}

// res.cpu's window: 3 CFS periods where the quota is readable, else 2 s, ended early once the
// CPU time exceeds what a quota at the band's edge (1.15 cores) gives in the time plus 120 ms.
TEST(FamilyResourceTest, CpuWindowArguments) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.cpus = 1;
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.cpu"}), PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->batches.at(0).invocations.at(0).args,
            (std::vector<std::string>{"--threads", "2", "--window-ms", "2000", "--min-periods", "3",
                                      "--stop-above-mc", "1150", "--edge-ms", "120",
                                      "--min-window-ms", "300"}));
  EXPECT_EQ(CpuStopAboveMc(1.15), 1150);
  EXPECT_EQ(CpuStopAboveMc(1.1501), 1151) << "rounded up: never below the band";
}

TEST(FamilyResourceTest, OomKillAtHalfTheDeclaredValueIsTooRestrictive) {
  Verdict v = JudgeMemory({{"family", "res.memory"}, {"kind", "result"}, {"ok", true},
                           {"reached_mib", 255}, {"ceiling_mib", 1024}, {"stopped_by", "SIGKILL"}});
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.direction, Direction::kTooRestrictive);
  EXPECT_NE(v.observed.find("measured 255 MiB vs declared 512"), std::string::npos) << v.observed;
  EXPECT_NE(v.observed.find("OOM killer"), std::string::npos);
  EXPECT_NE(v.observed.find("oom_killed=true"), std::string::npos);
}

TEST(FamilyResourceTest, ReachingTheCeilingIsNotEnforcedAndAtTheLimitPasses) {
  Verdict open = JudgeMemory({{"family", "res.memory"}, {"kind", "result"}, {"ok", true},
                              {"reached_mib", 1024}, {"ceiling_mib", 1024}, {"stopped_by", "ceiling"}});
  EXPECT_EQ(open.outcome, Outcome::kFail);
  EXPECT_EQ(open.direction, Direction::kTooPermissive);
  EXPECT_EQ(open.check.severity, Severity::kHigh);
  EXPECT_NE(open.observed.find("not enforced up to 1024 MiB"), std::string::npos);
  Verdict ok = JudgeMemory({{"family", "res.memory"}, {"kind", "result"}, {"ok", true},
                            {"reached_mib", 509}, {"ceiling_mib", 1024}, {"stopped_by", "SIGKILL"}});
  EXPECT_EQ(ok.outcome, Outcome::kPass) << ok.observed;
}

TEST(FamilyResourceTest, NoResultFrameIsNeverAPass) {
  Verdict v = JudgeMemory({{"family", "res.memory"}, {"kind", "progress"}, {"mib", 504}});
  EXPECT_EQ(v.outcome, Outcome::kInconclusive) << v.observed;
}

}  // namespace
}  // namespace sandprobe
