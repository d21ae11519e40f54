// The network witness "net": canary listeners on loopback and on the sandbox's link to this
// host (the "bridge" site), plus the host's own view of runtime sockets and interfaces.
//
// The bridge site's address is, in order: the profile's var `canary_bridge_ip` (a sandbox on
// its own network link, e.g. a veth into a network namespace); the IPv4 address of the host's
// own docker0 interface (getifaddrs); else the gateway of docker's default bridge network
// (asked of docker as below, or the address of its bridge interface when the IPAM config
// names no gateway), for a daemon configured with another bridge. Either way the listeners must
// bind it, so it is always an address of this machine. Without one, bridge checks are skipped
// with the reason.
//
// For a sandbox that docker runs (backends docker, gvisor), what a container reaches as its
// gateway is docker's configuration (the IPAM config may name a gateway, the daemon may use
// another bridge), so only docker can say it: when docker0's address was used, docker is asked
// too, beside the launches (its Engine API socket where the docker CLI would use that daemon,
// else the docker CLI, whose call takes 15-77 ms), and unless it names the same
// address the bridge checks are skipped with the reason (ConfirmBridge). Any other sandbox
// reaches this machine through no docker network at all: the bridge site is there to show
// whether it reaches a host address other than loopback, and docker0's address is one this
// machine owns.
//
// PlanValues (in PlanContext::values as "net.<key>"): every endpoint "<site>-<proto>" ->
// "ADDR:PORT"; "bridge_unavailable" -> why there is no bridge site; "runtime_sockets_on_host"
// -> the well-known runtime socket paths present on this host, comma-separated.
#include <ifaddrs.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <future>
#include <sstream>

#include <fmt/format.h>

#include "contract/protocol.h"
#include "families/family_net.h"
#include "witnesses/witness.h"
#include "witnesses/witness_net.h"

namespace sandprobe {

namespace {

// What docker says its default bridge network's gateway is, and how the harness asked.
struct DockerGateway {
  std::string ip;
  std::string asked;  // "docker's API (GET /networks/bridge)" or "docker network inspect bridge"
};

constexpr const char* kBridgeNetwork = "/networks/bridge";

// The first IPv4 gateway of the IPAM config, else the address of the network's bridge interface
// (an IPAM config may name no gateway).
StatusOr<std::string> GatewayAddress(const std::vector<std::string>& gateways, const std::string& bridge) {
  for (const std::string& gateway : gateways) {
    if (!gateway.empty() && gateway.find(':') == std::string::npos) return gateway;
  }
  std::string ip = bridge.empty() ? "" : InterfaceIpv4(bridge);
  if (ip.empty()) {
    return Status::Error(fmt::format("docker's bridge network names no IPv4 gateway, and its "
                                     "interface '{}' has no IPv4 address", bridge));
  }
  return ip;
}

// object[key] when `object` is an object that has it, else null: the daemon's answer is read
// without trusting its shape (nlohmann's value() throws on a null or mistyped member).
const nlohmann::json& Field(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNone;
  if (!object.is_object()) return kNone;
  auto found = object.find(key);
  return found == object.end() ? kNone : *found;
}

// The same from the Engine API's network object.
StatusOr<std::string> GatewayFromEngine(const nlohmann::json& network) {
  std::vector<std::string> gateways;
  const nlohmann::json& config = Field(Field(network, "IPAM"), "Config");
  if (config.is_array()) {
    for (const nlohmann::json& entry : config) {
      if (const nlohmann::json& gateway = Field(entry, "Gateway"); gateway.is_string()) {
        gateways.push_back(gateway.get<std::string>());
      }
    }
  }
  const nlohmann::json& bridge = Field(Field(network, "Options"), "com.docker.network.bridge.name");
  return GatewayAddress(gateways, bridge.is_string() ? bridge.get<std::string>() : "");
}

// Asked of the daemon directly when `engine` can (witness_docker_engine.h), else, or when that
// fails (a socket the harness may not open, say), of the docker CLI.
StatusOr<DockerGateway> DockerBridgeGateway(Launcher& launcher, const DockerEngine& engine,
                                            StatusOr<std::chrono::milliseconds> limit) {
  if (!limit.ok()) return limit.status();
  if (engine) {
    if (StatusOr<nlohmann::json> network = engine(kBridgeNetwork, *limit); network.ok()) {
      StatusOr<std::string> ip = GatewayFromEngine(*network);
      if (!ip.ok()) return ip.status();
      return DockerGateway{*ip, fmt::format("docker's API (GET {})", kBridgeNetwork)};
    }
  }
  LaunchSpec spec = HostCommandSpec({"docker", "network", "inspect", "bridge", "--format",
                                     "{{range .IPAM.Config}}{{.Gateway}} {{end}}|"
                                     "{{index .Options \"com.docker.network.bridge.name\"}}"},
                                    *limit);
  StatusOr<LaunchResult> result = launcher.Launch(spec);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return Status::Error(fmt::format("{}: {}: {}", FormatArgv(spec.argv), DescribeExit(*result),
                                     result->err.substr(0, 200)));
  }
  const std::string& out = result->out;
  const std::size_t bar = out.find('|');
  std::vector<std::string> gateways;
  std::istringstream listed(out.substr(0, bar));
  for (std::string gateway; listed >> gateway;) gateways.push_back(gateway);
  std::string bridge = bar == std::string::npos ? "" : out.substr(bar + 1);
  while (!bridge.empty() && (bridge.back() == '\n' || bridge.back() == ' ')) bridge.pop_back();
  StatusOr<std::string> ip = GatewayAddress(gateways, bridge);
  if (!ip.ok()) return ip.status();
  return DockerGateway{*ip, "docker network inspect bridge"};
}

// name -> MAC of every interface of the host (the harness's network namespace).
nlohmann::json HostInterfaces() {
  nlohmann::json out = nlohmann::json::object();
  DIR* dir = ::opendir("/sys/class/net");
  if (dir == nullptr) return out;
  for (int n = 0; n < 256; ++n) {
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) break;
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::ifstream in("/sys/class/net/" + name + "/address");
    std::string mac;
    std::getline(in, mac);
    out[name] = mac;
  }
  ::closedir(dir);
  return out;
}

class NetCanaryWitness final : public RunWitness {
 public:
  NetCanaryWitness(std::unique_ptr<CanaryListeners> listeners, std::string bridge_source,
                   std::string bridge_unavailable, std::string bridge_ip,
                   std::future<StatusOr<DockerGateway>> docker_gateway)
      : listeners_(std::move(listeners)),
        bridge_source_(std::move(bridge_source)),
        bridge_unavailable_(std::move(bridge_unavailable)),
        bridge_ip_(std::move(bridge_ip)),
        docker_gateway_(std::move(docker_gateway)) {}

  std::string name() const override { return "net"; }

  std::map<std::string, std::string> PlanValues() const override {
    std::map<std::string, std::string> values = listeners_->endpoints();
    if (!bridge_unavailable_.empty()) values["bridge_unavailable"] = bridge_unavailable_;
    std::string present;
    for (const std::string& path : RuntimeSocketPaths()) {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
        present += (present.empty() ? "" : ",") + path;
      }
    }
    values["runtime_sockets_on_host"] = present;
    return values;
  }

  nlohmann::json Collect() override {
    std::map<std::string, std::string> endpoints = listeners_->endpoints();
    if (docker_gateway_.valid()) ConfirmBridge(docker_gateway_.get(), endpoints);
    nlohmann::json seen = {{"endpoints", endpoints},
                           {"receipts", ReceiptsToJson(listeners_->Receipts())},
                           {"host_interfaces", HostInterfaces()}};
    if (!bridge_source_.empty()) seen["bridge_source"] = bridge_source_;
    if (!bridge_unavailable_.empty()) seen["bridge_unavailable"] = bridge_unavailable_;
    return seen;
  }

 private:
  // docker0's address was used before docker said what its bridge gateway is. Unless docker
  // names the same address, the bridge endpoints are withdrawn: a container may reach its own
  // gateway but not docker0, so the checks at that site could not say either way (skipped with
  // the reason, as when there is no bridge). Receipts stay: what reached a listener did.
  void ConfirmBridge(const StatusOr<DockerGateway>& gateway, std::map<std::string, std::string>& endpoints) {
    if (gateway.ok() && gateway->ip == bridge_ip_) {
      bridge_source_ += ", confirmed by " + gateway->asked;
      return;
    }
    bridge_unavailable_ = gateway.ok() ? fmt::format("no bridge canary: docker's bridge gateway is {}, not the "
                                                     "address of docker0 ({}) the canaries listened on; set the "
                                                     "profile var canary_bridge_ip",
                                                     gateway->ip, bridge_ip_)
                                       : "no bridge canary: " + gateway.status().message();
    bridge_source_.clear();
    std::erase_if(endpoints, [](const auto& e) { return e.first.rfind("bridge-", 0) == 0; });
  }

  std::unique_ptr<CanaryListeners> listeners_;
  std::string bridge_source_;
  std::string bridge_unavailable_;
  std::string bridge_ip_;
  std::future<StatusOr<DockerGateway>> docker_gateway_;  // valid while docker's answer is pending
};

// The interface docker creates for its default bridge network unless configured otherwise.
constexpr const char* kDockerBridgeInterface = "docker0";

}  // namespace

std::string InterfaceIpv4(const std::string& name) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string ip;
  for (ifaddrs* i = list; i != nullptr && ip.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || name != i->ifa_name) continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    ip = text;
  }
  ::freeifaddrs(list);
  return ip;
}

bool BridgeNeedsDockersAnswer(Backend backend) {
  return backend == Backend::kDocker || backend == Backend::kGvisor;
}

namespace {

StatusOr<std::unique_ptr<RunWitness>> StartNetWitness(const WitnessSetup& setup) {
  std::vector<CanarySite> sites = {{"loopback", "127.0.0.1"}};
  std::string source, unavailable;
  std::string host_bridge = InterfaceIpv4(kDockerBridgeInterface);
  const StatusOr<std::chrono::milliseconds> docker_limit = HostCommandLimit(setup, std::chrono::seconds(10));
  bool confirm_with_docker = false;
  if (auto var = setup.profile.vars.find("canary_bridge_ip"); var != setup.profile.vars.end()) {
    sites.push_back({"bridge", var->second});
    source = "profile var canary_bridge_ip";
  } else if (!host_bridge.empty()) {
    sites.push_back({"bridge", host_bridge});
    source = fmt::format("host interface {}", kDockerBridgeInterface);
    confirm_with_docker = BridgeNeedsDockersAnswer(setup.profile.backend);
  } else if (StatusOr<DockerGateway> gateway = DockerBridgeGateway(setup.launcher, setup.docker_engine, docker_limit);
             gateway.ok()) {
    sites.push_back({"bridge", gateway->ip});
    source = gateway->asked;
  } else {
    unavailable = "no bridge canary: " + gateway.status().message();
  }
  StatusOr<std::unique_ptr<CanaryListeners>> listeners = CanaryListeners::Start(sites);
  if (!listeners.ok() && sites.size() > 1 && source != "profile var canary_bridge_ip") {
    // docker's bridge address is not ours to bind (e.g. a remote daemon): run without it. (An
    // address read from our own interface table is ours, so this is docker's answer.)
    unavailable = "no bridge canary: " + listeners.status().message();
    sites.pop_back();
    source.clear();
    listeners = CanaryListeners::Start(sites);
  }
  if (!listeners.ok()) return listeners.status();
  if (!source.empty()) source += " (" + sites.back().ip + ")";
  std::future<StatusOr<DockerGateway>> docker_gateway;  // asked beside the launches, checked at Collect()
  if (confirm_with_docker && sites.back().name == "bridge") {
    docker_gateway = std::async(std::launch::async, DockerBridgeGateway, std::ref(setup.launcher),
                                setup.docker_engine, docker_limit);
  }
  return std::unique_ptr<RunWitness>(new NetCanaryWitness(std::move(*listeners), source, unavailable,
                                                          sites.back().ip, std::move(docker_gateway)));
}

}  // namespace

std::vector<WitnessRow> NetworkWitnesses() {
  return {{"net", {"net.tcp", "net.udp", "net.dns", "net.unix", "net.ifaces"}, StartNetWitness}};
}

}  // namespace sandprobe
