#include "families/plan.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "families/family.h"
#include "families/family_fs.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using testing::SuiteOf;
using testing::TierLowPolicy;

const PlanContext kContext{"/var/tmp/sp-x/canary-1.txt", "/workspace"};

std::vector<std::string> Ids(const Plan& plan) {
  std::vector<std::string> ids;
  for (const Check& c : plan.checks) ids.push_back(c.id);
  return ids;
}

TEST(PlanTest, ExpandsReadsAndWritesInBothDirectionsWithStableIds) {
  auto plan = ExpandChecks(TierLowPolicy(), SuiteOf({"fs.read", "fs.write"}), kContext);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(Ids(*plan), (std::vector<std::string>{
                            "fs.read.allowed:workspace", "fs.read.allowed:/tmp",
                            "fs.read.denied:/etc/shadow", "fs.read.denied:host-canary",
                            "fs.write.allowed:workspace", "fs.write.allowed:/tmp",
                            "fs.write.denied:/etc"}));
  EXPECT_EQ(plan->checks[3].resolved_target, "/var/tmp/sp-x/canary-1.txt");
  EXPECT_EQ(plan->checks[0].resolved_target, "/workspace");
  EXPECT_EQ(plan->checks[2].severity, Severity::kHigh);
  EXPECT_EQ(plan->checks[0].severity, Severity::kMedium);
  EXPECT_EQ(plan->checks[2].reference.Text(), "p.json:1:1 /filesystem/unreadable/0");
}

TEST(PlanTest, SplitSharedLaunchKeepsFamilyGroupsWholeAndEveryCheckOnce) {
  auto plan = ExpandChecks(TierLowPolicy(), SuiteOf({"fs.read", "fs.write", "fs.alias", "env.secret"}),
                           kContext);
  ASSERT_TRUE(plan.ok());
  Plan one = *plan;
  SplitSharedLaunch(one, 1);
  EXPECT_EQ(one.batches.size(), plan->batches.size());
  SplitSharedLaunch(*plan, 4);
  ASSERT_EQ(plan->batches.size(), 2u);  // two groups: fs and env
  std::multiset<std::size_t> seen;
  for (const LaunchBatch& b : plan->batches) {
    std::set<std::string> groups;
    for (std::size_t i : b.check_indexes) {
      seen.insert(i);
      groups.insert(plan->checks[i].family.substr(0, plan->checks[i].family.find('.')));
    }
    EXPECT_EQ(groups.size(), 1u) << b.id;
    for (const ProbeInvocation& inv : b.invocations) {
      EXPECT_TRUE(groups.count(inv.family.substr(0, inv.family.find('.')))) << inv.family;
    }
  }
  EXPECT_EQ(seen.size(), plan->checks.size());
  EXPECT_EQ(std::set<std::size_t>(seen.begin(), seen.end()).size(), plan->checks.size());
  EXPECT_EQ(plan->batches[0].id, "B1");
  EXPECT_EQ(plan->batches[1].id, "B1.2");
}

TEST(PlanTest, OnlyResourceLaunchesAskForHostReadings) {
  Policy policy = TierLowPolicy();
  policy.limits.pids = 50;
  auto plan = ExpandChecks(policy, SuiteOf({"fs.read", "res.pids"}), kContext);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->batches.size(), 2u);
  EXPECT_FALSE(plan->batches[0].host_readings);  // fs.read: docker inspect would add nothing
  EXPECT_TRUE(plan->batches[1].exclusive);
  EXPECT_TRUE(plan->batches[1].host_readings);   // res.pids: OOMKilled, PidsLimit beside it
}

TEST(PlanTest, EverythingGoesIntoOneLaunch) {
  auto plan = ExpandChecks(TierLowPolicy(), SuiteOf({"fs.read", "fs.write", "fs.alias", "env.secret"}),
                           kContext);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->batches.size(), 1u);
  EXPECT_EQ(plan->batches[0].check_indexes.size(), plan->checks.size());
  EXPECT_EQ(ProbeCommandArgs(plan->batches[0], "N"),
            (std::vector<std::string>{
                "--nonce", "N", "fs.read", "/workspace", "/tmp", "/etc/shadow",
                "/var/tmp/sp-x/canary-1.txt", "--next", "fs.write", "/workspace", "/tmp", "/etc",
                "--next", "fs.alias", "--scratch", "/tmp", "/etc/shadow",
                "/var/tmp/sp-x/canary-1.txt", "--next", "env.secret", "SANDPROBE_CANARY_"}));
}

TEST(PlanTest, AProbeCommandLineOverTheBudgetIsRefusedWithItsSize) {
  std::vector<std::string> fits(1000, std::string(100, 'a'));
  EXPECT_EQ(ProbeArgvTooLong(fits), std::nullopt);
  std::vector<std::string> too_long(20000, std::string(100, 'a'));  // 20,000 x (100 + NUL + pointer)
  std::optional<std::string> why = ProbeArgvTooLong(too_long);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("2180000 bytes (20000 arguments), over the 1048576"), std::string::npos) << *why;
  // Short arguments: the argv pointers alone pass the budget (what made E2BIG at 1.6 MB of text).
  EXPECT_TRUE(ProbeArgvTooLong(std::vector<std::string>(120000, "/a")).has_value());
}

TEST(PlanTest, AliasesEveryDeniedPathWithEachVariant) {
  auto plan = ExpandChecks(TierLowPolicy(), SuiteOf({"fs.alias"}), kContext);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->checks.size(), 2u * DefaultAliasVariants().size());
  EXPECT_EQ(plan->checks[0].id, "fs.alias.denied:/etc/shadow[symlink]");
  EXPECT_EQ(plan->checks[0].variant, "symlink");
}

TEST(PlanTest, EnvSecretFollowsThePolicy) {
  Policy policy = TierLowPolicy();
  auto hidden = ExpandChecks(policy, SuiteOf({"env.secret"}), kContext);
  ASSERT_TRUE(hidden.ok());
  EXPECT_EQ(hidden->checks[0].id, "env.secret.hidden");
  EXPECT_EQ(hidden->checks[0].expect, Expectation::kDenied);
  policy.host.env_secrets = Visibility::kVisible;
  auto visible = ExpandChecks(policy, SuiteOf({"env.secret"}), kContext);
  ASSERT_TRUE(visible.ok());
  EXPECT_EQ(visible->checks[0].id, "env.secret.visible");
  EXPECT_EQ(visible->checks[0].expect, Expectation::kAllowed);
}

TEST(PlanTest, DuplicatePathIsAnError) {
  Policy policy = TierLowPolicy();
  policy.filesystem.unreadable.push_back(policy.filesystem.unreadable[0]);
  auto plan = ExpandChecks(policy, SuiteOf({"fs.read"}), kContext);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("duplicate check fs.read.denied:/etc/shadow"),
            std::string::npos);
}

TEST(PlanTest, UnknownPlaceholderInAPolicyPathIsAnError) {
  Policy policy = TierLowPolicy();
  policy.filesystem.unreadable = testing::Paths({"{nope}/x"}, "unreadable");
  auto plan = ExpandChecks(policy, SuiteOf({"fs.read"}), kContext);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("unknown placeholder {nope}"), std::string::npos);
}

TEST(PlanTest, KnownFamiliesAreTheTablesNames) {
  for (const char* family : {"env.secret", "fs.alias", "fs.read", "fs.write"}) {
    EXPECT_EQ(KnownFamilies().count(family), 1u) << family;
  }
  EXPECT_EQ(KnownFamilies().size(), FamilyTable().size()) << "two rows share a name";
}

// The suite loader checks variants with the rules the family rows declare: the families whose
// Expand reads SuiteEntry::variants declare them, every other family takes none.
TEST(PlanTest, KnownFamiliesCarryEachRowsVariantRule) {
  const FamilyCatalog& known = KnownFamilies();
  EXPECT_EQ(known.at("fs.alias").kind, VariantKind::kOneOf);
  EXPECT_EQ(known.at("fs.alias").names, DefaultAliasVariants());
  EXPECT_EQ(known.at("net.unix").kind, VariantKind::kAbsolutePaths);
  EXPECT_EQ(known.at("priv.syscalls").kind, VariantKind::kOneOf);
  const std::vector<std::string>& syscalls = known.at("priv.syscalls").names;
  EXPECT_NE(std::find(syscalls.begin(), syscalls.end(), "mount"), syscalls.end());
  for (const auto& [family, rule] : known) {
    if (family == "fs.alias" || family == "net.unix" || family == "priv.syscalls") continue;
    EXPECT_EQ(rule.kind, VariantKind::kNone) << family;
  }
}

// issue 27: a family the run's probe does not implement is skipped "not expressible in js",
// never sent to the probe (it would refuse the whole launch), never an error or a pass.
const ProbeAbilities kJs{"js", {"fs.read", "fs.write", "fs.alias", "env.secret", "persist.plant", "persist.check"}};

Policy PersistPolicy() {
  Policy policy = TierLowPolicy();
  policy.persistence.survives = testing::Paths({"{workspace}"}, "survives");
  return policy;
}

const LaunchBatch* BatchOf(const Plan& plan, const std::string& check_id) {
  for (const LaunchBatch& b : plan.batches) {
    for (std::size_t i : b.check_indexes) {
      if (plan.checks[i].id == check_id) return &b;
    }
  }
  return nullptr;
}

TEST(SetAsideInexpressible, FamiliesTheProbeLacksAreSetAsideAndNeverSent) {
  const PlanContext context{"/c", "/workspace", {{"persist.token", "tok"}}};
  auto plan = ExpandChecks(PersistPolicy(), SuiteOf({"fs.read", "priv.caps", "priv.seccomp", "persist"}), context);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const Plan before = *plan;
  SetAsideInexpressible(*plan, kJs);
  EXPECT_EQ(Ids(*plan), Ids(before)) << "every check stays in the plan";
  std::set<std::string> sent;
  for (const LaunchBatch& b : plan->batches) {
    for (const ProbeInvocation& inv : b.invocations) sent.insert(inv.family);
  }
  EXPECT_EQ(sent, (std::set<std::string>{"fs.read", "persist.plant", "persist.check"}));
  const LaunchBatch* caps = BatchOf(*plan, "priv.caps.sys_admin");
  ASSERT_NE(caps, nullptr);
  EXPECT_EQ(caps->not_expressible, "not expressible in js: the js probe does not implement priv.caps");
  EXPECT_TRUE(caps->invocations.empty());
  EXPECT_TRUE(caps->exclusive) << "never split into or beside the shared launch";
  const LaunchBatch* read = BatchOf(*plan, "fs.read.denied:/etc/shadow");
  ASSERT_NE(read, nullptr);
  EXPECT_TRUE(read->not_expressible.empty());
  for (const Check& c : plan->checks) {
    if (c.family != "persist") continue;
    ASSERT_NE(BatchOf(*plan, c.id), nullptr) << c.id;
    EXPECT_TRUE(BatchOf(*plan, c.id)->not_expressible.empty()) << c.id;
  }
  std::set<std::string> ids;
  for (const LaunchBatch& b : plan->batches) EXPECT_TRUE(ids.insert(b.id).second) << "a second " << b.id;
}

TEST(SetAsideInexpressible, ASuiteFamilyNeedsEveryProbeFamilyItUses) {
  const PlanContext context{"/c", "/workspace", {{"persist.token", "tok"}}};
  auto plan = ExpandChecks(PersistPolicy(), SuiteOf({"fs.read", "persist"}), context);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  SetAsideInexpressible(*plan, {"python", {"fs.read", "persist.plant"}});
  std::size_t launched = 0;
  for (const LaunchBatch& b : plan->batches) {
    for (const ProbeInvocation& inv : b.invocations) {
      EXPECT_NE(inv.family.rfind("persist.", 0), 0u) << "no persistence launch is left: " << b.id;
    }
    launched += b.not_expressible.empty() ? 1 : 0;
  }
  EXPECT_EQ(launched, 1u) << "the shared launch only";
  for (const Check& c : plan->checks) {
    if (c.family == "persist") {
      EXPECT_EQ(BatchOf(*plan, c.id)->not_expressible,
                "not expressible in python: the python probe does not implement persist.check");
    }
  }
}

TEST(SetAsideInexpressible, AProbeWithEveryFamilyChangesNothing) {
  auto plan = ExpandChecks(TierLowPolicy(), SuiteOf({"fs.read", "fs.write", "priv.caps"}), kContext);
  ASSERT_TRUE(plan.ok());
  const Plan before = *plan;
  std::vector<std::string> all;
  for (const FamilyRow& row : FamilyTable()) all.push_back(row.name);
  all.insert(all.end(), {"persist.plant", "persist.check"});
  SetAsideInexpressible(*plan, {"native", all});
  ASSERT_EQ(plan->batches.size(), before.batches.size());
  for (std::size_t b = 0; b < before.batches.size(); ++b) {
    EXPECT_EQ(plan->batches[b].check_indexes, before.batches[b].check_indexes);
    EXPECT_EQ(plan->batches[b].invocations.size(), before.batches[b].invocations.size());
  }
}

}  // namespace
}  // namespace sandprobe
