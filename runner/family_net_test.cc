// The network families' expansion and judgement, with the canary witness's observations made
// up: a leak counts only by receipt of this launch's nonce, both directions, skips with reasons.
#include <gtest/gtest.h>

#include "runner/evaluate.h"
#include "runner/plan.h"
#include "runner/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using testing::SuiteOf;
using testing::TierLowPolicy;

const char kNonce[] = "n0nce";

PlanContext Context(bool bridge) {
  PlanContext context{"/c", "/workspace", {}};
  context.values["net.loopback-tcp"] = "127.0.0.1:4000";
  context.values["net.loopback-udp"] = "127.0.0.1:4001";
  context.values["net.loopback-dns"] = "127.0.0.1:4002";
  if (bridge) {
    context.values["net.bridge-tcp"] = "172.17.0.1:5000";
    context.values["net.bridge-udp"] = "172.17.0.1:5001";
  }
  return context;
}

json Witness(std::vector<json> receipts, bool bridge = true) {
  json endpoints = {{"loopback-tcp", "127.0.0.1:4000"}, {"loopback-udp", "127.0.0.1:4001"}};
  if (bridge) endpoints["bridge-tcp"] = "172.17.0.1:5000";
  json net = {{"endpoints", endpoints}, {"receipts", receipts}, {"host_interfaces", json::object()}};
  if (!bridge) net["bridge_unavailable"] = "no bridge canary: docker: not found";
  return net;
}

json TcpFact(const std::string& site, bool ok) {
  json fact = {{"family", "net.tcp"}, {"path", site}, {"nonce", kNonce}, {"ok", ok}};
  if (!ok) fact["step"] = "connect", fact["errno"] = "ECONNREFUSED";
  return fact;
}

std::map<std::string, Verdict> JudgeNet(const Policy& policy, bool bridge, std::vector<json> facts,
                                   const json& net, Plan* plan_out = nullptr) {
  StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"net.tcp"}), Context(bridge));
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = "L1", .nonce = kNonce,
                     .complete = true};
  result.frames.facts = std::move(facts);
  result.frames.done = true;
  WitnessFacts witnesses;
  witnesses.observed["net"] = net;
  std::map<std::string, Verdict> by_id;
  for (Verdict& v : Evaluate(*plan, {result}, witnesses)) by_id[v.check.id] = v;
  if (plan_out) *plan_out = *plan;
  return by_id;
}

TEST(FamilyNetTest, ExpandsEndpointsIntoProbeArguments) {
  Plan plan;
  JudgeNet(TierLowPolicy(), true, {}, Witness({}), &plan);
  ASSERT_EQ(plan.batches.size(), 1u);
  EXPECT_EQ(plan.batches[0].invocations[0].args,
            (std::vector<std::string>{"loopback=127.0.0.1:4000", "bridge=172.17.0.1:5000"}));
}

TEST(FamilyNetTest, OnlyAReceiptOfThisNonceIsALeak) {
  const json ours = {{"endpoint", "bridge-tcp"}, {"peer", "172.17.0.2:3"}, {"nonce", kNonce}};
  const json other = {{"endpoint", "loopback-tcp"}, {"peer", "127.0.0.1:9"}, {"nonce", "older"}};
  auto v = JudgeNet(TierLowPolicy(), true, {TcpFact("loopback", true), TcpFact("bridge", true)},
               Witness({ours, other}));
  EXPECT_EQ(v["net.tcp.denied:bridge"].outcome, Outcome::kFail);
  EXPECT_EQ(v["net.tcp.denied:bridge"].direction, Direction::kTooPermissive);
  EXPECT_EQ(v["net.tcp.denied:bridge"].check.severity, Severity::kHigh);
  // The probe "connected" (a proxy could do that) but the canary never got this nonce: a pass
  // that says so.
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kPass);
  EXPECT_NE(v["net.tcp.denied:loopback"].observed.find("connected"), std::string::npos);
  EXPECT_NE(v["net.tcp.denied:loopback"].observed.find("never received"), std::string::npos);
}

TEST(FamilyNetTest, AnAllowedCanaryNotReachedIsTooRestrictive) {
  Policy policy = TierLowPolicy();
  policy.network.allow = {"loopback-tcp", "pypi.org:443"};
  auto v = JudgeNet(policy, true, {TcpFact("loopback", false), TcpFact("bridge", false)}, Witness({}));
  EXPECT_EQ(v["net.tcp.allowed:loopback"].outcome, Outcome::kFail);
  EXPECT_EQ(v["net.tcp.allowed:loopback"].direction, Direction::kTooRestrictive);
  EXPECT_EQ(v["net.tcp.denied:bridge"].outcome, Outcome::kPass);
  EXPECT_EQ(v["net.allow.untested:pypi.org:443"].outcome, Outcome::kSkip);
}

TEST(FamilyNetTest, EgressAllowCoversTheBridgeButNotTheHostLoopback) {
  Policy policy = TierLowPolicy();
  policy.network.egress = "allow";
  const json ours = {{"endpoint", "bridge-tcp"}, {"peer", "172.17.0.2:3"}, {"nonce", kNonce}};
  auto v = JudgeNet(policy, true, {TcpFact("loopback", false), TcpFact("bridge", true)}, Witness({ours}));
  EXPECT_EQ(v["net.tcp.allowed:bridge"].outcome, Outcome::kPass);
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kPass);
}

TEST(FamilyNetTest, NoBridgeIsASkipWithTheReason) {
  auto v = JudgeNet(TierLowPolicy(), false, {TcpFact("loopback", false)}, Witness({}, false));
  EXPECT_EQ(v["net.tcp.denied:bridge"].outcome, Outcome::kSkip);
  EXPECT_NE(v["net.tcp.denied:bridge"].observed.find("docker: not found"), std::string::npos);
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kPass);
}

TEST(FamilyNetTest, NoAttemptAndNoReceiptIsInconclusive) {
  auto v = JudgeNet(TierLowPolicy(), true, {}, Witness({}));
  EXPECT_EQ(v["net.tcp.denied:loopback"].outcome, Outcome::kInconclusive);
}

// The nonce that decides is the harness's own. A sandbox that delivers this launch's nonce to
// every canary and reports another one in its facts (or none) still fails every denied check.
TEST(FamilyNetTest, EgressIsJudgedByTheHarnessNonceNotTheOneTheFactsName) {
  std::vector<json> lying;
  for (const char* site : {"loopback", "bridge"}) {
    json fact = TcpFact(site, false);
    fact["nonce"] = "x";
    lying.push_back(fact);
  }
  const json receipts = Witness({{{"endpoint", "loopback-tcp"}, {"peer", "127.0.0.1:7"}, {"nonce", kNonce}},
                                 {{"endpoint", "bridge-tcp"}, {"peer", "172.17.0.2:7"}, {"nonce", kNonce}}});
  auto by_id = JudgeNet(TierLowPolicy(), true, lying, receipts);
  for (const char* id : {"net.tcp.denied:loopback", "net.tcp.denied:bridge"}) {
    EXPECT_EQ(by_id[id].outcome, Outcome::kFail) << id << ": " << by_id[id].observed;
    EXPECT_EQ(by_id[id].direction, Direction::kTooPermissive) << id;
  }
  // A receipt carrying the nonce the facts name, not the harness's, proves nothing.
  const json forged = Witness({{{"endpoint", "loopback-tcp"}, {"peer", "127.0.0.1:7"}, {"nonce", "x"}}});
  by_id = JudgeNet(TierLowPolicy(), true, lying, forged);
  EXPECT_EQ(by_id["net.tcp.denied:loopback"].outcome, Outcome::kPass);
}

}  // namespace
}  // namespace sandprobe
