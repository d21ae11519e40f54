#include "run/run_lab.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "load/placeholders.h"

namespace sandprobe {
namespace {

StatusOr<std::string> WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::HarnessError(fmt::format("write {}: failed", path.string()));
  return path.string();
}

// RUN_DIR/lab-NAME with `text`; its path. In the run dir itself, not a directory of their own:
// removing a directory costs milliseconds on a disk mounted with discard (rmdir of an empty
// directory: 3.8 ms median on this machine's ext4, a file 0.01 ms), and the run dir is removed
// at the end of every run.
StatusOr<std::string> WriteLabFile(const std::string& run_dir, const std::string& name, const std::string& text) {
  return WriteFile(std::filesystem::path(run_dir) / ("lab-" + name), text);
}

nlohmann::json LinksIn(const LabNamespace& netns) {
  StatusOr<std::vector<std::string>> links = netns.LinkNames();
  if (!links.ok()) return links.status().message();
  return *links;
}

}  // namespace

RunLabStart RunLabStart::Begin(const Policy& policy, const Profile& profile) {
  RunLabStart start;
  if (profile.lab == LabMode::kNone) return start;
  // By reference: the run keeps its policy and profile until it has taken the result over.
  start.namespaces_ = std::async(std::launch::async, [&policy, &profile] { return Make(policy, profile); });
  return start;
}

StatusOr<RunLabStart::Namespaces> RunLabStart::Make(const Policy& policy, const Profile& profile) {
  StatusOr<LabNames> names = MakeLabNames(policy.network.allow);
  if (!names.ok()) return names.status().WithContext(policy.source_path);
  StatusOr<std::unique_ptr<Lab>> lab = Lab::Start(std::move(*names));
  if (!lab.ok()) return lab.status().WithContext("egress lab").AsHarnessError();
  Namespaces made{std::move(*lab), std::nullopt};
  switch (profile.lab) {
    case LabMode::kNone:
    case LabMode::kDockerGateway:  // joined by the gateway's namespace, once the gateway runs
      break;
    case LabMode::kJoin: {
      StatusOr<SandboxNetns> sandbox = SandboxNetns::Create(made.lab->network_namespace());
      if (!sandbox.ok()) return sandbox.status().WithContext("egress lab").AsHarnessError();
      made.sandbox.emplace(std::move(*sandbox));
      break;
    }
  }
  return made;
}

StatusOr<std::unique_ptr<RunLab>> RunLab::StartIfNeeded(RunLabStart start, const Policy& policy,
                                                        const Profile& profile, const std::string& run_dir,
                                                        const std::string& run_id, Launcher& launcher,
                                                        const Deadline& deadline) {
  if (profile.lab == LabMode::kNone) return std::unique_ptr<RunLab>();
  if (!start.namespaces_.valid()) start = RunLabStart::Begin(policy, profile);
  StatusOr<RunLabStart::Namespaces> made = start.namespaces_.get();
  if (!made.ok()) return made.status();
  switch (profile.lab) {
    case LabMode::kNone:
      break;
    case LabMode::kJoin:
      return JoinedByTheLauncher(std::move(made->lab), std::move(*made->sandbox), run_dir);
    case LabMode::kDockerGateway:
      return JoinedByADockerGateway(std::move(made->lab), profile, run_dir, run_id, launcher, deadline);
  }
  return std::unique_ptr<RunLab>();
}

StatusOr<std::unique_ptr<RunLab>> RunLab::JoinedByTheLauncher(std::unique_ptr<Lab> lab, SandboxNetns sandbox,
                                                              const std::string& run_dir) {
  StatusOr<std::string> resolv = WriteLabFile(run_dir, "resolv.conf", LabResolvConf());
  if (!resolv.ok()) return resolv.status();
  StatusOr<std::string> hosts = WriteLabFile(run_dir, "hosts", LabHostsFile());
  if (!hosts.ok()) return hosts.status();
  std::unique_ptr<RunLab> run_lab(new RunLab(std::move(lab), std::move(sandbox)));
  run_lab->join_ = LabJoin{run_lab->sandbox_.network_namespace().fd(), *resolv, *hosts};
  return run_lab;
}

StatusOr<std::unique_ptr<RunLab>> RunLab::JoinedByADockerGateway(std::unique_ptr<Lab> lab, const Profile& profile,
                                                                 const std::string& run_dir, const std::string& run_id,
                                                                 Launcher& launcher, const Deadline& deadline) {
  StatusOr<std::string> resolv = WriteLabFile(run_dir, "resolv.conf", LabResolvConf());
  if (!resolv.ok()) return resolv.status();
  StatusOr<std::unique_ptr<DockerLabGateway>> gateway =
      DockerLabGateway::Start(launcher, run_id, deadline, profile.lab_gateway.internal_network,
                              LabGatewayEngineFor(profile.backend));
  if (!gateway.ok()) return gateway.status().WithContext("egress lab").AsHarnessError();
  const std::string where = "egress lab: lab gateway " + (*gateway)->id();
  // Held by our own descriptor from here on: the veth pair lives as long as this object.
  StatusOr<LabNamespace> netns = LabNamespace::Open((*gateway)->NetworkNamespacePath());
  if (!netns.ok()) return netns.status().WithContext(where).AsHarnessError();
  StatusOr<SandboxNetns> sandbox =
      SandboxNetns::Join(lab->network_namespace(), std::move(*netns), (*gateway)->LabLinkName());
  if (!sandbox.ok()) return sandbox.status().WithContext(where).AsHarnessError();
  std::unique_ptr<RunLab> run_lab(new RunLab(std::move(lab), std::move(*sandbox)));
  run_lab->scalars_ = {{"lab_network", "container:" + (*gateway)->id()},
                       {"lab_dns", LabResolverV4().Text()},
                       {"lab_resolv_conf", *resolv}};
  if (!(*gateway)->internal_network().empty()) {
    run_lab->scalars_["lab_internal_network"] = (*gateway)->internal_network();
    run_lab->scalars_["lab_gateway_ip"] = (*gateway)->internal_address();
  }
  run_lab->gateway_ = std::move(*gateway);
  if (Status s = run_lab->StartServices(profile, run_id, launcher, deadline); !s.ok()) return s.WithContext(where);
  return run_lab;
}

Status RunLab::StartServices(const Profile& profile, const std::string& run_id, Launcher& launcher,
                             const Deadline& deadline) {
  std::map<std::string, std::string> scalars(profile.vars.begin(), profile.vars.end());
  scalars["run_id"] = run_id;
  scalars.insert(scalars_.begin(), scalars_.end());
  for (const std::vector<std::string>& service : profile.lab_gateway.services) {
    StatusOr<std::vector<std::string>> argv = ExpandArgv(service, PlaceholderValues{scalars, {}});
    if (!argv.ok()) return argv.status().WithContext(profile.source_path + ": lab_gateway service").AsHarnessError();
    const Deadline::Bound bound = deadline.For(DockerLabGateway::kCommandLimit);
    if (bound.nothing_left()) return Status::HarnessError(FormatArgv(*argv) + ": not started: the run's deadline had passed");
    LaunchSpec spec;
    spec.argv = *argv;
    spec.timeout = bound.limit;
    StatusOr<LaunchResult> r = launcher.Launch(spec);
    if (!r.ok()) return r.status().WithContext(FormatArgv(*argv)).AsHarnessError();
    if (r->exit_code != 0) {
      return Status::HarnessError(fmt::format("{}: {}: {}", FormatArgv(*argv), DescribeExit(*r), r->err.substr(0, 400)));
    }
  }
  return Status::Ok();
}

RunLab::~RunLab() = default;

std::map<std::string, std::string> RunLab::PlanValues() const {
  std::string allowed, controls;
  for (const LabName& name : lab_->names().names) {
    if (name.kind == LabNameKind::kRebindTarget) continue;  // net.bypass's rebinding only
    std::string& list = name.kind == LabNameKind::kAllowed ? allowed : controls;
    list += (list.empty() ? "" : ",") + name.name;
  }
  std::map<std::string, std::string> values = {{"allowed", allowed}, {"controls", controls}};
  // net.bypass's denied destination: the first control unlike any allowed name.
  for (const LabName& name : lab_->names().names) {
    if (name.kind != LabNameKind::kUnrelated) continue;
    values["denied_name"] = name.name;
    values["denied_v4"] = name.v4.Text();
    values["denied_v6"] = name.v6.Text();
    break;
  }
  return values;
}

nlohmann::json RunLab::Collect() {
  nlohmann::json names = nlohmann::json::array();
  for (const LabName& name : lab_->names().names) {
    names.push_back({{"name", name.name}, {"kind", LabNameKindName(name.kind)}, {"based_on", name.based_on},
                     {"v4", name.v4.Text()}, {"v6", name.v6.Text()}});
  }
  return {{"names", names},
          {"resolver", {LabResolverV4().Text(), LabResolverV6().Text()}},
          {"sandbox_addresses", {SandboxAddressV4().Text(), SandboxAddressV6().Text()}},
          {"dns_receipts", DnsReceiptsJson(lab_->DnsReceipts())},
          {"sink_receipts", SinkReceiptsJson(lab_->SinkReceipts())},
          // Where a packet could leave: the lab's links and the sandbox's (nothing but loopback
          // and the veth pair between them means nothing reached the host's network).
          {"lab_links", LinksIn(lab_->network_namespace())},
          {"sandbox_links", LinksIn(sandbox_.network_namespace())},
          {"gateway", GatewayJson()}};
}

nlohmann::json RunLab::GatewayJson() {
  if (!gateway_) return nullptr;
  return {{"container", gateway_->id()}, {"removal", gateway_->Remove()}};
}

nlohmann::json DnsReceiptsJson(const std::vector<DnsReceipt>& receipts) {
  nlohmann::json out = nlohmann::json::array();
  for (const DnsReceipt& r : receipts) {
    out.push_back({{"name", r.name}, {"type", r.type}, {"peer", r.peer}, {"transport", r.transport},
                   {"rcode", r.rcode}, {"answer", r.answer}});
  }
  return out;
}

nlohmann::json SinkReceiptsJson(const std::vector<SinkReceipt>& receipts) {
  nlohmann::json out = nlohmann::json::array();
  for (const SinkReceipt& r : receipts) {
    out.push_back({{"peer", r.peer}, {"local", r.local}, {"port", r.port},
                   {"protocol", SinkProtocolName(r.protocol)}, {"http_method", r.http_method},
                   {"http_host", r.http_host}, {"http_target", r.http_target},
                   {"connect_target", r.connect_target}, {"tls_sni", r.tls_sni},
                   {"tls_handshake_done", r.tls_handshake_done}, {"first_bytes", r.first_bytes}});
  }
  return out;
}

}  // namespace sandprobe
