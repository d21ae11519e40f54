// RunLab: the egress lab of one run (issue 28), with a witness's lifetime: started before the
// plan (the planner reads its names from PlanValues), joined by every probe launch (Sandbox:
// LaunchSpec::lab_join), and read after the last launch (Collect: every DNS question and sink
// connection it received, and the links of its namespaces). The judges of net.lab and
// net.bypass (families/family_net_lab.cc, family_net_bypass.cc) decide by these receipts,
// never by the probe's word.
//
// A run has a lab exactly when the profile says "lab": "join", whatever the suite and policy:
// such a profile's argv assumes it runs inside the lab (bwrap-lab's --share-net would otherwise
// share the host's network), so no probe launch of it may run outside. A policy naming no host
// gets a lab with only the unrelated control names (every egress to them refused).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "lab/lab.h"
#include "lab/lab_sandbox_netns.h"
#include "launch/launcher.h"
#include "load/policy.h"
#include "load/profile.h"
#include "witnesses/witness.h"

namespace sandprobe {

class RunLab final : public RunWitness {
 public:
  // The lab this run needs, or null (and ok) when the profile does not join one. Its resolv.conf
  // and hosts files are written under `run_dir`. Errors name the step (no CAP_SYS_ADMIN:
  // "unshare(CLONE_NEWNET): EPERM").
  static StatusOr<std::unique_ptr<RunLab>> StartIfNeeded(const Policy& policy, const Profile& profile,
                                                         const std::string& run_dir);

  std::string name() const override { return "lab"; }
  // "allowed" and "controls": the lab's names of each kind, comma-separated; "denied_name",
  // "denied_v4", "denied_v6": net.bypass's denied destination (the first unrelated control).
  std::map<std::string, std::string> PlanValues() const override;
  nlohmann::json Collect() override;
  // What a probe launch joining the lab hands the launcher; valid while this object lives.
  const LabJoin& join() const { return join_; }

 private:
  RunLab(std::unique_ptr<Lab> lab, SandboxNetns sandbox, LabJoin join)
      : lab_(std::move(lab)), sandbox_(std::move(sandbox)), join_(std::move(join)) {}
  std::unique_ptr<Lab> lab_;
  SandboxNetns sandbox_;
  LabJoin join_;
};

// The receipts as the report keeps them (and the judges read them).
nlohmann::json DnsReceiptsJson(const std::vector<DnsReceipt>& receipts);
nlohmann::json SinkReceiptsJson(const std::vector<SinkReceipt>& receipts);

}  // namespace sandprobe
