// net.unix and net.ifaces: what the sandbox can reach without leaving the machine.
//
// net.unix: the well-known runtime sockets (docker, containerd, podman, cri-o) are judged by
// host.runtime_sockets, with the judgement priv.runtime_sockets uses too
// (runtime_socket_judgement.h): connect ok fails a "hidden" promise (critical: a usable
// docker.sock is root on the host); EACCES from the file's mode for a uid and groups it does not
// admit is a denial and passes, as is EPERM from a seccomp filter or LSM. Every other socket the
// sandbox can see (the probe walks the host's filesystems it holds, given by the host_mounts
// witness, and reads /proc/net/unix) is judged by what it answered: one that answers as a
// container runtime's API (Docker's /_ping with an Api-Version, or gRPC's HTTP/2) fails
// net.unix.runtime-api, wherever it sits. Suite variants add more socket paths, judged by
// network.unix_sockets.
// net.ifaces: judged by what the sandbox's own network namespace shows (netlink, else
// /proc/net/dev): with no egress allowed only "lo"; with an isolated namespace none of the
// host's own interfaces (same name and MAC address as the net witness reads on the host, or
// the host's exact set of names when MACs are not readable). The host's sysfs bound into an
// isolated namespace (bwrap --ro-bind / /) lists the host's interfaces in /sys/class/net
// although the namespace has only lo: a separate, low finding (net.ifaces.host-sysfs-hidden).
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "families/family_net.h"
#include "families/runtime_socket_judgement.h"

namespace sandprobe {
namespace {

using nlohmann::json;

bool PresentOnHost(const ExpandInput& in, const std::string& path) {
  auto it = in.context.values.find("net.runtime_sockets_on_host");
  if (it == in.context.values.end()) return false;
  return ("," + it->second + ",").find("," + path + ",") != std::string::npos;
}

Status ExpandUnix(const ExpandInput& in, BatchBuilder& batch) {
  const bool visible = in.policy.host.runtime_sockets == Visibility::kVisible;
  for (const std::string& path : RuntimeSocketPaths()) {
    // "visible" is checked only for sockets the host has: an absent runtime cannot be exposed.
    if (visible && !PresentOnHost(in, path)) continue;
    Check check;
    check.family = "net.unix";
    check.expect = visible ? Expectation::kAllowed : Expectation::kDenied;
    check.id = fmt::format("net.unix.{}:{}", visible ? "visible" : "hidden", path);
    check.severity = visible ? Severity::kLow : Severity::kCritical;
    check.target = check.resolved_target = path;
    check.reference = in.policy.Ref("/host/runtime_sockets");
    batch.AddArg("net.unix", path);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  if (!visible) {
    Check api{.id = "net.unix.runtime-api", .family = "net.unix", .severity = Severity::kCritical,
              .expect = Expectation::kDenied, .target = "unix sockets answering as a container runtime",
              .reference = in.policy.Ref("/host/runtime_sockets")};
    batch.Invocation("net.unix");
    if (Status s = batch.AddCheck(std::move(api)); !s.ok()) return s;
  }
  const bool allowed = in.policy.network.unix_sockets == Permission::kAllow;
  for (const std::string& path : in.entry.variants) {
    Check check;
    check.family = "net.unix";
    check.expect = allowed ? Expectation::kAllowed : Expectation::kDenied;
    check.id = fmt::format("net.unix.{}:{}", ExpectationName(check.expect), path);
    check.severity = allowed ? Severity::kMedium : Severity::kHigh;
    check.target = check.resolved_target = path;
    check.reference = in.policy.Ref("/network/unix_sockets");
    if (path.empty() || path.front() != '/') {
      return Status::Error(fmt::format("{}: net.unix variant is not an absolute path: {}",
                                       in.entry.pointer, path));
    }
    batch.AddArg("net.unix", path);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  AddWalkDevs(in, batch.Invocation("net.unix"));
  return Status::Ok();
}

// net.unix.runtime-api: every socket of the launch, listed or found, by what it answered.
Verdict JudgeRuntimeApi(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = "no unix socket the sandbox can see answers as a container runtime's API";
  v.remediation = "do not mount a runtime's socket or a directory holding one (-v /var/run:..., "
                  "--bind /run ...) into the sandbox, under any name";
  std::optional<int> summary = in.facts.Find("net.unix", "", "summary");
  if (!summary) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no socket scan (an older probe?)";
    return v;
  }
  v.evidence.frame_indexes.push_back(*summary);
  const SocketCaller caller = ReadSocketCaller(in.facts, "net.unix");
  std::vector<std::string> runtimes, others;
  for (int index : in.facts.OfFamily("net.unix")) {
    const json& f = in.facts.Fact(index);
    if (f.value("variant", "") == "summary") continue;
    const SocketAttempt a = ReadSocketAttempt(f);
    const SocketReach reach = ClassifySocket(a, caller);
    if (reach == SocketReach::kAbsent) continue;
    const std::string where = a.source == "list" ? a.path : fmt::format("{} (found: {})", a.path, a.source);
    if (reach == SocketReach::kReachable && IsRuntimeApi(ClassifyApi(a))) {
      v.evidence.frame_indexes.push_back(index);
      runtimes.push_back(where + ": " + DescribeSocket(a, reach, caller));
    } else {
      others.push_back(where + ": " + DescribeSocket(a, reach, caller));
    }
  }
  const json& s = in.facts.Fact(*summary);
  const json walk = s.value("walk", json::object());
  v.observed = runtimes.empty() ? "no socket answered as a container runtime" : "runtime API reachable: " + JoinSockets(runtimes);
  v.observed += fmt::format("; {} socket(s) found beyond the listed paths (walked {} entries under {} host "
                            "mount(s){}; {} bound paths in /proc/net/unix)",
                            s.value("found", 0), walk.value("entries", 0), walk.value("mounts", 0),
                            walk.value("truncated", false) ? ", cut at the ceiling" : "", s.value("proc_net_unix", 0));
  if (!others.empty()) v.observed += "; other sockets: " + JoinSockets(others);
  Judge(v, runtimes.empty(), Direction::kTooPermissive);
  JudgeRefusedScan(in, "net.unix", s, v);
  return v;
}

Verdict JudgeUnix(const JudgeInput& in) {
  if (in.check.id == "net.unix.runtime-api") return JudgeRuntimeApi(in);
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
  const SocketCaller caller = ReadSocketCaller(in.facts, "net.unix");
  const SocketReach reach = ClassifySocket(attempt, caller);
  v.observed = DescribeSocket(attempt, reach, caller);
  if (allowed) {
    Judge(v, reach == SocketReach::kReachable, Direction::kTooRestrictive);
  } else {
    JudgeHiddenSocket(v, reach);
  }
  return v;
}

Status ExpandIfaces(const ExpandInput& in, BatchBuilder& batch) {
  const NetworkPolicy& net = in.policy.network;
  const bool any_allowed = net.egress == Permission::kAllow || !net.allow.empty() ||
                           in.policy.host.network_namespace == NamespaceSharing::kShared;
  batch.Invocation("net.ifaces");
  if (!any_allowed) {
    Check check{.id = "net.ifaces.loopback-only", .family = "net.ifaces", .severity = Severity::kLow,
                .expect = Expectation::kDenied, .target = "interfaces other than lo",
                .reference = in.policy.Ref("/network")};
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  if (in.policy.host.network_namespace != NamespaceSharing::kIsolated) return Status::Ok();
  Check check{.id = "net.ifaces.host-netns-hidden", .family = "net.ifaces",
              .severity = Severity::kCritical, .expect = Expectation::kDenied,
              .target = "the host's network interfaces",
              .reference = in.policy.Ref("/host/network_namespace")};
  if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  // The host's sysfs seen from an isolated namespace: the host's interface names and MACs
  // (and the rest of its sysfs) leak, read-only. Not the namespace itself: low.
  Check sysfs{.id = "net.ifaces.host-sysfs-hidden", .family = "net.ifaces",
              .severity = Severity::kLow, .expect = Expectation::kDenied,
              .target = "the host's interfaces in /sys/class/net",
              .reference = in.policy.Ref("/host/network_namespace")};
  return batch.AddCheck(std::move(sysfs));
}

// One source of the probe's interface list: the fact's key ("netlink", "proc_net_dev",
// "sys_class_net") and how a verdict names it.
struct IfaceView {
  std::string source;            // "netlink", "/proc/net/dev", "/sys/class/net"
  bool ok = false;
  std::string error;             // "socket: EPERM" when !ok
  std::set<std::string> names;
  std::map<std::string, std::string> macs;  // name -> MAC, where the source has them
};

IfaceView ViewOf(const json& summary, const std::string& key) {
  static const std::map<std::string, std::string> kLabels = {
      {"netlink", "netlink"}, {"proc_net_dev", "/proc/net/dev"}, {"sys_class_net", "/sys/class/net"}};
  IfaceView view{.source = kLabels.at(key)};
  const json source = summary.value(key, json::object());
  view.ok = source.is_object() && source.value("ok", false) == true;
  if (!view.ok) {
    view.error = source.is_object() && source.contains("errno") ? DescribeFailure(source) : "not reported";
    return view;
  }
  for (const json& n : source.value("names", json::array())) {
    if (n.is_string()) view.names.insert(n.get<std::string>());
  }
  const json macs = source.value("macs", json::object());
  for (const auto& [name, mac] : macs.items()) {
    if (mac.is_string()) view.macs[name] = mac.get<std::string>();
  }
  return view;
}

// The namespace's own view: netlink, else /proc/net/dev (both answer for the reader's own
// network namespace; /sys/class/net answers for whoever mounted it). Not ok when neither is.
IfaceView NamespaceView(const json& summary) {
  IfaceView netlink = ViewOf(summary, "netlink");
  if (netlink.ok) return netlink;
  IfaceView proc = ViewOf(summary, "proc_net_dev");
  if (proc.ok) return proc;
  proc.source = "netlink or /proc/net/dev";  // neither answered
  proc.error = fmt::format("netlink: {}; /proc/net/dev: {}", netlink.error, proc.error);
  return proc;
}

// The names of the host's interfaces among `view`: each whose MAC is the host's own for that
// name (never the all-zero MAC of lo); when the view has no MACs, all of them when the view
// holds exactly the host's set of names (a name alone, like eth0, is in every namespace).
std::set<std::string> HostInterfacesIn(const IfaceView& view, const json& host) {
  std::set<std::string> shared;
  for (const auto& [name, mac] : view.macs) {
    if (name != "lo" && mac != "00:00:00:00:00:00" && host.contains(name) && host[name] == mac) {
      shared.insert(name);
    }
  }
  if (!shared.empty() || !view.macs.empty()) return shared;
  std::set<std::string> host_names;
  for (const auto& [name, mac] : host.items()) host_names.insert(name);
  if (host_names.size() > 1 && view.names == host_names) {
    for (const std::string& name : host_names) {
      if (name != "lo") shared.insert(name);
    }
  }
  return shared;
}

// "eth0 (02:42:ac:11:00:02), docker0" with the MAC where the view has it.
std::string WithMacs(const std::set<std::string>& names, const IfaceView& view) {
  std::vector<std::string> items;
  for (const std::string& name : names) {
    auto mac = view.macs.find(name);
    items.push_back(mac == view.macs.end() ? name : fmt::format("{} ({})", name, mac->second));
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

std::string Sees(const IfaceView& view) {
  return fmt::format("{} shows {}", view.source, fmt::join(view.names, ", "));
}

void JudgeSysfs(Verdict& v, const IfaceView& ns, const IfaceView& sys, const json& host) {
  v.expected = "/sys/class/net shows none of the host's interfaces beyond the namespace's own";
  v.remediation = "mount a fresh sysfs (or none): bwrap without --ro-bind / / (or --ro-bind "
                  "only what is needed), docker's default /sys";
  if (!sys.ok) {
    v.observed = "no host sysfs: " + sys.source + " " + sys.error;
    Judge(v, true, Direction::kTooPermissive);
    return;
  }
  // What the namespace itself shows is judged by host-netns-hidden; here only what sysfs adds.
  const std::set<std::string> in_ns = HostInterfacesIn(ns, host);
  std::set<std::string> leaked;
  for (const std::string& name : HostInterfacesIn(sys, host)) {
    if (!in_ns.count(name)) leaked.insert(name);
  }
  v.observed = fmt::format("{}; {}", Sees(sys), Sees(ns));
  if (!leaked.empty()) {
    v.observed += "; the host's own interfaces only in sysfs: " + WithMacs(leaked, sys);
  }
  Judge(v, leaked.empty(), Direction::kTooPermissive);
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
  const IfaceView ns = NamespaceView(*summary);
  if (!ns.ok) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the namespace's own interface list is unknown: " + ns.error;
    return v;
  }
  if (in.check.id == "net.ifaces.loopback-only") {
    v.expected = "only the loopback interface";
    v.remediation = "give the sandbox no network (--network none, bwrap --unshare-net)";
    v.observed = Sees(ns);
    Judge(v, ns.names == std::set<std::string>{"lo"}, Direction::kTooPermissive);
    return v;
  }
  const json* net = NetObservations(in, v);
  if (net == nullptr) return v;
  const json host = net->value("host_interfaces", json::object());
  if (in.check.id == "net.ifaces.host-sysfs-hidden") {
    JudgeSysfs(v, ns, ViewOf(*summary, "sys_class_net"), host);
    return v;
  }
  v.expected = "none of the host's own interfaces";
  v.remediation = "give the sandbox its own network namespace (no --network host, no --share-net)";
  const std::set<std::string> shared = HostInterfacesIn(ns, host);
  v.observed = shared.empty() ? Sees(ns) + "; none is the host's"
                              : fmt::format("{}; host interfaces: {}", Sees(ns), WithMacs(shared, ns));
  Judge(v, shared.empty(), Direction::kTooPermissive);
  return v;
}

}  // namespace

std::vector<FamilyRow> NetworkLocalFamilies() {
  return {{.name = "net.unix", .expand = ExpandUnix, .judge = JudgeUnix,
           .variants = {VariantKind::kAbsolutePaths, {}}},
          {"net.ifaces", ExpandIfaces, JudgeIfaces}};
}

}  // namespace sandprobe
