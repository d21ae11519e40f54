#include "reports/matrix_report.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/json_report.h"
#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

Verdict MakeVerdict(const std::string& id, Outcome outcome, Direction direction = Direction::kNone,
                    Severity severity = Severity::kHigh, const std::string& observed = "") {
  Verdict v;
  v.check.id = id;
  v.check.family = id.substr(0, id.find(':'));
  v.check.severity = severity;
  v.outcome = outcome;
  v.direction = direction;
  v.observed = observed;
  return v;
}

RunReport MakeRun(const std::string& profile, const std::string& policy, std::vector<Verdict> verdicts) {
  RunReport r;
  r.profile_name = profile;
  r.policy_name = policy;
  r.suite_name = "default+network";
  r.run_id = "id-" + profile;
  r.verdicts = std::move(verdicts);
  return r;
}

// Two sandboxes: one check agrees, one differs (with a direction), one only the second planned.
std::vector<RunReport> TwoRuns() {
  return {MakeRun("bwrap-strict", "tier-low",
              {MakeVerdict("fs.read:/etc/shadow", Outcome::kPass),
               MakeVerdict("net.tcp:loopback", Outcome::kPass, Direction::kNone, Severity::kMedium)}),
          MakeRun("docker-hardened", "tier-low",
              {MakeVerdict("fs.read:/etc/shadow", Outcome::kPass),
               MakeVerdict("net.tcp:loopback", Outcome::kFail, Direction::kTooPermissive, Severity::kCritical),
               MakeVerdict("res.pids:50", Outcome::kPass)})};
}

TEST(MatrixReportTest, RowsAreEveryCheckOnceWithACellPerSandbox) {
  Matrix m = BuildMatrix(TwoRuns());
  ASSERT_EQ(m.columns.size(), 2u);
  EXPECT_EQ(m.columns[0].sandbox, "bwrap-strict");
  EXPECT_EQ(m.columns[1].summary["fail"], 1);
  EXPECT_EQ(m.columns[0].note, "");
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.rows[0].id, "fs.read:/etc/shadow");
  EXPECT_TRUE(m.rows[0].Agrees());
  EXPECT_EQ(m.rows[1].id, "net.tcp:loopback");
  EXPECT_FALSE(m.rows[1].Agrees());
  EXPECT_EQ(m.rows[1].severity, Severity::kCritical) << "the highest any run gives it";
  EXPECT_EQ(CellText(m.rows[1].cells[1]), "fail (too-permissive)");
  EXPECT_EQ(m.rows[2].id, "res.pids:50");
  EXPECT_FALSE(m.rows[2].cells[0].has_value()) << "not planned there: no cell, not a skip";
  EXPECT_TRUE(m.rows[2].Agrees()) << "a check one sandbox lacks is no disagreement";
}

TEST(MatrixReportTest, AColumnThatDidNotMeasureSaysWhy) {
  RunReport skipped = MakeRun("docker-hardened", "tier-low",
                          {MakeVerdict("fs.read:/etc/shadow", Outcome::kSkip, Direction::kNone, Severity::kHigh,
                                       "docker info: Cannot connect to the Docker daemon\x1b[31m")});
  RunReport failed = HarnessFailureReport("v", "sandboxes/gvisor.json", "sandprobe.harness", "no run dir", false);
  RunReport interrupted = TwoRuns()[0];
  interrupted.interrupted = true;
  Matrix m = BuildMatrix({skipped, failed, interrupted});
  EXPECT_EQ(m.columns[0].note, "skipped: docker info: Cannot connect to the Docker daemon");
  EXPECT_EQ(m.columns[1].sandbox, "gvisor") << "no loaded name: the file's stem";
  EXPECT_EQ(m.columns[1].note, "harness error: no run dir");
  EXPECT_EQ(m.columns[2].note, "interrupted");
  EXPECT_THAT(RenderMatrixConsole(m), HasSubstr("[skipped: docker info: Cannot connect to the Docker daemon]"));
}

TEST(MatrixReportTest, MarkdownHasEveryRowAndEscapesCells) {
  std::vector<RunReport> runs = TwoRuns();
  runs[0].verdicts.push_back(MakeVerdict("fs.read:/a|b`c", Outcome::kFail, Direction::kTooRestrictive));
  std::string md = RenderMatrixMarkdown(BuildMatrix(runs));
  EXPECT_THAT(md, HasSubstr("| check | severity | bwrap-strict | docker-hardened |\n|---|---|---|---|\n"));
  EXPECT_THAT(md, HasSubstr("| `fs.read:/etc/shadow` | high | pass | pass |\n"));
  EXPECT_THAT(md, HasSubstr("| `net.tcp:loopback` ≠ | critical | pass | fail (too-permissive) |\n"));
  EXPECT_THAT(md, HasSubstr("| `res.pids:50` | high | – | pass |\n"));
  EXPECT_THAT(md, HasSubstr("| `fs.read:/a\\|b'c` | high | fail (too-restrictive) | – |\n"));
  EXPECT_THAT(md, HasSubstr("| **bwrap-strict** | tier-low | default+network | 2 | 1 | 0 | 0 | 0 |  |\n"));
}

TEST(MatrixReportTest, JsonHasAVerdictPerSandboxAndNullWhereNotPlanned) {
  nlohmann::json j = MatrixToJson(BuildMatrix(TwoRuns()));
  EXPECT_EQ(j["schema"], "sandprobe-matrix/1");
  ASSERT_EQ(j["sandboxes"].size(), 2u);
  EXPECT_EQ(j["sandboxes"][1]["name"], "docker-hardened");
  EXPECT_TRUE(j["sandboxes"][1]["note"].is_null());
  ASSERT_EQ(j["checks"].size(), 3u);
  EXPECT_EQ(j["checks"][1]["verdicts"], nlohmann::json::array({"pass", "fail (too-permissive)"}));
  EXPECT_EQ(j["checks"][1]["agree"], false);
  EXPECT_TRUE(j["checks"][2]["verdicts"][0].is_null());
}

TEST(MatrixReportTest, ConsoleShowsOnlyTheRowsThatDiffer) {
  std::string text = RenderMatrixConsole(BuildMatrix(TwoRuns()));
  EXPECT_THAT(text, HasSubstr("matrix: 2 sandboxes x 3 checks\n"));
  EXPECT_THAT(text, HasSubstr("1 checks differ (2 agree):\n"));
  EXPECT_THAT(text, HasSubstr("  check             bwrap-strict  docker-hardened\n"));
  EXPECT_THAT(text, HasSubstr("  net.tcp:loopback  pass          fail (too-permissive)\n"));
  EXPECT_THAT(text, Not(HasSubstr("fs.read:/etc/shadow")));
  std::vector<RunReport> same = {TwoRuns()[0], TwoRuns()[0]};
  EXPECT_THAT(RenderMatrixConsole(BuildMatrix(same)), HasSubstr("every check has the same verdict"));
}

TEST(MatrixReportTest, WritesMarkdownOrJsonByExtension) {
  const std::string dir = report_fixture::MakeTempDir();
  ASSERT_TRUE(WriteMatrixReport(TwoRuns(), dir + "/m.md").ok());
  ASSERT_TRUE(WriteMatrixReport(TwoRuns(), dir + "/m.json").ok());
  EXPECT_THAT(report_fixture::ReadFile(dir + "/m.md"), HasSubstr("## sandprobe matrix"));
  EXPECT_EQ(nlohmann::json::parse(report_fixture::ReadFile(dir + "/m.json"))["checks"].size(), 3u);
  Status bad = WriteMatrixReport(TwoRuns(), dir + "/missing/m.md");
  EXPECT_THAT(bad.message(), HasSubstr("write matrix report"));
  std::filesystem::remove_all(dir);
}

// A saved report as `sandprobe run --json` writes it, read back as a matrix column.
SavedRun Saved(const RunReport& run, const std::string& file) {
  StatusOr<RunReport> read = ReadSavedRun(ReportToJson(run), file);
  EXPECT_TRUE(read.ok()) << read.status().message();
  return {file, read.ok() ? *read : RunReport{}};
}

std::vector<std::string> ColumnNames(const Matrix& m) {
  std::vector<std::string> names;
  for (const MatrixColumn& col : m.columns) names.push_back(col.sandbox);
  return names;
}

TEST(MatrixMergeTest, ASavedReportReadsBackWithTheVerdictsItRecorded) {
  const RunReport original = report_fixture::HardenedReport();
  SavedRun saved = Saved(original, "node-1.json");
  ASSERT_EQ(saved.report.verdicts.size(), original.verdicts.size());
  for (std::size_t i = 0; i < original.verdicts.size(); ++i) {
    const Verdict& a = original.verdicts[i];
    const Verdict& b = saved.report.verdicts[i];
    EXPECT_EQ(b.check.id, a.check.id);
    EXPECT_EQ(b.check.family, a.check.family);
    EXPECT_EQ(b.check.severity, a.check.severity) << a.check.id;
    EXPECT_EQ(b.outcome, a.outcome) << a.check.id;
    EXPECT_EQ(b.direction, a.direction) << a.check.id;
    EXPECT_EQ(b.remediation, a.remediation) << a.check.id;
    EXPECT_EQ(b.tier(), a.tier()) << a.check.id;
    EXPECT_EQ(b.evidence.launch_id, a.evidence.launch_id) << a.check.id;
  }
  EXPECT_EQ(saved.report.profile_name, "docker-hardened");
  EXPECT_EQ(saved.report.host["hostname"], "ci-runner-7");
}

TEST(MatrixMergeTest, OneSandboxOnTwoHostsStaysTwoColumnsNamedByHostElseByFile) {
  RunReport node1 = TwoRuns()[1], node2 = TwoRuns()[1], nohost_a = TwoRuns()[1], nohost_b = TwoRuns()[1];
  node1.host = {{"hostname", "node-1"}};
  node2.host = {{"hostname", "node-2"}};
  node2.verdicts[0].outcome = Outcome::kFail;  // fs.read:/etc/shadow leaks on node-2 only
  node2.verdicts[0].direction = Direction::kTooPermissive;
  Matrix m = MergeSavedRuns({Saved(node1, "a/node1.json"), Saved(TwoRuns()[0], "b.json"),
                                Saved(node2, "a/node2.json"), Saved(nohost_a, "x/r1.json"),
                                Saved(nohost_b, "y/r1.json")});
  EXPECT_THAT(ColumnNames(m), ElementsAre("docker-hardened@node-1", "bwrap-strict", "docker-hardened@node-2",
                                          "docker-hardened (x/r1.json)", "docker-hardened (y/r1.json)"))
      << "the same file name twice: the path as given";
  Matrix by_file = MergeSavedRuns({Saved(nohost_a, "x/r1.json"), Saved(nohost_b, "x/r2.json")});
  EXPECT_THAT(ColumnNames(by_file), ElementsAre("docker-hardened (r1.json)", "docker-hardened (r2.json)"));
  Matrix twice = MergeSavedRuns({Saved(nohost_a, "x/r1.json"), Saved(nohost_a, "x/r1.json")});
  EXPECT_THAT(ColumnNames(twice), ElementsAre("docker-hardened (x/r1.json) #1", "docker-hardened (x/r1.json) #2"));
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.rows[0].id, "fs.read:/etc/shadow") << "disagreements first, in their own order";
  EXPECT_EQ(m.rows[1].id, "net.tcp:loopback");
  EXPECT_EQ(m.rows[2].id, "res.pids:50");
  EXPECT_FALSE(m.rows[0].Agrees());
  EXPECT_TRUE(m.rows[2].Agrees());
  EXPECT_EQ(CellText(m.rows[0].cells[2]), "fail (too-permissive)");
  EXPECT_EQ(CellText(m.rows[0].cells[0]), "pass");
}

TEST(MatrixMergeTest, DisagreementsFirstKeepsEachGroupsOrder) {
  Matrix m = BuildMatrix(TwoRuns());
  PutDisagreementsFirst(m);
  std::vector<std::string> ids;
  for (const MatrixRow& row : m.rows) ids.push_back(row.id);
  EXPECT_THAT(ids, ElementsAre("net.tcp:loopback", "fs.read:/etc/shadow", "res.pids:50"));
}

TEST(MatrixMergeTest, AReportThatDoesNotReadNamesItsFile) {
  nlohmann::json bad = ReportToJson(TwoRuns()[0]);
  bad["checks"][1]["verdict"] = "maybe";
  StatusOr<RunReport> read = ReadSavedRun(bad, "node-3.json");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), "node-3.json: checks[1]: check net.tcp:loopback: unknown verdict \"maybe\"");
  bad = ReportToJson(TwoRuns()[0]);
  bad["checks"][0].erase("severity");
  read = ReadSavedRun(bad, "node-3.json");
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("node-3.json: read the report's checks:"));

  const std::string dir = report_fixture::MakeTempDir();
  const std::string good = dir + "/good.json", broken = dir + "/broken.json";
  ASSERT_TRUE(WriteJsonReport(TwoRuns()[0], good).ok());
  { std::ofstream(broken) << "{\"schema\": \"sandprobe-report/1\",\n  oops"; }
  StatusOr<std::vector<SavedRun>> runs = LoadSavedRuns({good, broken});
  ASSERT_FALSE(runs.ok());
  EXPECT_THAT(runs.status().message(), HasSubstr(broken + ":2:3: not JSON"));
  runs = LoadSavedRuns({good, dir + "/missing.json"});
  ASSERT_FALSE(runs.ok());
  EXPECT_THAT(runs.status().message(), HasSubstr("open(" + dir + "/missing.json): "));
  runs = LoadSavedRuns({good, good});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[1].file, good);
  std::filesystem::remove_all(dir);
}

TEST(MatrixReportTest, WritesAnHtmlHeatmapForHtml) {
  const std::string dir = report_fixture::MakeTempDir();
  ASSERT_TRUE(WriteMatrixReport(TwoRuns(), dir + "/m.html").ok());
  const std::string html = report_fixture::ReadFile(dir + "/m.html");
  EXPECT_THAT(html, HasSubstr("<table class=\"heat\">"));
  EXPECT_THAT(html, HasSubstr("net.tcp:loopback"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sandprobe
