// res.wall and res.memory judge an incomplete launch themselves (FamilyRow::
// judges_incomplete_launch). These tests hold both halves of the rule: a kill by the sandbox
// at the declared value passes, with the end named as evidence; a launch ended by the
// harness's timeout, by a crash, or with garbage frames never passes.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/family.h"
#include "families/family_resource.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using End = BatchResult::End;

Plan PlanFor(const char* family, std::int64_t wall_seconds = 5) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.wall_seconds = wall_seconds;  // ±1 s
  policy.limits.memory_mib = 512;             // ±5%: 486.4 .. 537.6 MiB
  auto plan = ExpandChecks(policy, testing::SuiteOf({family}), PlanContext{"/c", "/w", {}});
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return *plan;
}

// The facts of a probe that streamed progress up to `last` (in steps of `step`) and was then
// ended: no result frame, no done frame.
std::vector<json> Progress(const char* family, const char* key, int step, int last) {
  std::vector<json> facts = {{{"family", "hello"}, {"pid", 1}}};
  for (int value = step; value <= last; value += step) {
    facts.push_back({{"family", family}, {"kind", "progress"}, {key, value}});
  }
  return facts;
}

BatchResult Ended(std::vector<json> facts, End end) {
  BatchResult result;
  result.state = BatchResult::State::kRan;
  result.launch_id = "L1";
  result.frames.facts = std::move(facts);
  result.frames.done = false;
  result.complete = false;
  result.reason = "ended without a done frame";
  result.end = std::move(end);
  return result;
}

Verdict JudgeWall(const BatchResult& result, std::int64_t declared = 5) {
  return Evaluate(PlanFor("res.wall", declared), {result}, WitnessFacts{}).at(0);
}

BatchResult WallKilledAt(int last_ms, End end) {
  return Ended(Progress("res.wall", "elapsed_ms", 250, last_ms), std::move(end));
}

TEST(ResourceEndTest, OnlyWallMemoryAndPidsJudgeTheirLaunchsEnd) {
  for (const FamilyRow& row : FamilyTable()) {
    std::string name = row.name;
    EXPECT_EQ(row.judges_incomplete_launch, name == "res.wall" || name == "res.memory" || name == "res.pids") << name;
  }
}

TEST(ResourceEndTest, WallKilledBySandboxAtTheDeclaredValuePasses) {
  // timeout(1) around the probe: exit 124; a supervisor's SIGKILL: signal 9 or docker's 137.
  for (End end : {End{124, {}, false, ""}, End{{}, 9, false, ""}, End{137, {}, false, ""},
                  End{143, {}, false, ""}, End{{}, 15, false, ""}}) {
    Verdict v = JudgeWall(WallKilledAt(4750, end));
    SCOPED_TRACE(v.observed);
    EXPECT_EQ(v.outcome, Outcome::kPass);
    EXPECT_NE(v.observed.find("measured 4.75 s: enforced at the declared value"), std::string::npos);
    EXPECT_NE(v.evidence.expected_end.find("killed by the sandbox"), std::string::npos);
    EXPECT_NE(v.evidence.expected_end.find("not by the harness's timeout"), std::string::npos);
    EXPECT_EQ(v.evidence.frame_indexes, std::vector<int>{19}) << "the last progress frame";
  }
  Verdict v = JudgeWall(WallKilledAt(4750, End{124, {}, false, ""}));
  EXPECT_NE(v.evidence.expected_end.find("exit 124, as timeout(1) reports a kill"), std::string::npos)
      << v.evidence.expected_end;
}

// The harness's own clock (BatchResult::wall_ms) bounds the probe's: a probe that claims 4.75 s
// in a launch the harness timed at 0.53 s made its figure up, and that is never a pass.
TEST(ResourceEndTest, WallPastTheHarnessClockIsAnErrorNotAPass) {
  BatchResult lying = WallKilledAt(4750, End{137, {}, false, ""});
  lying.wall_ms = 530;
  Verdict v = JudgeWall(lying);
  EXPECT_EQ(v.outcome, Outcome::kError) << v.observed;
  EXPECT_EQ(v.tier(), EvidenceTier::kMeasured);
  EXPECT_NE(v.observed.find("the harness's own clock measured the whole launch at 0.53 s, shorter "
                            "than the probe's 4.75 s"), std::string::npos) << v.observed;
}

TEST(ResourceEndTest, WallWithinTheHarnessClockIsMeasuredWhenTheHarnessSawItInTheBand) {
  BatchResult honest = WallKilledAt(4750, End{137, {}, false, ""});
  honest.wall_ms = 5400;  // container start-up before the probe's own clock began
  Verdict v = JudgeWall(honest);
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_EQ(v.tier(), EvidenceTier::kMeasured);
  EXPECT_NE(v.observed.find("(the harness's clock: the launch took 5.4 s)"), std::string::npos) << v.observed;
  honest.wall_ms = 6500;  // past the band's top (6 s): the pass rests on the probe's figure
  v = JudgeWall(honest);
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_EQ(v.tier(), EvidenceTier::kReported);
  honest.wall_ms = 0;  // an older record: no harness clock
  EXPECT_EQ(JudgeWall(honest).tier(), EvidenceTier::kReported);
}

TEST(ResourceEndTest, WallKilledBySandboxElsewhereFailsWithMeasuredVsDeclared) {
  Verdict early = JudgeWall(WallKilledAt(2000, End{137, {}, false, ""}));
  EXPECT_EQ(early.outcome, Outcome::kFail);
  EXPECT_EQ(early.direction, Direction::kTooRestrictive);
  EXPECT_NE(early.observed.find("measured 2 s vs declared 5"), std::string::npos) << early.observed;
  Verdict late = JudgeWall(WallKilledAt(8250, End{{}, 15, false, ""}));
  EXPECT_EQ(late.outcome, Outcome::kFail);
  EXPECT_EQ(late.direction, Direction::kTooPermissive);
  EXPECT_NE(late.observed.find("measured 8.25 s vs declared 5"), std::string::npos) << late.observed;
}

TEST(ResourceEndTest, WallNotEndedUpToTheCeilingIsTooPermissive) {
  std::vector<json> facts = Progress("res.wall", "elapsed_ms", 250, 10000);
  facts.push_back({{"family", "res.wall"}, {"kind", "result"}, {"ceiling_seconds", 10},
                   {"elapsed_ms", 10003}, {"stopped_by", "ceiling"}});
  BatchResult clean = Ended(facts, End{0, {}, false, ""});
  clean.frames.done = true;
  clean.complete = true;
  Verdict v = JudgeWall(clean);
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.direction, Direction::kTooPermissive);
  EXPECT_NE(v.observed.find("not enforced up to 10 s"), std::string::npos) << v.observed;
}

TEST(ResourceEndTest, WallEndedByTheHarnessOrGarbageNeverPasses) {
  struct Case {
    const char* name;
    BatchResult result;
  };
  BatchResult garbage = WallKilledAt(4750, End{124, {}, false, ""});
  garbage.frames.protocol_errors = {"line 7: frame JSON: unexpected end of input"};
  std::vector<json> backwards = Progress("res.wall", "elapsed_ms", 250, 4750);
  backwards.push_back({{"family", "res.wall"}, {"kind", "progress"}, {"elapsed_ms", 4750}});
  std::vector<json> forged_done = Progress("res.wall", "elapsed_ms", 250, 4750);
  BatchResult done_then_killed = Ended(forged_done, End{124, {}, false, ""});
  done_then_killed.frames.done = true;
  std::vector<Case> cases = {
      {"harness timeout", WallKilledAt(4750, End{{}, 9, true, ""})},
      {"harness timeout, exit status", WallKilledAt(4750, End{137, {}, true, ""})},
      {"interrupted", WallKilledAt(4750, End{{}, 15, false, "interrupted"})},
      {"protocol error", garbage},
      {"progress repeats", Ended(backwards, End{124, {}, false, ""})},
      {"no progress at all", WallKilledAt(0, End{124, {}, false, ""})},
      {"crash", WallKilledAt(4750, End{{}, 11, false, ""})},
      {"crash via a shell", WallKilledAt(4750, End{139, {}, false, ""})},
      {"exit 0 without a result", WallKilledAt(4750, End{0, {}, false, ""})},
      {"usage error", WallKilledAt(4750, End{2, {}, false, ""})},
      {"done frame but no result", done_then_killed},
  };
  for (const Case& c : cases) {
    Verdict v = JudgeWall(c.result);
    EXPECT_NE(v.outcome, Outcome::kPass) << c.name << ": " << v.observed;
    EXPECT_NE(v.outcome, Outcome::kFail) << c.name << ": nothing was measured: " << v.observed;
    EXPECT_TRUE(v.evidence.expected_end.empty()) << c.name;
    EXPECT_EQ(v.outcome, Outcome::kError) << c.name << ": " << v.observed;
    EXPECT_NE(v.observed.find("probe launch incomplete"), std::string::npos) << c.name;
  }
}

TEST(ResourceEndTest, WallLimitsAboveTenSecondsAreSkipped) {
  Verdict v = JudgeWall(Ended({}, End{0, {}, false, ""}), 60);
  EXPECT_EQ(v.outcome, Outcome::kError) << "an incomplete launch stays an error: " << v.observed;
  BatchResult clean = Ended({}, End{0, {}, false, ""});
  clean.complete = clean.frames.done = true;
  Verdict skip = JudgeWall(clean, 60);
  EXPECT_EQ(skip.outcome, Outcome::kSkip);
  EXPECT_NE(skip.observed.find("only wall limits up to 10 s are measured"), std::string::npos);
}

// The whole sandbox OOM-killed (not only the probe's allocating child): docker run exits 137
// and docker inspect reads OOMKilled=true.
Verdict JudgeMemoryEnd(BatchResult result, json oom_killed) {
  WitnessFacts witnesses;
  if (!oom_killed.is_null()) {
    witnesses.observed["host_readings"] = {{"L1", {{"oom_killed", oom_killed}, {"exit_code", 137}}}};
  }
  return Evaluate(PlanFor("res.memory"), {result}, witnesses).at(0);
}

BatchResult MemoryKilledAt(int last_mib, End end) {
  return Ended(Progress("res.memory", "mib", 8, last_mib), std::move(end));
}

TEST(ResourceEndTest, MemoryWholeSandboxOomKilledAtTheDeclaredValuePasses) {
  Verdict v = JudgeMemoryEnd(MemoryKilledAt(504, End{137, {}, false, ""}), true);
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_NE(v.observed.find("measured 504 MiB: enforced at the declared value"), std::string::npos)
      << v.observed;
  EXPECT_NE(v.observed.find("the OOM killer ending the whole sandbox"), std::string::npos);
  EXPECT_NE(v.evidence.expected_end.find("oom_killed=true"), std::string::npos);
  Verdict low = JudgeMemoryEnd(MemoryKilledAt(256, End{{}, 9, false, ""}), true);
  EXPECT_EQ(low.outcome, Outcome::kFail);
  EXPECT_EQ(low.direction, Direction::kTooRestrictive);
  EXPECT_NE(low.observed.find("measured 256 MiB vs declared 512"), std::string::npos) << low.observed;
}

TEST(ResourceEndTest, MemoryKillWithoutTheHostsOomReadingOrByTheHarnessNeverPasses) {
  BatchResult garbage = MemoryKilledAt(504, End{137, {}, false, ""});
  garbage.frames.protocol_errors = {"line 3: frame cut off"};
  struct Case {
    const char* name;
    BatchResult result;
    json oom_killed;
  };
  std::vector<Case> cases = {
      {"no host reading (host, bwrap)", MemoryKilledAt(504, End{137, {}, false, ""}), nullptr},
      {"host says no OOM kill", MemoryKilledAt(504, End{137, {}, false, ""}), false},
      {"harness timeout", MemoryKilledAt(504, End{{}, 9, true, ""}), true},
      {"SIGTERM is not the OOM killer", MemoryKilledAt(504, End{143, {}, false, ""}), true},
      {"garbage frames", garbage, true},
  };
  for (const Case& c : cases) {
    Verdict v = JudgeMemoryEnd(c.result, c.oom_killed);
    EXPECT_EQ(v.outcome, Outcome::kError) << c.name << ": " << v.observed;
    EXPECT_TRUE(v.evidence.expected_end.empty()) << c.name;
  }
  // A streamed frame beyond the band is a real fact whatever ended the launch.
  Verdict beyond = JudgeMemoryEnd(MemoryKilledAt(800, End{{}, 9, true, ""}), nullptr);
  EXPECT_EQ(beyond.outcome, Outcome::kFail);
  EXPECT_EQ(beyond.direction, Direction::kTooPermissive);
}

TEST(ResourceEndTest, AResultFrameFromAnIncompleteLaunchIsNotAnExpectedEnd) {
  // The child was OOM-killed and reported, then the harness timed the launch out: the judge
  // finds a pass-worthy result, but names no expected end, so Evaluate refuses the pass.
  std::vector<json> facts = Progress("res.memory", "mib", 8, 504);
  facts.push_back({{"family", "res.memory"}, {"kind", "result"}, {"ok", true}, {"reached_mib", 509},
                   {"ceiling_mib", 1024}, {"stopped_by", "SIGKILL"}});
  Verdict v = JudgeMemoryEnd(Ended(facts, End{{}, 9, true, ""}), true);
  EXPECT_EQ(v.outcome, Outcome::kError) << v.observed;
  EXPECT_NE(v.observed.find("probe launch incomplete"), std::string::npos);
  // A family without the flag keeps the old rule even with a sandbox-looking kill.
  Policy policy = testing::TierLowPolicy();
  policy.limits.pids = 50;
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.pids"}), PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(plan.ok());
  BatchResult pids = Ended({{{"family", "res.pids"}, {"kind", "result"}, {"tasks_before", 1},
                             {"children", 49}, {"stopped_by", "EAGAIN"}, {"cgroup_pids_max", 50}}},
                           End{124, {}, false, ""});
  Verdict p = Evaluate(*plan, {pids}, WitnessFacts{}).at(0);
  EXPECT_EQ(p.outcome, Outcome::kError) << p.observed;
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

// gVisor's sentry dies (exit 2) at its host pids limit instead of refusing a fork: the climb's
// progress (from 0, every 8 children) and the host's own pids limit reading make it a fail too
// restrictive (the workload cannot hold the declared 50 tasks), not an error.
TEST(ResourceEndTest, PidsEndedBySandboxBelowTheBandIsTooRestrictive) {
  Policy policy = testing::TierLowPolicy();
  policy.limits.pids = 50;
  auto plan = ExpandChecks(policy, testing::SuiteOf({"res.pids"}), PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::vector<json> facts = {{{"family", "hello"}, {"pid", 1}}};
  for (int children : {0, 8, 16, 24}) facts.push_back({{"family", "res.pids"}, {"kind", "progress"}, {"children", children}});
  BatchResult died = Ended(facts, End{2, {}, false, ""});
  WitnessFacts host;
  host.observed["host_readings"] = {{"L1", {{"pids_limit", 128}, {"exit_code", 2}}}};
  Verdict v = Evaluate(*plan, {died}, host).at(0);
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_EQ(v.direction, Direction::kTooRestrictive);
  EXPECT_NE(v.observed.find("the sandbox ended the launch (exit 2) while the probe was forking, at 25..32 tasks"),
            std::string::npos) << v.observed;
  EXPECT_NE(v.evidence.expected_end.find("pids_limit=128"), std::string::npos);
  EXPECT_FALSE(v.evidence.enforced_instead.has_value());  // the count varies run to run: infer drops it
  // Without the host's own limit reading, or ended by the harness's timeout: no verdict of it.
  EXPECT_NE(Evaluate(*plan, {died}, WitnessFacts{}).at(0).outcome, Outcome::kFail);
  BatchResult timed_out = Ended(facts, End{{}, 9, true, ""});
  EXPECT_NE(Evaluate(*plan, {timed_out}, host).at(0).outcome, Outcome::kFail);
}

// issue 25: the host's reading of the probe's memory cgroup (run/probe_process_reading.h) wins:
// a probe figure that disagrees is an error; a pass whose limit the host read in the band is
// measured by the harness.
Verdict JudgeMemoryWithHostLimit(double probe_limit, json host_limit) {
  std::vector<json> facts = Progress("res.memory", "mib", 8, 504);
  facts.push_back({{"family", "res.memory"}, {"kind", "result"}, {"ok", true}, {"reached_mib", 509},
                   {"ceiling_mib", 1024}, {"stopped_by", "SIGKILL"}, {"cgroup_memory_limit_bytes", probe_limit}});
  BatchResult clean = Ended(facts, End{0, {}, false, ""});
  clean.frames.done = true;
  clean.complete = true;
  clean.reason.clear();
  WitnessFacts witnesses;
  if (!host_limit.is_null()) {
    witnesses.observed["host_readings"] = {{"L1", {{"host_cgroup_memory_limit_bytes", host_limit}}}};
  }
  return Evaluate(PlanFor("res.memory"), {clean}, witnesses).at(0);
}

TEST(ResourceEndTest, MemoryTheHostsCgroupReadingDecidesTheTier) {
  Verdict reported = JudgeMemoryWithHostLimit(536870912, nullptr);
  EXPECT_EQ(reported.outcome, Outcome::kPass) << reported.observed;
  EXPECT_EQ(reported.tier(), EvidenceTier::kReported);
  Verdict measured = JudgeMemoryWithHostLimit(536870912, 536870912);
  EXPECT_EQ(measured.outcome, Outcome::kPass) << measured.observed;
  EXPECT_EQ(measured.tier(), EvidenceTier::kMeasured);
  EXPECT_NE(measured.observed.find("the host read its memory cgroup limit: 512 MiB"), std::string::npos)
      << measured.observed;
}

TEST(ResourceEndTest, MemoryAProbeFigureTheHostContradictsIsNeverAPass) {
  Verdict other = JudgeMemoryWithHostLimit(536870912, 1073741824);
  EXPECT_EQ(other.outcome, Outcome::kError) << other.observed;
  EXPECT_NE(other.observed.find("the host read the probe's memory cgroup limit as 1024 MiB, where the probe "
                                "reported 512 MiB"), std::string::npos) << other.observed;
  Verdict none = JudgeMemoryWithHostLimit(536870912, -1);
  EXPECT_EQ(none.outcome, Outcome::kError) << none.observed;
}

}  // namespace
}  // namespace sandprobe
