// A harness failure before the first launch (here: no probe binary) is exit 3, not a usage
// error, and both reports are still written with one error check saying why, so a CI job that
// publishes them finds them.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

TEST(HarnessFailureTest, AMissingProbeIsExit3WithBothReportsWritten) {
  std::string tmpl = (fs::temp_directory_path() / "sp-harness-XXXXXX").string();
  const std::string dir = mkdtemp(tmpl.data());
  fs::create_directories(dir + "/empty-probe-dir");
  CliRun run = RunCli({"run", "--sandbox", SourcePath("sandboxes/host.json"), "--probe-dir",
                       dir + "/empty-probe-dir", "--json", dir + "/r.json", "--junit", dir + "/j.xml"});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("sandprobe-probe is missing"), std::string::npos) << run.err;
  std::ifstream in(dir + "/r.json");
  nlohmann::json report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ExpectVerdict(report, "sandprobe.harness", "error");
  EXPECT_NE(CheckField(report, "sandprobe.harness", "observed").find("sandprobe-probe is missing"),
            std::string::npos);
  EXPECT_EQ(SchemaProblem(report), "");
  CliRun lint = RunCommand({"xmllint", "--noout", "--schema", SANDPROBE_JUNIT_XSD, dir + "/j.xml"});
  EXPECT_EQ(lint.exit_code, 0) << lint.err;
  fs::remove_all(dir);
}

// A run root that cannot hold run dirs (here a regular file: root ignores a read-only mode)
// is the harness's failure, not the user's input: exit 3, both reports written.
TEST(HarnessFailureTest, AnUnusableRunRootIsExit3WithBothReportsWritten) {
  std::string tmpl = (fs::temp_directory_path() / "sp-harness-XXXXXX").string();
  const std::string dir = mkdtemp(tmpl.data());
  std::ofstream(dir + "/not-a-dir") << "";
  CliRun run = RunCommand({"/usr/bin/env", "SANDPROBE_RUN_ROOT=" + dir + "/not-a-dir", SANDPROBE_CLI,
                           "run", "--sandbox", SourcePath("sandboxes/host.json"), "--json",
                           dir + "/r.json", "--junit", dir + "/j.xml"});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  std::ifstream in(dir + "/r.json");
  nlohmann::json report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ExpectVerdict(report, "sandprobe.harness", "error");
  EXPECT_NE(CheckField(report, "sandprobe.harness", "observed").find("not-a-dir"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/j.xml"));
  fs::remove_all(dir);
}

// Invalid input stays a usage error (exit 2), and no report pretends a run happened.
TEST(HarnessFailureTest, InvalidInputIsExit2) {
  CliRun run = RunCli({"run", "--sandbox", SourcePath("sandboxes/host.json"), "--suite",
                       SourcePath("sandboxes/host.json")});
  EXPECT_EQ(run.exit_code, 2) << run.err;
}

}  // namespace
}  // namespace sandprobe::testing
