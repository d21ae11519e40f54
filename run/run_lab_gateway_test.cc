#include "run/run_lab_gateway.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "launch/fake_launcher.h"

namespace sandprobe {
namespace {

using testing::Exit;
using testing::FakeLauncher;

const std::string kId(64, 'a');

bool Has(const std::vector<std::string>& argv, const std::vector<std::string>& run) {
  return std::search(argv.begin(), argv.end(), run.begin(), run.end()) != argv.end();
}

TEST(DockerLabGatewayTest, StartsALabelledContainerWithNoNetworkReadsItsPidAndRemovesItByIdOnce) {
  FakeLauncher launcher;
  launcher.replies = {Exit(0, kId + "\n"), Exit(0, "4242\n"), Exit(0, kId + "\n")};
  const Deadline deadline;
  {
    StatusOr<std::unique_ptr<DockerLabGateway>> gateway = DockerLabGateway::Start(launcher, "3f2a", deadline);
    ASSERT_TRUE(gateway.ok()) << gateway.status().message();
    EXPECT_EQ((*gateway)->id(), kId);
    EXPECT_EQ((*gateway)->pid(), 4242);
    EXPECT_EQ((*gateway)->NetworkNamespacePath(), "/proc/4242/ns/net");
    const std::vector<std::string>& run = launcher.specs.at(0).argv;
    EXPECT_TRUE(Has(run, {"--label", "sandprobe.run=3f2a", "--label", "sandprobe.role=lab-gateway"}));
    EXPECT_TRUE(Has(run, {"--network", "none", "--dns", "203.0.113.53", "--dns", "2001:db8:53::53"}));
    EXPECT_TRUE(Has(run, {"--cap-drop", "ALL"}));
    EXPECT_TRUE(Has(run, {"sandprobe/agent:latest", "sleep", "86400"}));  // no deadline: a day at most
    EXPECT_EQ(launcher.specs.at(1).argv,
              (std::vector<std::string>{"docker", "inspect", "--type", "container", "--format", "{{.State.Pid}}", kId}));
    EXPECT_EQ((*gateway)->Remove(), "removed");
    EXPECT_EQ((*gateway)->Remove(), "removed");
  }  // the destructor removes nothing more
  ASSERT_EQ(launcher.specs.size(), 3u);
  EXPECT_EQ(launcher.specs.at(2).argv, (std::vector<std::string>{"docker", "rm", "-f", kId}));
}

TEST(DockerLabGatewayTest, ErrorsNameTheCommandAndAStartedContainerIsRemoved) {
  FakeLauncher launcher;
  const Deadline deadline;
  launcher.replies = {Exit(125, "", "Unable to find image 'sandprobe/agent:latest' locally\n")};
  StatusOr<std::unique_ptr<DockerLabGateway>> failed = DockerLabGateway::Start(launcher, "3f2a", deadline);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("lab gateway: docker run -d --pull never"), std::string::npos)
      << failed.status().message();
  EXPECT_NE(failed.status().message().find(": exit 125: Unable to find image"), std::string::npos)
      << failed.status().message();

  launcher.replies = {Exit(0, "not-an-id\n")};
  failed = DockerLabGateway::Start(launcher, "3f2a", deadline);
  EXPECT_EQ(failed.status().message(), "lab gateway: docker run printed no container id: \"not-an-id\"");

  // Started, then not running: it is removed by id before the error returns.
  launcher.specs.clear();
  launcher.replies = {Exit(0, kId + "\n"), Exit(0, "0\n"), Exit(0, kId + "\n")};
  failed = DockerLabGateway::Start(launcher, "3f2a", deadline);
  EXPECT_EQ(failed.status().message(), "lab gateway " + kId + ": not running (State.Pid \"0\")");
  ASSERT_EQ(launcher.specs.size(), 3u);
  EXPECT_EQ(launcher.specs.at(2).argv, (std::vector<std::string>{"docker", "rm", "-f", kId}));
}

TEST(DockerLabGatewayTest, TheRecordedSweepsListTheRunsGatewayAndNetworkByBothLabelsAndRemoveById) {
  std::vector<RecordedSweep> sweeps = LabGatewaySweeps("3f2a");
  ASSERT_EQ(sweeps.size(), 2u);
  EXPECT_EQ(sweeps[0].list, (std::vector<std::string>{"docker", "ps", "-aq", "--no-trunc", "--filter",
                                                      "label=sandprobe.run=3f2a", "--filter",
                                                      "label=sandprobe.role=lab-gateway"}));
  EXPECT_EQ(sweeps[0].RemoveArgv(kId), (std::vector<std::string>{"docker", "rm", "-f", kId}));
  // Then its internal network (after the container: a network in use is not removed).
  EXPECT_EQ(sweeps[1].list, (std::vector<std::string>{"docker", "network", "ls", "-q", "--no-trunc", "--filter",
                                                      "label=sandprobe.run=3f2a", "--filter",
                                                      "label=sandprobe.role=lab-gateway"}));
  EXPECT_EQ(sweeps[1].RemoveArgv(kId), (std::vector<std::string>{"docker", "network", "rm", kId}));
}

TEST(DockerLabGatewayTest, AnInternalNetworkIsCreatedFirstTheGatewayRunsThereAndBothAreRemoved) {
  FakeLauncher launcher;
  const std::string network(64, 'b');
  launcher.replies = {Exit(0, network + "\n"), Exit(0, kId + "\n"), Exit(0, "4242\n")};
  const Deadline deadline;
  StatusOr<std::unique_ptr<DockerLabGateway>> gateway = DockerLabGateway::Start(launcher, "3f2a", deadline, true);
  ASSERT_TRUE(gateway.ok()) << gateway.status().message();
  EXPECT_EQ((*gateway)->internal_network(), "sp-3f2a-lab");
  EXPECT_EQ((*gateway)->LabLinkName(), "sp-lab");
  const LabInternalSubnet first = LabInternalSubnets("3f2a").at(0);
  EXPECT_EQ(launcher.specs.at(0).argv,
            (std::vector<std::string>{"docker", "network", "create", "--internal", "--label", "sandprobe.run=3f2a",
                                      "--label", "sandprobe.role=lab-gateway", "--subnet", first.cidr,
                                      "sp-3f2a-lab"}));
  EXPECT_TRUE(Has(launcher.specs.at(1).argv, {"--network", "sp-3f2a-lab", "--ip", first.gateway_address, "--dns"}));
  EXPECT_EQ((*gateway)->internal_address(), first.gateway_address);
  EXPECT_EQ((*gateway)->Remove(), "removed");
  ASSERT_EQ(launcher.specs.size(), 5u);
  EXPECT_EQ(launcher.specs.at(3).argv, (std::vector<std::string>{"docker", "rm", "-f", kId}));
  EXPECT_EQ(launcher.specs.at(4).argv, (std::vector<std::string>{"docker", "network", "rm", network}));
}

// Twelve /28s in the lab's 203.0.113.0/24, none holding the lab's .1, .2 or .53, the gateway
// at each one's second host; runs start at different ones, each run always at the same one.
TEST(DockerLabGatewayTest, InternalSubnetsAreTheTwelveFreeSlashTwentyEightsStartingWhereTheRunIdSays) {
  const std::vector<LabInternalSubnet> subnets = LabInternalSubnets("3f2a");
  ASSERT_EQ(subnets.size(), 12u);
  std::set<std::string> cidrs;
  for (const LabInternalSubnet& subnet : subnets) {
    cidrs.insert(subnet.cidr);
    const int start = std::stoi(subnet.cidr.substr(std::string("203.0.113.").size()));
    EXPECT_EQ(subnet.cidr, "203.0.113." + std::to_string(start) + "/28");
    EXPECT_EQ(start % 16, 0) << subnet.cidr;
    EXPECT_GE(start, 64) << subnet.cidr << " would hold the lab's 203.0.113.1, .2 or .53";
    EXPECT_EQ(subnet.gateway_address, "203.0.113." + std::to_string(start + 2));
  }
  EXPECT_EQ(cidrs.size(), 12u);
  EXPECT_EQ(LabInternalSubnets("3f2a").at(0).cidr, subnets.at(0).cidr);
  std::set<std::string> firsts;
  for (const char* run_id : {"3f2a", "3f2b", "3f2c", "3f2d", "3f2e", "3f2f", "77aa", "77ab"}) {
    firsts.insert(LabInternalSubnets(run_id).at(0).cidr);
  }
  EXPECT_GT(firsts.size(), 1u) << "every run starts at the same subnet";
}

// Two runs at once on one daemon: docker refuses a subnet another network has ("Pool overlaps"),
// and the run takes the next one; any other refusal ends the start, naming the command.
TEST(DockerLabGatewayTest, ASubnetAnotherNetworkHasIsPassedOverAndOtherErrorsAreNot) {
  const std::string network(64, 'b');
  const LaunchResult overlaps = Exit(1, "", "Error response from daemon: Pool overlaps with other one on this address space\n");
  const std::vector<LabInternalSubnet> subnets = LabInternalSubnets("3f2a");
  const Deadline deadline;
  {
    FakeLauncher launcher;
    launcher.replies = {overlaps, overlaps, Exit(0, network + "\n"), Exit(0, kId + "\n"), Exit(0, "4242\n")};
    StatusOr<std::unique_ptr<DockerLabGateway>> gateway = DockerLabGateway::Start(launcher, "3f2a", deadline, true);
    ASSERT_TRUE(gateway.ok()) << gateway.status().message();
    EXPECT_TRUE(Has(launcher.specs.at(0).argv, {"--subnet", subnets.at(0).cidr}));
    EXPECT_TRUE(Has(launcher.specs.at(1).argv, {"--subnet", subnets.at(1).cidr}));
    EXPECT_TRUE(Has(launcher.specs.at(2).argv, {"--subnet", subnets.at(2).cidr}));
    EXPECT_EQ((*gateway)->internal_address(), subnets.at(2).gateway_address);
    EXPECT_TRUE(Has(launcher.specs.at(3).argv, {"--ip", subnets.at(2).gateway_address}));
  }
  {
    FakeLauncher launcher;
    launcher.replies = {Exit(1, "", "Error response from daemon: network with name sp-3f2a-lab already exists\n")};
    StatusOr<std::unique_ptr<DockerLabGateway>> gateway = DockerLabGateway::Start(launcher, "3f2a", deadline, true);
    ASSERT_FALSE(gateway.ok());
    EXPECT_EQ(launcher.specs.size(), 1u);
    EXPECT_NE(gateway.status().message().find("lab gateway: docker network create --internal"), std::string::npos)
        << gateway.status().message();
    EXPECT_NE(gateway.status().message().find("already exists"), std::string::npos) << gateway.status().message();
  }
  {
    FakeLauncher launcher;
    launcher.replies.assign(12, overlaps);
    StatusOr<std::unique_ptr<DockerLabGateway>> gateway = DockerLabGateway::Start(launcher, "3f2a", deadline, true);
    ASSERT_FALSE(gateway.ok());
    EXPECT_EQ(launcher.specs.size(), 12u);
    EXPECT_NE(gateway.status().message().find("every subnet is another network's (tried " + subnets.at(0).cidr),
              std::string::npos)
        << gateway.status().message();
  }
}

TEST(DockerLabGatewayTest, PodmansRowStartsInspectsAndRemovesThroughPodmanWithItsGlobalFlagsAndNoDns) {
  const LabGatewayEngine& podman = LabGatewayEngineFor(Backend::kPodman);
  const std::vector<std::string> prefix = {"podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs",
                                           "--events-backend", "file"};
  FakeLauncher launcher;
  launcher.replies = {Exit(0, kId + "\n"), Exit(0, "4242\n"), Exit(0, kId + "\n")};
  const Deadline deadline;
  {
    StatusOr<std::unique_ptr<DockerLabGateway>> gateway =
        DockerLabGateway::Start(launcher, "3f2a", deadline, false, podman);
    ASSERT_TRUE(gateway.ok()) << gateway.status().message();
    EXPECT_EQ((*gateway)->pid(), 4242);
    const std::vector<std::string>& run = launcher.specs.at(0).argv;
    ASSERT_GT(run.size(), prefix.size());
    EXPECT_EQ(std::vector<std::string>(run.begin(), run.begin() + prefix.size()), prefix);
    EXPECT_TRUE(Has(run, {"run", "-d", "--pull", "never"}));
    EXPECT_TRUE(Has(run, {"--network", "none"}));
    // podman refuses --dns beside --network none: the profile binds {lab_resolv_conf} instead.
    EXPECT_EQ(std::find(run.begin(), run.end(), "--dns"), run.end());
    EXPECT_TRUE(Has(run, {"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"}));
    EXPECT_TRUE(Has(run, {"--label", "sandprobe.run=3f2a", "--label", "sandprobe.role=lab-gateway"}));
    // Its conmon ("-n sp-3f2a-lab-gateway") outlives `podman run -d`: spared, and no other
    // launch's orphan.
    EXPECT_EQ(launcher.specs.at(0).spare_processes_with_arg, "sp-3f2a-lab-gateway");
    EXPECT_EQ(launcher.specs.at(0).orphan_tag, "sp-3f2a-lab-gateway");
    std::vector<std::string> inspect = prefix;
    inspect.insert(inspect.end(), {"inspect", "--type", "container", "--format", "{{.State.Pid}}", kId});
    EXPECT_EQ(launcher.specs.at(1).argv, inspect);
    EXPECT_EQ((*gateway)->Remove(), "removed");
  }
  ASSERT_EQ(launcher.specs.size(), 3u);
  std::vector<std::string> remove = prefix;
  remove.insert(remove.end(), {"rm", "-f", "-t", "0", kId});  // -t 0: no 10 s of SIGTERM first
  EXPECT_EQ(launcher.specs.at(2).argv, remove);

  // Its sweep: the gateway container only (podman's row makes no network), removed by id.
  std::vector<RecordedSweep> sweeps = LabGatewaySweeps("3f2a", podman);
  ASSERT_EQ(sweeps.size(), 1u);
  std::vector<std::string> list = prefix;
  list.insert(list.end(), {"ps", "-aq", "--no-trunc", "--filter", "label=sandprobe.run=3f2a", "--filter",
                           "label=sandprobe.role=lab-gateway"});
  EXPECT_EQ(sweeps[0].list, list);
  EXPECT_EQ(sweeps[0].RemoveArgv(kId), remove);

  // An internal network is docker's: refused before anything starts.
  FakeLauncher untouched;
  StatusOr<std::unique_ptr<DockerLabGateway>> refused = DockerLabGateway::Start(untouched, "3f2a", deadline, true, podman);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("podman cannot make the run's internal network"), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(untouched.specs.empty());
}

TEST(DockerLabGatewayTest, DockerAndGvisorShareDockersRow) {
  EXPECT_EQ(&LabGatewayEngineFor(Backend::kDocker), &LabGatewayEngineFor(Backend::kGvisor));
  EXPECT_EQ(LabGatewayEngineFor(Backend::kDocker).command, (std::vector<std::string>{"docker"}));
  EXPECT_NE(&LabGatewayEngineFor(Backend::kPodman), &LabGatewayEngineFor(Backend::kDocker));
}

}  // namespace
}  // namespace sandprobe
