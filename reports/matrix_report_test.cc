#include "reports/matrix_report.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/json_report.h"
#include "reports/matrix_test_runs.h"
#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using namespace matrix_test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;


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
