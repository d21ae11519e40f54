// net.bypass (family_net_bypass.cc): the spellings of the lab's denied destination, one check
// each, failed only by a lab receipt of that spelling's request from the sandbox.
#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/plan.h"
#include "families/test_policies.h"
#include "load/network_allow.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using testing::SuiteOf;
using testing::TierLowPolicy;

const char kNonce[] = "n0nce";

PlanContext LabContext() {
  PlanContext context{"/c", "/workspace", {}};
  context.values["lab.denied_name"] = "unrelated.evil.test";
  context.values["lab.denied_v4"] = "198.51.100.10";
  context.values["lab.denied_v6"] = "2001:db8:c::a";
  return context;
}

std::map<std::string, Verdict> Judge(std::vector<json> facts, std::vector<json> receipts, Plan* plan_out = nullptr) {
  Policy policy = TierLowPolicy();
  policy.network.allow = {*ParseAllowEntry("pkg.lab.test")};
  StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"net.bypass"}), LabContext());
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = "L1", .nonce = kNonce, .complete = true};
  result.frames.facts = std::move(facts);
  result.frames.done = true;
  WitnessFacts witnesses;
  witnesses.observed["lab"] = {{"sandbox_addresses", {"203.0.113.2", "2001:db8:ff::2"}}, {"sink_receipts", receipts}};
  std::map<std::string, Verdict> by_id;
  for (Verdict& v : Evaluate(*plan, {result}, witnesses)) by_id[v.check.id] = v;
  if (plan_out) *plan_out = *plan;
  return by_id;
}

json Fact(const std::string& variant) {
  return {{"family", "net.bypass"}, {"path", variant}, {"spelling", "x"}, {"nonce", kNonce}, {"ok", false},
          {"step", "resolve"}, {"gai_error", "EAI_NONAME"}};
}

TEST(FamilyNetBypassTest, EightSpellingsOfTheDeniedDestination) {
  Plan plan;
  Judge({}, {}, &plan);
  ASSERT_EQ(plan.batches.size(), 1u);
  EXPECT_EQ(plan.batches[0].invocations[0].args,
            (std::vector<std::string>{"decimal=3325256714", "hex=0xc633640a", "octal=0306.063.0144.012",
                                      "short=198.51.25610", "mapped=::ffff:198.51.100.10", "v6=2001:db8:c::a",
                                      "trailing-dot=unrelated.evil.test.", "mixed-case=UnReLaTeD.EvIl.tEsT"}));
  EXPECT_EQ(plan.checks.size(), 8u);
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
