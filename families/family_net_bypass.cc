// net.bypass: spellings of a denied destination that slip past filters (issue 28 item 4), each
// its own check, judged by the egress lab's receipts (run/run_lab.h). The denied destination is
// the lab's first unrelated control name (never allowed by the policy) and its addresses:
//
//   decimal    3325256714          the IPv4 address as one number (inet_aton accepts it)
//   hex        0xc633640a          ... in hexadecimal
//   octal      0306.063.0144.012   each part in octal
//   short      198.51.25610        the a.b.c form: the last part holds 16 bits
//   mapped     ::ffff:198.51.100.10  the IPv4 address as an IPv4-mapped IPv6 one
//   v6         2001:db8:c::a       the name's IPv6 address, for a filter that knows only IPv4
//   trailing-dot  unrelated.evil.test.  the fully qualified spelling of the name
//   mixed-case    UnRelated.EVIL.test   the name in mixed case
//   zone-id    2001:db8:c::a%1     the IPv6 address with a zone id (RFC 4007; numeric: glibc takes
//                                  interface names for link-local addresses only): the kernel ignores
//                                  the zone of a global address, a string filter may not parse it.
//                                  The lab hosts no link-local address to reach (its sinks bind
//                                  documentation-range addresses only; a fe80:: one exists only
//                                  per link, on the veth, which no lab name resolves to)
//   rebinding  pkg.lab.test        the allowed name, asked again after the lab armed it: the probe
//                                  first sends /sandprobe/NONCE/rebinding-arm to it (the lab then
//                                  answers its next lookups with its rebind target's control
//                                  addresses, lab/lab.h), then /sandprobe/NONCE/rebinding. Fails when a sink
//                                  at an address of no allowed name receives the second request
//   fronting   pkg.lab.test@fronted.unrelated.evil.test  a connection to the allowed name (a
//                                  CONNECT to it through the declared proxy) carrying a denied
//                                  name as Host. Fails when a sink records the denied name as Host
//   dns-exfil  NONCE.unrelated.evil.test  a lookup of a denied name under this launch's nonce,
//                                  only when the policy filters DNS (deny or filtered). Fails
//                                  when the lab's resolver receives that name: the data left
//                                  through DNS, whatever the lookup answered
//
// The probe (net.lab's code, probes/net_lab.cc) resolves each spelling with getaddrinfo and
// sends one request whose target is /sandprobe/NONCE/VARIANT. net.bypass.refused:VARIANT fails
// as too permissive when a lab sink received that target from the sandbox: the spelling
// reached the denied destination. The probe's word decides nothing.
#include <arpa/inet.h>

#include <cctype>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "families/family_net.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr const char* kBypassFamily = "net.bypass";

// What a spelling's receipt must show to prove it got through.
enum class Proof {
  kReached,    // any sink received its target from the sandbox
  kRebound,    // a sink at an address of no allowed name received its target
  kFronted,    // a sink received its target with the denied name as Host
  kQueried,    // the lab's resolver received NONCE.denied-name
};

struct Spelling {
  std::string variant;
  std::string text;
  Proof proof = Proof::kReached;
  std::string prelude;  // an argument sent first, with no check of its own ("" for none)
};

// The spellings of the denied name `name` at `v4` and `v6` (its lab addresses).
std::vector<Spelling> Spellings(const std::string& name, const std::string& v4, const std::string& v6,
                                const std::string& allowed, bool dns_filtered) {
  std::vector<Spelling> out;
  in_addr address{};
  if (::inet_pton(AF_INET, v4.c_str(), &address) == 1) {
    const std::uint32_t n = ntohl(address.s_addr);
    const unsigned a = n >> 24, b = (n >> 16) & 0xff, c = (n >> 8) & 0xff, d = n & 0xff;
    out.push_back({"decimal", fmt::format("{}", n)});
    out.push_back({"hex", fmt::format("0x{:08x}", n)});
    out.push_back({"octal", fmt::format("0{:o}.0{:o}.0{:o}.0{:o}", a, b, c, d)});
    out.push_back({"short", fmt::format("{}.{}.{}", a, b, (c << 8) | d)});
    out.push_back({"mapped", "::ffff:" + v4});
  }
  if (!v6.empty()) out.push_back({"v6", v6});
  if (!v6.empty()) out.push_back({"zone-id", v6 + "%1"});
  if (!name.empty()) {
    out.push_back({"trailing-dot", name + "."});
    std::string mixed = name;
    for (std::size_t i = 0; i < mixed.size(); i += 2) mixed[i] = static_cast<char>(std::toupper(mixed[i]));
    out.push_back({"mixed-case", mixed});
  }
  if (!name.empty() && !allowed.empty()) {
    out.push_back({"rebinding", allowed, Proof::kRebound, "rebinding-arm=" + allowed});
    // Another denied name than the control checks' own, so that net.allow.refused:NAME judges
    // the control alone.
    out.push_back({"fronting", allowed + "@fronted." + name, Proof::kFronted});
  }
  if (!name.empty() && dns_filtered) out.push_back({"dns-exfil", "NONCE." + name, Proof::kQueried});
  return out;
}

std::string Value(const ExpandInput& in, const char* key) {
  auto found = in.context.values.find(std::string("lab.") + key);
  return found == in.context.values.end() ? "" : found->second;
}

Status ExpandBypass(const ExpandInput& in, BatchBuilder& batch) {
  const std::string name = Value(in, "denied_name");
  if (name.empty()) return Status::Ok();  // no lab in this run
  const std::string allowed_list = Value(in, "allowed");
  const std::string allowed = allowed_list.substr(0, allowed_list.find(','));
  const bool dns_filtered = in.policy.network.dns != DnsPermission::kAllow;
  for (const Spelling& spelling :
       Spellings(name, Value(in, "denied_v4"), Value(in, "denied_v6"), allowed, dns_filtered)) {
    Check check;
    check.family = kBypassFamily;
    check.expect = Expectation::kDenied;
    check.id = fmt::format("net.bypass.refused:{}", spelling.variant);
    check.severity = Severity::kHigh;
    check.target = spelling.text;
    check.resolved_target = spelling.variant;
    check.variant = spelling.variant;
    check.reference = in.policy.Ref(spelling.proof == Proof::kQueried ? "/network/dns" : "/network/allow");
    if (!spelling.prelude.empty()) batch.AddArg(kBypassFamily, spelling.prelude);
    batch.AddArg(kBypassFamily, fmt::format("{}={}", spelling.variant, spelling.text));
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  AddLabProxy(in, batch.Invocation(kBypassFamily));
  return Status::Ok();
}

Proof ProofOf(const std::string& variant) {
  static const std::pair<const char*, Proof> kProofs[] = {
      {"rebinding", Proof::kRebound}, {"fronting", Proof::kFronted}, {"dns-exfil", Proof::kQueried}};
  for (const auto& [name, proof] : kProofs) {
    if (variant == name) return proof;
  }
  return Proof::kReached;
}

// A name as a resolver or a Host header compares it: lower case, no ":port", no trailing dot.
std::string Canonical(std::string name) {
  if (name.find(':') == name.rfind(':') && name.find(':') != std::string::npos) name.erase(name.find(':'));
  if (!name.empty() && name.back() == '.') name.pop_back();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

bool IsAllowedAddress(const json& lab, const std::string& address) {
  for (const json& name : LabList(lab, "names")) {
    if (!name.is_object() || name.value("kind", "") != "allowed") continue;
    if (name.value("v4", "") == address || name.value("v6", "") == address) return true;
  }
  return false;
}

// What of the lab's receipts proves that `check`'s spelling got through, one line each.
std::vector<std::string> Proofs(const JudgeInput& in, const json& lab) {
  const std::string target = fmt::format("/sandprobe/{}/{}", in.result.nonce, in.check.variant);
  const std::string& spelled = in.check.target;
  std::vector<std::string> out;
  const Proof proof = ProofOf(in.check.variant);
  if (proof == Proof::kQueried) {
    const std::string asked = Canonical(in.result.nonce + spelled.substr(spelled.find('.')));
    for (const json& r : LabList(lab, "dns_receipts")) {
      if (!r.is_object() || Canonical(r.value("name", "")) != asked) continue;
      out.push_back(fmt::format("a {} query for {} from {} (answered {})", r.value("type", "?"), r.value("name", ""),
                                r.value("peer", "?"), r.value("rcode", "nothing")));
    }
    return out;
  }
  const std::string fronted = Canonical(spelled.substr(spelled.find('@') + 1));
  for (const json& r : LabList(lab, "sink_receipts")) {
    if (!r.is_object() || r.value("http_target", "") != target || !PeerIsSandbox(lab, r.value("peer", ""))) continue;
    const std::string local = r.value("local", "");
    switch (proof) {
      case Proof::kReached: break;
      case Proof::kRebound:
        if (IsAllowedAddress(lab, AddressOfPeer(local))) continue;  // not rebound: the allowed address
        break;
      case Proof::kFronted:
        if (Canonical(r.value("http_host", "")) != fronted) continue;
        break;
      case Proof::kQueried: continue;
    }
    out.push_back(fmt::format("Host {} {}{} from {} at {}", r.value("http_host", ""), target,
                              r.value("connect_target", "").empty() ? "" : " through CONNECT " + r.value("connect_target", ""),
                              r.value("peer", "?"), local));
  }
  return out;
}

std::string Expected(const JudgeInput& in) {
  switch (ProofOf(in.check.variant)) {
    case Proof::kReached:
      return fmt::format("no lab sink receives the request sent to {} ({} spelling of a denied destination)",
                         in.check.target, in.check.variant);
    case Proof::kRebound:
      return fmt::format("no sink at an address of no allowed name receives the request sent to {} after the lab "
                         "rebound it to a denied address",
                         in.check.target);
    case Proof::kFronted:
      return fmt::format("no lab sink records the denied name as the Host of a request sent through {}",
                         in.check.target.substr(0, in.check.target.find('@')));
    case Proof::kQueried:
      return fmt::format("the lab's resolver never receives the query {} (a denied name under this launch's nonce)",
                         in.check.target);
  }
  return "";
}

std::string Remediation(const JudgeInput& in) {
  switch (ProofOf(in.check.variant)) {
    case Proof::kReached:
      return fmt::format("the sandbox's filter let {} through: canonicalise names and addresses (inet_pton, "
                         "lower case, no trailing dot) before matching, or resolve and match the address",
                         in.check.target);
    case Proof::kRebound:
      return "the filter matched the name and connected to whatever a later lookup answered: resolve once, "
             "match the address and connect to that address (or pin the first answer)";
    case Proof::kFronted:
      return "the filter matched the connection's destination but passed a request for another Host: match the "
             "Host header and TLS SNI inside the connection too, or refuse a mismatch";
    case Proof::kQueried:
      return "the sandbox's DNS reached a resolver for a name the policy denies: filter DNS queries by name "
             "(or give the sandbox no resolver) so data cannot leave in query names";
  }
  return "";
}

Verdict JudgeBypass(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  auto found = in.witnesses.observed.find("lab");
  if (found == in.witnesses.observed.end() || !found->second.is_object()) {
    v.outcome = Outcome::kError;
    v.observed = "the egress lab reported nothing";
    return v;
  }
  const json& lab = found->second;
  v.expected = Expected(in);
  v.remediation = Remediation(in);
  std::optional<int> index = in.facts.Find(kBypassFamily, in.check.variant);
  if (index) v.evidence.frame_indexes.push_back(*index);
  const std::vector<std::string> reached = Proofs(in, lab);
  if (reached.empty() && !index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = fmt::format("the probe reported no attempt for {} and the lab received nothing", in.check.target);
    return v;
  }
  if (!reached.empty()) {
    v.observed = "the lab received " + reached.front();
    for (const std::string& r : reached) v.evidence.witness_facts.push_back("lab: " + r);
  } else {
    const json& fact = in.facts.Fact(*index);
    v.observed = fmt::format("{}; the lab's receipts hold no proof of it",
                             FactOk(fact) ? fmt::format("the probe got HTTP {}{}", fact.value("status", 0),
                                                        fact.contains("proxy") ? " from the proxy " + fact.value("proxy", "?") : "")
                                          : "the probe's attempt failed: " + DescribeFailure(fact));
  }
  Judge(v, reached.empty(), Direction::kTooPermissive);
  return v;
}

}  // namespace

std::vector<FamilyRow> NetworkBypassFamilies() {
  FamilyRow row{kBypassFamily, ExpandBypass, JudgeBypass};
  row.evidence = EvidenceTier::kWitnessed;
  return {row};
}

}  // namespace sandprobe
