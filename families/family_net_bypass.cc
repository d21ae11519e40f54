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
//
// The probe (net.lab's code, probes/net_lab.cc) resolves each spelling with getaddrinfo and
// sends one request whose target is /sandprobe/NONCE/VARIANT. net.bypass.refused:VARIANT fails
// as too permissive when a lab sink received that target from the sandbox: the spelling
// reached the denied destination. The probe's word decides nothing.
#include <arpa/inet.h>

#include <cstdint>

#include <fmt/format.h>

#include "families/family_net.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr const char* kFamily = "net.bypass";

struct Spelling {
  std::string variant;
  std::string text;
};

// The spellings of the denied name `name` at `v4` and `v6` (its lab addresses).
std::vector<Spelling> Spellings(const std::string& name, const std::string& v4, const std::string& v6) {
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
  if (!name.empty()) {
    out.push_back({"trailing-dot", name + "."});
    std::string mixed = name;
    for (std::size_t i = 0; i < mixed.size(); i += 2) mixed[i] = static_cast<char>(std::toupper(mixed[i]));
    out.push_back({"mixed-case", mixed});
  }
  return out;
}

std::string Value(const ExpandInput& in, const char* key) {
  auto found = in.context.values.find(std::string("lab.") + key);
  return found == in.context.values.end() ? "" : found->second;
}

Status ExpandBypass(const ExpandInput& in, BatchBuilder& batch) {
  const std::string name = Value(in, "denied_name");
  if (name.empty()) return Status::Ok();  // no lab in this run
  for (const Spelling& spelling : Spellings(name, Value(in, "denied_v4"), Value(in, "denied_v6"))) {
    Check check;
    check.family = kFamily;
    check.expect = Expectation::kDenied;
    check.id = fmt::format("net.bypass.refused:{}", spelling.variant);
    check.severity = Severity::kHigh;
    check.target = spelling.text;
    check.resolved_target = spelling.variant;
    check.variant = spelling.variant;
    check.reference = in.policy.Ref("/network/allow");
    batch.AddArg(kFamily, fmt::format("{}={}", spelling.variant, spelling.text));
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  AddLabProxy(in, batch.Invocation(kFamily));
  return Status::Ok();
}

const json& ListOf(const json& lab, const char* key) {
  static const json kNone = json::array();
  auto found = lab.find(key);
  return found != lab.end() && found->is_array() ? *found : kNone;
}

bool FromSandbox(const json& lab, const std::string& peer) {
  const std::string address = !peer.empty() && peer.front() == '['
                                  ? peer.substr(1, peer.find(']') - 1)
                                  : peer.substr(0, peer.rfind(':'));
  for (const json& own : ListOf(lab, "sandbox_addresses")) {
    if (own.is_string() && own.get<std::string>() == address) return true;
  }
  return false;
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
  const std::string target = fmt::format("/sandprobe/{}/{}", in.result.nonce, in.check.variant);
  v.expected = fmt::format("no lab sink receives the request sent to {} ({} spelling of a denied destination)",
                           in.check.target, in.check.variant);
  v.remediation = fmt::format("the sandbox's filter let {} through: canonicalise names and addresses (inet_pton, "
                              "lower case, no trailing dot) before matching, or resolve and match the address",
                              in.check.target);
  std::optional<int> index = in.facts.Find(kFamily, in.check.variant);
  if (index) v.evidence.frame_indexes.push_back(*index);
  std::vector<std::string> reached;
  for (const json& r : ListOf(lab, "sink_receipts")) {
    if (!r.is_object() || r.value("http_target", "") != target || !FromSandbox(lab, r.value("peer", ""))) continue;
    reached.push_back(fmt::format("Host {} {} from {} at {}", r.value("http_host", ""), target,
                                  r.value("peer", "?"), r.value("local", "?")));
  }
  if (reached.empty() && !index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = fmt::format("the probe reported no attempt for {} and the lab received nothing", in.check.target);
    return v;
  }
  if (!reached.empty()) {
    v.observed = "the lab received " + reached.front();
    for (const std::string& r : reached) v.evidence.witness_facts.push_back("lab sink: " + r);
  } else {
    const json& fact = in.facts.Fact(*index);
    v.observed = fmt::format("{}; no lab sink received {}",
                             FactOk(fact) ? fmt::format("the probe got HTTP {}{}", fact.value("status", 0),
                                                        fact.contains("proxy") ? " from the proxy " + fact.value("proxy", "?") : "")
                                          : "the probe's attempt failed: " + DescribeFailure(fact),
                             target);
  }
  Judge(v, reached.empty(), Direction::kTooPermissive);
  return v;
}

}  // namespace

std::vector<FamilyRow> NetworkBypassFamilies() {
  FamilyRow row{kFamily, ExpandBypass, JudgeBypass};
  row.evidence = EvidenceTier::kWitnessed;
  return {row};
}

}  // namespace sandprobe
