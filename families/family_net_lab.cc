// net.lab: the policy's host-name allowlist judged in the run's egress lab (issue 28; the lab
// and its receipts: run/run_lab.h, lab/). The probe resolves each name with the system resolver
// (the sandbox's resolv.conf is the lab's) and sends an HTTP request with Host: NAME and this
// launch's nonce in its target; the lab's sinks record what reached them.
//
//   net.allow.reachable:NAME  an allowed name: pass only when a sink recorded a request for
//       NAME carrying this launch's nonce (the harness's, BatchResult::nonce) from the sandbox's
//       address, directly or through a proxy (the receipt then says CONNECT NAME:PORT).
//   net.allow.refused:NAME    a control name the policy does not allow (look-alikes, suffix and
//       prefix tricks, unrelated names): fail when any sink received a connection for it from
//       the sandbox: at its lab address (the resolver's answer used), or naming it in Host,
//       CONNECT or SNI.
// Never the probe's word: its fact says what it tried (resolved, connected, the status line),
// the receipts decide. Without a lab (a profile without "lab": "join", or no host names in
// network.allow) the family plans nothing and net.tcp keeps such entries as untested skips.
#include <algorithm>

#include <fmt/format.h>

#include "families/family_net.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr const char* kLabFamily = "net.lab";

std::vector<std::string> SplitNames(const std::string& list) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start < list.size();) {
    std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

Status AddLabChecks(const ExpandInput& in, BatchBuilder& batch, const char* key, bool allowed) {
  auto value = in.context.values.find(std::string("lab.") + key);
  if (value == in.context.values.end()) return Status::Ok();
  for (const std::string& name : SplitNames(value->second)) {
    Check check;
    check.family = kLabFamily;
    check.expect = allowed ? Expectation::kAllowed : Expectation::kDenied;
    check.id = fmt::format("net.allow.{}:{}", allowed ? "reachable" : "refused", name);
    check.severity = allowed ? Severity::kMedium : Severity::kHigh;
    check.target = name;
    check.resolved_target = name;
    check.reference = in.policy.Ref("/network/allow");
    batch.AddArg(kLabFamily, name);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ExpandLab(const ExpandInput& in, BatchBuilder& batch) {
  if (in.context.values.count("lab.allowed") == 0) return Status::Ok();  // no lab in this run
  if (Status s = AddLabChecks(in, batch, "allowed", true); !s.ok()) return s;
  if (Status s = AddLabChecks(in, batch, "controls", false); !s.ok()) return s;
  AddLabProxy(in, batch.Invocation(kLabFamily));
  return Status::Ok();
}

// Lower case, without a trailing dot or a ":PORT" (an IPv6 literal keeps its brackets).
std::string HostOf(std::string text) {
  if (!text.empty() && text.front() != '[') {
    if (std::size_t colon = text.rfind(':'); colon != std::string::npos) text.resize(colon);
  } else if (std::size_t end = text.find(']'); end != std::string::npos) {
    text.resize(end + 1);
  }
  if (!text.empty() && text.back() == '.') text.pop_back();
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool FromSandbox(const json& lab, const json& receipt) { return PeerIsSandbox(lab, receipt.value("peer", "")); }

const json* LabName(const json& lab, const std::string& name) {
  for (const json& entry : LabList(lab, "names")) {
    if (entry.is_object() && entry.value("name", "") == name) return &entry;
  }
  return nullptr;
}

// "GET pkg.lab.test/sandprobe/N from [2001:db8:ff::2]:40000 at [2001:db8:a::a]:80"
std::string DescribeReceipt(const json& r) {
  std::string what = r.value("connect_target", "").empty()
                         ? fmt::format("{} Host {} {}", r.value("http_method", r.value("protocol", "")),
                                       r.value("http_host", ""), r.value("http_target", ""))
                         : fmt::format("CONNECT {} (then Host {}, SNI {})", r.value("connect_target", ""),
                                       r.value("http_host", ""), r.value("tls_sni", ""));
  return fmt::format("{} from {} at {}", what, r.value("peer", "?"), r.value("local", "?"));
}

// Whether receipt `r` is a connection for `name`: it reached the name's lab address, or names
// it in its Host, CONNECT target or SNI.
bool ReceiptFor(const json& r, const std::string& name, const json* entry) {
  if (HostOf(r.value("http_host", "")) == name || HostOf(r.value("connect_target", "")) == name ||
      HostOf(r.value("tls_sni", "")) == name) {
    return true;
  }
  if (entry == nullptr) return false;
  const std::string local = AddressOfPeer(r.value("local", ""));
  return local == entry->value("v4", "-") || local == entry->value("v6", "-");
}

std::string ProbeSaid(const json& fact) {
  if (!FactOk(fact)) return "the probe's attempt failed: " + DescribeFailure(fact);
  if (fact.contains("proxy")) {
    return fmt::format("the probe sent through the proxy {} and got HTTP {}", fact.value("proxy", "?"),
                       fact.value("status", 0));
  }
  return fmt::format("the probe connected to {} and got HTTP {}", fact.value("address", "?"),
                     fact.value("status", 0));
}

Verdict JudgeLab(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  auto found = in.witnesses.observed.find("lab");
  if (found == in.witnesses.observed.end() || !found->second.is_object()) {
    v.outcome = Outcome::kError;
    v.observed = "the egress lab reported nothing";
    return v;
  }
  const json& lab = found->second;
  const std::string& name = in.check.target;
  const bool allowed = in.check.expect == Expectation::kAllowed;
  const json* entry = LabName(lab, name);
  v.expected = allowed ? fmt::format("a lab sink receives this launch's request for {} from the sandbox", name)
                       : fmt::format("no lab sink receives a connection for {} from the sandbox", name);
  v.remediation = allowed ? fmt::format("let the sandbox reach {} (its allowlist or proxy), or drop it from "
                                        "network.allow", name)
                          : fmt::format("{} is not in network.allow: make the sandbox's allowlist match names "
                                        "exactly (no prefix or suffix matches), or block egress", name);
  std::optional<int> index = in.facts.Find(kLabFamily, name);
  if (index) v.evidence.frame_indexes.push_back(*index);
  std::vector<std::string> ours;  // receipts that decide
  for (const json& r : LabList(lab, "sink_receipts")) {
    if (!r.is_object() || !FromSandbox(lab, r) || !ReceiptFor(r, name, entry)) continue;
    // An allowed name counts only with this launch's nonce, in the request the sandbox sent.
    if (allowed && (HostOf(r.value("http_host", "")) != name ||
                    r.value("http_target", "").find(in.result.nonce) == std::string::npos)) {
      continue;
    }
    ours.push_back(DescribeReceipt(r));
  }
  if (ours.empty() && !index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = fmt::format("the probe reported no attempt for {} and the lab received nothing for it", name);
    return v;
  }
  if (!ours.empty()) {
    v.observed = fmt::format("the lab received {}", ours.front());
    if (ours.size() > 1) v.observed += fmt::format(" (and {} more)", ours.size() - 1);
    for (const std::string& r : ours) v.evidence.witness_facts.push_back("lab sink: " + r);
  } else {
    v.observed = fmt::format("{}; no lab sink received {} for {}", ProbeSaid(in.facts.Fact(*index)),
                             allowed ? "this launch's request" : "a connection", name);
  }
  Judge(v, ours.empty() != allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
  return v;
}

}  // namespace

void AddLabProxy(const ExpandInput& in, ProbeInvocation& invocation) {
  const std::string spec = ProxyText(in.policy.network.proxy);
  if (spec.empty() || invocation.args.empty() || invocation.args.front() == "--proxy") return;
  invocation.args.insert(invocation.args.begin(), {"--proxy", spec});
}

std::vector<FamilyRow> NetworkLabFamilies() {
  FamilyRow row{kLabFamily, ExpandLab, JudgeLab};
  row.evidence = EvidenceTier::kWitnessed;
  return {row};
}

const json& LabList(const json& lab, const char* key) {
  static const json kNone = json::array();
  auto found = lab.find(key);
  return found != lab.end() && found->is_array() ? *found : kNone;
}

std::string AddressOfPeer(const std::string& socket_text) {
  if (!socket_text.empty() && socket_text.front() == '[') return socket_text.substr(1, socket_text.find(']') - 1);
  return socket_text.substr(0, socket_text.rfind(':'));
}

bool PeerIsSandbox(const json& lab, const std::string& peer) {
  const std::string address = AddressOfPeer(peer);
  for (const json& own : LabList(lab, "sandbox_addresses")) {
    if (own.is_string() && own.get<std::string>() == address) return true;
  }
  return false;
}

}  // namespace sandprobe
