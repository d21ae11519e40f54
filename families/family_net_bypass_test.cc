// net.bypass (family_net_bypass.cc): the spellings of the lab's denied destination, one check
// each, failed only by a lab receipt of that spelling's request from the sandbox.
#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/plan.h"
#include "families/test_policies.h"
#include "load/network_allow.h"
#include "model/policy_enums.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using testing::SuiteOf;
using testing::TierLowPolicy;

const char kNonce[] = "n0nce";

PlanContext LabContext() {
  PlanContext context{"/c", "/workspace", {}};
  context.values["lab.allowed"] = "pkg.lab.test";
  context.values["lab.denied_name"] = "unrelated.evil.test";
  context.values["lab.denied_v4"] = "198.51.100.10";
  context.values["lab.denied_v6"] = "2001:db8:c::a";
  return context;
}

std::map<std::string, Verdict> Judge(std::vector<json> facts, std::vector<json> receipts, Plan* plan_out = nullptr,
                                     std::vector<json> dns_receipts = {},
                                     DnsPermission dns = DnsPermission::kFiltered) {
  Policy policy = TierLowPolicy();
  policy.network.allow = {*ParseAllowEntry("pkg.lab.test")};
  policy.network.dns = dns;
  StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"net.bypass"}), LabContext());
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = "L1", .nonce = kNonce, .complete = true};
  result.frames.facts = std::move(facts);
  result.frames.done = true;
  WitnessFacts witnesses;
  const json names = json::array({{{"name", "pkg.lab.test"}, {"kind", "allowed"}, {"v4", "192.0.2.10"}, {"v6", "2001:db8:a::a"}},
                                  {{"name", "rebound.sandprobe-control.test"}, {"kind", "rebind-target"},
                                   {"v4", "198.51.100.12"}, {"v6", "2001:db8:c::c"}}});
  witnesses.observed["lab"] = {{"sandbox_addresses", {"203.0.113.2", "2001:db8:ff::2"}}, {"names", names},
                               {"sink_receipts", receipts}, {"dns_receipts", dns_receipts}};
  std::map<std::string, Verdict> by_id;
  for (Verdict& v : Evaluate(*plan, {result}, witnesses)) by_id[v.check.id] = v;
  if (plan_out) *plan_out = *plan;
  return by_id;
}

json Fact(const std::string& variant) {
  return {{"family", "net.bypass"}, {"path", variant}, {"spelling", "x"}, {"nonce", kNonce}, {"ok", false},
          {"step", "resolve"}, {"gai_error", "EAI_NONAME"}};
}

TEST(FamilyNetBypassTest, TwelveSpellingsOfTheDeniedDestination) {
  Plan plan;
  Judge({}, {}, &plan);
  ASSERT_EQ(plan.batches.size(), 1u);
  EXPECT_EQ(plan.batches[0].invocations[0].args,
            (std::vector<std::string>{"decimal=3325256714", "hex=0xc633640a", "octal=0306.063.0144.012",
                                      "short=198.51.25610", "mapped=::ffff:198.51.100.10", "v6=2001:db8:c::a",
                                      "zone-id=2001:db8:c::a%1", "trailing-dot=unrelated.evil.test.",
                                      "mixed-case=UnReLaTeD.EvIl.tEsT", "rebinding-arm=pkg.lab.test",
                                      "rebinding=pkg.lab.test", "fronting=pkg.lab.test@fronted.unrelated.evil.test",
                                      "dns-exfil=NONCE.unrelated.evil.test"}));
  EXPECT_EQ(plan.checks.size(), 12u);
}

TEST(FamilyNetBypassTest, DnsExfiltrationIsCheckedOnlyWhenThePolicyFiltersDns) {
  Plan plan;
  Judge({}, {}, &plan, {}, DnsPermission::kAllow);
  EXPECT_EQ(plan.checks.size(), 11u);
  for (const Check& check : plan.checks) EXPECT_NE(check.id, "net.bypass.refused:dns-exfil");
}

TEST(FamilyNetBypassTest, RebindingFailsOnlyAtAnAddressOfNoAllowedName) {
  const json at_allowed = {{"peer", "[2001:db8:ff::2]:5"}, {"local", "[2001:db8:a::a]:80"}, {"http_host", "pkg.lab.test"},
                           {"http_target", "/sandprobe/n0nce/rebinding"}};
  const json at_target = {{"peer", "[2001:db8:ff::2]:6"}, {"local", "198.51.100.12:80"}, {"http_host", "pkg.lab.test"},
                          {"http_target", "/sandprobe/n0nce/rebinding"}};
  auto pinned = Judge({Fact("rebinding")}, {at_allowed});
  EXPECT_EQ(pinned["net.bypass.refused:rebinding"].outcome, Outcome::kPass) << pinned["net.bypass.refused:rebinding"].observed;
  auto rebound = Judge({Fact("rebinding")}, {at_allowed, at_target});
  EXPECT_EQ(rebound["net.bypass.refused:rebinding"].outcome, Outcome::kFail);
  EXPECT_NE(rebound["net.bypass.refused:rebinding"].observed.find("198.51.100.12:80"), std::string::npos);
}

TEST(FamilyNetBypassTest, FrontingFailsOnlyWhenTheDeniedNameArrivesAsHost) {
  json honest = {{"peer", "203.0.113.2:5"}, {"local", "192.0.2.10:80"}, {"http_host", "pkg.lab.test"},
                 {"http_target", "/sandprobe/n0nce/fronting"}};
  auto refused = Judge({Fact("fronting")}, {honest});
  EXPECT_EQ(refused["net.bypass.refused:fronting"].outcome, Outcome::kPass);
  json fronted = honest;
  fronted["http_host"] = "Fronted.Unrelated.Evil.Test.";
  fronted["connect_target"] = "pkg.lab.test:80";
  auto through = Judge({Fact("fronting")}, {fronted});
  EXPECT_EQ(through["net.bypass.refused:fronting"].outcome, Outcome::kFail);
  EXPECT_NE(through["net.bypass.refused:fronting"].observed.find("through CONNECT pkg.lab.test:80"), std::string::npos);
}

TEST(FamilyNetBypassTest, DnsExfiltrationFailsWhenTheResolverGotThisLaunchsName) {
  const json other_launch = {{"name", "0ther.unrelated.evil.test"}, {"type", "A"}, {"peer", "203.0.113.2:53"}};
  auto quiet = Judge({Fact("dns-exfil")}, {}, nullptr, {other_launch});
  EXPECT_EQ(quiet["net.bypass.refused:dns-exfil"].outcome, Outcome::kPass);
  const json ours = {{"name", "N0NCE.unrelated.evil.test"}, {"type", "AAAA"}, {"peer", "203.0.113.2:53"}, {"rcode", "NXDOMAIN"}};
  auto leaked = Judge({}, {}, nullptr, {ours});
  EXPECT_EQ(leaked["net.bypass.refused:dns-exfil"].outcome, Outcome::kFail) << leaked["net.bypass.refused:dns-exfil"].observed;
  EXPECT_EQ(leaked["net.bypass.refused:dns-exfil"].direction, Direction::kTooPermissive);
}

TEST(FamilyNetBypassTest, FailsOnlyByAReceiptOfThatSpellingsRequestFromTheSandbox) {
  const json ours = {{"peer", "203.0.113.2:5"}, {"local", "198.51.100.10:80"}, {"http_host", "3325256714"},
                     {"http_target", "/sandprobe/n0nce/decimal"}};
  const json elsewhere = {{"peer", "192.0.2.99:5"}, {"local", "198.51.100.10:80"}, {"http_target", "/sandprobe/n0nce/hex"}};
  auto v = Judge({Fact("decimal"), Fact("hex"), Fact("octal")}, {ours, elsewhere});
  EXPECT_EQ(v["net.bypass.refused:decimal"].outcome, Outcome::kFail);
  EXPECT_EQ(v["net.bypass.refused:decimal"].direction, Direction::kTooPermissive);
  EXPECT_EQ(v["net.bypass.refused:hex"].outcome, Outcome::kPass) << v["net.bypass.refused:hex"].observed;
  EXPECT_EQ(v["net.bypass.refused:octal"].outcome, Outcome::kPass);
  EXPECT_EQ(v["net.bypass.refused:short"].outcome, Outcome::kInconclusive);  // no attempt, no receipt
}

TEST(FamilyNetBypassTest, WithoutALabNothingIsPlanned) {
  Policy policy = TierLowPolicy();
  StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"net.tcp", "net.bypass"}), PlanContext{"/c", "/workspace", {}});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  for (const Check& check : plan->checks) EXPECT_NE(check.family, "net.bypass") << check.id;
}

}  // namespace
}  // namespace sandprobe
