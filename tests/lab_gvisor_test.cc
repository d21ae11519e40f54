// gVisor containers in the egress lab (issue 28 item 3), on real docker and runsc: gvisor-lab
// ("lab": "docker-gateway") runs each probe container under runtime runsc-lab (scripts/setup.sh
// register_runsc: --platform=ptrace --network=host) in the network namespace of the run's lab
// gateway container (--network container:ID). gVisor's sentry answers the workload's syscalls
// and its sockets are Linux sockets in that namespace, whose only links are loopback and the
// veth into the lab: gVisor filters nothing, so against docker-lab's one allowed name every
// control name and every net.bypass spelling gets through -- each must FAIL, backed by a lab
// receipt (true findings), and the allowed name must pass by the receipt of this launch's
// request. The host's bridge must stay unreachable (no route but the lab's: the sandbox is in the
// gateway's namespace, not the host's), nothing may leave the lab, and the run must leave no
// container, network or namespace behind. Needs a root harness, docker with sandprobe/agent and
// runsc registered as runsc-lab.
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/lab_expect.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

// Mount points of namespace files (nsfs) in the host's mount table, except docker's own per-
// container ones (/run/docker/netns/, /var/run/docker/netns/: other tests' containers come and
// go there; the run's own containers are checked gone by id and label). The lab holds its
// namespaces by descriptor only, so after the harness exits a bind mount is the one way a
// namespace of the run could outlive it.
std::set<std::string> NamespaceMounts() {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::set<std::string> mounts;
  for (std::string line; std::getline(mountinfo, line);) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 5, "nsfs ") != 0) continue;
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    if (point.find("/docker/netns/") != std::string::npos) continue;
    mounts.insert(point);
  }
  return mounts;
}

// Links named as the lab's veth ends (lab/lab_sandbox_netns.h) in the host's own namespace: none,
// before or after (the pair is made in the lab's namespace and one end moved to the gateway's).
std::string LabLinksOnTheHost() {
  CliRun links = RunCommand({"ip", "-o", "link", "show"});
  std::string found;
  std::istringstream lines(links.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(": sp-sandbox") != std::string::npos || line.find(": sp-lab") != std::string::npos) found += line + "\n";
  }
  return found;
}

TEST(LabGvisorTest, GvisorWithTheHostsStackInTheGatewaysNamespaceReachesTheAllowedNameAndEveryControlByReceipt) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (netns, veth into the gateway)";
  if (!BackendAvailable("docker", kDockerUp)) return;
  if (!BackendAvailable("gvisor runtime runsc-lab", {"docker", "run", "--pull", "never", "--rm", "--runtime", "runsc-lab",
                                                     "--network", "none", "sandprobe/agent:latest", "true"})) {
    return;
  }
  // runsc-lab is gVisor: its kernel's boot log, not Linux's.
  CliRun kernel = RunCommand({"docker", "run", "--pull", "never", "--rm", "--runtime", "runsc-lab", "--network", "none",
                              "sandprobe/agent:latest", "dmesg"});
  ASSERT_NE(kernel.out.find("Starting gVisor"), std::string::npos) << kernel.out << kernel.err;

  const std::set<std::string> mounts_before = NamespaceMounts();
  CliRun run = RunProfile("sandboxes/gvisor-lab.json", {"--suite", SourcePath("suites/network.json"), "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;

  // Every probe launch (each `docker run`; the others are its cleanup) ran under runsc-lab in the
  // gateway's namespace.
  const std::string gateway_id = r["witnesses"]["lab"]["gateway"].value("container", "");
  ASSERT_FALSE(gateway_id.empty()) << r["witnesses"]["lab"].dump();
  int probe_launches = 0;
  for (const json& launch : r["launches"]) {
    const std::string argv = launch["argv"].dump();
    if (argv.rfind(R"(["docker","run",)", 0) != 0) continue;
    ++probe_launches;
    EXPECT_NE(argv.find(R"("--runtime","runsc-lab")"), std::string::npos) << argv;
    EXPECT_NE(argv.find(R"("--network","container:)" + gateway_id + "\""), std::string::npos) << argv;
  }
  EXPECT_GE(probe_launches, 1) << r["launches"].dump();

  ExpectAllowedNameReached(r);
  const int through = ExpectEveryControlAndBypassThrough(r);
  int fails = 0, errors = 0, inconclusive = 0, skipped = 0;
  for (const json& check : r["checks"]) {
    fails += check.value("verdict", "") == "fail";
    errors += check.value("verdict", "") == "error";
    inconclusive += check.value("verdict", "") == "inconclusive";
    skipped += check.value("verdict", "") == "skip";
  }
  EXPECT_EQ(fails, through) << run.out;
  EXPECT_EQ(errors, 0) << run.out;
  EXPECT_EQ(inconclusive, 0) << run.out;
  EXPECT_EQ(skipped, 0) << run.out;
  EXPECT_EQ(run.exit_code, 1) << run.out;
  // The host's own stack is not the sandbox's: its bridge has no route from the gateway's namespace.
  ExpectVerdict(r, "net.tcp.denied:bridge", "pass");
  EXPECT_NE(CheckField(r, "net.tcp.denied:bridge", "observed").find("ENETUNREACH"), std::string::npos)
      << CheckField(r, "net.tcp.denied:bridge", "observed");
  ExpectVerdict(r, "net.ifaces.host-netns-hidden", "pass");
  ExpectNothingLeftTheLab(r);

  // Nothing of the run is left: the gateway (removed by id), the probe containers, a network of
  // the run, a namespace kept by a mount, a veth end in the host's namespace.
  EXPECT_EQ(r["witnesses"]["lab"]["gateway"].value("removal", ""), "removed");
  CliRun inspect = RunCommand({"docker", "inspect", "--type", "container", gateway_id});
  EXPECT_NE(inspect.exit_code, 0) << "the gateway is still there: " << inspect.out;
  ExpectNoContainerLeft(r);
  CliRun networks = RunCommand({"docker", "network", "ls", "-q", "--filter", "label=sandprobe.run=" + r.value("run_id", "")});
  EXPECT_EQ(networks.out, "") << "a network of the run is left";
  std::set<std::string> new_mounts;
  for (const std::string& mount : NamespaceMounts()) {
    if (!mounts_before.count(mount)) new_mounts.insert(mount);
  }
  EXPECT_TRUE(new_mounts.empty()) << "a namespace is kept by a mount: " << *new_mounts.begin();
  EXPECT_EQ(LabLinksOnTheHost(), "");
}

}  // namespace
}  // namespace sandprobe::testing
