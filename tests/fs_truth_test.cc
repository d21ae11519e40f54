// Filesystem verdicts you can bet a release on, against real backends: the doors path checks
// walk past (a host root bound at /host), decoys over denied paths (a pass that says so, while
// the host's real data still fails), and canaries planted in the directories a user mounts.
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A directory under /var/tmp (bwrap profiles put a tmpfs on /tmp), removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/var/tmp/sp-fs-truth-XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
    ::chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes tests/data/<name> into `dir` with @TEMP@ filled in and its relative policy path made
// absolute; returns its path.
std::string FromTemplate(const std::string& name, const std::string& dir) {
  std::ifstream in(SourcePath("tests/data/" + name));
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"@TEMP@", dir},
                                   {"../../policies/", SourcePath("policies/")}}) {
    for (std::size_t at = s.find(key); at != std::string::npos; at = s.find(key, at)) {
      s.replace(at, key.size(), value);
    }
  }
  std::string out = dir + "/" + name;
  std::ofstream(out) << s;
  return out;
}

// `sandprobe run` of a profile at an absolute path; the report is read back.
CliRun RunAt(const std::string& profile, const std::string& dir) {
  std::string report = dir + "/report.json";
  CliRun run = RunCli({"run", "--sandbox", profile, "--no-color", "--require-backend", "--json", report});
  std::ifstream in(report);
  if (in) run.report = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return run;
}

std::string Observed(const json& report, const std::string& id) {
  return CheckField(report, id, "observed");
}

TEST(FsTruthTest, HostRootBoundAtHostFailsTheCanaryAndTheMountCheck) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("tests/data/docker-host-root.json", {"--require-backend"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const json& r = run.report;
  ExpectVerdict(r, "fs.alias.denied:host-canary[mount_root]", "fail", "too-permissive");
  EXPECT_NE(Observed(r, "fs.alias.denied:host-canary[mount_root]").find("via /host/var/tmp/"),
            std::string::npos);
  // The canary's hash is in the launch's frames, so the direct read fails too.
  ExpectVerdict(r, "fs.read.denied:host-canary", "fail", "too-permissive");
  ExpectVerdict(r, "fs.mounts.host-root-bind", "fail", "too-permissive");
  EXPECT_EQ(CheckField(r, "fs.mounts.host-root-bind", "severity"), "critical");
  EXPECT_NE(Observed(r, "fs.mounts.host-root-bind").find("/host"), std::string::npos);
  // uid 1000 still cannot read /host/etc/shadow: that check holds.
  ExpectVerdict(r, "fs.alias.denied:/etc/shadow[mount_root]", "pass");
  ExpectNoContainerLeft(r);
}

TEST(FsTruthTest, DockerHardenedPassesTheMountChecks) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-hardened.json", {"--require-backend"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  ExpectVerdict(run.report, "fs.mounts.host-root-bind", "pass");
  ExpectVerdict(run.report, "fs.mounts.host-block-device", "pass");
  ExpectVerdict(run.report, "fs.alias.denied:host-canary[mount_root]", "pass");
  ExpectVerdict(run.report, "fs.read.denied:host-canary", "pass");
}

TEST(FsTruthTest, DecoysOverDeniedPathsPassAndSaySo) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  TempDir dir;
  std::ofstream(dir.path() + "/empty-shadow");  // the 0-byte decoy
  CliRun run = RunAt(FromTemplate("bwrap-decoys.json", dir.path()), dir.path());
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.out << run.err;
  ExpectVerdict(r, "fs.read.denied:/root", "pass");
  EXPECT_NE(Observed(r, "fs.read.denied:/root").find("decoy"), std::string::npos);
  ExpectVerdict(r, "fs.read.denied:/etc/shadow", "pass");
  EXPECT_NE(Observed(r, "fs.read.denied:/etc/shadow").find("decoy"), std::string::npos);
  ExpectVerdict(r, "fs.alias.denied:/etc/shadow[proc_root]", "pass");
  // The rest of the host root is still there: the canary fails.
  ExpectVerdict(r, "fs.read.denied:host-canary", "fail", "too-permissive");
}

TEST(FsTruthTest, RealShadowStillFailsInBwrapLeaky) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunProfile("sandboxes/bwrap-leaky.json", {"--require-backend"});
  ExpectVerdict(run.report, "fs.read.denied:/etc/shadow", "fail", "too-permissive");
  EXPECT_EQ(Observed(run.report, "fs.read.denied:/etc/shadow").find("decoy"), std::string::npos);
  ExpectVerdict(run.report, "fs.read.denied:/root", "fail", "too-permissive");
}

TEST(FsTruthTest, CanaryInAMountedHostDirLeaksAndIsRemovedAfterTheRun) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  TempDir dir;
  const std::string mounted = dir.path() + "/mounted";
  fs::create_directory(mounted);
  ::chmod(mounted.c_str(), 0755);
  std::ofstream(mounted + "/user-file.txt") << "the user's own data\n";
  CliRun run = RunAt(FromTemplate("bwrap-mounted-canary.json", dir.path()), dir.path());
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.out << run.err;
  const std::string id = "fs.read.denied:mounted-canary:" + mounted;
  ExpectVerdict(r, id, "fail", "too-permissive");
  EXPECT_NE(Observed(r, id).find("matches the host canary"), std::string::npos) << Observed(r, id);
  ASSERT_TRUE(r["witnesses"]["mounted_canaries"].is_array()) << r["witnesses"].dump();
  ASSERT_EQ(r["witnesses"]["mounted_canaries"].size(), 1u);
  EXPECT_EQ(r["witnesses"]["mounted_canaries"][0]["present_at_collect"], true);
  // The host watched it (issue 25 item 2): the read is an open it saw, whatever the probe said.
  const json& watch = r["witnesses"]["mounted_canaries"][0]["watch"];
  EXPECT_EQ(watch.value("watched", false), true) << watch.dump();
  EXPECT_FALSE(watch.value("opens", json::array()).empty()) << watch.dump();
  ASSERT_NE(FindCheck(r, id), nullptr);
  EXPECT_EQ((*FindCheck(r, id))["evidence"].value("tier", ""), "witnessed") << FindCheck(r, id)->dump();
  // The run's own canary is still unreachable: only the mounted one leaks.
  ExpectVerdict(r, "fs.read.denied:host-canary", "pass");
  // Afterwards only the user's file is left.
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(mounted)) left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"user-file.txt"});
}

}  // namespace
}  // namespace sandprobe::testing
