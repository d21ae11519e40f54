// The gate around `sandprobe run` (issue 15): built-ins by name, a suite with no check for the
// policy, --check/--skip, --fail-on none, waivers. On the host profile (no backend needed): it
// fails tier-low's filesystem checks, which is what a gate needs to gate on.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

// `sandprobe run ARGS --json DIR/r.json`, the report parsed into run.report.
CliRun RunWithReport(std::vector<std::string> args) {
  std::string json_path = MakeTempDir("gate") + "/r.json";
  args.insert(args.begin(), "run");
  args.insert(args.end(), {"--no-color", "--json", json_path});
  CliRun run = RunCli(args);
  std::ifstream in(json_path);
  if (in) run.report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return run;
}

std::vector<std::string> CheckIds(const nlohmann::json& report) {
  std::vector<std::string> ids;
  for (const auto& check : report.value("checks", nlohmann::json::array())) ids.push_back(check["id"]);
  return ids;
}

int Count(const nlohmann::json& report, const std::string& verdict) {
  return report["summary"].value(verdict, -1);
}

TEST(GateCliTest, BuiltinNamesResolveInTheDataDirectory) {
  CliRun run = RunWithReport({"--sandbox", "host", "--policy", "tier-low", "--suite", "default"});
  ASSERT_EQ(run.exit_code, 1) << run.err << run.out;  // the host is no sandbox
  EXPECT_EQ(run.report["profile"]["path"], SourcePath("sandboxes/host.json"));
  EXPECT_EQ(run.report["policy"]["path"], SourcePath("policies/tier-low.json"));
  EXPECT_EQ(run.report["suite"], "default");
  EXPECT_EQ(SchemaProblem(run.report), "");
}

TEST(GateCliTest, AnUnknownNameIsAUsageErrorListingTheNames) {
  CliRun run = RunCli({"run", "--sandbox", "docker-hardend"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("did you mean docker-hardened?"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("bwrap-strict"), std::string::npos) << run.err;
  run = RunCli({"run", "--sandbox", "host", "--suite", "netwrk"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("did you mean network?"), std::string::npos) << run.err;
}

TEST(GateCliTest, ValidateTakesNames) {
  CliRun run = RunCli({"validate", "docker-hardened", "tier-low", "network"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("sandboxes/docker-hardened.json: ok (profile docker-hardened"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("policies/tier-low.json: ok (policy tier-low)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("suites/network.json: ok (suite network)"), std::string::npos) << run.out;
}

TEST(GateCliTest, ValidateReportsEveryErrorWithDidYouMean) {
  std::string path = WriteFile(MakeTempDir("gate"), "p.json", "{\"name\": \"p\", \"description\": \"d\",\n"
                                                    " \"network\": {\"egres\": \"deny\", \"dns\": \"alow\"},\n"
                                                    " \"limits\": {\"pid\": 1}}\n");
  CliRun run = RunCli({"validate", path});
  EXPECT_EQ(run.exit_code, 2);
  for (const std::string& expected : {path + ":2:14: /network/egres: unknown key (did you mean \"egress\"?)",
                                      path + ":2:38: /network/dns: \"alow\" is not one of deny, allow, filtered (did you mean \"allow\"?)",
                                      path + ":3:13: /limits/pid: unknown key (did you mean \"pids\"?)"}) {
    EXPECT_NE(run.err.find(expected), std::string::npos) << expected << "\n" << run.err;
  }
}

TEST(GateCliTest, ASuiteWithNoCheckForThePolicyIsAUsageErrorNamingTheSection) {
  std::string policy = WriteFile(MakeTempDir("gate"), "nolimits.json", R"({"name": "nolimits", "description": "no limits section"})");
  CliRun run = RunWithReport({"--sandbox", "host", "--policy", policy, "--suite", "resources"});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.err.find("expands to no check against policy nolimits"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("\"limits\" (missing)"), std::string::npos) << run.err;
}

TEST(GateCliTest, CheckAndSkipSelectByGlob) {
  CliRun run = RunWithReport({"--sandbox", "host", "--check", "fs.read.*", "--skip", "*{workspace}*"});
  ASSERT_TRUE(run.exit_code == 1 || run.exit_code == 0) << run.err << run.out;
  std::vector<std::string> ids = CheckIds(run.report);
  ASSERT_FALSE(ids.empty()) << run.err;
  for (const std::string& id : ids) {
    EXPECT_EQ(id.rfind("fs.read.", 0), 0u) << id;
    EXPECT_EQ(id.find("{workspace}"), std::string::npos) << id;
  }
  // The denied reads still fail on the host: selection does not change judgement.
  EXPECT_EQ(CheckField(run.report, "fs.read.denied:host-canary", "verdict"), "fail");
  EXPECT_EQ(SchemaProblem(run.report), "");

  CliRun typo = RunWithReport({"--sandbox", "host", "--check", "fs.raed.*"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("--check fs.raed.*: matches none"), std::string::npos) << typo.err;
}

TEST(GateCliTest, FailOnNoneReportsTheFailsAndExits0) {
  CliRun run = RunWithReport({"--sandbox", "host", "--check", "fs.read.denied:*", "--fail-on", "none"});
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_GT(Count(run.report, "fail"), 0) << run.report.dump().substr(0, 500);
  EXPECT_NE(run.out.find("exit 0: --fail-on none"), std::string::npos) << run.out;
  EXPECT_EQ(RunCli({"run", "--sandbox", "host", "--fail-on", "never"}).exit_code, 2);
}

TEST(GateCliTest, AnActiveWaiverLetsTheFailThroughAndTheReportSaysWaived) {
  std::string dir = MakeTempDir("gate");
  std::string waivers = WriteFile(dir, "w.json", R"({
  // the host is known not to hide these
  "waivers": [{"check": "fs.read.denied:*", "reason": "host baseline", "expires": "2099-12-31"}]
})");
  CliRun run = RunWithReport({"--sandbox", "host", "--check", "fs.read.denied:*", "--waivers", waivers});
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  const nlohmann::json* check = FindCheck(run.report, "fs.read.denied:host-canary");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ((*check)["verdict"], "fail");
  EXPECT_EQ((*check)["waived"], true);
  EXPECT_EQ((*check)["waiver"]["reason"], "host baseline");
  EXPECT_EQ((*check)["waiver"]["source"], waivers + ":3:15");
  EXPECT_EQ(run.report["waivers"]["source"], waivers);
  EXPECT_NE(run.out.find("[WAIVED until 2099-12-31: host baseline]"), std::string::npos) << run.out;
  EXPECT_EQ(SchemaProblem(run.report), "");
}

TEST(GateCliTest, AnExpiredWaiverFailsTheGateAndSaysSo) {
  std::string dir = MakeTempDir("gate");
  std::string waivers = WriteFile(dir, "w.json", R"({"waivers": [
  {"check": "fs.read.denied:*", "reason": "was accepted", "expires": "2020-01-31"}]})");
  CliRun run = RunWithReport({"--sandbox", "host", "--check", "fs.read.denied:*", "--waivers", waivers,
                              "--fail-on", "critical"});
  EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
  EXPECT_NE(run.out.find("waiver expired: " + waivers + ":2:3: waiver for fs.read.denied:* expired on 2020-01-31"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("expired waiver(s) (renew or remove them)"), std::string::npos) << run.out;
  const nlohmann::json* check = FindCheck(run.report, "fs.read.denied:host-canary");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ((*check)["waived"], false);
  EXPECT_EQ((*check)["waiver"]["expired"], true);
  EXPECT_EQ(SchemaProblem(run.report), "");
}

TEST(GateCliTest, ABadWaiversFileIsAUsageErrorAtItsLine) {
  std::string waivers = WriteFile(MakeTempDir("gate"), "w.json", "{\"waivers\": [\n  {\"check\": \"x\", \"reason\": \"r\"}]}");
  CliRun run = RunCli({"run", "--sandbox", "host", "--waivers", waivers});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(waivers + ":2:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("expires"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sandprobe::testing
