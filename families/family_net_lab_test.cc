// net.lab (family_net_lab.cc) with the lab's observations made up: an allowed name passes only
// by a receipt of this launch's nonce from the sandbox, a control fails by any receipt for it
// (its address, Host, CONNECT or SNI) from the sandbox, the probe's word alone decides nothing,
// and without a lab the family plans nothing.
#include <set>

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
  context.values["lab.allowed"] = "pkg.lab.test";
  context.values["lab.controls"] = "evilpkg.lab.test,unrelated.evil.test";
  return context;
}

json Lab(std::vector<json> receipts) {
  return {{"names", {{{"name", "pkg.lab.test"}, {"v4", "192.0.2.10"}, {"v6", "2001:db8:a::a"}},
                     {{"name", "evilpkg.lab.test"}, {"v4", "198.51.100.10"}, {"v6", "2001:db8:c::a"}},
                     {{"name", "unrelated.evil.test"}, {"v4", "198.51.100.11"}, {"v6", "2001:db8:c::b"}}}},
          {"sandbox_addresses", {"203.0.113.2", "2001:db8:ff::2"}},
          {"sink_receipts", receipts}};
}

json Receipt(const std::string& peer, const std::string& local, const std::string& host, const std::string& target) {
  return {{"peer", peer}, {"local", local}, {"protocol", "http"}, {"http_method", "GET"},
          {"http_host", host}, {"http_target", target}};
}

json Fact(const std::string& name, bool ok) {
  json fact = {{"family", "net.lab"}, {"path", name}, {"nonce", kNonce}, {"ok", ok}};
  if (ok) fact["address"] = "192.0.2.10", fact["status"] = 204;
  else fact["step"] = "connect", fact["errno"] = "ETIMEDOUT";
  return fact;
}

Policy AllowOne() {
  Policy policy = TierLowPolicy();
  policy.network.allow = {*ParseAllowEntry("pkg.lab.test")};
  return policy;
}

std::map<std::string, Verdict> JudgeLab(const PlanContext& context, std::vector<json> facts, const json& lab,
                                        Plan* plan_out = nullptr) {
  StatusOr<Plan> plan = ExpandChecks(AllowOne(), SuiteOf({"net.lab"}), context);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = "L1", .nonce = kNonce, .complete = true};
  result.frames.facts = std::move(facts);
  result.frames.done = true;
  WitnessFacts witnesses;
  witnesses.observed["lab"] = lab;
  std::map<std::string, Verdict> by_id;
  for (Verdict& v : Evaluate(*plan, {result}, witnesses)) by_id[v.check.id] = v;
  if (plan_out) *plan_out = *plan;
  return by_id;
}

const std::vector<json> kAllTried = {Fact("pkg.lab.test", true), Fact("evilpkg.lab.test", false),
                                     Fact("unrelated.evil.test", false)};

TEST(FamilyNetLabTest, ExpandsTheLabsNamesIntoOneInvocation) {
  Plan plan;
  auto v = JudgeLab(LabContext(), kAllTried, Lab({}), &plan);
  ASSERT_EQ(plan.batches.size(), 1u);
  EXPECT_EQ(plan.batches[0].invocations[0].args,
            (std::vector<std::string>{"pkg.lab.test", "evilpkg.lab.test", "unrelated.evil.test"}));
  EXPECT_EQ(v.size(), 3u);
  EXPECT_EQ(v["net.allow.refused:evilpkg.lab.test"].check.severity, Severity::kHigh);
}

TEST(FamilyNetLabTest, WithoutALabNothingIsPlannedAndTheNameStaysUntested) {
  StatusOr<Plan> plan = ExpandChecks(AllowOne(), SuiteOf({"net.tcp", "net.lab"}), PlanContext{"/c", "/workspace", {}});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::set<std::string> ids;
  for (const Check& check : plan->checks) {
    EXPECT_NE(check.family, "net.lab") << check.id;
    ids.insert(check.id);
  }
  EXPECT_TRUE(ids.count("net.allow.untested:pkg.lab.test"));
  // With a lab, net.lab judges the name and net.tcp no longer skips it.
  plan = ExpandChecks(AllowOne(), SuiteOf({"net.tcp", "net.lab"}), LabContext());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ids.clear();
  for (const Check& check : plan->checks) ids.insert(check.id);
  EXPECT_FALSE(ids.count("net.allow.untested:pkg.lab.test"));
  EXPECT_TRUE(ids.count("net.allow.reachable:pkg.lab.test"));
}

TEST(FamilyNetLabTest, AllowedPassesOnlyByAReceiptOfThisNonceFromTheSandbox) {
  const json ours = Receipt("[2001:db8:ff::2]:4000", "[2001:db8:a::a]:80", "pkg.lab.test", "/sandprobe/n0nce");
  auto v = JudgeLab(LabContext(), kAllTried, Lab({ours}));
  EXPECT_EQ(v["net.allow.reachable:pkg.lab.test"].outcome, Outcome::kPass) << v["net.allow.reachable:pkg.lab.test"].observed;
  EXPECT_EQ(v["net.allow.refused:evilpkg.lab.test"].outcome, Outcome::kPass);
  // The probe says it got HTTP 204, but the receipt carries another nonce, or came from elsewhere.
  for (const json& other : {Receipt("203.0.113.2:1", "192.0.2.10:80", "pkg.lab.test", "/sandprobe/older"),
                            Receipt("192.0.2.99:1", "192.0.2.10:80", "pkg.lab.test", "/sandprobe/n0nce")}) {
    auto lied = JudgeLab(LabContext(), kAllTried, Lab({other}));
    EXPECT_EQ(lied["net.allow.reachable:pkg.lab.test"].outcome, Outcome::kFail) << other.dump();
    EXPECT_EQ(lied["net.allow.reachable:pkg.lab.test"].direction, Direction::kTooRestrictive);
  }
}

TEST(FamilyNetLabTest, AControlFailsByAnyReceiptForItFromTheSandbox) {
  // At its lab address with another Host; by Host at the allowed address; by CONNECT.
  const json by_address = Receipt("203.0.113.2:1", "198.51.100.10:80", "pkg.lab.test", "/");
  const json by_host = Receipt("203.0.113.2:2", "192.0.2.10:80", "unrelated.evil.test.", "/");
  auto v = JudgeLab(LabContext(), kAllTried, Lab({by_address, by_host}));
  for (const char* id : {"net.allow.refused:evilpkg.lab.test", "net.allow.refused:unrelated.evil.test"}) {
    EXPECT_EQ(v[id].outcome, Outcome::kFail) << id << ": " << v[id].observed;
    EXPECT_EQ(v[id].direction, Direction::kTooPermissive) << id;
    EXPECT_FALSE(v[id].evidence.witness_facts.empty()) << id;
  }
  json connect = {{"peer", "203.0.113.2:3"}, {"local", "192.0.2.10:80"}, {"http_method", "GET"},
                  {"connect_target", "EVILpkg.lab.test:443"}};
  v = JudgeLab(LabContext(), kAllTried, Lab({connect}));
  EXPECT_EQ(v["net.allow.refused:evilpkg.lab.test"].outcome, Outcome::kFail);
}

TEST(FamilyNetLabTest, NoAttemptAndNoReceiptIsInconclusiveAndNoLabIsAnError) {
  auto v = JudgeLab(LabContext(), {}, Lab({}));
  EXPECT_EQ(v["net.allow.refused:evilpkg.lab.test"].outcome, Outcome::kInconclusive);
  StatusOr<Plan> plan = ExpandChecks(AllowOne(), SuiteOf({"net.lab"}), LabContext());
  ASSERT_TRUE(plan.ok());
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = "L1", .nonce = kNonce, .complete = true};
  result.frames.facts = kAllTried;
  result.frames.done = true;
  for (const Verdict& verdict : Evaluate(*plan, {result}, WitnessFacts{})) {
    EXPECT_EQ(verdict.outcome, Outcome::kError) << verdict.check.id;
  }
}

// A declared proxy: the lab families send through it (--proxy SPEC first), and net.proxy.untested
// is not planned, since the lab judges what the proxy lets through.
TEST(FamilyNetLabTest, ADeclaredProxyGoesFirstInBothLabInvocationsAndIsNoLongerUntested) {
  Policy policy = AllowOne();
  policy.network.proxy = *ParseNetworkProxy("env");
  PlanContext context = LabContext();
  context.values["lab.denied_name"] = "unrelated.evil.test";
  context.values["lab.denied_v4"] = "198.51.100.11";
  StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"net.tcp", "net.lab", "net.bypass"}), context);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::set<std::string> families;
  for (const auto& batch : plan->batches) {
    for (const auto& invocation : batch.invocations) {
      if (invocation.family != "net.lab" && invocation.family != "net.bypass") continue;
      families.insert(invocation.family);
      ASSERT_GE(invocation.args.size(), 3u) << invocation.family;
      EXPECT_EQ(invocation.args[0], "--proxy") << invocation.family;
      EXPECT_EQ(invocation.args[1], "env") << invocation.family;
      EXPECT_NE(invocation.args[2], "--proxy") << invocation.family;
    }
  }
  for (const Check& check : plan->checks) EXPECT_NE(check.id, "net.proxy.untested");
  EXPECT_EQ(families, (std::set<std::string>{"net.lab", "net.bypass"}));
  // Without a lab the proxy stays an untested skip.
  plan = ExpandChecks(policy, SuiteOf({"net.tcp", "net.lab"}), PlanContext{"/c", "/workspace", {}});
  ASSERT_TRUE(plan.ok());
  bool untested = false;
  for (const Check& check : plan->checks) untested |= check.id == "net.proxy.untested";
  EXPECT_TRUE(untested);
}

}  // namespace
}  // namespace sandprobe
