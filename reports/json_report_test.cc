#include "reports/json_report.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <utf8cpp/utf8.h>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using report_fixture::BwrapReport;
using report_fixture::HardenedReport;

const std::string kSchema = std::string(SANDPROBE_SOURCE_DIR) + "/docs/report.schema.json";

class JsonReportFileTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Validates `report_text` against docs/report.schema.json; returns "" when it is valid, else
  // the first validation error's message.
  std::string SchemaErrors(const std::string& report_text) {
    const std::string path = dir_ + "/candidate.json";
    const std::string errors = dir_ + "/errors.txt";
    std::ofstream(path, std::ios::binary) << report_text;
    const std::string cmd =
        "python3 -c 'import json, sys, jsonschema\n"
        "schema = json.load(open(sys.argv[1]))\n"
        "jsonschema.Draft202012Validator.check_schema(schema)\n"
        "error = jsonschema.exceptions.best_match("
        "jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))\n"
        "print(error.message if error else \"\", end=\"\")' '" +
        kSchema + "' '" + path + "' > '" + errors + "'";
    if (std::system(cmd.c_str()) != 0) return "python3 jsonschema failed: " + cmd;
    return report_fixture::ReadFile(errors);
  }

  const std::string dir_ = report_fixture::MakeTempDir();
};

TEST(JsonReport, MatchesGoldenFile) {
  EXPECT_EQ(
      report_fixture::CompareWithGolden("report.golden.json", RenderJsonReport(HardenedReport())),
      "");
}

TEST_F(JsonReportFileTest, ReportsValidateAgainstTheDocumentedSchema) {
  EXPECT_EQ(SchemaErrors(RenderJsonReport(HardenedReport())), "");
  EXPECT_EQ(SchemaErrors(RenderJsonReport(BwrapReport())), "");
  EXPECT_EQ(SchemaErrors(RenderJsonReport(RunReport{})), "");
  // What `sandprobe run` writes when its watchdog gives up on a stuck run.
  EXPECT_EQ(SchemaErrors(RenderJsonReport(AbandonedRunReport("0.1", "sandboxes/x.json",
                                                             "watchdog: no launch ended for 240 s"))),
            "");
}

// Several suites and --check/--skip are recorded for `sandprobe diff`; a report that never
// loaded its suites (a harness failure) has neither key.
TEST_F(JsonReportFileTest, SuitesAndSelectionAreRecordedWhenTheRunLoadedThem) {
  RunReport r = HardenedReport();
  r.suite_name = "default+network";
  r.selection = RunSelection{{"default", "network"}, {"fs.read", "net.tcp"}, {"fs.*"}, {"*:/tmp"}};
  json j = ReportToJson(r);
  EXPECT_EQ(j["suite"], "default+network");
  EXPECT_EQ(j["suites"], json::array({"default", "network"}));
  EXPECT_EQ(j["selection"], json({{"families", {"fs.read", "net.tcp"}}, {"check", {"fs.*"}}, {"skip", {"*:/tmp"}}}));
  EXPECT_EQ(SchemaErrors(RenderJsonReport(r)), "");
  json failed = ReportToJson(HarnessFailureReport("0.1", "sandboxes/x.json", "sandprobe.harness", "why", false));
  EXPECT_FALSE(failed.contains("suites"));
  EXPECT_FALSE(failed.contains("selection"));
}

TEST_F(JsonReportFileTest, SchemaRejectsWhatTheFormatDoesNotAllow) {
  auto dump = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); };
  json unknown_verdict = ReportToJson(HardenedReport());
  unknown_verdict["checks"][0]["verdict"] = "maybe";
  EXPECT_THAT(SchemaErrors(dump(unknown_verdict)), HasSubstr("'maybe' is not one of"));

  json extra_key = ReportToJson(HardenedReport());
  extra_key["checks"][0]["colour"] = "red";
  EXPECT_THAT(SchemaErrors(dump(extra_key)), HasSubstr("'colour' was unexpected"));

  json fail_without_direction = ReportToJson(HardenedReport());
  fail_without_direction["checks"][1]["direction"] = nullptr;  // checks[1] is a fail
  EXPECT_THAT(SchemaErrors(dump(fail_without_direction)), HasSubstr("None is not one of"));

  json pass_with_direction = ReportToJson(HardenedReport());
  pass_with_direction["checks"][0]["direction"] = "too-permissive";  // checks[0] is a pass
  EXPECT_THAT(SchemaErrors(dump(pass_with_direction)), HasSubstr("None was expected"));

  json no_summary = ReportToJson(HardenedReport());
  no_summary.erase("summary");
  EXPECT_THAT(SchemaErrors(dump(no_summary)), HasSubstr("'summary' is a required property"));
}

// A measured limit whose launch the sandbox ended (res.wall under timeout(1)).
Verdict WallVerdict() {
  Verdict v;
  v.check.id = "limits.wall_seconds:5";
  v.check.family = "res.wall";
  v.check.tolerance = Tolerance{5, 1, false};
  v.outcome = Outcome::kPass;
  v.observed = "measured 4.75 s: enforced at the declared value";
  v.evidence.launch_id = "L1";
  v.evidence.expected_end = "killed by the sandbox (exit 124), not by the harness's timeout";
  return v;
}

TEST_F(JsonReportFileTest, LimitChecksCarryTheirBandAndExpectedEnd) {
  RunReport report = HardenedReport();
  report.verdicts.push_back(WallVerdict());
  Verdict memory = WallVerdict();
  memory.check.id = "limits.memory_mib:512";
  memory.check.tolerance = Tolerance{512, 5, true};
  memory.evidence.expected_end.clear();
  report.verdicts.push_back(memory);
  const json j = ReportToJson(report);
  const json& wall = j.at("checks")[7];
  EXPECT_EQ(wall.at("tolerance"), json({{"declared", 5.0}, {"plus_minus", 1.0}, {"percent", false},
                                        {"low", 4.0}, {"high", 6.0}}));
  EXPECT_EQ(wall.at("evidence").at("expected_end"),
            "killed by the sandbox (exit 124), not by the harness's timeout");
  EXPECT_DOUBLE_EQ(j.at("checks")[8].at("tolerance").at("low").get<double>(), 486.4);
  EXPECT_TRUE(j.at("checks")[8].at("evidence").at("expected_end").is_null());
  auto dump = [](const json& r) { return r.dump(-1, ' ', false, json::error_handler_t::replace); };
  EXPECT_EQ(SchemaErrors(dump(j)), "");
  json no_high = j;
  no_high["checks"][7]["tolerance"].erase("high");
  EXPECT_NE(SchemaErrors(dump(no_high)), "");
}

// A limit enforced at another value carries that value as a number; no other check has the key.
TEST_F(JsonReportFileTest, ALimitEnforcedElsewhereCarriesTheValueAsANumber) {
  RunReport report = HardenedReport();
  Verdict pids = WallVerdict();
  pids.check.id = "limits.pids.max:50";
  pids.outcome = Outcome::kFail;
  pids.direction = Direction::kTooPermissive;
  pids.observed = "measured 100 tasks vs declared 50: enforced above the declared value";
  pids.evidence.expected_end.clear();
  pids.evidence.enforced_instead = 100;
  report.verdicts.push_back(pids);
  const json j = ReportToJson(report);
  EXPECT_EQ(j.at("checks").back().at("evidence").at("enforced_instead"), 100.0);
  for (std::size_t i = 0; i + 1 < j.at("checks").size(); ++i) {
    EXPECT_FALSE(j.at("checks")[i].at("evidence").contains("enforced_instead")) << i;
  }
  auto dump = [](const json& r) { return r.dump(-1, ' ', false, json::error_handler_t::replace); };
  EXPECT_EQ(SchemaErrors(dump(j)), "");
  json as_text = j;
  as_text["checks"].back()["evidence"]["enforced_instead"] = "100";
  EXPECT_NE(SchemaErrors(dump(as_text)), "") << "a number, never words";
}

TEST(JsonReport, TopLevelNamesTheSchemaAndKeepsProfileAndPolicyAsLoaded) {
  const RunReport r = HardenedReport();
  const json j = ReportToJson(r);
  EXPECT_EQ(j.at("schema"), "sandprobe-report/1");
  EXPECT_EQ(j.at("profile").at("config"), r.profile);
  EXPECT_EQ(j.at("profile").at("path"), "sandboxes/docker-hardened.json");
  EXPECT_EQ(j.at("policy").at("config"), r.policy);
  EXPECT_EQ(j.at("host").at("hostname"), "ci-runner-7");
  EXPECT_EQ(j.at("witnesses"), r.witnesses);
  EXPECT_EQ(j.at("interrupted"), false);
  EXPECT_EQ(ReportToJson(BwrapReport()).at("interrupted"), true);
}

TEST(JsonReport, ChecksCarryVerdictDirectionAndEvidence) {
  const json checks = ReportToJson(HardenedReport()).at("checks");
  ASSERT_EQ(checks.size(), 7u);
  const json& leak = checks[1];
  EXPECT_EQ(leak.at("id"), "fs.read.denied:host-canary");
  EXPECT_EQ(leak.at("verdict"), "fail");
  EXPECT_EQ(leak.at("direction"), "too-permissive");
  EXPECT_EQ(leak.at("severity"), "critical");
  EXPECT_EQ(leak.at("expect"), "denied");
  EXPECT_EQ(leak.at("resolved_target"), "/host/sp-canary-1f2e");
  EXPECT_EQ(leak.at("evidence"),
            json({{"tier", "witnessed"}, {"launch_id", "L1"}, {"frame_indexes", {1, 2}},
                  {"witness_facts", {"canary sha256 matched"}}, {"expected_end", nullptr}}));
  EXPECT_TRUE(leak.at("tolerance").is_null()) << "only measured limits have a band";
  EXPECT_EQ(checks[2].at("direction"), "too-restrictive");
  EXPECT_TRUE(checks[0].at("direction").is_null());  // pass: no direction
  EXPECT_TRUE(checks[6].at("evidence").at("launch_id").is_null());
  EXPECT_EQ(checks[6].at("verdict"), "skip");
  EXPECT_EQ(checks[6].at("observed"), "not applicable: udp listener disabled");
  EXPECT_EQ(checks[6].at("evidence").at("tier"), "none");  // a skip rests on nothing
  EXPECT_EQ(checks[0].at("evidence").at("tier"), "reported");
}

TEST(JsonReport, TheSummarySaysWhatThePassesRestOn) {
  const json summary = ReportToJson(HardenedReport()).at("summary");
  EXPECT_EQ(summary.at("passes_by_evidence"),
            json({{"witnessed", 0}, {"measured", 0}, {"reported", 1}, {"none", 0}}));
  RunReport witnessed = HardenedReport();
  witnessed.verdicts[0].evidence.tier = EvidenceTier::kWitnessed;
  EXPECT_EQ(PassesByEvidence(witnessed.verdicts).at("witnessed"), 1);
  EXPECT_EQ(PassesByEvidence(witnessed.verdicts).at("reported"), 0);
}

TEST(JsonReport, LaunchesKeepRawFactsAndExitOrSignal) {
  const json launches = ReportToJson(HardenedReport()).at("launches");
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[0].at("exit_code"), 0);
  EXPECT_TRUE(launches[0].at("signal").is_null());
  EXPECT_EQ(launches[0].at("frames").size(), 5u);
  EXPECT_EQ(launches[0].at("frames")[3].at("errno"), "EROFS");
  EXPECT_EQ(launches[0].at("done"), false);
  EXPECT_EQ(launches[0].at("noise_lines"), 2);
  EXPECT_THAT(launches[0].at("protocol_errors").get<std::vector<std::string>>(),
              ElementsAre("line 9: frame JSON: unexpected end of input"));
  EXPECT_TRUE(launches[2].at("exit_code").is_null());
  EXPECT_EQ(launches[2].at("signal"), 9);
  EXPECT_EQ(launches[2].at("timed_out"), true);
}

// Leftovers are evidence for the persistence checks: kept with pid and argv, absent when none.
TEST_F(JsonReportFileTest, LeftoverProcessesAreKeptOnlyWhenThereAreSome) {
  RunReport r = HardenedReport();
  r.launches[0].leftover_processes = {{4242, "/opt/sandprobe/sandprobe-probe persist.plant --token T"}};
  const json launches = ReportToJson(r).at("launches");
  EXPECT_EQ(launches[0].at("leftover_processes"),
            json::parse(R"([{"pid": 4242, "argv": "/opt/sandprobe/sandprobe-probe persist.plant --token T"}])"));
  EXPECT_FALSE(launches[1].contains("leftover_processes"));
  EXPECT_EQ(SchemaErrors(RenderJsonReport(r)), "");
  json bad = ReportToJson(r);
  bad["launches"][0]["leftover_processes"][0].erase("argv");
  EXPECT_THAT(SchemaErrors(bad.dump(-1, ' ', false, json::error_handler_t::replace)),
              HasSubstr("'argv' is a required property"));
}

// Which program ran: always written, validated, and a hash that is not hex is refused.
TEST_F(JsonReportFileTest, LaunchesRecordTheExecutableItsHashAndWarning) {
  RunReport r = HardenedReport();
  const std::string sha(64, 'a');
  r.launches[0].executable = "/tmp/evil/env";
  r.launches[0].executable_sha256 = sha;
  r.launches[0].executable_warning = "in a world-writable directory /tmp/evil";
  const json launches = ReportToJson(r).at("launches");
  EXPECT_EQ(launches[0].at("executable"), "/tmp/evil/env");
  EXPECT_EQ(launches[0].at("executable_sha256"), sha);
  EXPECT_EQ(launches[0].at("executable_warning"), "in a world-writable directory /tmp/evil");
  EXPECT_EQ(launches[1].at("executable"), "");  // the fixture's launch recorded none
  EXPECT_EQ(launches[1].at("executable_sha256"), "");
  EXPECT_EQ(SchemaErrors(RenderJsonReport(r)), "");
  json bad = ReportToJson(r);
  bad["launches"][0]["executable_sha256"] = "not-a-hash";
  EXPECT_THAT(SchemaErrors(bad.dump(-1, ' ', false, json::error_handler_t::replace)),
              HasSubstr("does not match"));
}

TEST(JsonReport, SummaryCountsEveryOutcome) {
  EXPECT_EQ(SummaryCounts(HardenedReport().verdicts),
            json({{"pass", 1}, {"fail", 2}, {"inconclusive", 2}, {"error", 1}, {"skip", 1},
                  {"total", 7}}));
  EXPECT_EQ(SummaryCounts({}), json({{"pass", 0}, {"fail", 0}, {"inconclusive", 0},
                                     {"error", 0}, {"skip", 0}, {"total", 0}}));
}

TEST(JsonReport, InvalidUtf8IsReplacedNotThrown) {
  std::string text;
  ASSERT_NO_THROW(text = RenderJsonReport(HardenedReport()));
  EXPECT_TRUE(utf8::is_valid(text));
  const json back = json::parse(text);
  EXPECT_EQ(back.at("launches")[0].at("frames")[4].at("path"), "/bad\xef\xbf\xbd\xef\xbf\xbd-name");
  // Control characters survive as escapes: the JSON keeps the facts, only XML must drop them.
  const std::string out = back.at("launches")[0].at("stdout_tail");
  EXPECT_THAT(out, HasSubstr(std::string("NUL:\0:", 6)));
  EXPECT_THAT(out, HasSubstr("\x1b[1;31mred"));
}

TEST(JsonReport, LongOutputIsKeptWhole) {
  const json back = json::parse(RenderJsonReport(BwrapReport()));
  EXPECT_EQ(back.at("launches")[0].at("stdout_tail"), report_fixture::Big200K());
}

TEST_F(JsonReportFileTest, WriteJsonReportWritesTheRenderedReport) {
  const std::string path = dir_ + "/report.json";
  ASSERT_TRUE(WriteJsonReport(HardenedReport(), path).ok());
  EXPECT_EQ(report_fixture::ReadFile(path), RenderJsonReport(HardenedReport()));
}

TEST_F(JsonReportFileTest, WriteToMissingDirectoryNamesThePathAndLeavesNoTempFile) {
  const std::string path = dir_ + "/missing/report.json";
  const Status status = WriteJsonReport(HardenedReport(), path);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_TRUE(report_fixture::ListDir(dir_).empty());
}

TEST(JsonReport, DashWritesToStdout) {
  ::testing::internal::CaptureStdout();
  const Status status = WriteJsonReport(HardenedReport(), "-");
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(out, RenderJsonReport(HardenedReport()));
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

// The plan record (recorded/rejudge_record.h) and a re-judge's mark: written only when set,
// validated, and a batch without the harness's nonce is refused.
TEST_F(JsonReportFileTest, PlanRecordAndRejudgedFromOnlyWhenSet) {
  RunReport r = report_fixture::HardenedReport();
  EXPECT_FALSE(ReportToJson(r).contains("plan"));
  EXPECT_FALSE(ReportToJson(r).contains("rejudged_from"));
  r.plan = json::parse(R"({
    "suite": {"name": "default", "description": "d", "families": [{"family": "fs.read"}]},
    "context": {"host_canary": "/var/tmp/c", "workspace": "/workspace", "values": {"net.tcp": "127.0.0.1:1"},
                "session": false, "launchless_checks": true},
    "batches": [{"id": "B1", "invocations": [{"family": "fs.read", "args": ["/tmp"]}], "checks": ["fs.read.allowed:/tmp"],
                 "exclusive": false, "timeout_seconds": 60, "fresh_instance": false, "host_readings": false,
                 "result": {"state": "ran", "launch_id": "L1", "reason": "", "nonce": "ab12", "complete": true,
                            "leftover_processes": [], "alive_at_timeout": [],
                            "end": {"exit_code": 0, "signal": null, "timed_out": false, "error": ""},
                            "backend_unavailable": "", "backend_required": false}}],
    "witness_keys": ["host_paths"]})");
  r.rejudged_from = RejudgedFrom{"abc123", "tier-medium", "policies/tier-medium.json"};
  const json out = ReportToJson(r);
  EXPECT_EQ(out.at("plan"), r.plan);
  EXPECT_EQ(out.at("rejudged_from"),
            json::parse(R"({"run_id": "abc123", "policy": "tier-medium", "policy_path": "policies/tier-medium.json"})"));
  EXPECT_EQ(SchemaErrors(RenderJsonReport(r)), "");
  json bad = out;
  bad["plan"]["batches"][0]["result"].erase("nonce");
  EXPECT_THAT(SchemaErrors(bad.dump(-1, ' ', false, json::error_handler_t::replace)),
              HasSubstr("'nonce' is a required property"));
}

}  // namespace
}  // namespace sandprobe
