// DockerLabGateway: how daemon-run containers (docker, gVisor through docker) join a run's egress
// lab (issue 28, profile "lab": "docker-gateway"). A container's network namespace is made by
// the daemon, not by the launcher's child, so the harness cannot hand it one (launch/launcher.h
// LabJoin). Instead it starts one long-lived container per run, the gateway, pod style:
//
//   docker run -d --network none --dns 203.0.113.53 --dns 2001:db8:53::53 ... sleep N
//
// then puts the sandbox end of a veth pair to the lab into that container's namespace
// (/proc/PID/ns/net) and addresses and routes it as any sandbox namespace (lab/lab_sandbox_netns.h).
// Probe containers run with `--network container:ID` ({lab_network}): they share the gateway's
// namespace, its loopback and veth only, and its /etc/resolv.conf, the lab's resolvers (with
// --runtime runsc too). Nothing else is in that namespace: no route leads anywhere but the lab.
//
// The gateway carries the run's label (sandprobe.run=RUN_ID) and a role label, so a dead run's
// sweep finds it (LabGatewaySweeps, recorded with the profile's sweeps before any launch); the
// run itself removes it by id when the lab goes.
//
// Rootful podman profiles ("backend": "podman") use the same gateway through podman's
// docker-compatible CLI; what differs is one LabGatewayEngine row (LabGatewayEngineFor).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "launch/deadline.h"
#include "launch/launcher.h"
#include "launch/run_registry.h"
#include "model/policy_enums.h"
#include "model/status.h"

namespace sandprobe {

// How the gateway's container engine is driven: one row per backend, no if-chain on names.
struct LabGatewayEngine {
  // The argv every command starts with: {"docker"}, or podman with the global flags its
  // profiles pass (sandboxes/podman-hardened.json says why each).
  std::vector<std::string> command;
  // The gateway's `run` may say --dns beside --network none. Podman refuses it ("conflicting
  // options: dns and the network mode: none") and gives a --network container:ID container an
  // empty resolv.conf: its profiles bind {lab_resolv_conf} over /etc/resolv.conf instead.
  bool dns_without_network = true;
  std::vector<std::string> run_options;   // more `run` flags, before the image
  std::vector<std::string> force_remove;  // after `command`: remove a running container now
  // It can make the run's --internal network ("lab_gateway": {"internal_network": true}).
  bool internal_network = true;
};

// The row for a container backend (docker, gvisor: docker's; podman: podman's). Any other
// backend gets docker's: the profile loader lets only container backends say "docker-gateway".
const LabGatewayEngine& LabGatewayEngineFor(Backend backend);

class DockerLabGateway {
 public:
  // Starts the gateway of run `run_id` and reads its init's pid. Each docker command is bounded
  // by kCommandLimit and what is left of `deadline`. Errors name the command and its output.
  // `internal_network`: first a docker --internal network for the run (one of
  // LabInternalSubnets(run_id), the first the daemon does not refuse as overlapping another
  // network), and the gateway on it at that subnet's gateway_address instead of with no
  // network (profile "lab_gateway").
  // `engine`: which CLI starts and removes it (LabGatewayEngineFor(profile.backend)).
  static StatusOr<std::unique_ptr<DockerLabGateway>> Start(Launcher& launcher, const std::string& run_id,
                                                           const Deadline& deadline, bool internal_network = false,
                                                           const LabGatewayEngine& engine =
                                                               LabGatewayEngineFor(Backend::kDocker));
  ~DockerLabGateway();  // Remove(), when not done yet
  DockerLabGateway(const DockerLabGateway&) = delete;
  DockerLabGateway& operator=(const DockerLabGateway&) = delete;

  const std::string& id() const { return id_; }  // the full container id
  int pid() const { return pid_; }               // its init, in the host's pid namespace
  // "/proc/PID/ns/net": the namespace the veth end goes into (open it while the container runs).
  std::string NetworkNamespacePath() const;
  // The internal network's name ("sp-RUN_ID-lab"), "" without one.
  const std::string& internal_network() const { return network_name_; }
  // The gateway's address on the internal network ("203.0.113.130"), "" without one.
  const std::string& internal_address() const { return network_address_; }
  // The name of the veth end in its namespace: "eth0", or "sp-lab" where docker's eth0 is.
  std::string LabLinkName() const { return network_name_.empty() ? "eth0" : "sp-lab"; }
  // `docker rm -f ID` then `docker network rm NETWORK`, once: "removed", or what went wrong
  // ("docker rm -f ID: exit 1: ...").
  std::string Remove();

  static constexpr std::chrono::milliseconds kCommandLimit{30000};
  static constexpr const char* kImage = "sandprobe/agent:latest";  // its busybox sleep
  static constexpr const char* kRoleLabel = "sandprobe.role=lab-gateway";

 private:
  DockerLabGateway(Launcher& launcher, const Deadline& deadline, std::string id, const LabGatewayEngine& engine)
      : launcher_(launcher), deadline_(deadline), id_(std::move(id)), engine_(engine) {}
  Launcher& launcher_;
  Deadline deadline_;  // the run's (copies share its removal window)
  std::string id_;
  const LabGatewayEngine& engine_;  // a row of LabGatewayEngineFor's table
  std::string network_id_, network_name_, network_address_;  // the internal network, when there is one
  int pid_ = 0;
  std::string removed_;  // Remove()'s answer, once it ran
};

// A subnet for a run's internal network, and the gateway's address in it (the subnet's second
// host: docker takes the first for the network's gateway on the host).
struct LabInternalSubnet {
  std::string cidr;     // "203.0.113.128/28"
  std::string gateway_address;  // "203.0.113.130"
};

// The subnets run `run_id` tries for its internal network, in order: the twelve /28s of
// 203.0.113.64/26 and 203.0.113.128/25, inside the lab's 203.0.113.0/24 (a documentation range,
// so the probe may use a proxy there) but clear of the lab's own addresses there (.1, .2, .53),
// starting at one chosen by the run id, so that runs at once on one daemon start apart and each
// moves on when docker says its subnet overlaps another network's ("Pool overlaps").
std::vector<LabInternalSubnet> LabInternalSubnets(const std::string& run_id);

// The gateway's `docker run` argv for run `run_id`, whose container sleeps `sleep_seconds` at
// most (it ends by itself if nothing removes it; a sweep still finds the stopped container).
// `internal_network`: the network's name (it then runs there at `internal_address`), "" for none.
std::vector<std::string> LabGatewayRunArgv(const std::string& run_id, long long sleep_seconds,
                                           const std::string& internal_network = "",
                                           const std::string& internal_address = "",
                                           const LabGatewayEngine& engine = LabGatewayEngineFor(Backend::kDocker));

// What `sandprobe sweep` runs for a dead run's gateway: its container, then its internal
// network, each listed by the run's and the role's labels and removed by id.
std::vector<RecordedSweep> LabGatewaySweeps(const std::string& run_id,
                                            const LabGatewayEngine& engine = LabGatewayEngineFor(Backend::kDocker));

}  // namespace sandprobe
