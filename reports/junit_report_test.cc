#include "reports/junit_report.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pugixml.hpp>
#include <utf8cpp/utf8.h>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using report_fixture::BothReports;

const std::string kXsd = SANDPROBE_JUNIT_XSD;

std::string Attr(const pugi::xpath_node& node, const char* name) {
  return node.node().attribute(name).value();
}

class JunitReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    xml_ = RenderJunit(BothReports());
    ASSERT_TRUE(doc_.load_string(xml_.c_str())) << "pugixml cannot parse its own output";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  pugi::xpath_node One(const char* xpath) { return doc_.select_node(xpath); }

  std::string xml_;
  pugi::xml_document doc_;
  const std::string dir_ = report_fixture::MakeTempDir();
};

TEST_F(JunitReportTest, MatchesGoldenFile) {
  EXPECT_EQ(report_fixture::CompareWithGolden("junit.golden.xml", xml_), "");
}

TEST_F(JunitReportTest, ValidatesAgainstTheJenkinsXsd) {
  const std::string path = dir_ + "/TEST-sandprobe.xml";
  ASSERT_TRUE(WriteJunitReport(BothReports(), path).ok());
  const std::string cmd = "xmllint --noout --schema '" + kXsd + "' '" + path + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST_F(JunitReportTest, AnEmptyRunStillValidates) {
  const std::string path = dir_ + "/empty.xml";
  ASSERT_TRUE(WriteJunitReport({}, path).ok());
  const std::string cmd = "xmllint --noout --schema '" + kXsd + "' '" + path + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST_F(JunitReportTest, HostileProbeOutputLeavesNoForbiddenCharacters) {
  EXPECT_TRUE(utf8::is_valid(xml_));
  EXPECT_EQ(xml_.find('\x1b'), std::string::npos);
  EXPECT_EQ(xml_.find('\0'), std::string::npos);
  // pugixml writes controls as character references; XML 1.0 allows only these three.
  const std::regex char_ref("&#([0-9]+);");
  for (auto it = std::sregex_iterator(xml_.begin(), xml_.end(), char_ref);
       it != std::sregex_iterator(); ++it) {
    const int code = std::stoi((*it)[1]);
    EXPECT_TRUE(code == 9 || code == 10 || code == 13) << "&#" << code << ";";
  }
  EXPECT_EQ(xml_.find("\xef\xbf\xbe"), std::string::npos);
  EXPECT_EQ(xml_.find("\xef\xbf\xbf"), std::string::npos);
  EXPECT_THAT(xml_, Not(HasSubstr("CDATA")));
  // "]]>" may not appear in element content (it is fine in attributes); xmllint in
  // ValidatesAgainstTheJenkinsXsd enforces that too.
  EXPECT_THAT(xml_, HasSubstr("cdata-end:]]&gt;"));
  const auto leak = doc_.select_node("//testcase[@name='fs.read.denied:host-canary']/failure");
  EXPECT_THAT(leak.node().text().get(), HasSubstr("cdata-end:]]> amp:& lt:<"));
  EXPECT_THAT(xml_, HasSubstr("valid: caf\xc3\xa9 \xe2\x9c\x93"));
  EXPECT_THAT(xml_, HasSubstr("red plain  after-osc"));  // escapes gone, text kept
}

TEST_F(JunitReportTest, LongOutputIsCapped) {
  EXPECT_LT(xml_.size(), 100u * 1024);
  EXPECT_THAT(xml_, HasSubstr(" bytes truncated]"));
  EXPECT_THAT(xml_, Not(HasSubstr("END-OF-200K")));
}

TEST_F(JunitReportTest, OneSuitePerProfileAndFamilyWithCounts) {
  EXPECT_EQ(doc_.select_nodes("/testsuites/testsuite").size(), 7u);
  const auto root = One("/testsuites");
  EXPECT_EQ(Attr(root, "name"), "sandprobe");
  EXPECT_EQ(Attr(root, "tests"), "11");
  EXPECT_EQ(Attr(root, "failures"), "3");
  EXPECT_EQ(Attr(root, "errors"), "4");  // error + 2 inconclusive + interrupted
  EXPECT_EQ(Attr(root, "time"), "51.000");
  EXPECT_TRUE(root.node().attribute("skipped").empty());  // the xsd rejects it here

  const auto fs_read = One("/testsuites/testsuite[@name='docker-hardened/tier-low/default/fs.read']");
  ASSERT_TRUE(fs_read);
  EXPECT_EQ(Attr(fs_read, "tests"), "2");
  EXPECT_EQ(Attr(fs_read, "failures"), "1");
  EXPECT_EQ(Attr(fs_read, "errors"), "0");
  EXPECT_EQ(Attr(fs_read, "skipped"), "0");
  EXPECT_EQ(Attr(fs_read, "time"), "0.500");
  EXPECT_EQ(Attr(fs_read, "hostname"), "ci-runner-7");
  EXPECT_EQ(Attr(fs_read, "timestamp"), "2026-11-20T10:00:00");

  const auto egress = One("/testsuites/testsuite[@name='docker-hardened/tier-low/default/net.egress']");
  EXPECT_EQ(Attr(egress, "tests"), "3");
  EXPECT_EQ(Attr(egress, "errors"), "2");
  EXPECT_EQ(Attr(egress, "skipped"), "1");

  const auto pids = One("/testsuites/testsuite[@name='bwrap-basic/tier-medium/quick/pids']");
  EXPECT_EQ(Attr(pids, "hostname"), "localhost");
  EXPECT_EQ(Attr(pids, "timestamp"), "2026-11-20T10:00:01");  // +02:00 converted to UTC
}

TEST_F(JunitReportTest, FailuresCarryDirectionExpectedObservedAndRemediation) {
  const auto leak = One("//testcase[@name='fs.read.denied:host-canary']");
  ASSERT_TRUE(leak);
  EXPECT_EQ(Attr(leak, "classname"), "docker-hardened.tier-low.default.fs.read");
  EXPECT_EQ(Attr(leak, "time"), "0.250");
  const pugi::xml_node failure = leak.node().child("failure");
  EXPECT_STREQ(failure.attribute("type").value(), "critical:too-permissive");
  EXPECT_THAT(failure.attribute("message").value(),
              HasSubstr("[critical; evidence witnessed] expected read denied; observed read ok"));
  const std::string body = failure.text().get();
  EXPECT_THAT(body, ::testing::StartsWith("check: fs.read.denied:host-canary (severity critical)\n"));
  EXPECT_THAT(body, HasSubstr("expected: read denied\n"));
  EXPECT_THAT(body, HasSubstr("observed: read ok: 33 bytes"));
  EXPECT_THAT(body, HasSubstr("remediation: mount the host canary directory out of the sandbox\n"));
  EXPECT_THAT(body, HasSubstr("reference: tier-low.json /filesystem/unreadable/2\n"));
  EXPECT_THAT(body, HasSubstr("evidence: launch L1, frames [1, 2]\n"));
  EXPECT_THAT(body, HasSubstr("witness: canary sha256 matched\n"));
  EXPECT_FALSE(leak.node().child("system-out"));  // a fail is explained by its facts

  const auto blocked = One("//testcase[@name='fs.write.allowed:/tmp']");
  EXPECT_STREQ(blocked.node().child("failure").attribute("type").value(), "medium:too-restrictive");
}

TEST_F(JunitReportTest, ErrorInconclusiveSkipAndPassMapToTheirElements) {
  const auto error = One("//testcase[@name='env.secret.hidden']").node();
  EXPECT_STREQ(error.child("error").attribute("type").value(), "high:error");
  EXPECT_THAT(error.child("system-out").text().get(), HasSubstr("harness: docker run"));
  EXPECT_THAT(error.child("system-err").text().get(), HasSubstr("Unable to find image"));

  const auto unsure = One("//testcase[@name='net.egress.denied:tcp']").node();
  EXPECT_STREQ(unsure.child("error").attribute("type").value(), "high:inconclusive");
  EXPECT_THAT(unsure.child("system-out").text().get(), HasSubstr("@@sandprobe n-1"));
  EXPECT_THAT(unsure.child("system-err").text().get(), HasSubstr("warning: red plain"));
  // The same launch's output is attached once per suite, not once per check.
  const auto dns = One("//testcase[@name='net.egress.denied:dns']").node();
  EXPECT_STREQ(dns.child("system-out").text().get(),
               "output of launch L1: see the first case citing it");
  EXPECT_FALSE(dns.child("system-err"));

  const auto skip = One("//testcase[@name='net.egress.denied:udp']").node();
  EXPECT_STREQ(skip.child("skipped").attribute("message").value(),
               "not applicable: udp listener disabled");
  EXPECT_FALSE(skip.child("system-out"));  // skips carry no launch output

  const auto pass = One("//testcase[@name='fs.read.allowed:/workspace/a']").node();
  EXPECT_FALSE(pass.first_child());  // a pass is an empty testcase
}

TEST_F(JunitReportTest, AWaivedFailIsASkipThatNamesItsWaiverAndStillValidates) {
  std::vector<RunReport> reports = BothReports();
  for (Verdict& v : reports[0].verdicts) {
    if (v.check.id == "fs.read.denied:host-canary") {
      v.waiver = AppliedWaiver{"fs.read.*", "tracked in SEC-12", "2027-01-31", "w.json:3:5", false};
    }
  }
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(RenderJunit(reports).c_str()));
  const auto leak = doc.select_node("//testcase[@name='fs.read.denied:host-canary']").node();
  EXPECT_FALSE(leak.child("failure"));
  const auto skipped = leak.child("skipped");
  ASSERT_TRUE(skipped);
  EXPECT_STREQ(skipped.attribute("type").value(), "critical:waived");
  EXPECT_THAT(skipped.attribute("message").value(),
              HasSubstr("waived until 2027-01-31: tracked in SEC-12 ([critical; evidence witnessed] expected read denied"));
  EXPECT_THAT(skipped.text().get(), HasSubstr("check: fs.read.denied:host-canary"));
  EXPECT_THAT(skipped.text().get(), HasSubstr("waiver: fs.read.* (w.json:3:5), until 2027-01-31: tracked in SEC-12"));
  const auto suite = doc.select_node("//testsuite[@name='docker-hardened/tier-low/default/fs.read']");
  EXPECT_EQ(Attr(suite, "failures"), "0");
  EXPECT_EQ(Attr(suite, "skipped"), "1");
  EXPECT_EQ(Attr(doc.select_node("/testsuites"), "failures"), "2");
  const std::string path = dir_ + "/waived.xml";
  ASSERT_TRUE(WriteJunitReport(reports, path).ok());
  const std::string cmd = "xmllint --noout --schema '" + kXsd + "' '" + path + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST_F(JunitReportTest, AnExpiredWaiverLeavesAFailureThatSaysSo) {
  std::vector<RunReport> reports = BothReports();
  for (Verdict& v : reports[0].verdicts) {
    if (v.check.id == "fs.read.denied:host-canary") {
      v.waiver = AppliedWaiver{"fs.read.*", "tracked in SEC-12", "2026-01-31", "w.json:3:5", true};
    }
  }
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(RenderJunit(reports).c_str()));
  const auto failure =
      doc.select_node("//testcase[@name='fs.read.denied:host-canary']/failure").node();
  ASSERT_TRUE(failure);
  EXPECT_THAT(failure.attribute("message").value(), HasSubstr("(waiver expired 2026-01-31)"));
  EXPECT_THAT(failure.text().get(), HasSubstr("waiver: fs.read.* (w.json:3:5), expired after 2026-01-31"));
}

TEST_F(JunitReportTest, DuplicateCheckIdsStayDistinct) {
  EXPECT_TRUE(One("//testcase[@classname='bwrap-basic.tier-medium.quick.pids' and @name='pids.limit']"));
  EXPECT_TRUE(One("//testcase[@classname='bwrap-basic.tier-medium.quick.pids' and @name='pids.limit #2']"));
}

TEST_F(JunitReportTest, RunPropertiesOnceOnTheRunsFirstSuite) {
  EXPECT_EQ(doc_.select_nodes("//property[@name='run_id']").size(), 2u);  // two runs
  for (const char* first : {"docker-hardened/tier-low/default/fs.read", "bwrap-basic/tier-medium/quick/pids"}) {
    const pugi::xpath_node suite = One((std::string("/testsuites/testsuite[@name='") + first + "']").c_str());
    ASSERT_TRUE(suite) << first;
    const pugi::xml_node props = suite.node().child("properties");
    ASSERT_TRUE(props) << first;
    EXPECT_EQ(suite.node().first_child(), props);  // properties before testcases
    for (const pugi::xml_node p : props.children("property")) {
      EXPECT_TRUE(p.attribute("name"));
      EXPECT_TRUE(p.attribute("value")) << p.attribute("name").value();
    }
  }
  EXPECT_FALSE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.write']/properties/property[@name='run_id']"));
  EXPECT_TRUE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.read']/properties/"
                  "property[@name='run_id' and @value='r-20261120-0001']"));
  EXPECT_TRUE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.read']/properties/"
                  "property[@name='policy' and @value='tier-low']"));
  EXPECT_TRUE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.read']/properties/"
                  "property[@name='schema' and @value='sandprobe-report/1']"));
  EXPECT_TRUE(One("//testsuite[@name='bwrap-basic/tier-medium/quick/pids']/properties/"
                  "property[@name='interrupted' and @value='true']"));
}

// A testcase has no properties in the schema and a pass no message: each suite names the
// evidence tier of each of its cases, and the run's first suite counts the passes per tier.
TEST_F(JunitReportTest, EveryCaseNamesItsEvidenceTier) {
  EXPECT_TRUE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.read']/properties/"
                  "property[@name='evidence:fs.read.allowed:/workspace/a' and @value='reported']"));
  EXPECT_TRUE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.read']/properties/"
                  "property[@name='evidence:fs.read.denied:host-canary' and @value='witnessed']"));
  EXPECT_TRUE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.write']/properties/"
                  "property[@name='evidence:fs.write.allowed:/tmp' and @value='reported']"));
  EXPECT_TRUE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.read']/properties/"
                  "property[@name='passes_reported' and @value='1']"));
  EXPECT_TRUE(One("//testsuite[@name='docker-hardened/tier-low/default/fs.read']/properties/"
                  "property[@name='passes_witnessed' and @value='0']"));
  const auto leak = One("//testcase[@name='fs.read.denied:host-canary']");
  ASSERT_TRUE(leak);
  EXPECT_THAT(leak.node().child("failure").attribute("message").value(), HasSubstr("[critical; evidence witnessed] "));
  EXPECT_THAT(leak.node().child("failure").text().get(), HasSubstr("evidence tier: witnessed\n"));
}

// A matrix job: the same profile judged against two policies. Every suite name and every
// classname + name stays unique, so merged reports show every case.
TEST_F(JunitReportTest, TwoPoliciesForOneProfileDoNotCollide) {
  RunReport other = report_fixture::HardenedReport();
  other.policy_name = "tier-high";
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(RenderJunit({report_fixture::HardenedReport(), other}).c_str()));
  std::set<std::string> suites, cases;
  int case_count = 0;
  for (const pugi::xpath_node& suite : doc.select_nodes("/testsuites/testsuite")) {
    EXPECT_TRUE(suites.insert(suite.node().attribute("name").value()).second)
        << suite.node().attribute("name").value();
  }
  for (const pugi::xpath_node& tc : doc.select_nodes("//testcase")) {
    ++case_count;
    cases.insert(std::string(tc.node().attribute("classname").value()) + "|" +
                 tc.node().attribute("name").value());
  }
  EXPECT_EQ(case_count, 14);
  EXPECT_EQ(cases.size(), 14u);
}

TEST_F(JunitReportTest, NoLineForAnEmptyField) {
  // net.egress.denied:dns has no remediation.
  const auto dns = One("//testcase[@name='net.egress.denied:dns']").node();
  const std::string body = dns.child("error").text().get();
  EXPECT_THAT(body, HasSubstr("expected: lookup denied\n"));
  EXPECT_THAT(body, Not(HasSubstr("remediation:")));
  EXPECT_THAT(xml_, Not(HasSubstr("remediation: \n")));
  EXPECT_THAT(xml_, Not(HasSubstr("expected: \n")));
}

TEST_F(JunitReportTest, AHarnessFailureIsNamedByItsProfileFile) {
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(RenderJunit({HarnessFailureReport(
      "0.1.0", "sandboxes/bwrap-strict.json", "sandprobe.harness", "no probe", false)}).c_str()));
  EXPECT_TRUE(doc.select_node("//testsuite[@name='bwrap-strict/unknown/unknown/harness']"));
}

TEST_F(JunitReportTest, WriteToMissingDirectoryNamesThePath) {
  const std::string path = dir_ + "/missing/TEST-sandprobe.xml";
  const Status status = WriteJunitReport(BothReports(), path);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(path));
}

}  // namespace
}  // namespace sandprobe
