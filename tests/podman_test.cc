// Rootful podman as a sandbox backend, on real podman: podman-hardened is docker-hardened's
// container under podman (runc, cgroupfs, file events; sandboxes/podman-hardened.json), and
// podman-lab the same container in the run's egress lab through a gateway podman starts
// (run/run_lab_gateway.h, podman's LabGatewayEngine row). The default suite must pass as
// docker-hardened's does, judged by the harness's own readings (the container's cgroup, the
// host's `podman inspect`); in the lab, with no filter, the allowed name passes by receipt and
// every control and net.bypass spelling FAILS by receipt. No container of a run may be left
// (listed by the run's label only). Skipped, with the reason, without podman and its image
// (scripts/setup.sh --with podman), unless SANDPROBE_REQUIRE_BACKENDS=1.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/lab_expect.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kPodmanUp = {"podman", "image", "exists", "sandprobe/agent:latest"};

// Containers of `report`'s run that podman still lists, by the run's label only.
void ExpectNoPodmanContainerLeft(const json& report) {
  const std::string run_id = report.value("run_id", "");
  ASSERT_FALSE(run_id.empty());
  CliRun ps = RunCommand({"podman", "ps", "-aq", "--filter", "label=sandprobe.run=" + run_id});
  EXPECT_EQ(ps.exit_code, 0) << ps.err;
  EXPECT_EQ(ps.out, "") << "podman containers of run " << run_id << " left behind";
}

int CountVerdict(const json& report, const std::string& verdict) {
  int n = 0;
  for (const json& check : report["checks"]) n += check.value("verdict", "") == verdict;
  return n;
}

TEST(PodmanTest, HardenedContainerPassesTheDefaultSuiteByTheHarnesssOwnReadings) {
  if (!BackendAvailable("podman", kPodmanUp)) return;
  CliRun run = RunProfile("sandboxes/podman-hardened.json", {"--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(r["profile"]["config"].value("backend", ""), "podman");
  EXPECT_EQ(CountVerdict(r, "fail"), 0) << run.out;
  EXPECT_EQ(CountVerdict(r, "error"), 0) << run.out;
  EXPECT_GE(CountVerdict(r, "pass"), 30) << run.out;
  // Witnessed on the host, not reported by the probe: the canary file and the env secret.
  ExpectVerdict(r, "fs.read.denied:host-canary", "pass");
  ExpectNoPodmanContainerLeft(r);
}

TEST(PodmanTest, ResourceLimitsAreReadFromTheContainersCgroupAndPodmanInspect) {
  // Run from a directory of the test's own: conmon 2.1.6 creates "oom" in its working directory
  // on an OOM kill; the profile starts podman in podman's store, so nothing may appear here.
  const std::string cwd = MakeTempDir("podman-cwd");
  struct BackAtTheEnd {
    std::filesystem::path before = std::filesystem::current_path();
    ~BackAtTheEnd() { std::filesystem::current_path(before); }
  } back;
  std::filesystem::current_path(cwd);
  if (!BackendAvailable("podman", kPodmanUp)) return;
  CliRun run = RunProfile("sandboxes/podman-hardened.json",
                          {"--suite", SourcePath("suites/resources.json"), "--check", "limits.pids*", "--check",
                           "limits.open_files*", "--check", "limits.memory*", "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  ExpectVerdict(r, "limits.pids.max:50", "pass");
  const std::string pids = CheckField(r, "limits.pids.max:50", "observed");
  EXPECT_NE(pids.find("pids.max=50"), std::string::npos) << pids;  // the container's own cgroup
  EXPECT_NE(pids.find("pids_limit=50"), std::string::npos) << pids;  // `podman inspect` on the host
  // The OOM killer met the allocating child, and the host found the container's cgroup (podman's
  // libpod-ID, by the probe's pid) and read the limit from `podman inspect`.
  ExpectVerdict(r, "limits.memory_mib:512", "pass");
  const std::string memory = CheckField(r, "limits.memory_mib:512", "observed");
  EXPECT_NE(memory.find("stopped by the OOM killer"), std::string::npos) << memory;
  EXPECT_NE(memory.find("memory_bytes=536870912"), std::string::npos) << memory;
  EXPECT_NE(memory.find("libpod"), std::string::npos) << memory;
  ExpectVerdict(r, "limits.open_files:1024", "pass");
  ExpectNoPodmanContainerLeft(r);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(cwd) / "oom")) << "conmon wrote into the harness's cwd";
}

TEST(PodmanTest, LabContainerWithNoFilterReachesTheAllowedNameAndEveryControlAndSpellingByReceipt) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (netns, veth into the gateway)";
  if (!BackendAvailable("podman", kPodmanUp)) return;
  CliRun run = RunProfile("sandboxes/podman-lab.json",
                          {"--suite", SourcePath("suites/network.json"), "--require-backend", "--keep-run-dir"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  const std::filesystem::path run_root =
      std::filesystem::path(r["witnesses"]["workspace"].get<std::string>()).parent_path();

  ExpectAllowedNameReached(r);
  const int through = ExpectEveryControlAndBypassThrough(r);
  EXPECT_EQ(CountVerdict(r, "fail"), through) << run.out;
  EXPECT_EQ(CountVerdict(r, "error"), 0) << run.out;
  EXPECT_EQ(CountVerdict(r, "inconclusive"), 0) << run.out;
  EXPECT_EQ(run.exit_code, 1) << run.out;
  ExpectVerdict(r, "net.tcp.denied:bridge", "pass");
  EXPECT_NE(CheckField(r, "net.tcp.denied:bridge", "observed").find("ENETUNREACH"), std::string::npos)
      << "no route but the lab's: " << CheckField(r, "net.tcp.denied:bridge", "observed");
  ExpectNothingLeftTheLab(r);

  // The gateway podman started: removed by id, and no container of the run is left.
  const json& gateway = r["witnesses"]["lab"]["gateway"];
  ASSERT_TRUE(gateway.is_object()) << r["witnesses"]["lab"].dump();
  EXPECT_EQ(gateway.value("removal", ""), "removed");
  CliRun exists = RunCommand({"podman", "container", "exists", gateway.value("container", "")});
  EXPECT_EQ(exists.exit_code, 1) << "the gateway is still there";
  ExpectNoPodmanContainerLeft(r);

  // Recorded for `sandprobe sweep` before the first launch, with podman's command.
  std::ifstream owner(run_root / "owner.json");
  const json recorded = json::parse(owner, nullptr, false);
  ASSERT_TRUE(recorded.is_object()) << run_root;
  bool gateway_swept = false;
  for (const json& sweep : recorded["sweep"]) {
    const std::set<std::string> list = JsonStrings(sweep["list"]);
    gateway_swept = gateway_swept || (list.count("label=sandprobe.role=lab-gateway") > 0 && list.count("podman") > 0);
  }
  EXPECT_TRUE(gateway_swept) << recorded["sweep"].dump();
  std::filesystem::remove_all(run_root);
}

}  // namespace
}  // namespace sandprobe::testing
