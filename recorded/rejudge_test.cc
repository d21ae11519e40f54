// Re-judging a recorded run: the same policy gives the same verdicts; another policy changes
// them on the recorded facts; what the run never probed is skip, never a pass; a changed limit
// is not judged on a probe run with the old ceiling; the plan record survives the JSON report
// and a re-judged report can be re-judged again; garbage and other schemas are invalid input.
#include "recorded/rejudge.h"

#include <gtest/gtest.h>

#include "reports/json_report.h"
#include "families/evaluate.h"
#include "load/json_document.h"
#include "families/plan.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;

const std::string kEmptySha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

Policy PolicyOf(const std::string& body) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(R"({"name": "p", "description": "d", )" + body + "}", "p.json");
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  StatusOr<Policy> policy = ParsePolicy(*doc);
  EXPECT_TRUE(policy.ok()) << policy.status().message();
  return policy.ok() ? *policy : Policy{};
}

const char* kRecordedPolicy = R"("filesystem": {"readable": ["/tmp"], "unreadable": ["/etc/shadow"]})";

Suite ReadSuite() {
  Suite suite = testing::SuiteOf({"fs.read"});
  suite.raw = {{"name", "t"}, {"description", "d"}, {"families", json::array({{{"family", "fs.read"}}})}};
  return suite;
}

// What the probe said in the recorded launch: /tmp readable, /etc/shadow denied.
BatchResult RecordedLaunch() {
  BatchResult r;
  r.state = BatchResult::State::kRan;
  r.launch_id = "L1";
  r.nonce = "n1";
  r.complete = true;
  r.frames.done = true;
  r.frames.facts = {
      {{"family", "fs.read"}, {"path", "/tmp"}, {"ok", true}, {"kind", "dir"}, {"entries", 0}, {"sha256", kEmptySha}},
      {{"family", "fs.read"}, {"path", "/etc/shadow"}, {"ok", false}, {"step", "open"}, {"errno", "EACCES"}}};
  return r;
}

RecordedRun Recorded() {
  RecordedRun run;
  run.run_id = "r1";
  run.context = PlanContext{"/var/tmp/sp/canary", "/workspace"};
  StatusOr<Plan> plan = ExpandChecks(PolicyOf(kRecordedPolicy), ReadSuite(), run.context);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  run.plan = *plan;
  run.results.assign(run.plan.batches.size(), RecordedLaunch());
  run.witnesses = WitnessFacts{"/var/tmp/sp/canary", std::string(64, 'c'), std::string(64, 'e')};
  run.witnesses.observed["host_paths"] = {
      {"paths", {{"/etc/shadow", {{"ok", true}, {"kind", "file"}, {"bytes", 9}, {"sha256", std::string(64, 's')}}}}}};
  return run;
}

const Verdict& VerdictOf(const Rejudged& r, const std::string& id) {
  for (std::size_t i = 0; i < r.plan.checks.size(); ++i) {
    if (r.plan.checks[i].id == id) return r.verdicts[i];
  }
  ADD_FAILURE() << "no check " << id;
  static const Verdict kNone;
  return kNone;
}

Rejudged RejudgeOrDie(const RecordedRun& run, const std::string& policy_body) {
  StatusOr<Rejudged> r = Rejudge(run, PolicyOf(policy_body), ReadSuite());
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Rejudged{};
}

TEST(Rejudge, TheRecordedPolicyGivesTheRecordedVerdicts) {
  RecordedRun run = Recorded();
  std::vector<Verdict> live = Evaluate(run.plan, run.results, run.witnesses);
  Rejudged again = RejudgeOrDie(run, kRecordedPolicy);
  ASSERT_EQ(again.verdicts.size(), live.size());
  for (std::size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(again.verdicts[i].check.id, live[i].check.id);
    EXPECT_EQ(again.verdicts[i].outcome, live[i].outcome) << live[i].check.id;
    EXPECT_EQ(again.verdicts[i].observed, live[i].observed);
    EXPECT_EQ(again.verdicts[i].evidence.launch_id, "L1");
  }
  EXPECT_EQ(VerdictOf(again, "fs.read.denied:/etc/shadow").outcome, Outcome::kPass);
}

TEST(Rejudge, AnotherPolicyChangesVerdictsOnTheRecordedFacts) {
  RecordedRun run = Recorded();
  Rejudged r = RejudgeOrDie(run, R"("filesystem": {"readable": ["/etc/shadow"], "unreadable": ["/tmp"]})");
  const Verdict& shadow = VerdictOf(r, "fs.read.allowed:/etc/shadow");
  EXPECT_EQ(shadow.outcome, Outcome::kFail);
  EXPECT_EQ(shadow.direction, Direction::kTooRestrictive);
  EXPECT_EQ(shadow.evidence.launch_id, "L1");
  const Verdict& tmp = VerdictOf(r, "fs.read.denied:/tmp");
  EXPECT_EQ(tmp.outcome, Outcome::kFail);
  EXPECT_EQ(tmp.direction, Direction::kTooPermissive);
}

TEST(Rejudge, WhatTheRunNeverProbedIsSkipNeverPass) {
  RecordedRun run = Recorded();
  Rejudged r = RejudgeOrDie(run, R"("filesystem": {"readable": ["/tmp", "/usr"], "unreadable": ["/etc/shadow", "/root"]})");
  for (const char* id : {"fs.read.allowed:/usr", "fs.read.denied:/root"}) {
    const Verdict& v = VerdictOf(r, id);
    EXPECT_EQ(v.outcome, Outcome::kSkip) << id;
    EXPECT_EQ(v.observed.rfind("not probed in run r1", 0), 0u) << v.observed;
  }
  EXPECT_EQ(VerdictOf(r, "fs.read.denied:/etc/shadow").outcome, Outcome::kPass);
}

TEST(Rejudge, AChangedLimitIsNotJudgedOnTheOldCeiling) {
  RecordedRun run;
  run.run_id = "r2";
  Suite suite = testing::SuiteOf({"res.pids"});
  StatusOr<Plan> plan = ExpandChecks(PolicyOf(R"("limits": {"pids": 50})"), suite, run.context);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  run.plan = *plan;
  run.results.assign(run.plan.batches.size(), BatchResult{.state = BatchResult::State::kRan, .launch_id = "L1"});
  StatusOr<Rejudged> same = Rejudge(run, PolicyOf(R"("limits": {"pids": 50})"), suite);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->verdicts.at(0).evidence.launch_id, "L1");
  EXPECT_NE(same->verdicts.at(0).observed.rfind("not probed", 0), 0u);
  StatusOr<Rejudged> other = Rejudge(run, PolicyOf(R"("limits": {"pids": 100})"), suite);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->verdicts.at(0).outcome, Outcome::kSkip);
  EXPECT_EQ(other->verdicts.at(0).observed.rfind("not probed in run r2", 0), 0u);
}

// A report as `sandprobe run --json` writes it, from the recorded run.
json ReportJson(const RecordedRun& run) {
  RunReport report;
  report.tool_version = "0";
  report.run_id = run.run_id;
  report.profile_name = "fake";
  report.policy_name = "p";
  report.policy_path = "p.json";
  report.policy = json::parse(std::string(R"({"name": "p", "description": "d", )") + kRecordedPolicy + "}");
  report.suite_name = "t";
  report.verdicts = Evaluate(run.plan, run.results, run.witnesses);
  LaunchRecord launch;
  launch.id = "L1";
  launch.purpose = "probe";
  launch.exit_code = 0;
  launch.wall_ms = 500;
  launch.frames = run.results.front().frames;
  report.launches = {launch};
  report.witnesses = {{"canary_file", {{"path", run.witnesses.canary_path}, {"sha256", run.witnesses.canary_sha256}}},
                      {"canary_env", {{"name", "SANDPROBE_CANARY_X"}, {"sha256", run.witnesses.env_secret_sha256}}},
                      {"host_paths", run.witnesses.observed.at("host_paths")}};
  report.plan = RecordPlan(ReadSuite(), run.context, run.plan, run.results, run.witnesses);
  return ReportToJson(report);
}

TEST(RejudgeRecord, ThePlanSurvivesTheJsonReport) {
  RecordedRun run = Recorded();
  StatusOr<RecordedRun> read = ReadRecordedRun(ReportJson(run), "run.json");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->run_id, "r1");
  ASSERT_EQ(read->plan.batches.size(), run.plan.batches.size());
  EXPECT_EQ(read->plan.batches[0].invocations[0].args, run.plan.batches[0].invocations[0].args);
  EXPECT_EQ(read->plan.batches[0].check_indexes, run.plan.batches[0].check_indexes);
  EXPECT_EQ(read->results[0].nonce, "n1");
  EXPECT_TRUE(read->results[0].complete);
  EXPECT_EQ(read->results[0].frames.facts, run.results[0].frames.facts);
  EXPECT_EQ(read->witnesses.canary_sha256, run.witnesses.canary_sha256);
  EXPECT_EQ(read->witnesses.observed.at("host_paths"), run.witnesses.observed.at("host_paths"));
  EXPECT_EQ(read->context.workspace, "/workspace");
}

// A launch without a fresh positive control keeps its passes at "reported" when re-judged too:
// the reason is read back from the report's launch_control witness.
TEST(RejudgeRecord, ALaunchWithoutAFreshControlStaysReported) {
  RecordedRun run = Recorded();
  json report = ReportJson(run);
  report["witnesses"]["launch_control"] = {
      {"available", true}, {"launches", json::array({{{"launch_id", "L1"}, {"unavailable", "the probe cannot open files"}}})}};
  StatusOr<RecordedRun> read = ReadRecordedRun(report, "run.json");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->results[0].challenge_unavailable, "the probe cannot open files");
  Rejudged again = RejudgeOrDie(*read, kRecordedPolicy);
  const Verdict& shadow = VerdictOf(again, "fs.read.denied:/etc/shadow");
  EXPECT_EQ(shadow.outcome, Outcome::kPass);
  EXPECT_EQ(shadow.tier(), EvidenceTier::kReported);
  bool said = false;
  for (const std::string& fact : shadow.evidence.witness_facts) said = said || fact.find("no fresh positive control") != std::string::npos;
  EXPECT_TRUE(said) << "the cap is not named";
  // The run's own reason, when the whole run could not ask one.
  report["witnesses"]["launch_control"] = {{"available", false}, {"unavailable", "a wasi probe"}, {"launches", json::array()}};
  read = ReadRecordedRun(report, "run.json");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->results[0].challenge_unavailable, "a wasi probe");
  // An older report: no witness, nothing restored.
  report["witnesses"].erase("launch_control");
  read = ReadRecordedRun(report, "run.json");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->results[0].challenge_unavailable, "");
}

TEST(RejudgeReport, MarksTheReportAndCanBeRejudgedAgain) {
  json recorded = ReportJson(Recorded());
  const std::string policy_file = ::testing::TempDir() + "/rejudge-other.json";
  {
    std::FILE* f = std::fopen(policy_file.c_str(), "w");
    std::fputs(R"({"name": "other", "description": "d", "filesystem": {"unreadable": ["/tmp", "/root"]}})", f);
    std::fclose(f);
  }
  StatusOr<RunReport> once = RejudgeReport(recorded, "run.json", policy_file);
  ASSERT_TRUE(once.ok()) << once.status().message();
  ASSERT_TRUE(once->rejudged_from.has_value());
  EXPECT_EQ(once->rejudged_from->run_id, "r1");
  EXPECT_EQ(once->policy_name, "other");
  ASSERT_EQ(once->verdicts.size(), 2u);
  EXPECT_EQ(once->verdicts[0].outcome, Outcome::kFail);  // /tmp was read
  EXPECT_EQ(once->verdicts[1].outcome, Outcome::kSkip);  // /root never asked
  EXPECT_GT(once->verdicts[0].duration_seconds, 0);
  // The re-judged report, judged again against the run's own policy (recorded in it).
  StatusOr<RunReport> twice = RejudgeReport(ReportToJson(*once), "again.json", "");
  ASSERT_TRUE(twice.ok()) << twice.status().message();
  EXPECT_EQ(twice->policy_name, "other");
  EXPECT_EQ(twice->verdicts[0].outcome, Outcome::kFail);
  EXPECT_EQ(twice->verdicts[1].outcome, Outcome::kSkip);
}

TEST(RejudgeRecord, GarbageAndOtherSchemasAreInvalidInput) {
  json report = ReportJson(Recorded());
  for (const json& bad : {json("text"), json::object(), json{{"schema", "sandprobe-report/2"}}}) {
    StatusOr<RecordedRun> read = ReadRecordedRun(bad, "x.json");
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(read.status().message().find("x.json"), std::string::npos);
  }
  json old = report;
  old.erase("plan");
  EXPECT_NE(ReadRecordedRun(old, "x.json").status().message().find("no plan record"), std::string::npos);
  json broken = report;
  broken["plan"]["batches"][0]["result"]["state"] = "exploded";
  EXPECT_FALSE(ReadRecordedRun(broken, "x.json").ok());
  json missing_launch = report;
  missing_launch["launches"] = json::array();
  EXPECT_FALSE(ReadRecordedRun(missing_launch, "x.json").ok());
}

}  // namespace
}  // namespace sandprobe
