#include "gate/check_selection.h"

#include <algorithm>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "families/test_policies.h"

namespace sandprobe {
namespace {

using testing::SuiteOf;

Policy FullPolicy() {
  Policy policy = testing::TierLowPolicy();
  policy.limits.pids = 64;
  policy.limits.memory_mib = 256;
  policy.persistence.survives = testing::Paths({"{workspace}"}, "survives");
  return policy;
}

Plan Expand(std::initializer_list<const char*> families) {
  PlanContext context{"/c", "/workspace", {{"persist.token", "tok"}}, true};
  StatusOr<Plan> plan = ExpandChecks(FullPolicy(), SuiteOf(families), context);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return *plan;
}

std::vector<std::string> Ids(const Plan& plan) {
  std::vector<std::string> ids;
  for (const Check& c : plan.checks) ids.push_back(c.id);
  return ids;
}

std::set<std::string> InvokedFamilies(const Plan& plan) {
  std::set<std::string> out;
  for (const LaunchBatch& b : plan.batches) {
    for (const ProbeInvocation& inv : b.invocations) out.insert(inv.family);
  }
  return out;
}

// Every check in exactly one launch, every index in range.
void ExpectConsistent(const Plan& plan) {
  std::multiset<std::size_t> seen;
  for (const LaunchBatch& b : plan.batches) seen.insert(b.check_indexes.begin(), b.check_indexes.end());
  ASSERT_EQ(seen.size(), plan.checks.size());
  for (std::size_t i = 0; i < plan.checks.size(); ++i) EXPECT_EQ(seen.count(i), 1u) << i;
}

TEST(CheckSelectionTest, GlobsSpanSlashesAndExactIdsMatchDespiteBrackets) {
  EXPECT_TRUE(CheckIdMatches("fs.read.*", "fs.read.denied:/etc/shadow"));
  EXPECT_TRUE(CheckIdMatches("*:/etc/shadow", "fs.read.denied:/etc/shadow"));
  EXPECT_FALSE(CheckIdMatches("fs.write.*", "fs.read.denied:/etc/shadow"));
  EXPECT_TRUE(CheckIdMatches("fs.alias.denied:host-canary[symlink]", "fs.alias.denied:host-canary[symlink]"));
  EXPECT_FALSE(CheckIdMatches("fs.read", "fs.read.denied:/etc/shadow"));
}

// A waiver or --check written when ids held placeholders still names its check.
TEST(CheckSelectionTest, APatternWithTheOldPlaceholdersNamesTheSameCheck) {
  EXPECT_TRUE(CheckIdMatches("fs.alias.denied:{host_canary}[symlink]", "fs.alias.denied:host-canary[symlink]"));
  EXPECT_TRUE(CheckIdMatches("fs.read.denied:{host_canary}", "fs.read.denied:host-canary"));
  EXPECT_TRUE(CheckIdMatches("*:{workspace}", "fs.write.allowed:workspace"));
  EXPECT_FALSE(CheckIdMatches("fs.read.denied:{host_canary}", "fs.read.denied:/etc/shadow"));
}

// fnmatch never reports a broken pattern: "[" silently matches a literal "[", an unknown class
// nothing. GlobProblem finds them through regcomp's grammar, and lets every real id through.
TEST(CheckSelectionTest, ABrokenGlobIsNamedAndEveryRealIdIsAGlob) {
  for (const char* broken : {"[", "fs.read.denied:[", "fs.*[!", "[[:bogus:]]", "[z-a]", "x\\", ""}) {
    EXPECT_NE(GlobProblem(broken), std::nullopt) << broken;
  }
  EXPECT_THAT(*GlobProblem("["), ::testing::HasSubstr("not a valid glob"));
  for (const char* fine : {"fs.read.*", "*:/etc/shadow", "fs.alias.denied:{host_canary}[symlink]", "priv.syscall:socket(AF_VSOCK)",
                           "[[]", "[]x]", "[!a]*", "[[:alpha:]]*", "a?c", "net.tcp.egress:127.0.0.1:*", "x\\*", "limits.cpus|x$^+"}) {
    EXPECT_EQ(GlobProblem(fine), std::nullopt) << fine;
  }
  CheckSelection bad{{"fs.read.*"}, {"["}};
  Status s = CheckSelectionGlobs(bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_THAT(s.message(), ::testing::StartsWith("--skip \"[\": not a valid glob"));
}

TEST(CheckSelectionTest, EmptySelectionLeavesThePlanAlone) {
  Plan plan = Expand({"fs.read", "env.secret"});
  Plan before = plan;
  ASSERT_TRUE(SelectChecks(plan, {}).ok());
  EXPECT_EQ(Ids(plan), Ids(before));
  EXPECT_EQ(plan.batches.size(), before.batches.size());
}

TEST(CheckSelectionTest, CheckKeepsMatchesInOrderAndTrimsOtherFamiliesFromTheSharedLaunch) {
  Plan plan = Expand({"fs.read", "fs.write", "env.secret", "res.pids", "res.memory"});
  ASSERT_TRUE(SelectChecks(plan, {.only = {"fs.read.denied:*"}}).ok());
  EXPECT_EQ(Ids(plan), (std::vector<std::string>{"fs.read.denied:/etc/shadow",
                                                 "fs.read.denied:host-canary"}));
  ExpectConsistent(plan);
  ASSERT_EQ(plan.batches.size(), 1u);
  // fs.write goes: no check left reads its facts (a control comes from the selected checks).
  EXPECT_EQ(InvokedFamilies(plan), (std::set<std::string>{"fs.read"}));
}

// Skipping every check of a family takes the family off the probe's command line (a JS probe
// run with --skip 'fs.mounts.*' was still sent fs.mounts).
TEST(CheckSelectionTest, SkippingAllOfAFamilysChecksDoesNotSendIt) {
  Plan plan = Expand({"fs.read", "fs.write", "fs.mounts", "env.secret"});
  ASSERT_EQ(InvokedFamilies(plan).count("fs.mounts"), 1u);
  ASSERT_TRUE(SelectChecks(plan, {.skip = {"fs.mounts.*"}}).ok());
  EXPECT_EQ(InvokedFamilies(plan), (std::set<std::string>{"fs.read", "fs.write", "env.secret"}));
  ExpectConsistent(plan);
}

TEST(CheckSelectionTest, SkipDropsMatchesAndAnExclusiveLaunchGoesWithItsOnlyCheck) {
  Plan plan = Expand({"fs.read", "res.pids", "res.memory"});
  ASSERT_TRUE(SelectChecks(plan, {.skip = {"res.memory*", "limits.memory*"}}).ok());
  for (const Check& c : plan.checks) EXPECT_NE(c.family, "res.memory") << c.id;
  EXPECT_EQ(InvokedFamilies(plan).count("res.memory"), 0u);
  EXPECT_EQ(InvokedFamilies(plan).count("res.pids"), 1u);
  ExpectConsistent(plan);
}

TEST(CheckSelectionTest, APersistenceCheckKeepsThePlantLaunchItDependsOn) {
  Plan full = Expand({"persist"});
  ASSERT_GE(full.batches.size(), 2u);
  // The last launch's checks only (a fresh session): the plant launch must still run.
  std::string last_id = full.checks[full.batches.back().check_indexes.front()].id;
  Plan plan = full;
  ASSERT_TRUE(SelectChecks(plan, {.only = {last_id}}).ok());
  ASSERT_EQ(plan.checks.size(), 1u);
  EXPECT_EQ(plan.batches.size(), full.batches.size());
  EXPECT_EQ(InvokedFamilies(plan).count("persist.plant"), 1u);
  ExpectConsistent(plan);
}

TEST(CheckSelectionTest, AGlobThatMatchesNothingIsInvalidInput) {
  Plan plan = Expand({"fs.read"});
  Status s = SelectChecks(plan, {.only = {"fs.read.*", "fs.raed.*"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("--check fs.raed.*: matches none"), std::string::npos) << s.message();
}

TEST(CheckSelectionTest, NothingLeftIsInvalidInput) {
  Plan plan = Expand({"fs.read"});
  Status s = SelectChecks(plan, {.only = {"fs.read.*"}, .skip = {"*"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no check of the plan's 4 is left"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sandprobe
