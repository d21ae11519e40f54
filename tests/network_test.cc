// Network suite against real backends: egress is proven only by what the harness's canaries
// received, runtime sockets by what the probe found, and a test-made network namespace checks
// the allowlist in both directions. Traffic goes only to this machine's own canaries.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/network_netns_fixture.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

const char kSuite[] = "suites/network.json";

CliRun RunNetwork(const std::string& profile, std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"--suite", SourcePath(kSuite), "--require-backend"});
  return RunProfile(profile, extra);
}

std::string VerdictOf(const json& report, const std::string& id) {
  const json* check = FindCheck(report, id);
  return check ? check->value("verdict", "?") : "missing";
}
std::string DirectionOf(const json& report, const std::string& id) {
  const json* check = FindCheck(report, id);
  return check && (*check)["direction"].is_string() ? (*check)["direction"].get<std::string>() : "";
}
std::string ObservedOf(const json& report, const std::string& id) {
  const json* check = FindCheck(report, id);
  return check ? check->value("observed", "") : "";
}

const std::vector<std::string> kEgressChecks = {
    "net.tcp.denied:loopback", "net.tcp.denied:bridge", "net.udp.denied:loopback",
    "net.udp.denied:bridge",   "net.dns.denied"};

// Which endpoints received this run's traffic, from the report's witness section.
std::set<std::string> EndpointsReached(const json& report) {
  std::set<std::string> reached;
  for (const json& r : report["witnesses"]["net"]["receipts"]) {
    if (!r.value("nonce", "").empty()) reached.insert(r.value("endpoint", ""));
  }
  return reached;
}

// After the run, no canary port may still be bound: binding each one again must succeed.
void ExpectListenersGone(const json& report) {
  const json& endpoints = report["witnesses"]["net"]["endpoints"];
  ASSERT_FALSE(endpoints.empty()) << report["witnesses"].dump();
  for (const auto& [name, text] : endpoints.items()) {
    const std::string addr = text.get<std::string>();
    const std::size_t colon = addr.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(std::stoi(addr.substr(colon + 1))));
    if (inet_pton(AF_INET, addr.substr(0, colon).c_str(), &sa.sin_addr) != 1) continue;
    const bool tcp = name.ends_with("-tcp");
    int fd = ::socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    // TCP: a connect must be refused (binding again could trip over the TIME_WAIT of the
    // connections the canary closed). UDP: the port must be free to bind.
    int rc = tcp ? ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa)
                 : ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    int err = errno;
    ::close(fd);
    // EADDRNOTAVAIL/ENETUNREACH: the address itself is gone (the netns fixture's veth).
    const bool gone = tcp ? rc != 0 && (err == ECONNREFUSED || err == ENETUNREACH || err == EADDRNOTAVAIL)
                          : rc == 0 || err == EADDRNOTAVAIL;
    EXPECT_TRUE(gone) << name << " " << addr << " still bound (" << err << ")";
  }
}

void ExpectAllEgressPass(const CliRun& run) {
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  for (const std::string& id : kEgressChecks) {
    EXPECT_EQ(VerdictOf(run.report, id), "pass") << id << ": " << ObservedOf(run.report, id);
  }
  EXPECT_TRUE(EndpointsReached(run.report).empty()) << run.report["witnesses"]["net"].dump();
  EXPECT_EQ(VerdictOf(run.report, "net.unix.hidden:/var/run/docker.sock"), "pass");
  EXPECT_EQ(VerdictOf(run.report, "net.ifaces.loopback-only"), "pass");
  // Isolated, and no host sysfs either (docker mounts the namespace's own; bwrap-strict none).
  for (const std::string id : {"net.ifaces.host-netns-hidden", "net.ifaces.host-sysfs-hidden"}) {
    EXPECT_EQ(VerdictOf(run.report, id), "pass") << id << ": " << ObservedOf(run.report, id);
  }
  ExpectListenersGone(run.report);
}

TEST(NetworkTest, DockerHardenedReachesNoCanary) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  ExpectAllEgressPass(RunNetwork("sandboxes/docker-hardened.json"));
}

TEST(NetworkTest, BwrapStrictReachesNoCanary) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  ExpectAllEgressPass(RunNetwork("sandboxes/bwrap-strict.json"));
}

TEST(NetworkTest, DockerBridgeEgressToTheGatewayIsProvenByReceipt) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunNetwork("sandboxes/docker-bridge.json");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json& r = run.report;
  for (const std::string id : {"net.tcp.denied:bridge", "net.udp.denied:bridge"}) {
    EXPECT_EQ(VerdictOf(r, id), "fail") << ObservedOf(r, id);
    EXPECT_EQ(DirectionOf(r, id), "too-permissive");
    EXPECT_NE(ObservedOf(r, id).find("received this run's nonce"), std::string::npos);
  }
  EXPECT_EQ(VerdictOf(r, "net.tcp.denied:loopback"), "pass") << ObservedOf(r, "net.tcp.denied:loopback");
  std::set<std::string> reached = EndpointsReached(r);
  EXPECT_TRUE(reached.count("bridge-tcp") && reached.count("bridge-udp"));
  EXPECT_FALSE(reached.count("loopback-tcp"));
  ExpectListenersGone(r);
  // The docker CLI here talks to the default socket, so the witness asked the daemon there.
  EXPECT_NE(r["witnesses"]["net"].value("bridge_source", "").find("confirmed by docker's API (GET /networks/bridge)"),
            std::string::npos)
      << r["witnesses"]["net"].dump();
}

// When the docker CLI talks to its daemon through a context, the witness never asks a socket of
// its own choosing: it asks the CLI, as the launches do. The context here names the same daemon,
// so the bridge is still confirmed, by the CLI.
TEST(NetworkTest, DockerThroughAContextConfirmsTheBridgeWithTheCli) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  const std::string config = MakeTempDir("docker-config");
  CliRun made = RunCommand({"docker", "--config", config, "context", "create", "sandprobe-test", "--docker",
                            "host=unix:///var/run/docker.sock"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  WriteFile(config, "config.json", R"({"currentContext": "sandprobe-test"})");
  const std::string report = MakeTempDir("it") + "/report.json";
  CliRun run = RunCommand({"env", "DOCKER_CONFIG=" + config, SANDPROBE_CLI, "run", "--sandbox",
                           SourcePath("sandboxes/docker-bridge.json"), "--suite", SourcePath(kSuite),
                           "--require-backend", "--no-color", "--json", report});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  std::ifstream in(report);
  const json r = json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(r.is_object()) << run.err;
  EXPECT_NE(r["witnesses"]["net"].value("bridge_source", "").find("confirmed by docker network inspect bridge"),
            std::string::npos)
      << r["witnesses"]["net"].dump();
  EXPECT_EQ(VerdictOf(r, "net.tcp.denied:bridge"), "fail") << ObservedOf(r, "net.tcp.denied:bridge");
}

TEST(NetworkTest, HostNetworkReachesTheLoopbackCanary) {
  for (const std::string profile : {"sandboxes/docker-hostnet.json", "sandboxes/bwrap-share-net.json"}) {
    const bool docker = profile.find("docker") != std::string::npos;
    if (!BackendAvailable(docker ? "docker" : "bwrap", docker ? kDockerUp : kBwrapUp)) continue;
    CliRun run = RunNetwork(profile);
    EXPECT_EQ(run.exit_code, 1) << profile << run.err;
    for (const std::string id : {"net.tcp.denied:loopback", "net.udp.denied:loopback"}) {
      EXPECT_EQ(VerdictOf(run.report, id), "fail") << profile << " " << id;
      EXPECT_EQ(DirectionOf(run.report, id), "too-permissive");
    }
    EXPECT_EQ(VerdictOf(run.report, "net.dns.denied"), "fail") << profile;
    EXPECT_EQ(VerdictOf(run.report, "net.ifaces.host-netns-hidden"), "fail") << profile;
    EXPECT_EQ(FindCheck(run.report, "net.ifaces.host-netns-hidden")->value("severity", ""), "critical");
    // What sysfs shows is the namespace's own (docker) or nothing (bwrap): judged once, above.
    EXPECT_EQ(VerdictOf(run.report, "net.ifaces.host-sysfs-hidden"), "pass")
        << profile << ": " << ObservedOf(run.report, "net.ifaces.host-sysfs-hidden");
    EXPECT_TRUE(EndpointsReached(run.report).count("loopback-tcp")) << profile;
    ExpectListenersGone(run.report);
  }
}

TEST(NetworkTest, DockerSockExposesTheRuntimeSocket) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunNetwork("sandboxes/docker-sock.json");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const std::string id = "net.unix.hidden:/var/run/docker.sock";
  const json* check = FindCheck(run.report, id);
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check->value("verdict", ""), "fail");
  EXPECT_EQ(check->value("severity", ""), "critical");
  // Root in the container talks to the daemon: the read-only ping gets an HTTP status line.
  EXPECT_NE(check->value("observed", "").find("GET /_ping -> \"HTTP/1."), std::string::npos)
      << check->value("observed", "");
  for (const std::string& egress : kEgressChecks) EXPECT_EQ(VerdictOf(run.report, egress), "pass");
}

// Its own network namespace, the host's sysfs: the namespace is judged by what it shows itself
// (netlink: lo only), the host's interfaces in /sys/class/net are a finding apart, at low.
TEST(NetworkTest, HostSysfsInAnOwnNamespaceIsALowFindingNotAHostNamespace) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunNetwork("tests/data/bwrap-netns-host-sysfs.json");
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  for (const std::string id : {"net.ifaces.loopback-only", "net.ifaces.host-netns-hidden"}) {
    EXPECT_EQ(VerdictOf(r, id), "pass") << id << ": " << ObservedOf(r, id);
    EXPECT_NE(ObservedOf(r, id).find("netlink shows lo"), std::string::npos) << ObservedOf(r, id);
  }
  const std::string sysfs = "net.ifaces.host-sysfs-hidden";
  const json* check = FindCheck(r, sysfs);
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check->value("verdict", ""), "fail") << ObservedOf(r, sysfs);
  EXPECT_EQ(check->value("severity", ""), "low");
  // The finding names an interface of this host with the MAC the host itself has.
  const json& host = r["witnesses"]["net"]["host_interfaces"];
  bool named = false;
  for (const auto& [name, mac] : host.items()) {
    if (name == "lo") continue;
    named = named || ObservedOf(r, sysfs).find(name + " (" + mac.get<std::string>() + ")") != std::string::npos;
  }
  EXPECT_TRUE(named) << ObservedOf(r, sysfs) << " vs host " << host.dump();
  for (const std::string& egress : kEgressChecks) EXPECT_EQ(VerdictOf(r, egress), "pass") << egress;
}

// The same socket fact judged by net.unix and priv.runtime_sockets side by side. `profile` is
// absolute; the report goes into `dir`.
CliRun RunSockets(const std::string& profile, const std::string& dir) {
  const std::string report = dir + "/" + std::filesystem::path(profile).filename().string() + ".report.json";
  CliRun run = RunCli({"run", "--sandbox", profile, "--suite",
                       SourcePath("tests/data/runtime-sockets-suite.json"), "--require-backend",
                       "--no-color", "--json", report});
  std::ifstream in(report);
  if (in) run.report = json::parse(in, nullptr, false);
  return run;
}
const char kSockCheck[] = "net.unix.hidden:/var/run/docker.sock";

void ExpectBothSocketVerdicts(const json& r, const std::string& verdict, const std::string& severity,
                              const std::string& observed_part) {
  for (const char* id : {kSockCheck, "priv.runtime_sockets"}) {
    const json* check = FindCheck(r, id);
    ASSERT_NE(check, nullptr) << id;
    EXPECT_EQ(check->value("verdict", ""), verdict) << id << ": " << ObservedOf(r, id);
    EXPECT_EQ(check->value("severity", ""), severity) << id;
    EXPECT_NE(ObservedOf(r, id).find(observed_part), std::string::npos) << id << ": " << ObservedOf(r, id);
  }
}

TEST(NetworkTest, RuntimeSocketGetsOneJudgementInBothFamilies) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  struct stat st {};
  if (::stat("/var/run/docker.sock", &st) != 0) {
    ADD_FAILURE() << "docker is up but /var/run/docker.sock is missing";
    return;
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "sp-sockets-XXXXXX").string();
  const std::string dir = mkdtemp(tmpl.data());
  // Mounted, root, no filter: root on the host.
  CliRun open = RunSockets(SourcePath("sandboxes/docker-sock.json"), dir);
  EXPECT_EQ(open.exit_code, 1) << open.err;
  ExpectBothSocketVerdicts(open.report, "fail", "critical", "connect ok");

  // Mounted, root, connect() -> EPERM from a seccomp filter: denied, in both families. The
  // profile's seccomp path is made absolute in a copy.
  std::ifstream in(SourcePath("tests/data/docker-sock-seccomp-connect.json"));
  std::stringstream text;
  text << in.rdbuf();
  std::string profile = text.str();
  const std::string rel = "\"tests/data/seccomp/deny-connect.json";
  const std::string policy = "../../policies/tier-low.json";  // relative to the profile's dir
  ASSERT_NE(profile.find(rel), std::string::npos);
  ASSERT_NE(profile.find(policy), std::string::npos);
  profile.replace(profile.find(rel), rel.size(), "\"" + SourcePath(rel.substr(1)));
  profile.replace(profile.find(policy), policy.size(), SourcePath("policies/tier-low.json"));
  std::ofstream(dir + "/docker-sock-seccomp-connect.json") << profile;
  CliRun denied = RunSockets(dir + "/docker-sock-seccomp-connect.json", dir);
  EXPECT_EQ(denied.exit_code, 0) << denied.out << denied.err;
  ExpectBothSocketVerdicts(denied.report, "pass", "critical", "connect: EPERM");

  // Mounted, uid 1000 outside the docker group: the file's mode refuses it, a denial in both
  // families (issue 26, mechanism 12; it was a medium fail).
  CliRun mode = RunSockets(SourcePath("tests/data/docker-sock-nonroot.json"), dir);
  EXPECT_EQ(mode.exit_code, 0) << mode.out << mode.err;
  ExpectBothSocketVerdicts(mode.report, "pass", "critical", "connect: EACCES: denied by the file's mode 0660");
  std::filesystem::remove_all(dir);
}

// A profile for the fixture: tests/data/network-netns.json with the namespace and address.
std::string WriteNetnsProfile(const NetnsFixture& ns, const std::string& dir) {
  std::ifstream in(SourcePath("tests/data/network-netns.json"));
  std::stringstream text;
  text << in.rdbuf();
  std::string profile = text.str();
  for (auto [from, to] : {std::pair<std::string, std::string>{"@NETNS@", ns.name()},
                          {"@HOST_IP@", ns.host_ip()}}) {
    for (std::size_t at = profile.find(from); at != std::string::npos; at = profile.find(from, at)) {
      profile.replace(at, from.size(), to);
    }
  }
  const std::string path = dir + "/network-netns.json";
  std::ofstream(path) << profile;
  return path;
}

CliRun RunNetns(const std::string& profile, const std::string& policy) {
  return RunCli({"run", "--sandbox", profile, "--policy", SourcePath(policy), "--suite",
                 SourcePath("tests/data/network-egress-suite.json"), "--require-backend",
                 "--no-color", "--json", profile + "." + policy.substr(11) + ".report.json"});
}

json ReadReport(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, false);
}

TEST(NetworkTest, NetnsAllowlistHoldsInBothDirections) {
  std::string dir;
  {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sp-netns-XXXXXX").string();
    dir = mkdtemp(tmpl.data());
  }
  std::string ns_name, host_if;
  {
    NetnsFixture ns;
    if (!ns.ok()) {
      const std::string why = "netns fixture unavailable: " + ns.error();
      if (const char* req = std::getenv("SANDPROBE_REQUIRE_BACKENDS"); req && *req == '1') {
        ADD_FAILURE() << why;
      } else {
        GTEST_SKIP() << why;
      }
      return;
    }
    ns_name = ns.name();
    host_if = ns.host_if();
    const std::string profile = WriteNetnsProfile(ns, dir);

    CliRun allowed = RunNetns(profile, "tests/data/network-allow-bridge.json");
    json r = ReadReport(profile + ".network-allow-bridge.json.report.json");
    EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
    for (const std::string id : {"net.tcp.allowed:bridge", "net.udp.allowed:bridge",
                                 "net.tcp.denied:loopback", "net.udp.denied:loopback",
                                 "net.dns.allowed", "net.ifaces.host-netns-hidden"}) {
      EXPECT_EQ(VerdictOf(r, id), "pass") << id << ": " << ObservedOf(r, id);
    }
    EXPECT_NE(ObservedOf(r, "net.tcp.allowed:bridge").find(ns.host_ip()), std::string::npos);
    ExpectListenersGone(r);

    CliRun flipped = RunNetns(profile, "tests/data/network-allow-loopback.json");
    json f = ReadReport(profile + ".network-allow-loopback.json.report.json");
    EXPECT_EQ(flipped.exit_code, 1) << flipped.err;
    for (const std::string id : {"net.tcp.denied:bridge", "net.udp.denied:bridge", "net.dns.denied"}) {
      EXPECT_EQ(VerdictOf(f, id), "fail") << id;
      EXPECT_EQ(DirectionOf(f, id), "too-permissive") << id;
    }
    for (const std::string id : {"net.tcp.allowed:loopback", "net.udp.allowed:loopback"}) {
      EXPECT_EQ(VerdictOf(f, id), "fail") << id;
      EXPECT_EQ(DirectionOf(f, id), "too-restrictive") << id;
    }
  }
  // The fixture is gone: no namespace, no host-side veth.
  EXPECT_EQ(RunCommand({"ip", "netns", "list"}).out.find(ns_name), std::string::npos);
  EXPECT_NE(RunCommand({"ip", "link", "show", host_if}).exit_code, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sandprobe::testing
