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
// sweep finds it (LabGatewaySweep, recorded with the profile's sweeps before any launch); the
// run itself removes it by id when the lab goes.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "launch/deadline.h"
#include "launch/launcher.h"
#include "launch/run_registry.h"
#include "model/status.h"

namespace sandprobe {

class DockerLabGateway {
 public:
  // Starts the gateway of run `run_id` and reads its init's pid. Each docker command is bounded
  // by kCommandLimit and what is left of `deadline`. Errors name the command and its output.
  static StatusOr<std::unique_ptr<DockerLabGateway>> Start(Launcher& launcher, const std::string& run_id,
                                                           const Deadline& deadline);
  ~DockerLabGateway();  // Remove(), when not done yet
  DockerLabGateway(const DockerLabGateway&) = delete;
  DockerLabGateway& operator=(const DockerLabGateway&) = delete;

  const std::string& id() const { return id_; }  // the full container id
  int pid() const { return pid_; }               // its init, in the host's pid namespace
  // "/proc/PID/ns/net": the namespace the veth end goes into (open it while the container runs).
  std::string NetworkNamespacePath() const;
  // `docker rm -f ID`, once: "removed", or what went wrong ("docker rm -f ID: exit 1: ...").
  std::string Remove();

  static constexpr std::chrono::milliseconds kCommandLimit{30000};
  static constexpr const char* kImage = "sandprobe/agent:latest";  // its busybox sleep
  static constexpr const char* kRoleLabel = "sandprobe.role=lab-gateway";

 private:
  DockerLabGateway(Launcher& launcher, const Deadline& deadline, std::string id)
      : launcher_(launcher), deadline_(deadline), id_(std::move(id)) {}
  Launcher& launcher_;
  Deadline deadline_;  // the run's (copies share its removal window)
  std::string id_;
  int pid_ = 0;
  std::string removed_;  // Remove()'s answer, once it ran
};

// The gateway's `docker run` argv for run `run_id`, whose container sleeps `sleep_seconds` at
// most (it ends by itself if nothing removes it; a sweep still finds the stopped container).
std::vector<std::string> LabGatewayRunArgv(const std::string& run_id, long long sleep_seconds);

// What `sandprobe sweep` runs for a dead run's gateway: list by the run's and the role's
// labels, remove by id.
RecordedSweep LabGatewaySweep(const std::string& run_id);

}  // namespace sandprobe
