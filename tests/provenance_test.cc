// Which program ran: a forged `env` earlier in PATH is recorded (its path and hash) and warned
// about, instead of giving a report byte-identical to a real run.
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "launch/launch_executable.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

class ProvenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sp-prov-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    ::chmod(dir_.c_str(), 0755);
    // The forgery: an `env` that runs the real one, so the run itself looks normal.
    std::ofstream(dir_ + "/env") << "#!/bin/sh\nexec /usr/bin/env \"$@\"\n";
    ::chmod((dir_ + "/env").c_str(), 0755);
    // sandboxes/host.json with its probe started through a bare `env`, as bwrap profiles are.
    std::ifstream in(SourcePath("sandboxes/host.json"));
    nlohmann::json profile = nlohmann::json::parse(in, nullptr, true, /*ignore_comments=*/true);
    profile["run"] = {"env", "{probe}", "{probe_args...}"};
    profile["policy"] = SourcePath("policies/tier-low.json");
    std::ofstream(dir_ + "/host-env.json") << profile.dump(2);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `sandprobe run` of the env profile with `path` as the harness's PATH.
  CliRun RunWithPath(const std::string& path) {
    CliRun run = RunCommand({"/usr/bin/env", "PATH=" + path, SANDPROBE_CLI, "run", "--sandbox",
                             dir_ + "/host-env.json", "--no-color", "--no-progress", "--json",
                             dir_ + "/r.json"});
    std::ifstream in(dir_ + "/r.json");
    if (in) run.report = nlohmann::json::parse(in, nullptr, false);
    return run;
  }
  std::string dir_;
};

std::vector<nlohmann::json> ProbeLaunches(const nlohmann::json& report) {
  std::vector<nlohmann::json> probes;
  if (!report.is_object() || !report.contains("launches")) return probes;
  for (const auto& l : report["launches"]) {
    if (l.value("purpose", "") == "probe") probes.push_back(l);
  }
  return probes;
}

TEST_F(ProvenanceTest, ForgedEnvEarlierInPathIsRecordedAndWarnedAbout) {
  CliRun run = RunWithPath(dir_ + ":" + std::getenv("PATH"));
  EXPECT_EQ(run.exit_code, 1) << run.err;  // host fails tier-low, forged env or not
  const std::vector<nlohmann::json> probes = ProbeLaunches(run.report);
  ASSERT_FALSE(probes.empty()) << run.err;
  StatusOr<std::string> forged = ExecutableSha256(dir_ + "/env");
  StatusOr<std::string> real = ExecutableSha256("/usr/bin/env");
  ASSERT_TRUE(forged.ok() && real.ok());
  ASSERT_NE(*forged, *real);
  for (const nlohmann::json& l : probes) {
    EXPECT_EQ(l.value("executable", ""), dir_ + "/env");
    EXPECT_EQ(l.value("executable_sha256", ""), *forged);
    EXPECT_NE(l.value("executable_warning", "").find("outside the system paths"),
              std::string::npos) << l.dump();
  }
  const std::string warning = "warning: launches ran " + dir_ + "/env (sha256 " +
                              forged->substr(0, 12) + "\u2026): found on PATH in " + dir_ +
                              ", outside the system paths";
  EXPECT_NE(run.out.find(warning), std::string::npos) << run.out;
  // Once per program, not once per launch.
  EXPECT_EQ(run.out.find("warning:"), run.out.rfind("warning:")) << run.out;
  EXPECT_EQ(SchemaProblem(run.report), "");
}

TEST_F(ProvenanceTest, RealEnvIsRecordedWithItsHashAndNoWarning) {
  CliRun run = RunWithPath("/usr/bin:/bin");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const std::vector<nlohmann::json> probes = ProbeLaunches(run.report);
  ASSERT_FALSE(probes.empty()) << run.err;
  StatusOr<std::string> real = ExecutableSha256("/usr/bin/env");
  ASSERT_TRUE(real.ok());
  for (const nlohmann::json& l : probes) {
    EXPECT_EQ(l.value("executable", ""), "/usr/bin/env");
    EXPECT_EQ(l.value("executable_sha256", ""), *real);
    EXPECT_EQ(l.value("executable_warning", "?"), "");
  }
  EXPECT_EQ(run.out.find("warning:"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace sandprobe::testing
