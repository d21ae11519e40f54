#include "reports/markdown_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using report_fixture::BothReports;

class MarkdownSummaryTest : public ::testing::Test {
 protected:
  const std::string md_ = RenderMarkdownSummary(BothReports());
};

TEST_F(MarkdownSummaryTest, MatchesGoldenFile) {
  EXPECT_EQ(report_fixture::CompareWithGolden("summary.golden.md", md_), "");
}

TEST_F(MarkdownSummaryTest, HeadlineAndCountsPerRun) {
  EXPECT_THAT(md_, HasSubstr("## sandprobe docker-hardened: FAIL: 2 of 7 checks failed\n"));
  EXPECT_THAT(md_, HasSubstr("sandbox **docker-hardened** · policy **tier-low** · suite **default**"));
  EXPECT_THAT(md_, HasSubstr("| pass | fail | error | inconclusive | skip | total |\n"
                             "| ---: | ---: | ---: | ---: | ---: | ---: |\n"
                             "| 1 | 2 | 1 | 2 | 1 | 7 |\n\n"
                             "Passes by evidence: **0** witnessed by the host · **0** measured by the harness · "
                             "**1** reported by the probe alone\n"));
  EXPECT_THAT(md_, HasSubstr("## sandprobe bwrap-basic: INTERRUPTED\n"));
}

TEST_F(MarkdownSummaryTest, FailuresBySeverityMostSevereFirstWithTheirFix) {
  const std::size_t critical = md_.find("#### critical (1)");
  const std::size_t medium = md_.find("#### medium (1)");
  ASSERT_NE(critical, std::string::npos);
  ASSERT_NE(medium, std::string::npos);
  EXPECT_LT(critical, medium);
  EXPECT_THAT(md_, HasSubstr("| `fs.write.allowed:/tmp` | reported | write ok | write denied: EROFS | "
                             "add --tmpfs /tmp to the profile |\n"));
  EXPECT_THAT(md_, HasSubstr("| `fs.read.denied:host-canary` | witnessed | read denied | read ok: 33 bytes"));
}

TEST_F(MarkdownSummaryTest, UnprovenChecksAndSkipsWithReasons) {
  EXPECT_THAT(md_, HasSubstr("| `env.secret.hidden` | error | launch failed: exit 125 | "
                             "check that the image exists: docker image ls |\n"));
  EXPECT_THAT(md_, HasSubstr("| `net.egress.denied:dns` | inconclusive | no frame for the lookup |  |\n"));
  EXPECT_THAT(md_, HasSubstr("| not applicable: udp listener disabled | `net.egress.denied:udp` (1) |\n"));
  EXPECT_THAT(md_, HasSubstr("| bwrap --version: not found | `userns.denied` (1) |\n"));
}

TEST_F(MarkdownSummaryTest, HostileTextCannotBreakTheTableOrInjectHtml) {
  EXPECT_EQ(md_.find('\x1b'), std::string::npos);
  EXPECT_EQ(md_.find('\0'), std::string::npos);
  EXPECT_THAT(md_, Not(HasSubstr("END-OF-200K")));
  EXPECT_THAT(md_, HasSubstr("lt:&lt; quote"));
  // Every table row of the leak stays one line with its five cells.
  const std::size_t row = md_.find("| `fs.read.denied:host-canary`");
  const std::string line = md_.substr(row, md_.find('\n', row) - row);
  int pipes = 0;
  for (std::size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
  EXPECT_EQ(pipes, 6) << line;
}

TEST(MarkdownSummaryHousekeepingTest, NamesWhatTheDeadlineCutAndALeftoverRunDir) {
  std::vector<RunReport> reports = BothReports();
  EXPECT_THAT(RenderMarkdownSummary(reports), Not(HasSubstr("### Housekeeping")));
  reports[0].cut_short = {"L4 cleanup: not started: the run's deadline had passed"};
  reports[0].left_for_sweep = "/var/tmp/sandprobe-abc";
  const std::string md = RenderMarkdownSummary(reports);
  EXPECT_THAT(md, HasSubstr("### Housekeeping\n\n- cut short by the run's deadline: L4 cleanup: not "
                            "started: the run's deadline had passed\n"));
  EXPECT_THAT(md, HasSubstr("- left for a sweep: `/var/tmp/sandprobe-abc` (cleanup and sweep did not "
                            "finish; run `sandprobe sweep`)\n"));
}

TEST(MarkdownSummaryWaiverTest, AWaivedFailIsMarkedWithItsWaiver) {
  std::vector<RunReport> reports = BothReports();
  for (Verdict& v : reports[0].verdicts) {
    if (v.check.id == "fs.read.denied:host-canary") {
      v.waiver = AppliedWaiver{"fs.read.*", "tracked in SEC-12", "2027-01-31", "w.json:3:5", false};
    }
  }
  EXPECT_THAT(RenderMarkdownSummary(reports),
              HasSubstr("| `fs.read.denied:host-canary` (waived until 2027-01-31: tracked in SEC-12) |"));
  reports[0].verdicts[0].waiver.reset();
  for (Verdict& v : reports[0].verdicts) {
    if (v.waiver) v.waiver->expired = true;
  }
  EXPECT_THAT(RenderMarkdownSummary(reports), Not(HasSubstr("waived until")));
}

TEST(MarkdownSummaryWaiverTest, TheCountTableHasAWaivedColumnWhenTheRunHadWaivers) {
  std::vector<RunReport> reports = BothReports();
  EXPECT_THAT(RenderMarkdownSummary(reports), Not(HasSubstr("| waived |")));
  reports[0].waivers = WaiverSummary{.source_path = "w.json"};
  for (Verdict& v : reports[0].verdicts) {
    if (v.check.id == "fs.read.denied:host-canary") {
      v.waiver = AppliedWaiver{"fs.read.*", "tracked in SEC-12", "2027-01-31", "w.json:3:5", false};
    }
  }
  const std::string md = RenderMarkdownSummary(reports);
  EXPECT_THAT(md, HasSubstr("| pass | fail | waived | error | inconclusive | skip | total |\n"));
  EXPECT_THAT(md, HasSubstr("| 1 | 2 | 1 | 1 | 2 | 1 | 7 |\n"));
  EXPECT_THAT(md, HasSubstr(": FAIL: 2 of 7 checks failed (1 waived)\n"));
}

TEST(MarkdownSummaryGroupTest, OneLeakedFileIsOneRowWithItsAliases) {
  std::vector<RunReport> reports = BothReports();
  Verdict read;
  for (const Verdict& v : reports[0].verdicts) {
    if (v.check.id == "fs.read.denied:host-canary") read = v;
  }
  ASSERT_EQ(read.outcome, Outcome::kFail);
  for (const char* variant : {"symlink", "dotdot"}) {
    Verdict alias = read;
    alias.check.family = "fs.alias";
    alias.check.variant = variant;
    alias.check.id = std::string("fs.alias.denied:host-canary[") + variant + "]";
    reports[0].verdicts.push_back(alias);
  }
  const std::string md = RenderMarkdownSummary({reports[0]});
  EXPECT_THAT(md, HasSubstr("| `fs.read.denied:host-canary`<br>also through symlink, dotdot "
                            "(`fs.alias.denied:host-canary[symlink]`, "
                            "`fs.alias.denied:host-canary[dotdot]`) |"));
  EXPECT_THAT(md, HasSubstr("#### critical (3)"));  // still counted per check
  EXPECT_THAT(md, Not(HasSubstr("| `fs.alias.denied")));  // no row of their own
}

TEST(MarkdownCellTest, EscapesAndCaps) {
  EXPECT_EQ(MarkdownCell("a|b <script>&\nnext"), "a\\|b &lt;script&gt;&amp; next");
  EXPECT_THAT(MarkdownCell(std::string(1000, 'x'), 100), HasSubstr("bytes truncated]"));
  EXPECT_LT(MarkdownCell(std::string(1000, 'x'), 100).size(), 160u);
}

TEST(MarkdownSummaryEmptyTest, AHarnessFailureIsNamedByItsProfileFile) {
  const std::string md = RenderMarkdownSummary(
      {HarnessFailureReport("0.1.0", "sandboxes/bwrap-strict.json", "sandprobe.harness", "no probe", false)});
  EXPECT_THAT(md, HasSubstr("## sandprobe bwrap-strict: ERROR: 1 check could not run\n"));
  EXPECT_THAT(md, HasSubstr("| `sandprobe.harness` | error | no probe |"));
}

TEST(MarkdownSummaryEmptyTest, NoRunSaysSo) {
  EXPECT_EQ(RenderMarkdownSummary({}), "## sandprobe: no run\n");
}

}  // namespace
}  // namespace sandprobe
