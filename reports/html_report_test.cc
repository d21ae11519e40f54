#include "reports/html_report.h"

#include <sys/stat.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::size_t Occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

Verdict MakeVerdict(const std::string& id, const std::string& family, Severity severity, Outcome outcome,
                    Direction direction = Direction::kNone) {
  Verdict v;
  v.check.id = id;
  v.check.family = family;
  v.check.severity = severity;
  v.outcome = outcome;
  v.direction = direction;
  v.observed = "observed " + id;
  v.remediation = "fix " + id;
  return v;
}

TEST(HtmlReportTest, EscapesEveryReportValue) {
  EXPECT_EQ(HtmlText("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  EXPECT_EQ(HtmlText("a\x1b[31mred\x1b[0m\x01z"), "aredz") << "escapes and controls removed";
  EXPECT_EQ(HtmlText("bad \xff byte"), "bad \xEF\xBF\xBD byte") << "invalid UTF-8 replaced";
  EXPECT_THAT(HtmlText(std::string(10000, 'a'), 100), HasSubstr("bytes truncated]"));

  RunReport r = report_fixture::HardenedReport();
  r.profile_name = "<script>alert(1)</script>";
  r.verdicts[0].check.id = "fs.read:<script>alert(2)</script>";
  r.verdicts[0].check.family = "fs\"><script>alert(3)</script>";
  r.verdicts[1].observed = "</pre><script>alert(4)</script>";
  r.verdicts[1].evidence.witness_facts = {"<img src=x onerror=alert(5)>"};
  const std::string html = RenderHtmlReport({r});
  EXPECT_EQ(Occurrences(html, "<script"), 1u) << "only the page's own script";
  EXPECT_EQ(Occurrences(html, "<img"), 0u);
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("fs.read:&lt;script&gt;alert(2)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("data-family=\"fs&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;\""));
  EXPECT_THAT(html, HasSubstr("&lt;/pre&gt;&lt;script&gt;alert(4)&lt;/script&gt;"));
}

// One leaked file read through three aliases is one finding, as on the console: the aliases'
// fails are named under the read's, not listed again (every check stays in the table).
TEST(HtmlReportTest, OneLeakedFileIsOneFindingWithItsAliases) {
  RunReport r = report_fixture::HardenedReport();
  const Verdict* read = nullptr;
  for (const Verdict& v : r.verdicts) read = v.check.id == "fs.read.denied:host-canary" ? &v : read;
  ASSERT_NE(read, nullptr);
  Verdict leak = *read;
  leak.outcome = Outcome::kFail;
  leak.direction = Direction::kTooPermissive;
  leak.check.family = "fs.read";
  leak.check.expect = Expectation::kDenied;
  for (Verdict& v : r.verdicts) v = v.check.id == leak.check.id ? leak : v;
  for (const char* variant : {"symlink", "dotdot", "proc_root"}) {
    Verdict alias = leak;
    alias.check.family = "fs.alias";
    alias.check.variant = variant;
    alias.check.id = "fs.alias.denied:" + leak.check.target + "[" + variant + "]";
    r.verdicts.push_back(alias);
  }
  const std::string html = RenderHtmlReport({r});
  EXPECT_THAT(html, HasSubstr("<dt>also through</dt><dd>3 more ways: <code>fs.alias.denied:{host_canary}[symlink], "
                              "fs.alias.denied:{host_canary}[dotdot], fs.alias.denied:{host_canary}[proc_root]</code></dd>"));
  EXPECT_EQ(Occurrences(html, "</span> <code class=\"check-id\">fs.alias.denied:"), 0u) << "no finding of its own";
  EXPECT_EQ(Occurrences(html, "</span> <code class=\"check-id\">fs.read.denied:host-canary"), 1u);
  EXPECT_THAT(html, HasSubstr("fs.alias.denied:{host_canary}[dotdot]")) << "still in the table of every check";
}

TEST(HtmlReportTest, IsSelfContained) {
  const std::string html = RenderHtmlReport(report_fixture::BothReports());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr("Content-Security-Policy\" content=\"default-src 'none'"));
  for (const char* external : {" src=", " href=", "<link", "url(", "@import", "http://", "https://"}) {
    EXPECT_THAT(html, Not(HasSubstr(external))) << external;
  }
}

TEST(HtmlReportTest, SummaryBySeverityAndFindingsWorstFirst) {
  RunReport r = report_fixture::HardenedReport();
  r.verdicts = {MakeVerdict("low.fail", "fs.read", Severity::kLow, Outcome::kFail, Direction::kTooPermissive),
                MakeVerdict("high.error", "env.secret", Severity::kHigh, Outcome::kError),
                MakeVerdict("crit.fail", "fs.read", Severity::kCritical, Outcome::kFail, Direction::kTooPermissive),
                MakeVerdict("med.inconclusive", "net.egress", Severity::kMedium, Outcome::kInconclusive),
                MakeVerdict("crit.waived", "fs.read", Severity::kCritical, Outcome::kFail, Direction::kTooPermissive),
                MakeVerdict("ok.pass", "fs.read", Severity::kHigh, Outcome::kPass),
                MakeVerdict("skip.one", "userns", Severity::kHigh, Outcome::kSkip)};
  r.verdicts[4].waiver = AppliedWaiver{"crit.*", "known, tracked in #12", "2099-01-01", "w.json:2:3", false};
  const std::string html = RenderHtmlReport({r});
  EXPECT_THAT(html, HasSubstr("FAIL: 3 of 7 checks failed"));
  // critical row: fail 2, error 0, inconclusive 0, pass 0, skip 0, total 2.
  EXPECT_THAT(html, HasSubstr("<td><span class=\"badge sev-critical\">critical</span></td><td class=\"n\">2</td>"
                              "<td class=\"n zero\">0</td><td class=\"n zero\">0</td><td class=\"n zero\">0</td>"
                              "<td class=\"n zero\">0</td><td class=\"n\">2</td>"));
  EXPECT_THAT(html, HasSubstr("Findings, worst first (5)"));
  std::vector<std::size_t> at;
  for (const char* id : {"crit.fail", "low.fail", "high.error", "med.inconclusive", "crit.waived"}) {
    at.push_back(html.find("<code class=\"check-id\">" + std::string(id) + "</code></header>"));
    ASSERT_NE(at.back(), std::string::npos) << id;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << "fails by severity, errors, inconclusive, waived fails";
  EXPECT_THAT(html, HasSubstr("<dt>fix</dt><dd>fix crit.fail</dd>"));
  EXPECT_THAT(html, Not(HasSubstr("fix high.error"))) << "an error shows why, not the leak's fix";
  EXPECT_THAT(html, HasSubstr("<dt>why</dt><dd><pre>observed high.error</pre></dd>"));
  EXPECT_THAT(html, HasSubstr("known, tracked in #12 until 2099-01-01"));
  EXPECT_THAT(html, HasSubstr("<option value=\"net.egress\">net.egress</option>"));
  for (const Verdict& v : r.verdicts) EXPECT_THAT(html, HasSubstr(">" + v.check.id + "</code>")) << "every check";
}

TEST(HtmlReportTest, EvidenceNamesTheLaunchAndHowItEnded) {
  RunReport r = report_fixture::HardenedReport();
  const std::string html = RenderHtmlReport({r});
  for (const Verdict& v : r.verdicts) {
    if (v.evidence.launch_id.empty()) continue;
    EXPECT_THAT(html, HasSubstr("launch <code>" + HtmlText(v.evidence.launch_id) + "</code>"));
  }
  EXPECT_THAT(html, HasSubstr("ci-runner-7"));
}

TEST(HtmlReportTest, MatrixHeatmapHasDisagreementsFirstAndColoursFailsBySeverity) {
  RunReport a, b;
  a.profile_name = "bwrap-strict";
  b.profile_name = "docker-hardened";
  a.verdicts = {MakeVerdict("same:1", "fs.read", Severity::kHigh, Outcome::kPass),
                MakeVerdict("differ:1", "net.egress", Severity::kCritical, Outcome::kPass)};
  b.verdicts = {MakeVerdict("same:1", "fs.read", Severity::kHigh, Outcome::kPass),
                MakeVerdict("differ:1", "net.egress", Severity::kCritical, Outcome::kFail, Direction::kTooPermissive),
                MakeVerdict("only-b:1", "fs.write", Severity::kLow, Outcome::kSkip)};
  const std::string html = RenderMatrixHtml(BuildMatrix({a, b}), {a, b});
  EXPECT_THAT(html, HasSubstr("2 sandboxes × 3 checks, 1 disagree"));
  const std::size_t differ = html.find("<tr data-family=\"net.egress\" data-agree=\"0\">");
  const std::size_t sep = html.find("<tr class=\"sep\">");
  const std::size_t same = html.find("<tr data-family=\"fs.read\" data-agree=\"1\">");
  ASSERT_NE(differ, std::string::npos);
  EXPECT_LT(differ, sep);
  EXPECT_LT(sep, same);
  EXPECT_THAT(html, HasSubstr("2 checks have the same verdict"));
  EXPECT_THAT(html, HasSubstr("<td class=\"cell sev-critical\" title=\"fail (too-permissive): observed differ:1\">fail ▲</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"cell out-none\" title=\"not planned in this run\">–</td>"));
  EXPECT_THAT(html, HasSubstr("<th class=\"col\" title=\"policy ?\">docker-hardened</th>"));
  EXPECT_THAT(html, HasSubstr("id=\"only-differ\""));
  EXPECT_THAT(html, HasSubstr("<summary>docker-hardened: findings and every check</summary>"));
}

class HtmlWriteTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = report_fixture::MakeTempDir(); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(HtmlWriteTest, WritesAtomicallyAndNeverReplacesALink) {
  const std::string path = dir_ + "/r.html";
  ASSERT_TRUE(WriteHtmlReport({report_fixture::HardenedReport()}, path).ok());
  EXPECT_THAT(report_fixture::ReadFile(path), HasSubstr("docker-hardened"));
  EXPECT_EQ(report_fixture::ListDir(dir_), std::vector<std::string>{"r.html"}) << "no temp file left";
  // A link is followed to the file it names; the link stays a link.
  std::filesystem::create_symlink("r.html", dir_ + "/link.html");
  ASSERT_TRUE(WriteHtmlReport({report_fixture::BwrapReport()}, dir_ + "/link.html").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ + "/link.html"));
  EXPECT_THAT(report_fixture::ReadFile(path), HasSubstr("bwrap-basic"));
  // A FIFO is written through, never replaced (here: nobody reads it, a clear error).
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  Status fifo = WriteHtmlReport({report_fixture::HardenedReport()}, dir_ + "/fifo");
  EXPECT_FALSE(fifo.ok());
  EXPECT_THAT(fifo.message(), HasSubstr("write HTML report"));
  struct stat st {};
  ASSERT_EQ(::lstat((dir_ + "/fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  Status missing = WriteHtmlReport({report_fixture::HardenedReport()}, dir_ + "/no/r.html");
  EXPECT_THAT(missing.message(), HasSubstr("write HTML report"));
}

}  // namespace
}  // namespace sandprobe
