// A suite that expands to no check is invalid input naming the policy section it needed
// (plan.cc ExpandChecks), not a green gate over nothing.
#include <gtest/gtest.h>

#include "families/plan.h"
#include "load/policy.h"
#include "load/suite.h"

namespace sandprobe {
namespace {

const std::string kDataDir = SANDPROBE_SOURCE_DIR;

Policy Parse(const std::string& text) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "p.json");
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  StatusOr<Policy> policy = ParsePolicy(*doc);
  EXPECT_TRUE(policy.ok()) << policy.status().message();
  return *policy;
}

Suite Shipped(const std::string& name) {
  StatusOr<Suite> suite = LoadSuite(kDataDir + "/suites/" + name + ".json", KnownFamilies());
  EXPECT_TRUE(suite.ok()) << suite.status().message();
  return *suite;
}

TEST(EmptyPlanTest, ResourcesSuiteWithoutLimitsIsInvalidInputNamingLimits) {
  Policy policy = Parse(R"({"name": "p", "description": "no limits"})");
  StatusOr<Plan> plan = ExpandChecks(policy, Shipped("resources"), PlanContext{"/c", "/w", {}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidInput);
  const std::string m = plan.status().message();
  EXPECT_NE(m.find("suite resources"), std::string::npos) << m;
  EXPECT_NE(m.find("expands to no check against policy p"), std::string::npos) << m;
  EXPECT_NE(m.find("\"limits\" (missing)"), std::string::npos) << m;
}

TEST(EmptyPlanTest, APresentButEmptySectionIsNamedAsPresent) {
  Policy policy = Parse(R"({"name": "p", "description": "d", "limits": {"tolerance": {"pids": 2}}})");
  StatusOr<Plan> plan = ExpandChecks(policy, Shipped("resources"), PlanContext{"/c", "/w", {}});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("\"limits\" (present, but declares nothing"),
            std::string::npos) << plan.status().message();
}

TEST(EmptyPlanTest, OneCheckIsEnough) {
  Policy policy = Parse(R"({"name": "p", "description": "d", "limits": {"pids": 64}})");
  StatusOr<Plan> plan = ExpandChecks(policy, Shipped("resources"), PlanContext{"/c", "/w", {}});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->checks.size(), 1u);
  EXPECT_EQ(plan->checks[0].family, "res.pids");
}

TEST(EmptyPlanTest, EveryShippedPolicyGivesTheDefaultSuiteChecks) {
  for (const char* name : {"tier-low", "tier-medium", "tier-high", "codex", "srt"}) {
    StatusOr<Policy> policy = LoadPolicy(kDataDir + "/policies/" + name + ".json");
    ASSERT_TRUE(policy.ok()) << policy.status().message();
    StatusOr<Plan> plan = ExpandChecks(*policy, Shipped("default"), PlanContext{"/c", "/w", {}});
    EXPECT_TRUE(plan.ok()) << name << ": " << plan.status().message();
  }
}

}  // namespace
}  // namespace sandprobe
