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
// its stdout's first line when it exited 0. `spare`: an argv element of an orphan the command
// leaves running on purpose (LaunchSpec::spare_processes_with_arg).
StatusOr<std::string> Docker(Launcher& launcher, const Deadline& deadline, std::vector<std::string> argv,
                             bool removal, const std::string& spare = "") {
  const Deadline::Bound bound = removal ? deadline.ForRemoval(DockerLabGateway::kCommandLimit)
                                        : deadline.For(DockerLabGateway::kCommandLimit);
  const std::string command = FormatArgv(argv);
  if (bound.nothing_left()) return Status::HarnessError(command + ": not started: the run's deadline had passed");
  LaunchSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = bound.limit;
  spec.extra_env = {{"GOMAXPROCS", "1"}};
  spec.spare_processes_with_arg = spare;
  // And no launch beside this one (a witness's) takes it for its own meanwhile (launch_leftovers.h).
  spec.orphan_tag = spare;
  StatusOr<LaunchResult> r = launcher.Launch(spec);
  if (!r.ok()) return r.status().WithContext(command).AsHarnessError();
  if (r->exit_code != 0) return Status::HarnessError(fmt::format("{}: {}", command, Said(*r)));
  return r->out.substr(0, r->out.find('\n'));
}

// Prefix + the rest: one engine command.
std::vector<std::string> EngineArgv(const LabGatewayEngine& engine, std::initializer_list<std::string> rest) {
  std::vector<std::string> argv = engine.command;
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

std::string LabGatewayName(const std::string& run_id) { return fmt::format("sp-{}-lab-gateway", run_id); }

// Where each candidate /28 starts in 203.0.113.0/24: all of .64/26 and .128/25, none holding
// the lab's .1, .2 or .53.
constexpr int kInternalSubnetStarts[] = {64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240};

// What docker says when a subnet is already another network's (libnetwork's ipam error).
constexpr std::string_view kSubnetTaken = "Pool overlaps";

}  // namespace

const LabGatewayEngine& LabGatewayEngineFor(Backend backend) {
  static const LabGatewayEngine kDockerEngine{{"docker"}, true, {}, {"rm", "-f"}, true};
  static const LabGatewayEngine kPodmanEngine{
      {"podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", "--events-backend", "file"},
      false,
      // Rootful podman raises both to 1048576 otherwise, which runc cannot do without
      // CAP_SYS_RESOURCE ("error setting rlimit type 6").
      {"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"},
      // -t 0: podman's rm -f waits 10 s for the sleep to heed SIGTERM first.
      {"rm", "-f", "-t", "0"},
      // `podman network create` prints the network's name, not an id, and the CNI bridge it
      // makes is not docker's --internal network the proxy profiles were written against.
      false};
  switch (backend) {
    case Backend::kPodman:
      return kPodmanEngine;
    case Backend::kDocker:
    case Backend::kGvisor:
    case Backend::kHost:
    case Backend::kBwrap:
    case Backend::kFirejail:
    case Backend::kOther:
      break;
  }
  return kDockerEngine;
}

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
                                           const std::string& internal_network, const std::string& internal_address,
                                           const LabGatewayEngine& engine) {
  std::vector<std::string> network = {"--network", "none"};  // the lab's veth is its only link
  if (!internal_network.empty()) network = {"--network", internal_network, "--ip", internal_address};
  std::vector<std::string> argv = EngineArgv(engine, {"run", "-d", "--pull", "never",
          "--name", LabGatewayName(run_id),
          "--label", "sandprobe.run=" + run_id, "--label", DockerLabGateway::kRoleLabel});
  argv.insert(argv.end(), network.begin(), network.end());
  if (engine.dns_without_network || !internal_network.empty()) {
    argv.insert(argv.end(), {"--dns", LabResolverV4().Text(), "--dns", LabResolverV6().Text(),
                             "--dns-opt", "timeout:1", "--dns-opt", "attempts:1"});
  }
  argv.insert(argv.end(), engine.run_options.begin(), engine.run_options.end());
  argv.insert(argv.end(), {
          // IPv6 in its own namespace only (docker turns it off where the daemon has no IPv6):
          // the veth gets the lab's IPv6 addresses, as a process sandbox's does.
          "--sysctl", "net.ipv6.conf.all.disable_ipv6=0", "--sysctl", "net.ipv6.conf.default.disable_ipv6=0",
          // It only holds the namespace: no capability, no writes, nobody's uid.
          "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only", "--user", "65534:65534",
          "--memory", "16m", "--pids-limit", "4",
          DockerLabGateway::kImage, "sleep", std::to_string(sleep_seconds)});
  return argv;
}

std::vector<RecordedSweep> LabGatewaySweeps(const std::string& run_id, const LabGatewayEngine& engine) {
  const std::string run = "label=sandprobe.run=" + run_id, role = std::string("label=") + DockerLabGateway::kRoleLabel;
  // Each word of a remove argv as its own piece, then the listed id ({"", ""}).
  auto remove_pieces = [&engine](const std::vector<std::string>& verb) {
    std::vector<std::vector<std::string>> pieces;
    for (const std::string& word : engine.command) pieces.push_back({word});
    for (const std::string& word : verb) pieces.push_back({word});
    pieces.push_back({"", ""});
    return pieces;
  };
  RecordedSweep container, network;
  container.list = EngineArgv(engine, {"ps", "-aq", "--no-trunc", "--filter", run, "--filter", role});
  container.remove = remove_pieces(engine.force_remove);
  if (!engine.internal_network) return {container};  // no network of the run's to sweep
  network.list = EngineArgv(engine, {"network", "ls", "-q", "--no-trunc", "--filter", run, "--filter", role});
  network.remove = remove_pieces({"network", "rm"});
  return {container, network};
}

StatusOr<std::unique_ptr<DockerLabGateway>> DockerLabGateway::Start(Launcher& launcher, const std::string& run_id,
                                                                    const Deadline& deadline, bool internal_network,
                                                                    const LabGatewayEngine& engine) {
  std::unique_ptr<DockerLabGateway> gateway(new DockerLabGateway(launcher, deadline, "", engine));
  if (internal_network && !engine.internal_network) {
    return Status::HarnessError(fmt::format("lab gateway: {} cannot make the run's internal network (lab_gateway "
                                            "internal_network is for docker profiles)",
                                            engine.command.at(0)));
  }
  if (internal_network) {
    const std::string name = fmt::format("sp-{}-lab", run_id);
    StatusOr<std::string> network = Status::HarnessError("no subnet tried");
    std::vector<std::string> taken;
    for (const LabInternalSubnet& subnet : LabInternalSubnets(run_id)) {
      network = Docker(launcher, deadline,
                       EngineArgv(engine, {"network", "create", "--internal", "--label", "sandprobe.run=" + run_id,
                                           "--label", kRoleLabel, "--subnet", subnet.cidr, name}),
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
             LabGatewayRunArgv(run_id, sleep_seconds, gateway->network_name_, gateway->network_address_, engine),
             false,
             // Podman has no daemon: the gateway's conmon (argv "-n NAME") double-forks out of
             // `podman run -d` and would be killed with the launch's orphans. Docker's CLI leaves
             // none. The container's removal ends it; a later launch reaps it.
             LabGatewayName(run_id));
  if (!id.ok()) return id.status().WithContext("lab gateway");
  if (!IsContainerId(*id)) {
    return Status::HarnessError(fmt::format("lab gateway: docker run printed no container id: \"{}\"", *id));
  }
  gateway->id_ = *id;
  StatusOr<std::string> pid =
      Docker(launcher, deadline, EngineArgv(engine, {"inspect", "--type", "container", "--format", "{{.State.Pid}}", *id}),
             false);
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
    std::vector<std::string> argv = engine_.command;
    argv.insert(argv.end(), engine_.force_remove.begin(), engine_.force_remove.end());
    argv.push_back(id_);
    StatusOr<std::string> removed = Docker(launcher_, deadline_, std::move(argv), true);
    if (!removed.ok()) problems.push_back(removed.status().message());
  }
  if (!network_id_.empty()) {  // after the container: docker refuses to remove a network in use
    StatusOr<std::string> removed = Docker(launcher_, deadline_, EngineArgv(engine_, {"network", "rm", network_id_}), true);
    if (!removed.ok()) problems.push_back(removed.status().message());
  }
  removed_ = problems.empty() ? "removed" : fmt::format("{}", fmt::join(problems, "; "));
  return removed_;
}

}  // namespace sandprobe
