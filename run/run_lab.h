// RunLab: the egress lab of one run (issue 28), with a witness's lifetime: started before the
// plan (the planner reads its names from PlanValues), joined by every probe launch (Sandbox:
// LaunchSpec::lab_join), and read after the last launch (Collect: every DNS question and sink
// connection it received, and the links of its namespaces). The judges of net.lab and
// net.bypass (families/family_net_lab.cc, family_net_bypass.cc) decide by these receipts,
// never by the probe's word.
//
// A run has a lab exactly when the profile has a "lab" mode, whatever the suite and policy:
// such a profile's argv assumes it runs inside the lab (bwrap-lab's --share-net would otherwise
// share the host's network), so no probe launch of it may run outside. A policy naming no host
// gets a lab with only the unrelated control names (every egress to them refused).
//
// How the sandbox side is made, by the profile's LabMode:
//   join            a new namespace joined to the lab, entered by the launcher's child (join());
//   docker-gateway  a docker lab gateway's namespace (run/run_lab_gateway.h) joined to the lab;
//                   the profile's containers reach it through scalars(): {lab_network}
//                   ("container:ID"), {lab_dns} (the lab's IPv4 resolver) and {lab_resolv_conf}
//                   (RUN_DIR/lab-resolv.conf, the lab's resolvers); with the profile's
//                   lab_gateway.internal_network also {lab_internal_network} and {lab_gateway_ip}.
//                   The profile's lab_gateway.services start right after the gateway.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lab/lab.h"
#include "lab/lab_sandbox_netns.h"
#include "launch/launcher.h"
#include "load/policy.h"
#include "load/profile.h"
#include "run/run_lab_gateway.h"
#include "witnesses/witness.h"

namespace sandprobe {

// The part of a run's lab that needs only the policy and the profile: its names, its namespace
// and (lab "join") the sandbox's namespace joined to it. Begun on a thread of its own as soon as
// the run has loaded its inputs, so that the kernel's work (two namespaces, a veth pair, some 30
// addresses, their IPv6 routes) runs beside the run dir, the witnesses and the plan instead of
// before the first launch; RunLab::StartIfNeeded takes it over and waits for it there.
class RunLabStart {
 public:
  // Nothing is begun for a profile that joins no lab.
  static RunLabStart Begin(const Policy& policy, const Profile& profile);
  RunLabStart() = default;  // not begun: StartIfNeeded does it all itself

 private:
  friend class RunLab;
  struct Namespaces {
    std::unique_ptr<Lab> lab;
    std::optional<SandboxNetns> sandbox;  // lab "join" only
  };
  static StatusOr<Namespaces> Make(const Policy& policy, const Profile& profile);
  std::future<StatusOr<Namespaces>> namespaces_;  // waited for (joined) when dropped, too
};

class RunLab final : public RunWitness {
 public:
  // The lab this run needs, or null (and ok) when the profile does not join one; `start`: its
  // namespaces, when begun already (RunLabStart::Begin with the same policy and profile). Its
  // resolv.conf and hosts files are written under `run_dir`. Errors name the step (no
  // CAP_SYS_ADMIN: "unshare(CLONE_NEWNET): EPERM").
  // `launcher` and `deadline` (the run's; both outlive this object) start and remove a docker
  // gateway.
  static StatusOr<std::unique_ptr<RunLab>> StartIfNeeded(RunLabStart start, const Policy& policy,
                                                         const Profile& profile,
                                                         const std::string& run_dir, const std::string& run_id,
                                                         Launcher& launcher, const Deadline& deadline);
  ~RunLab() override;  // a docker gateway is removed (by id) before the lab goes

  std::string name() const override { return "lab"; }
  // "allowed" and "controls": the lab's names of each kind, comma-separated; "denied_name",
  // "denied_v4", "denied_v6": net.bypass's denied destination (the first unrelated control).
  std::map<std::string, std::string> PlanValues() const override;
  // Also removes a docker gateway (after reading its links) and says how that went.
  nlohmann::json Collect() override;
  // What a probe launch joining the lab hands the launcher ("join"); valid while this object
  // lives. Unset for a docker gateway: the daemon starts those containers.
  const std::optional<LabJoin>& join() const { return join_; }
  // Placeholders the profile's argvs may use ("docker-gateway": lab_network, lab_dns).
  const std::map<std::string, std::string>& scalars() const { return scalars_; }

 private:
  RunLab(std::unique_ptr<Lab> lab, SandboxNetns sandbox) : lab_(std::move(lab)), sandbox_(std::move(sandbox)) {}
  static StatusOr<std::unique_ptr<RunLab>> JoinedByTheLauncher(std::unique_ptr<Lab> lab, SandboxNetns sandbox,
                                                               const std::string& run_dir);
  static StatusOr<std::unique_ptr<RunLab>> JoinedByADockerGateway(std::unique_ptr<Lab> lab, const Profile& profile,
                                                                  const std::string& run_dir, const std::string& run_id,
                                                                  Launcher& launcher, const Deadline& deadline);
  // The profile's lab_gateway services, in order, once the gateway is joined.
  Status StartServices(const Profile& profile, const std::string& run_id, Launcher& launcher, const Deadline& deadline);
  // The gateway's container id and its removal (done here), null without one.
  nlohmann::json GatewayJson();
  // Declared so that the gateway goes first, then the sandbox's namespace, then the lab.
  std::unique_ptr<Lab> lab_;
  SandboxNetns sandbox_;
  std::unique_ptr<DockerLabGateway> gateway_;
  std::optional<LabJoin> join_;
  std::map<std::string, std::string> scalars_;
};

// The receipts as the report keeps them (and the judges read them).
nlohmann::json DnsReceiptsJson(const std::vector<DnsReceipt>& receipts);
nlohmann::json SinkReceiptsJson(const std::vector<SinkReceipt>& receipts);

}  // namespace sandprobe
