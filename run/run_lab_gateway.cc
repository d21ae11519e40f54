#include "run/run_lab_gateway.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <iterator>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lab/lab_names.h"

namespace sandprobe {
namespace {

// What a command printed, trimmed, for messages (the first line of stderr, else stdout).
std::string Said(const LaunchResult& r) {
  std::string text = r.err.empty() ? r.out : r.err;
  text = text.substr(0, text.find('\n'));
  return text.empty() ? DescribeExit(r) : DescribeExit(r) + ": " + text;
}

bool IsContainerId(const std::string& id) {
  return id.size() == 64 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Runs a docker command (kept to one CPU, as witnesses' host commands are) within `deadline`;
// its stdout's first line when it exited 0.
StatusOr<std::string> Docker(Launcher& launcher, const Deadline& deadline, std::vector<std::string> argv,
                             bool removal) {
  const Deadline::Bound bound = removal ? deadline.ForRemoval(DockerLabGateway::kCommandLimit)
                                        : deadline.For(DockerLabGateway::kCommandLimit);
  const std::string command = FormatArgv(argv);
  if (bound.nothing_left()) return Status::HarnessError(command + ": not started: the run's deadline had passed");
  LaunchSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = bound.limit;
  spec.extra_env = {{"GOMAXPROCS", "1"}};
  StatusOr<LaunchResult> r = launcher.Launch(spec);
  if (!r.ok()) return r.status().WithContext(command).AsHarnessError();
  if (r->exit_code != 0) return Status::HarnessError(fmt::format("{}: {}", command, Said(*r)));
  return r->out.substr(0, r->out.find('\n'));
}

// Where each candidate /28 starts in 203.0.113.0/24: all of .64/26 and .128/25, none holding
// the lab's .1, .2 or .53.
constexpr int kInternalSubnetStarts[] = {64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240};

// What docker says when a subnet is already another network's (libnetwork's ipam error).
constexpr std::string_view kSubnetTaken = "Pool overlaps";

}  // namespace

std::vector<LabInternalSubnet> LabInternalSubnets(const std::string& run_id) {
  constexpr std::size_t kCount = std::size(kInternalSubnetStarts);
  const std::size_t first = std::hash<std::string>{}(run_id) % kCount;
  std::vector<LabInternalSubnet> subnets;
  for (std::size_t i = 0; i < kCount; ++i) {
    const int start = kInternalSubnetStarts[(first + i) % kCount];
    subnets.push_back({fmt::format("203.0.113.{}/28", start), fmt::format("203.0.113.{}", start + 2)});
  }
  return subnets;
}

std::vector<std::string> LabGatewayRunArgv(const std::string& run_id, long long sleep_seconds,
                                           const std::string& internal_network, const std::string& internal_address) {
  std::vector<std::string> network = {"--network", "none"};  // the lab's veth is its only link
  if (!internal_network.empty()) network = {"--network", internal_network, "--ip", internal_address};
  std::vector<std::string> argv = {"docker", "run", "-d", "--pull", "never",
          "--name", fmt::format("sp-{}-lab-gateway", run_id),
          "--label", "sandprobe.run=" + run_id, "--label", DockerLabGateway::kRoleLabel};
  argv.insert(argv.end(), network.begin(), network.end());
  argv.insert(argv.end(), {
          "--dns", LabResolverV4().Text(), "--dns", LabResolverV6().Text(),
          "--dns-opt", "timeout:1", "--dns-opt", "attempts:1",
          // IPv6 in its own namespace only (docker turns it off where the daemon has no IPv6):
          // the veth gets the lab's IPv6 addresses, as a process sandbox's does.
          "--sysctl", "net.ipv6.conf.all.disable_ipv6=0", "--sysctl", "net.ipv6.conf.default.disable_ipv6=0",
          // It only holds the namespace: no capability, no writes, nobody's uid.
          "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only", "--user", "65534:65534",
          "--memory", "16m", "--pids-limit", "4",
          DockerLabGateway::kImage, "sleep", std::to_string(sleep_seconds)});
  return argv;
}

std::vector<RecordedSweep> LabGatewaySweeps(const std::string& run_id) {
  const std::string run = "label=sandprobe.run=" + run_id, role = std::string("label=") + DockerLabGateway::kRoleLabel;
  RecordedSweep container, network;
  container.list = {"docker", "ps", "-aq", "--no-trunc", "--filter", run, "--filter", role};
  container.remove = {{"docker"}, {"rm"}, {"-f"}, {"", ""}};
  network.list = {"docker", "network", "ls", "-q", "--no-trunc", "--filter", run, "--filter", role};
  network.remove = {{"docker"}, {"network"}, {"rm"}, {"", ""}};
  return {container, network};
}

StatusOr<std::unique_ptr<DockerLabGateway>> DockerLabGateway::Start(Launcher& launcher, const std::string& run_id,
                                                                    const Deadline& deadline, bool internal_network) {
  std::unique_ptr<DockerLabGateway> gateway(new DockerLabGateway(launcher, deadline, ""));
  if (internal_network) {
    const std::string name = fmt::format("sp-{}-lab", run_id);
    StatusOr<std::string> network = Status::HarnessError("no subnet tried");
    std::vector<std::string> taken;
    for (const LabInternalSubnet& subnet : LabInternalSubnets(run_id)) {
      network = Docker(launcher, deadline,
                       {"docker", "network", "create", "--internal", "--label", "sandprobe.run=" + run_id, "--label",
                        kRoleLabel, "--subnet", subnet.cidr, name},
                       false);
      if (network.ok()) {
        gateway->network_address_ = subnet.gateway_address;
        break;
      }
      // Another network (another run's, on the same daemon) has it: try the next one.
      if (network.status().message().find(kSubnetTaken) == std::string::npos) break;
      taken.push_back(subnet.cidr);
    }
    if (!network.ok() && taken.size() == std::size(kInternalSubnetStarts)) {
      return Status::HarnessError(fmt::format("lab gateway: docker network create: every subnet is another network's "
                                              "(tried {}): {}",
                                              fmt::join(taken, ", "), network.status().message()));
    }
    if (!network.ok()) return network.status().WithContext("lab gateway");
    if (!IsContainerId(*network)) {
      return Status::HarnessError(fmt::format("lab gateway: docker network create printed no id: \"{}\"", *network));
    }
    gateway->network_id_ = *network;
    gateway->network_name_ = name;
  }
  // It outlives the run by five minutes at most, should nothing remove it.
  const long long sleep_seconds =
      deadline.bounded()
          ? std::chrono::duration_cast<std::chrono::seconds>(deadline.Remaining()).count() + 300
          : 86400;
  StatusOr<std::string> id =
      Docker(launcher, deadline,
             LabGatewayRunArgv(run_id, sleep_seconds, gateway->network_name_, gateway->network_address_), false);
  if (!id.ok()) return id.status().WithContext("lab gateway");
  if (!IsContainerId(*id)) {
    return Status::HarnessError(fmt::format("lab gateway: docker run printed no container id: \"{}\"", *id));
  }
  gateway->id_ = *id;
  StatusOr<std::string> pid =
      Docker(launcher, deadline, {"docker", "inspect", "--type", "container", "--format", "{{.State.Pid}}", *id}, false);
  if (!pid.ok()) return pid.status().WithContext("lab gateway");
  const auto [end, ec] = std::from_chars(pid->data(), pid->data() + pid->size(), gateway->pid_);
  if (ec != std::errc() || end != pid->data() + pid->size() || gateway->pid_ <= 0) {
    return Status::HarnessError(fmt::format("lab gateway {}: not running (State.Pid \"{}\")", *id, *pid));
  }
  return gateway;
}

DockerLabGateway::~DockerLabGateway() { Remove(); }

std::string DockerLabGateway::NetworkNamespacePath() const { return fmt::format("/proc/{}/ns/net", pid_); }

std::string DockerLabGateway::Remove() {
  if (!removed_.empty()) return removed_;
  std::vector<std::string> problems;
  if (!id_.empty()) {
    StatusOr<std::string> removed = Docker(launcher_, deadline_, {"docker", "rm", "-f", id_}, true);
    if (!removed.ok()) problems.push_back(removed.status().message());
  }
  if (!network_id_.empty()) {  // after the container: docker refuses to remove a network in use
    StatusOr<std::string> removed = Docker(launcher_, deadline_, {"docker", "network", "rm", network_id_}, true);
    if (!removed.ok()) problems.push_back(removed.status().message());
  }
  removed_ = problems.empty() ? "removed" : fmt::format("{}", fmt::join(problems, "; "));
  return removed_;
}

}  // namespace sandprobe
