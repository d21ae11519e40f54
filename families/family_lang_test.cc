// lang.escape on the host side: the plan hands the probe the canary, and the judge believes
// only the canary's own hash (the harness's), never the probe's "ok".
#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/plan.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using testing::SuiteOf;
using testing::TierLowPolicy;

const char kCanarySha[] = "8adac39f741f276f9223f9e8253b27ae22086a27aae2d19669021f516d737e8d";
const char kCheck[] = "lang.escape.denied:host-canary";

Policy EscapePolicy() {
  Policy policy = TierLowPolicy();
  policy.filesystem.readable = testing::Paths({"{workspace}"}, "readable");
  policy.filesystem.unreadable = testing::Paths({"{host_canary}"}, "unreadable");
  return policy;
}

Plan PlanFor(const Policy& policy) {
  PlanContext context{"/c", "/workspace", {}, false};
  StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"lang.escape"}), context);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan.ok() ? *plan : Plan{};
}

json Escape(const std::string& variant, bool ok, const std::string& sha256 = "") {
  json fact = {{"family", "lang.escape"}, {"variant", variant}, {"ok", ok}, {"path", "/c"},
               {"attempts", json::array()}};
  if (!sha256.empty()) fact["attempts"].push_back({{"route", "getattr"}, {"ok", true}, {"sha256", sha256}});
  if (ok && !sha256.empty()) fact["sha256"] = sha256;
  return fact;
}

Verdict Judged(const std::vector<json>& facts) {
  Plan plan = PlanFor(EscapePolicy());
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = plan.batches.at(0).id, .complete = true};
  result.frames.facts = facts;
  result.frames.done = true;
  WitnessFacts witnesses;
  witnesses.canary_path = "/c";
  witnesses.canary_sha256 = kCanarySha;
  for (Verdict& v : Evaluate(plan, {result}, witnesses)) {
    if (v.check.id == kCheck) return v;
  }
  ADD_FAILURE() << "no " << kCheck;
  return {};
}

TEST(LangEscapeFamily, ThePlanHandsTheProbeTheCanaryWhenThePolicyDeniesIt) {
  Plan plan = PlanFor(EscapePolicy());
  ASSERT_EQ(plan.batches.size(), 1u);
  bool found = false;
  for (const ProbeInvocation& invocation : plan.batches[0].invocations) {
    if (invocation.family != "lang.escape") continue;
    found = true;
    EXPECT_EQ(invocation.args, (std::vector<std::string>{"--canary", "/c"}));
  }
  EXPECT_TRUE(found);
  ASSERT_EQ(plan.checks.size(), 1u);
  EXPECT_EQ(plan.checks[0].id, kCheck);
  EXPECT_EQ(plan.checks[0].severity, Severity::kCritical);
}

TEST(LangEscapeFamily, APolicyThatLetsTheCanaryBeReadPlansNoEscapeCheck) {
  Policy policy = EscapePolicy();
  policy.filesystem.readable = testing::Paths({"{host_canary}"}, "readable");
  policy.filesystem.unreadable = {};
  // The suite then expands to no check: invalid input naming the section it reads.
  StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"lang.escape"}), PlanContext{"/c", "/workspace", {}, false});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("\"filesystem\""), std::string::npos) << plan.status().message();
}

TEST(LangEscapeFamily, EveryRouteRefusedPasses) {
  Verdict v = Judged({{{"family", "hello"}}, Escape("generator_frame", false), Escape("subclasses", false)});
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_NE(v.observed.find("all 2 escape routes were refused"), std::string::npos) << v.observed;
}

TEST(LangEscapeFamily, TheCanarysOwnHashInAnAttemptFails) {
  Verdict v = Judged({Escape("generator_frame", true, kCanarySha), Escape("subclasses", false)});
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_NE(v.observed.find("1 of 2 escape routes: generator_frame"), std::string::npos) << v.observed;
}

TEST(LangEscapeFamily, AClaimedReadWithAnotherHashIsNeitherPassNorFail) {
  Verdict v = Judged({Escape("generator_frame", true, std::string(64, '0'))});
  EXPECT_EQ(v.outcome, Outcome::kInconclusive) << v.observed;
}

TEST(LangEscapeFamily, NoEscapeFactIsNoPass) {
  Verdict v = Judged({{{"family", "hello"}}});
  EXPECT_NE(v.outcome, Outcome::kPass) << v.observed;
}

}  // namespace
}  // namespace sandprobe
