// Report outputs never harm the host: a device node, FIFO or symlink named by --json/--junit is
// written through or refused, never replaced; bad outputs are refused before the run starts.
// Device nodes are made in a temp dir (mknod 1:3, a null device), never touched in /dev.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

class ReportOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sp-out-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> Run(std::vector<std::string> outputs) {
    std::vector<std::string> args = {"run", "--sandbox", SourcePath("sandboxes/host.json"),
                                     "--no-color", "--no-progress"};
    args.insert(args.end(), outputs.begin(), outputs.end());
    return args;
  }
  std::string dir_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(ReportOutputTest, DeviceNodeStaysADeviceAndDevStdoutCarriesTheReport) {
  const std::string device = dir_ + "/devnode";
  struct statvfs vfs {};
  if (::statvfs(dir_.c_str(), &vfs) == 0 && (vfs.f_flag & ST_NODEV)) {
    GTEST_SKIP() << dir_ << " is on a nodev mount";
  }
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod needs root";
  }
  CliRun run = RunCli(Run({"--junit", device, "--json", "/dev/stdout"}));
  EXPECT_EQ(run.exit_code, 1) << run.err;  // the run's own verdict: host fails tier-low
  struct stat st {};
  ASSERT_EQ(::lstat(device.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1)
      << "a temp file was left beside the device";
  // stdout holds the report alone: the console summary moved to stderr.
  const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.out.substr(0, 300);
  EXPECT_EQ(report.value("schema", ""), "sandprobe-report/1");
  EXPECT_NE(run.err.find("profile host, policy tier-low"), std::string::npos) << run.err;
}

TEST_F(ReportOutputTest, TwoReportsOnStdoutAreRefusedBeforeTheRun) {
  CliRun run = RunCli(Run({"--json", "-", "--junit", "-"}));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--json - and --junit - both write to stdout"), std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err.find("profile host"), std::string::npos) << "the run started: " << run.err;
}

TEST_F(ReportOutputTest, DirectoryAsOutputIsRefusedBeforeTheRun) {
  CliRun run = RunCli(Run({"--json", dir_ + "/r.json", "--junit", dir_}));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--junit " + dir_ + ": \"" + dir_ + "\": a directory"),
            std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("profile host"), std::string::npos) << "the run started: " << run.out;
  EXPECT_FALSE(fs::exists(dir_ + "/r.json"));
}

TEST_F(ReportOutputTest, FifoWithoutAReaderEndsTheRunWithAnErrorNotAHang) {
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  CliRun run = RunCli(Run({"--json", fifo}));
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("no reader"), std::string::npos) << run.err;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(ReportOutputTest, SymlinkToARegularFileKeepsTheLinkAndUpdatesItsTarget) {
  fs::create_directory(dir_ + "/real");
  fs::create_directory(dir_ + "/out");
  std::ofstream(dir_ + "/real/report.json") << "previous report";
  fs::create_symlink("../real/report.json", dir_ + "/out/report.json");
  CliRun run = RunCli(Run({"--json", dir_ + "/out/report.json"}));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(fs::is_symlink(dir_ + "/out/report.json"));
  EXPECT_EQ(fs::read_symlink(dir_ + "/out/report.json"), "../real/report.json");
  const nlohmann::json report =
      nlohmann::json::parse(Slurp(dir_ + "/real/report.json"), nullptr, false);
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report.value("schema", ""), "sandprobe-report/1");
}

// Every format of the table from one run: each file is written and reads as its format.
TEST_F(ReportOutputTest, EveryFormatFromOneRun) {
  CliRun run = RunCli(Run({"--json", dir_ + "/r.json", "--junit", dir_ + "/r.xml", "--sarif",
                           dir_ + "/r.sarif", "--summary", dir_ + "/summary.md"}));
  EXPECT_EQ(run.exit_code, 1) << run.err;  // host fails tier-low
  const nlohmann::json sarif = nlohmann::json::parse(Slurp(dir_ + "/r.sarif"), nullptr, false);
  ASSERT_FALSE(sarif.is_discarded());
  EXPECT_EQ(sarif.value("version", ""), "2.1.0");
  const nlohmann::json& results = sarif["runs"][0]["results"];
  ASSERT_FALSE(results.empty());
  // The policy's line:col, looked up in the policy file when the check's reference has none.
  for (const nlohmann::json& result : results) {
    const nlohmann::json& where = result["locations"][0]["physicalLocation"];
    EXPECT_TRUE(where["artifactLocation"]["uri"].get<std::string>().ends_with("policies/tier-low.json"));
    EXPECT_TRUE(where["region"].contains("startColumn")) << result.dump();
  }
  const std::string summary = Slurp(dir_ + "/summary.md");
  EXPECT_NE(summary.find("## sandprobe host: FAIL:"), std::string::npos) << summary;
  EXPECT_NE(summary.find("`env.secret.hidden`"), std::string::npos) << summary;
  EXPECT_NE(Slurp(dir_ + "/r.xml").find("<testsuites"), std::string::npos);
  EXPECT_NE(Slurp(dir_ + "/r.json").find("sandprobe-report/1"), std::string::npos);
}

TEST_F(ReportOutputTest, NewFormatsPathsAreCheckedBeforeTheRunToo) {
  CliRun run = RunCli(Run({"--summary", dir_}));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--summary " + dir_ + ": \"" + dir_ + "\": a directory"),
            std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("profile host"), std::string::npos) << "the run started: " << run.out;
  run = RunCli(Run({"--sarif", "-", "--summary", "-"}));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--sarif - and --summary - both write to stdout"), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace sandprobe::testing
