// net.tcp, net.udp, net.dns: egress judged by receipt. A check fails as too-permissive only
// when a canary logged this launch's nonce: the one the harness generated (BatchResult::nonce),
// never one a fact names, so a sandbox that delivers the nonce and reports another cannot pass.
// The probe's own "connected"/"sent" without a receipt is reported as observed text, never as a
// leak. Both directions: an endpoint the policy allows that got nothing fails as too-restrictive.
#include <algorithm>

#include <fmt/format.h>

#include "contract/protocol.h"
#include "families/family_net.h"

namespace sandprobe {
namespace {

using nlohmann::json;

const char* kSites[] = {"loopback", "bridge"};

// The index of the canary endpoint's entry in network.allow, or nullopt.
std::optional<std::size_t> ListedAt(const Policy& policy, const std::string& endpoint) {
  const auto& allow = policy.network.allow;
  for (std::size_t i = 0; i < allow.size(); ++i) {
    if (allow[i].kind == AllowKind::kCanary && allow[i].host == endpoint) return i;
  }
  return std::nullopt;
}

// See family_net.h for what each site stands for.
bool EgressAllowed(const Policy& policy, const std::string& site, const std::string& endpoint) {
  if (ListedAt(policy, endpoint)) return true;
  // The host's loopback is reached by sharing its network namespace, unless the policy also
  // writes egress "deny": that explicit field decides (load/policy.h, PolicyContradiction).
  if (site == "loopback") {
    return policy.host.network_namespace == NamespaceSharing::kShared &&
           !(policy.network.egress_written && policy.network.egress == Permission::kDeny);
  }
  return policy.network.egress == Permission::kAllow;
}

PolicyRef EgressReference(const Policy& policy, const std::string& endpoint) {
  if (std::optional<std::size_t> at = ListedAt(policy, endpoint)) {
    return policy.Ref(fmt::format("/network/allow/{}", *at));
  }
  return policy.Ref("/network/egress");
}

// Allow entries that are not canaries, and a declared proxy, are never contacted (sandprobe
// sends traffic only to its own canaries): each is one skipped check saying so, never a pass.
Status AddUntested(const ExpandInput& in, BatchBuilder& batch, const std::string& family) {
  const auto& allow = in.policy.network.allow;
  // In a run with an egress lab, net.lab judges the host names (family_net_lab.cc).
  const bool lab = in.context.values.count("lab.allowed") > 0;
  for (std::size_t i = 0; i < allow.size(); ++i) {
    if (allow[i].kind == AllowKind::kCanary) continue;
    if (lab && (allow[i].kind == AllowKind::kName || allow[i].kind == AllowKind::kWildcard)) continue;
    Check check;
    check.family = family;
    check.expect = Expectation::kAllowed;
    check.id = "net.allow.untested:" + allow[i].text;
    check.severity = Severity::kInfo;
    check.target = allow[i].text;
    check.variant = "untested";
    check.reference = in.policy.Ref(fmt::format("/network/allow/{}", i));
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  const NetworkProxy& proxy = in.policy.network.proxy;
  // In a lab, net.lab and net.bypass send through the declared proxy (AddLabProxy): judged there.
  if (proxy.source == ProxySource::kNone || lab) return Status::Ok();
  Check check;
  check.family = family;
  check.expect = Expectation::kAllowed;
  check.id = "net.proxy.untested";
  check.severity = Severity::kInfo;
  check.target = ProxyText(proxy);
  check.variant = "untested";
  check.reference = in.policy.Ref("/network/proxy");
  return batch.AddCheck(std::move(check));
}

Status ExpandEgress(const ExpandInput& in, BatchBuilder& batch, const std::string& proto) {
  const std::string family = "net." + proto;
  for (const char* site : kSites) {
    const std::string endpoint = fmt::format("{}-{}", site, proto);
    const bool allowed = EgressAllowed(in.policy, site, endpoint);
    Check check;
    check.family = family;
    check.expect = allowed ? Expectation::kAllowed : Expectation::kDenied;
    check.id = fmt::format("{}.{}:{}", family, ExpectationName(check.expect), site);
    check.severity = allowed ? Severity::kMedium : Severity::kHigh;
    check.target = endpoint;
    check.resolved_target = site;
    check.reference = EgressReference(in.policy, endpoint);
    auto addr = in.context.values.find("net." + endpoint);
    if (addr != in.context.values.end()) batch.AddArg(family, fmt::format("{}={}", site, addr->second));
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  if (proto != "tcp") return Status::Ok();
  return AddUntested(in, batch, family);
}

Status ExpandTcp(const ExpandInput& in, BatchBuilder& batch) { return ExpandEgress(in, batch, "tcp"); }
Status ExpandUdp(const ExpandInput& in, BatchBuilder& batch) { return ExpandEgress(in, batch, "udp"); }

Status ExpandDns(const ExpandInput& in, BatchBuilder& batch) {
  // "filtered": the canary zone's names resolve only when network.allow names them.
  const bool allowed = in.policy.network.dns == DnsPermission::kAllow ||
                       (in.policy.network.dns == DnsPermission::kFiltered &&
                        AllowListNamesName(in.policy.network.allow, fmt::format("nonce.{}", kDnsZone)));
  Check check;
  check.family = "net.dns";
  check.expect = allowed ? Expectation::kAllowed : Expectation::kDenied;
  check.id = allowed ? "net.dns.allowed" : "net.dns.denied";
  check.severity = allowed ? Severity::kMedium : Severity::kHigh;
  check.target = "canary DNS responders";
  check.reference = in.policy.Ref("/network/dns");
  for (const char* site : kSites) {
    auto addr = in.context.values.find(fmt::format("net.{}-dns", site));
    if (addr != in.context.values.end()) batch.AddArg("net.dns", fmt::format("{}={}", site, addr->second));
  }
  return batch.AddCheck(std::move(check));
}

struct Receipts {
  std::vector<std::string> ours;  // "from PEER (detail)"
  int foreign = 0;                // anything else the endpoint got
};

Receipts ReceiptsAt(const json& net, const std::string& endpoint, const std::string& nonce) {
  Receipts r;
  if (!net.contains("receipts") || !net["receipts"].is_array()) return r;
  for (const json& receipt : net["receipts"]) {
    if (receipt.value("endpoint", "") != endpoint) continue;
    const std::string got = receipt.value("nonce", "");
    // DNS names carry the nonce cut to one 63-byte label.
    if (!nonce.empty() && (got == nonce || (got.size() == 63 && nonce.rfind(got, 0) == 0))) {
      r.ours.push_back(fmt::format("from {} ({})", receipt.value("peer", "?"),
                                   receipt.value("detail", "")));
    } else {
      ++r.foreign;
    }
  }
  return r;
}

std::string ProbeSide(const json& fact) {
  if (!FactOk(fact)) return "the probe's attempt failed: " + DescribeFailure(fact);
  std::string text = fact.value("family", "") == "net.tcp" ? "the probe connected and sent its nonce"
                                                           : "the probe sent its nonce";
  if (fact.value("acked", false)) text += " and got an ack";
  if (fact.contains("ack_errno")) text += fmt::format(" (reply: {})", fact.value("ack_errno", ""));
  return text;
}

std::string EgressRemediation(const Check& check, const std::string& addr) {
  if (check.expect == Expectation::kAllowed) {
    return fmt::format("let the sandbox reach {} ({}), or drop it from network.allow", check.target,
                       addr);
  }
  if (check.resolved_target == "loopback") {
    return "the sandbox reaches the host's loopback: give it its own network namespace (no docker "
           "--network host, no bwrap --share-net)";
  }
  return fmt::format("block egress to {}: --network none / bwrap --unshare-net, or a firewall "
                     "dropping the sandbox's traffic to this host", addr);
}

// An allow entry or proxy the harness cannot reach yet (net.allow.untested:*, net.proxy.untested):
// a skip that says why, never a pass.
Verdict UntestedSkip(const JudgeInput& in, Verdict v) {
  const bool proxy = in.check.id == "net.proxy.untested";
  v.outcome = Outcome::kSkip;
  v.expected = proxy ? "allowed traffic through the proxy" : "reachable";
  v.observed = fmt::format(
      "{} was never contacted: the egress lab that judges host names, wildcards, addresses, "
      "networks and proxies is not built yet; sandprobe sends traffic only to its own canaries "
      "(loopback-tcp, loopback-udp, bridge-tcp, bridge-udp)",
      proxy ? fmt::format("the proxy ({})", in.check.target) : in.check.target);
  return v;
}

Verdict JudgeEgress(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  if (in.check.variant == "untested") return UntestedSkip(in, std::move(v));
  const json* net = NetObservations(in, v);
  if (net == nullptr) return v;
  const bool allowed = in.check.expect == Expectation::kAllowed;
  const std::string addr = (*net)["endpoints"].value(in.check.target, "");
  v.expected = allowed ? fmt::format("canary {} receives this run's nonce", in.check.target)
                       : fmt::format("canary {} receives nothing from the sandbox", in.check.target);
  v.remediation = EgressRemediation(in.check, addr);
  if (addr.empty()) {
    v.outcome = Outcome::kSkip;
    v.observed = net->value("bridge_unavailable", "no such canary on this host");
    return v;
  }
  std::optional<int> index = in.facts.Find(in.check.family, in.check.resolved_target);
  if (index) v.evidence.frame_indexes.push_back(*index);
  const Receipts got = ReceiptsAt(*net, in.check.target, in.result.nonce);
  const bool received = !got.ours.empty();
  if (received) {
    v.observed = fmt::format("canary {} {} received this run's nonce {}", in.check.target, addr,
                             got.ours.front());
    v.evidence.witness_facts.push_back(v.observed);
  } else if (!index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no attempt for this canary and the canary received nothing";
    return v;
  } else {
    v.observed = fmt::format("{}; canary {} {} never received this run's nonce",
                             ProbeSide(in.facts.Fact(*index)), in.check.target, addr);
  }
  if (got.foreign > 0) v.observed += fmt::format(" ({} other packets/connections, not this run's)", got.foreign);
  Judge(v, received == allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
  return v;
}

Verdict JudgeDns(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  if (in.check.variant == "untested") return UntestedSkip(in, std::move(v));
  const json* net = NetObservations(in, v);
  if (net == nullptr) return v;
  const bool allowed = in.check.expect == Expectation::kAllowed;
  v.expected = allowed ? "a canary DNS responder receives the query for this run's name"
                       : "no canary DNS responder receives a query from the sandbox";
  v.remediation = allowed ? "let the sandbox send DNS queries, or set network.dns to deny"
                          : "block DNS from the sandbox (no network, or a firewall dropping udp/53 "
                            "and any resolver it can reach)";
  const std::string& nonce = in.result.nonce;
  std::vector<std::string> heard, attempts;
  for (const char* site : kSites) {
    const std::string endpoint = std::string(site) + "-dns";
    Receipts got = ReceiptsAt(*net, endpoint, nonce);
    for (const std::string& r : got.ours) heard.push_back(endpoint + " " + r);
    if (std::optional<int> index = in.facts.Find("net.dns", site)) {
      v.evidence.frame_indexes.push_back(*index);
      const json& fact = in.facts.Fact(*index);
      attempts.push_back(fmt::format("{}: {}", site, FactOk(fact) ? "answered " + fact.value("rcode", "?")
                                                                 : DescribeFailure(fact)));
    }
  }
  if (heard.empty() && attempts.empty()) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no DNS query and no responder heard one";
    return v;
  }
  v.observed = heard.empty()
                   ? fmt::format("no responder heard this run's name (probe: {})", fmt::join(attempts, "; "))
                   : fmt::format("heard this run's name: {}", fmt::join(heard, "; "));
  for (const std::string& h : heard) v.evidence.witness_facts.push_back(h);
  Judge(v, heard.empty() != allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
  return v;
}

}  // namespace

std::vector<FamilyRow> NetworkEgressFamilies() {
  return {{"net.tcp", ExpandTcp, JudgeEgress},
          {"net.udp", ExpandUdp, JudgeEgress},
          {"net.dns", ExpandDns, JudgeDns}};
}

}  // namespace sandprobe
