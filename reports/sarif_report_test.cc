#include "reports/sarif_report.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/check_catalogue.h"
#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;
using report_fixture::BothReports;
using report_fixture::HardenedReport;

// The fixture's one reference, tier-low.json /filesystem/unreadable/2 (no position), is at 7:44.
std::optional<SourcePosition> FakeLocator(const std::string& file, const std::string& pointer) {
  if (file == "tier-low.json" && pointer == "/filesystem/unreadable/2") return SourcePosition{7, 44};
  return std::nullopt;
}

class SarifReportTest : public ::testing::Test {
 protected:
  void SetUp() override { doc_ = SarifDocument(BothReports(), FakeLocator); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  const json& Run(int i) const { return doc_["runs"][i]; }
  const json* Rule(int run, const std::string& id) const {
    for (const json& rule : Run(run)["tool"]["driver"]["rules"]) {
      if (rule["id"] == id) return &rule;
    }
    return nullptr;
  }
  const json* Result(int run, const std::string& check) const {
    for (const json& result : Run(run)["results"]) {
      if (result["properties"]["check"] == check) return &result;
    }
    return nullptr;
  }

  json doc_;
  const std::string dir_ = report_fixture::MakeTempDir();
};

TEST_F(SarifReportTest, OneRunPerReportToldApartByAutomationId) {
  EXPECT_EQ(doc_["version"], "2.1.0");
  ASSERT_EQ(doc_["runs"].size(), 2u);
  EXPECT_EQ(Run(0)["automationDetails"]["id"], "sandprobe/docker-hardened/tier-low/default/r-20261120-0001");
  EXPECT_EQ(Run(1)["automationDetails"]["id"], "sandprobe/bwrap-basic/tier-medium/quick/r-20261120-0001");
  EXPECT_EQ(Run(0)["tool"]["driver"]["name"], "sandprobe");
  EXPECT_EQ(Run(0)["tool"]["driver"]["semanticVersion"], "0.1.0");
  EXPECT_EQ(Run(0)["columnKind"], "unicodeCodePoints");
  EXPECT_EQ(Run(0)["properties"]["summary"]["fail"], 2);
  EXPECT_EQ(Run(0)["properties"]["summary"]["pass"], 1);
}

TEST_F(SarifReportTest, OneRulePerCheckTemplateWithLevelAndHelp) {
  std::vector<std::string> ids;
  for (const json& rule : Run(0)["tool"]["driver"]["rules"]) ids.push_back(rule["id"]);
  EXPECT_THAT(ids, ::testing::ElementsAre("fs.read.allowed", "fs.read.denied", "fs.write.allowed",
                                          "env.secret.hidden", "net.egress.denied"));
  const json* denied = Rule(0, "fs.read.denied");
  ASSERT_NE(denied, nullptr);
  EXPECT_EQ((*denied)["name"], "FsReadDenied");
  EXPECT_EQ((*denied)["defaultConfiguration"]["level"], "error");  // critical
  EXPECT_EQ((*denied)["properties"]["security-severity"], "9.5");
  // The rule's own text (the check catalogue), not its first failing check's fix.
  EXPECT_EQ((*denied)["help"]["text"], std::string(FindCatalogueRow("fs.read.denied")->help));
  EXPECT_EQ((*denied)["fullDescription"]["text"], std::string(FindCatalogueRow("fs.read.denied")->proves));
  EXPECT_FALSE(denied->contains("helpUri"));  // no catalogue place given
  // Two inconclusive checks and a skip share net.egress.denied: still one rule, and a template
  // the catalogue does not know has no help rather than a borrowed one.
  EXPECT_FALSE(Rule(0, "net.egress.denied")->contains("help"));
  EXPECT_EQ((*Rule(0, "fs.write.allowed"))["defaultConfiguration"]["level"], "warning");  // medium
}

// Two checks of one template with different fixes: the rule's help is the template's, each
// result's message keeps its own fix (the AF_VSOCK alert once showed io_uring's advice).
TEST(SarifRuleHelp, ComesFromTheRuleNotFromItsFirstFailingResult) {
  RunReport r = HardenedReport();
  Verdict first = r.verdicts[1];
  first.check.id = "priv.syscall:io_uring_setup";
  first.check.family = "priv.syscalls";
  first.outcome = Outcome::kFail;
  first.remediation = "io_uring advice";
  Verdict second = first;
  second.check.id = "priv.syscall:socket(AF_VSOCK)";
  second.remediation = "vsock advice";
  r.verdicts = {first, second};
  const json doc = SarifDocument({r}, FakeLocator, SarifPlaces{.checks_doc = "https://example.test/checks.md"});
  const json& rule = doc["runs"][0]["tool"]["driver"]["rules"][0];
  EXPECT_EQ(rule["help"]["text"], std::string(FindCatalogueRow("priv.syscall")->help));
  EXPECT_EQ(rule["helpUri"], "https://example.test/checks.md#priv-syscall");
  const std::string vsock = doc["runs"][0]["results"][1]["message"]["text"];
  EXPECT_THAT(vsock, ::testing::HasSubstr("Fix: vsock advice."));
  EXPECT_THAT(vsock, ::testing::Not(::testing::HasSubstr("io_uring")));
}

// A policy inside the directory sandprobe ran in is located relative to %SRCROOT%, which code
// scanning maps onto the repository; one outside keeps its file:// URI.
TEST(SarifLocations, AreRepositoryRelativeInsideTheWorkingDirectory) {
  RunReport r = HardenedReport();
  r.verdicts[1].check.reference.file = "/repo/policies/tier-low.json";
  r.verdicts[2].check.reference.file = "/elsewhere/p.json";
  const json doc = SarifDocument({r}, FakeLocator, SarifPlaces{.base_dir = "/repo"});
  const json& run = doc["runs"][0];
  EXPECT_EQ(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///repo/");
  const json& inside = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  EXPECT_EQ(inside["uri"], "policies/tier-low.json");
  EXPECT_EQ(inside["uriBaseId"], "%SRCROOT%");
  const json& outside = run["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"];
  EXPECT_EQ(outside["uri"], "file:///elsewhere/p.json");
  EXPECT_FALSE(outside.contains("uriBaseId"));
}

TEST_F(SarifReportTest, FailuresAreResultsAtThePolicyLineAndColumn) {
  EXPECT_EQ(Run(0)["results"].size(), 2u);  // pass, skip, error, inconclusive are no results
  EXPECT_EQ(Run(1)["results"].size(), 1u);
  const json* leak = Result(0, "fs.read.denied:host-canary");
  ASSERT_NE(leak, nullptr);
  EXPECT_EQ((*leak)["ruleId"], "fs.read.denied");
  EXPECT_EQ((*leak)["ruleIndex"], 1);
  EXPECT_EQ((*leak)["kind"], "fail");
  EXPECT_EQ((*leak)["level"], "error");
  EXPECT_EQ((*leak)["properties"]["direction"], "too-permissive");
  const json& where = (*leak)["locations"][0]["physicalLocation"];
  EXPECT_EQ(where["artifactLocation"]["uri"], "tier-low.json");
  EXPECT_EQ(where["region"]["startLine"], 7);
  EXPECT_EQ(where["region"]["startColumn"], 44);
  EXPECT_EQ((*leak)["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
            "/filesystem/unreadable/2");
  const std::string text = (*leak)["message"]["text"];
  EXPECT_THAT(text, HasSubstr("[critical] fs.read.denied:host-canary in sandbox docker-hardened: "
                              "expected read denied; observed read ok: 33 bytes"));
  EXPECT_THAT(text, HasSubstr("Fix: mount the host canary directory out of the sandbox."));
  EXPECT_EQ((*leak)["partialFingerprints"]["sandprobeCheck/v1"],
            "docker-hardened/tier-low/fs.read.denied:host-canary");

  // No reference: located at the policy file as a whole (its first line).
  const json* blocked = Result(0, "fs.write.allowed:/tmp");
  ASSERT_NE(blocked, nullptr);
  EXPECT_EQ((*blocked)["level"], "warning");
  EXPECT_EQ((*blocked)["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "policies/tier-low.json");
  EXPECT_EQ((*blocked)["locations"][0]["physicalLocation"]["region"], json({{"startLine", 1}}));
}

TEST_F(SarifReportTest, ErrorsAndInconclusiveAreNotificationsOfAnUnsuccessfulInvocation) {
  const json& invocation = Run(0)["invocations"][0];
  EXPECT_EQ(invocation["executionSuccessful"], false);
  EXPECT_EQ(invocation["startTimeUtc"], "2026-11-20T10:00:00Z");
  ASSERT_EQ(invocation["toolExecutionNotifications"].size(), 3u);
  const json& error = invocation["toolExecutionNotifications"][0];
  EXPECT_EQ(error["level"], "error");
  EXPECT_EQ(error["associatedRule"]["id"], "env.secret.hidden");
  EXPECT_EQ(error["associatedRule"]["index"], 3);
  EXPECT_THAT(error["message"]["text"].get<std::string>(),
              HasSubstr("error env.secret.hidden in sandbox docker-hardened: launch failed"));
  EXPECT_EQ(invocation["toolExecutionNotifications"][1]["level"], "warning");  // inconclusive
  EXPECT_EQ(Run(1)["invocations"][0]["executionSuccessful"], false);  // interrupted
}

TEST_F(SarifReportTest, HostileTextIsCleanedAndCapped) {
  const std::string text = RenderSarif(BothReports(), FakeLocator);
  EXPECT_THAT(text, Not(HasSubstr("\\u001b")));
  EXPECT_THAT(text, Not(HasSubstr("\\u0000")));
  EXPECT_THAT(text, Not(HasSubstr("END-OF-200K")));
  EXPECT_LT(text.size(), 64u * 1024);
  EXPECT_FALSE(json::parse(text, nullptr, false).is_discarded());
}

TEST(SarifHarnessFailureTest, IsANotificationNamedByItsProfileFile) {
  const json doc = SarifDocument({HarnessFailureReport("0.1.0", "sandboxes/bwrap-strict.json",
                                                       "sandprobe.harness", "no probe", false)},
                                 FakeLocator);
  const json& run = doc["runs"][0];
  EXPECT_EQ(run["automationDetails"]["id"], "sandprobe/bwrap-strict/unknown/unknown/unknown");
  EXPECT_TRUE(run["results"].empty());
  EXPECT_EQ(run["invocations"][0]["executionSuccessful"], false);
  EXPECT_EQ(run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"],
            "error sandprobe.harness in sandbox bwrap-strict: no probe.");
}

TEST(SarifReferenceTest, TemplatesAndUris) {
  EXPECT_EQ(CheckTemplate("fs.alias.denied:host-canary[symlink]"), "fs.alias.denied");
  EXPECT_EQ(CheckTemplate("env.secret.hidden"), "env.secret.hidden");
  EXPECT_EQ(PathToUri("policies/tier-low.json"), "policies/tier-low.json");
  EXPECT_EQ(PathToUri("/srv/my policies/p#1.json"), "file:///srv/my%20policies/p%231.json");
}

TEST_F(SarifReportTest, FileLocatorFindsPointersInTheFileAndForgetsNothingElse) {
  const std::string path = dir_ + "/p.json";
  std::ofstream(path) << "// a comment\n{\n  \"name\": \"p\",\n  \"limits\": {\"pids\": 50}\n}\n";
  SourceLocator locate = FileSourceLocator();
  std::optional<SourcePosition> pos = locate(path, "/limits/pids");
  ASSERT_TRUE(pos);
  EXPECT_EQ(pos->line, 4);
  EXPECT_EQ(pos->column, 22);
  EXPECT_FALSE(locate(dir_ + "/missing.json", "/limits/pids"));
  EXPECT_FALSE(locate(path, "not a pointer"));
}

// Microsoft's SARIF Multitool (npm @microsoft/sarif-multitool, installed by scripts/setup.sh):
// our document has no error or warning, and a broken one has errors (so the check can fail).
std::string Multitool() {
  if (const char* env = std::getenv("SANDPROBE_SARIF_MULTITOOL")) return env;
  return SANDPROBE_SARIF_MULTITOOL;
}

// The first run's canary leak, waived (--waivers) until `expires`.
std::vector<RunReport> WithWaivedLeak(bool expired) {
  std::vector<RunReport> reports = BothReports();
  for (Verdict& v : reports[0].verdicts) {
    if (v.check.id == "fs.read.denied:host-canary") {
      v.waiver = AppliedWaiver{"fs.read.denied:*", "tracked in SEC-12", "2027-01-31", "waivers.json:3:5", expired};
    }
  }
  return reports;
}

const json* ResultOf(const json& doc, const std::string& check) {
  for (const json& result : doc["runs"][0]["results"]) {
    if (result["properties"]["check"] == check) return &result;
  }
  return nullptr;
}

TEST(SarifWaiverTest, AWaivedFailIsAnAcceptedExternalSuppression) {
  json doc = SarifDocument(WithWaivedLeak(false), FakeLocator);
  const json* leak = ResultOf(doc, "fs.read.denied:host-canary");
  ASSERT_NE(leak, nullptr);
  ASSERT_TRUE(leak->contains("suppressions"));
  const json& suppression = (*leak)["suppressions"][0];
  EXPECT_EQ(suppression["kind"], "external");
  EXPECT_EQ(suppression["status"], "accepted");
  EXPECT_EQ(suppression["justification"], "tracked in SEC-12 (waiver waivers.json:3:5, until 2027-01-31)");
  EXPECT_FALSE(ResultOf(doc, "fs.write.allowed:/tmp")->contains("suppressions")) << "not waived";

  json expired = SarifDocument(WithWaivedLeak(true), FakeLocator);
  EXPECT_FALSE(ResultOf(expired, "fs.read.denied:host-canary")->contains("suppressions"))
      << "an expired waiver suppresses nothing";
}

TEST_F(SarifReportTest, MicrosoftsMultitoolFindsNoErrorOrWarning) {
  const std::string tool = Multitool();
  if (::access(tool.c_str(), X_OK) != 0) {
    const std::string why = tool + " is not installed (scripts/setup.sh installs it)";
    if (std::getenv("SANDPROBE_REQUIRE_BACKENDS") != nullptr) FAIL() << why;
    GTEST_SKIP() << why;
  }
  const std::string good = dir_ + "/good.sarif", bad = dir_ + "/bad.sarif", out = dir_ + "/out.sarif";
  ASSERT_TRUE(WriteSarifReport(WithWaivedLeak(false), good).ok());  // a suppression included
  json broken = SarifDocument(BothReports(), FakeLocator);
  broken["runs"][0]["tool"]["driver"].erase("name");
  broken["runs"][1]["results"][0]["level"] = 3;
  std::ofstream(bad) << broken.dump(2);
  const std::string cmd = "'" + tool + "' validate '" + good + "' '" + bad + "' -o '" + out +
                          "' --level 'Error;Warning;Note' --log ForceOverwrite >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  const json log = json::parse(in, nullptr, false);
  ASSERT_FALSE(log.is_discarded()) << "no SARIF log from " << cmd;
  // SARIF2005 wants tool.driver.informationUri: sandprobe has no public home page to name.
  const std::set<std::string> allowed = {"SARIF2005"};
  int bad_errors = 0;
  for (const json& result : log["runs"][0]["results"]) {
    const std::string level = result.value("level", "warning");
    const std::string uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    if (uri.ends_with("bad.sarif")) {
      bad_errors += level == "error";
      continue;
    }
    if (level == "note" || allowed.contains(result["ruleId"])) continue;
    ADD_FAILURE() << result["ruleId"] << " " << level << ": " << result["message"].dump();
  }
  EXPECT_GE(bad_errors, 2) << "the Multitool did not flag a broken document: " << log.dump(1);
}

}  // namespace
}  // namespace sandprobe
