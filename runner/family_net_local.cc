// net.unix and net.ifaces: what the sandbox can reach without leaving the machine.
//
// net.unix: the well-known runtime sockets (docker, containerd, podman, cri-o) are judged by
// host.runtime_sockets, with the judgement priv.runtime_sockets uses too
// (runtime_socket_judgement.h): connect ok fails a "hidden" promise (critical: a usable
// docker.sock is root on the host); EACCES for a non-root probe fails it at medium (another uid
// or group may use it); EPERM from a seccomp filter or LSM is a denial and passes. Suite
// variants add more socket paths, judged by network.unix_sockets.
// net.ifaces: with no egress allowed, the sandbox should see only "lo"; and with an isolated
// network namespace it must not see the host's own interfaces (same name and MAC address, or
// the host's exact set of names when MACs are not readable).
#include <set>

#include <fmt/format.h>

#include "runner/family_net.h"
#include "runner/runtime_socket_judgement.h"

namespace sandprobe {
namespace {

using nlohmann::json;

bool PresentOnHost(const ExpandInput& in, const std::string& path) {
  auto it = in.context.values.find("net.runtime_sockets_on_host");
  if (it == in.context.values.end()) return false;
  return ("," + it->second + ",").find("," + path + ",") != std::string::npos;
}

Status ExpandUnix(const ExpandInput& in, BatchBuilder& batch) {
  const bool visible = in.policy.host.runtime_sockets == "visible";
  for (const std::string& path : RuntimeSocketPaths()) {
    // "visible" is checked only for sockets the host has: an absent runtime cannot be exposed.
    if (visible && !PresentOnHost(in, path)) continue;
    Check check;
    check.family = "net.unix";
    check.expect = visible ? Expectation::kAllowed : Expectation::kDenied;
    check.id = fmt::format("net.unix.{}:{}", visible ? "visible" : "hidden", path);
    check.severity = visible ? Severity::kLow : Severity::kCritical;
    check.target = check.resolved_target = path;
    check.reference = in.policy.source_path + " /host/runtime_sockets";
    batch.AddArg("net.unix", path);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  const bool allowed = in.policy.network.unix_sockets == "allow";
  for (const std::string& path : in.entry.variants) {
    Check check;
    check.family = "net.unix";
    check.expect = allowed ? Expectation::kAllowed : Expectation::kDenied;
    check.id = fmt::format("net.unix.{}:{}", ExpectationName(check.expect), path);
    check.severity = allowed ? Severity::kMedium : Severity::kHigh;
    check.target = check.resolved_target = path;
    check.reference = in.policy.source_path + " /network/unix_sockets";
    if (path.empty() || path.front() != '/') {
      return Status::Error(fmt::format("{}: net.unix variant is not an absolute path: {}",
                                       in.entry.pointer, path));
    }
    batch.AddArg("net.unix", path);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  return Status::Ok();
}

Verdict JudgeUnix(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const bool allowed = in.check.expect == Expectation::kAllowed;
  v.expected = fmt::format("{} {} inside the sandbox", in.check.target,
                           allowed ? "reachable" : "absent or denied");
  v.remediation = allowed ? fmt::format("mount {} into the sandbox and let connect() through, or "
                                        "declare it hidden", in.check.target)
                          : fmt::format("do not mount {} (or its directory) into the sandbox: a "
                                        "runtime socket is root on the host", in.check.target);
  std::optional<int> index = in.facts.Find("net.unix", in.check.resolved_target);
  if (!index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no fact for this socket";
    return v;
  }
  v.evidence.frame_indexes.push_back(*index);
  const SocketAttempt attempt = ReadSocketAttempt(in.facts.Fact(*index));
  const std::optional<long> euid = ProbeEuid(in.facts);
  const SocketReach reach = ClassifySocket(attempt, euid);
  v.observed = DescribeSocket(attempt, reach, euid);
  if (allowed) {
    Judge(v, reach == SocketReach::kReachable, Direction::kTooRestrictive);
  } else {
    JudgeHiddenSocket(v, reach);
  }
  return v;
}

Status ExpandIfaces(const ExpandInput& in, BatchBuilder& batch) {
  const NetworkPolicy& net = in.policy.network;
  bool any_allowed = net.egress == "allow" || in.policy.host.network_namespace == "shared";
  for (const std::string& entry : net.allow) any_allowed = any_allowed || !entry.empty();
  batch.Invocation("net.ifaces");
  if (!any_allowed) {
    Check check{.id = "net.ifaces.loopback-only", .family = "net.ifaces", .severity = Severity::kLow,
                .expect = Expectation::kDenied, .target = "interfaces other than lo",
                .reference = in.policy.source_path + " /network"};
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  if (in.policy.host.network_namespace != "isolated") return Status::Ok();
  Check check{.id = "net.ifaces.host-netns-hidden", .family = "net.ifaces",
              .severity = Severity::kCritical, .expect = Expectation::kDenied,
              .target = "the host's network interfaces",
              .reference = in.policy.source_path + " /host/network_namespace"};
  return batch.AddCheck(std::move(check));
}

std::set<std::string> Names(const json& summary) {
  std::set<std::string> names;
  for (const char* key : {"proc_names", "sys_names"}) {
    if (summary.contains(key) && summary[key].is_array()) {
      for (const json& n : summary[key]) {
        if (n.is_string()) names.insert(n.get<std::string>());
      }
    }
  }
  return names;
}

// The host interfaces the sandbox shows: same name and MAC, or (no MACs) the host's exact set.
std::vector<std::string> HostInterfacesSeen(const json& summary, const json& host) {
  std::vector<std::string> shared;
  const json macs = summary.value("macs", json::object());
  for (const auto& [name, mac] : macs.items()) {
    if (name != "lo" && host.contains(name) && host[name] == mac && mac != "00:00:00:00:00:00") {
      shared.push_back(fmt::format("{} ({})", name, mac.get<std::string>()));
    }
  }
  if (!shared.empty() || !macs.empty()) return shared;
  std::set<std::string> host_names;
  for (const auto& [name, mac] : host.items()) host_names.insert(name);
  if (host_names.size() > 1 && Names(summary) == host_names) shared.push_back("the host's exact interface set");
  return shared;
}

Verdict JudgeIfaces(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const json* summary = nullptr;
  for (int index : in.facts.OfFamily("net.ifaces")) {
    if (in.facts.Fact(index).value("summary", false)) {
      summary = &in.facts.Fact(index);
      v.evidence.frame_indexes.push_back(index);
    }
  }
  if (summary == nullptr) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no interface list";
    return v;
  }
  const std::set<std::string> names = Names(*summary);
  if (names.empty()) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "neither /proc/net/dev nor /sys/class/net was readable";
    return v;
  }
  const std::string seen = fmt::format("sees {}", fmt::join(names, ", "));
  if (in.check.id == "net.ifaces.loopback-only") {
    v.expected = "only the loopback interface";
    v.remediation = "give the sandbox no network (--network none, bwrap --unshare-net)";
    v.observed = seen;
    Judge(v, names == std::set<std::string>{"lo"}, Direction::kTooPermissive);
    return v;
  }
  const json* net = NetObservations(in, v);
  if (net == nullptr) return v;
  v.expected = "none of the host's own interfaces";
  v.remediation = "give the sandbox its own network namespace (no --network host, no --share-net)";
  std::vector<std::string> shared = HostInterfacesSeen(*summary, net->value("host_interfaces", json::object()));
  v.observed = shared.empty() ? seen + "; none is the host's"
                              : fmt::format("{}; host interfaces: {}", seen, fmt::join(shared, ", "));
  Judge(v, shared.empty(), Direction::kTooPermissive);
  return v;
}

}  // namespace

std::vector<FamilyRow> NetworkLocalFamilies() {
  return {{"net.unix", ExpandUnix, JudgeUnix}, {"net.ifaces", ExpandIfaces, JudgeIfaces}};
}

}  // namespace sandprobe
