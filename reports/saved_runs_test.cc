// sandprobe matrix's input: saved reports read back with the verdicts they recorded, merged
// into one table whose columns stay apart.
#include "reports/saved_runs.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/json_report.h"
#include "reports/matrix_test_runs.h"
#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace matrix_test;

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

}  // namespace
}  // namespace sandprobe
