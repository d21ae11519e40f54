// Docker containers in the egress lab (issue 28 item 3), on real docker: docker-lab ("lab":
// "docker-gateway") runs each probe container in the network namespace of the run's lab gateway
// container (--network container:ID), whose only links are its loopback and the veth into the
// lab, and whose resolv.conf names the lab's resolvers. The container has no filter of its own,
// so against docker-lab's one allowed name every control name and every net.bypass spelling of
// the denied destination gets through: each must FAIL, backed by a lab receipt (true findings),
// and the allowed name must pass by the receipt of this launch's request. Nothing may leave the
// lab, the gateway must be removed by id, no container of the run may be left, and the gateway's
// sweep must be recorded for `sandprobe sweep` before any launch. Needs a root harness (the lab
// and the veth into the gateway's namespace) and docker with sandprobe/agent.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/lab_expect.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

TEST(LabDockerTest, AContainerWithNoFilterReachesTheAllowedNameAndEveryControlAndSpellingByReceipt) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (netns, veth into the gateway)";
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-lab.json",
                          {"--suite", SourcePath("suites/network.json"), "--require-backend", "--keep-run-dir"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  const std::filesystem::path run_root = std::filesystem::path(r["witnesses"]["workspace"].get<std::string>()).parent_path();

  ExpectAllowedNameReached(r);
  const int through = ExpectEveryControlAndBypassThrough(r);
  // Every other network check passes: the gateway's namespace has no way to the host's canaries.
  int fails = 0, errors = 0, inconclusive = 0;
  for (const json& check : r["checks"]) {
    fails += check.value("verdict", "") == "fail";
    errors += check.value("verdict", "") == "error";
    inconclusive += check.value("verdict", "") == "inconclusive";
  }
  EXPECT_EQ(fails, through) << run.out;
  EXPECT_EQ(errors, 0) << run.out;
  EXPECT_EQ(inconclusive, 0) << run.out;
  EXPECT_EQ(run.exit_code, 1) << run.out;
  ExpectVerdict(r, "net.tcp.denied:bridge", "pass");
  EXPECT_NE(CheckField(r, "net.tcp.denied:bridge", "observed").find("ENETUNREACH"), std::string::npos)
      << "no route but the lab's: " << CheckField(r, "net.tcp.denied:bridge", "observed");
  ExpectNothingLeftTheLab(r);

  // The gateway: removed by id at the end, and no container of the run is left.
  const json& gateway = r["witnesses"]["lab"]["gateway"];
  ASSERT_TRUE(gateway.is_object()) << r["witnesses"]["lab"].dump();
  EXPECT_EQ(gateway.value("removal", ""), "removed");
  CliRun inspect = RunCommand({"docker", "inspect", "--type", "container", gateway.value("container", "")});
  EXPECT_NE(inspect.exit_code, 0) << "the gateway is still there: " << inspect.out;
  ExpectNoContainerLeft(r);

  // Recorded for `sandprobe sweep` before the first launch: a dead run's gateway is found by
  // the run's label and its role, and removed by id.
  std::ifstream owner(run_root / "owner.json");
  const json recorded = json::parse(owner, nullptr, false);
  ASSERT_TRUE(recorded.is_object()) << run_root;
  bool gateway_swept = false;
  for (const json& sweep : recorded["sweep"]) {
    gateway_swept = gateway_swept || JsonStrings(sweep["list"]).count("label=sandprobe.role=lab-gateway") > 0;
  }
  EXPECT_TRUE(gateway_swept) << recorded["sweep"].dump();
  std::filesystem::remove_all(run_root);
}

// docker-proxy-allowlist: the probe container on a run-made --internal network whose only way to
// the lab is tinyproxy (FilterDefaultDeny, ^pkg\.lab\.test$) in the gateway's namespace. The
// allowed name passes through the proxy (a lab receipt from the gateway's address), every
// control and 10 of 12 spellings are refused by the proxy (HTTP 403, no receipt). True FAILs,
// each shown by its own evidence: rebinding (tinyproxy resolves the allowed name again per
// request and connects to the rebound address), fronting (it forwards a denied Host over the
// connection to pkg.lab.test), and the host's bridge canaries (docker gives a container on an
// --internal network a default route to the network's gateway on the host, and the host takes
// what is addressed to its own addresses: docker0's heard the nonce).
TEST(LabDockerTest, ProxyAllowlistOnAnInternalNetworkLetsOnlyTheAllowedNameThroughTheProxy) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (netns, veth into the gateway)";
  if (!BackendAvailable("docker", kDockerUp)) return;
  if (!BackendAvailable("tinyproxy image", {"docker", "image", "inspect", "sandprobe/tinyproxy-allowlist:latest"})) return;
  CliRun run = RunProfile("sandboxes/docker-proxy-allowlist.json",
                          {"--suite", SourcePath("suites/network.json"), "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  ExpectAllowedNameReached(r);
  const std::set<std::string> through = {"net.bypass.refused:rebinding", "net.bypass.refused:fronting",
                                         "net.tcp.denied:bridge", "net.udp.denied:bridge", "net.dns.denied"};
  int refused = 0;
  for (const json& check : r["checks"]) {
    const std::string id = check.value("id", "");
    if (through.count(id)) {
      EXPECT_EQ(check.value("verdict", ""), "fail") << id << ": " << check.value("observed", "");
      continue;
    }
    if (id.rfind("net.allow.refused:", 0) != 0 && id.rfind("net.bypass.refused:", 0) != 0) continue;
    EXPECT_EQ(check.value("verdict", ""), "pass") << id << ": " << check.value("observed", "");
    EXPECT_NE(check.value("observed", "").find("HTTP 403"), std::string::npos) << id << ": " << check.value("observed", "");
    ++refused;
  }
  EXPECT_GE(refused, 6 + 10);
  EXPECT_NE(CheckField(r, "net.bypass.refused:rebinding", "observed").find("the lab received"), std::string::npos);
  EXPECT_NE(CheckField(r, "net.tcp.denied:bridge", "observed").find("received this run's nonce from 203.0.113."),
            std::string::npos)
      << CheckField(r, "net.tcp.denied:bridge", "observed");
  int fails = 0, errors = 0;
  for (const json& check : r["checks"]) {
    fails += check.value("verdict", "") == "fail";
    errors += check.value("verdict", "") == "error" || check.value("verdict", "") == "inconclusive";
  }
  EXPECT_EQ(fails, static_cast<int>(through.size())) << run.out;
  EXPECT_EQ(errors, 0) << run.out;
  EXPECT_EQ(run.exit_code, 1) << run.out;

  // Every receipt came from the gateway (the proxy's connections through its veth), the lab has
  // only its loopback and that veth, and the gateway's namespace holds the veth and docker's
  // internal link only.
  const json& lab = r["witnesses"]["lab"];
  EXPECT_EQ(JsonStrings(lab["lab_links"]), (std::set<std::string>{"lo", "sp-sandbox"}));
  EXPECT_EQ(JsonStrings(lab["sandbox_links"]), (std::set<std::string>{"lo", "sp-lab", "eth0"}));
  for (const json& receipt : lab["sink_receipts"]) {
    const std::string peer = receipt.value("peer", "");
    EXPECT_TRUE(peer.rfind("203.0.113.2:", 0) == 0 || peer.rfind("[2001:db8:ff::2]:", 0) == 0) << peer;
  }
  EXPECT_EQ(lab["gateway"].value("removal", ""), "removed");
  ExpectNoContainerLeft(r);
  CliRun networks = RunCommand({"docker", "network", "ls", "-q", "--filter",
                                "label=sandprobe.run=" + r.value("run_id", "")});
  EXPECT_EQ(networks.out, "") << "the run's internal network is left";
}

// Two docker-proxy-allowlist runs at once on one daemon: each makes its own --internal network
// (a /28 of 203.0.113.0/24 chosen per run, the next one where docker says another network has
// it), so neither fails "Pool overlaps"; both judge the same five true FAILs as the run above,
// each on a subnet of its own, and neither leaves its network.
TEST(LabDockerTest, TwoProxyAllowlistRunsAtOnceEachGetAnInternalNetworkOfTheirOwn) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (netns, veth into the gateway)";
  if (!BackendAvailable("docker", kDockerUp)) return;
  if (!BackendAvailable("tinyproxy image", {"docker", "image", "inspect", "sandprobe/tinyproxy-allowlist:latest"})) return;
  CliRun runs[2];
  {
    std::thread other([&runs] {
      runs[1] = RunProfile("sandboxes/docker-proxy-allowlist.json",
                           {"--suite", SourcePath("suites/network.json"), "--require-backend"});
    });
    runs[0] = RunProfile("sandboxes/docker-proxy-allowlist.json",
                         {"--suite", SourcePath("suites/network.json"), "--require-backend"});
    other.join();
  }
  std::set<std::string> gateway_subnets;
  for (const CliRun& run : runs) {
    const json& r = run.report;
    ASSERT_TRUE(r.is_object()) << run.out << run.err;
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    ExpectAllowedNameReached(r);
    int fails = 0;
    for (const json& check : r["checks"]) fails += check.value("verdict", "") == "fail";
    EXPECT_EQ(fails, 5) << run.out;
    // The probe container's address on its run's internal network, as the host's bridge canary
    // heard it: "... received this run's nonce from 203.0.113.N:PORT ...".
    const std::string observed = CheckField(r, "net.tcp.denied:bridge", "observed");
    const std::string from = "nonce from 203.0.113.";
    const std::size_t at = observed.find(from);
    ASSERT_NE(at, std::string::npos) << observed;
    const int host = std::stoi(observed.substr(at + from.size()));
    gateway_subnets.insert(std::to_string(host / 16 * 16));
    ExpectNoContainerLeft(r);
    CliRun networks = RunCommand({"docker", "network", "ls", "-q", "--filter",
                                  "label=sandprobe.run=" + r.value("run_id", "")});
    EXPECT_EQ(networks.out, "") << "the run's internal network is left";
  }
  EXPECT_EQ(gateway_subnets.size(), 2u) << "both runs' containers were on one /28";
}

}  // namespace
}  // namespace sandprobe::testing
