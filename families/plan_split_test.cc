// Splitting a shared launch over the argument budget: every part within the budget, each
// denied path's checks (fs.read, fs.write, fs.alias) in the same part as its arguments, the
// allowed (control) paths and options in every part, every check in exactly one part; and
// judged, a split plan gives the verdicts of the whole one.
#include "families/plan_split.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

Plan ManyDenied(int n) {
  Policy policy = testing::TierLowPolicy();
  for (int i = 0; i < n; ++i) {
    policy.filesystem.unreadable.push_back({"/srv/denied/" + std::to_string(i), "/filesystem/unreadable/x", "p.json:1:1"});
    policy.filesystem.unwritable.push_back({"/srv/denied/w" + std::to_string(i), "/filesystem/unwritable/x", "p.json:1:1"});
  }
  auto plan = ExpandChecks(policy, testing::SuiteOf({"fs.read", "fs.write", "fs.alias", "fs.mounts", "env.secret"}),
                           PlanContext{"/var/tmp/sp/canary.txt", "/workspace"});
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return *plan;
}

TEST(PlanSplitTest, ALaunchWithinTheBudgetStaysWhole) {
  Plan plan = ManyDenied(10);
  std::size_t before = plan.batches.size();
  SplitByArgumentBudget(plan, 4000);
  EXPECT_EQ(plan.batches.size(), before);
}

TEST(PlanSplitTest, PartsStayWithinTheBudgetAndKeepEachPathsChecksTogether) {
  Plan plan = ManyDenied(1000);
  ASSERT_GT(ProbeArgCount(plan.batches[0]), 1000u);
  std::size_t checks = plan.checks.size();
  SplitByArgumentBudget(plan, 1000);
  ASSERT_GT(plan.batches.size(), 3u);
  std::map<std::size_t, int> seen;
  for (const LaunchBatch& batch : plan.batches) {
    EXPECT_LE(ProbeArgCount(batch), 1000u) << batch.id;
    std::set<std::string> args;
    for (const ProbeInvocation& inv : batch.invocations) {
      for (const std::string& a : inv.args) args.insert(inv.family + " " + a);
    }
    for (std::size_t i : batch.check_indexes) {
      ++seen[i];
      const Check& check = plan.checks[i];
      if (check.family != "fs.read" && check.family != "fs.write" && check.family != "fs.alias") continue;
      if (check.expect == Expectation::kDenied && check.variant != "mount_root") {
        EXPECT_TRUE(args.count(check.family + " " + check.resolved_target)) << batch.id << " " << check.id;
      }
      // Each part that judges a family's denials carries that family's controls.
      if (check.family != "fs.alias") {
        EXPECT_TRUE(args.count(check.family + " /workspace")) << batch.id << ": the control of " << check.id;
      }
    }
  }
  EXPECT_EQ(seen.size(), checks) << "every check in some part";
  for (const auto& [i, n] : seen) EXPECT_EQ(n, 1) << plan.checks[i].id;
}

// Facts for every asked path, as a tight sandbox reports them (each denied; controls read and
// written): the split plan's verdicts equal the whole plan's.
std::vector<BatchResult> TightResults(const Plan& plan) {
  std::vector<BatchResult> results;
  for (const LaunchBatch& batch : plan.batches) {
    BatchResult r;
    r.state = BatchResult::State::kRan;
    r.complete = true;
    r.launch_id = batch.id;
    for (const ProbeInvocation& inv : batch.invocations) {
      for (const std::string& a : inv.args) {
        if (a.empty() || a[0] != '/') continue;
        bool allowed = a == "/workspace" || a == "/tmp";
        nlohmann::json f = {{"family", inv.family}, {"path", a}, {"ok", allowed}};
        if (inv.family == "fs.read" && allowed) f.update({{"kind", "dir"}, {"entries", 0}, {"sha256", std::string(64, 'e')}});
        if (!allowed) f.update({{"step", "open"}, {"errno", "EACCES"}});
        if (inv.family == "fs.alias") {
          for (const char* v : {"symlink", "dotdot", "proc_root"}) {
            nlohmann::json g = f;
            g["variant"] = v;
            r.frames.facts.push_back(g);
          }
          continue;
        }
        r.frames.facts.push_back(f);
      }
    }
    r.frames.done = true;
    results.push_back(r);
  }
  return results;
}

TEST(PlanSplitTest, ASplitPlanJudgesLikeTheWholeOne) {
  Plan whole = ManyDenied(300);
  Plan split = whole;
  SplitByArgumentBudget(split, 500);
  ASSERT_GT(split.batches.size(), whole.batches.size());
  WitnessFacts witnesses{"/var/tmp/sp/canary.txt", std::string(64, 'c'), std::string(64, 'd')};
  std::vector<Verdict> a = Evaluate(whole, TightResults(whole), witnesses);
  std::vector<Verdict> b = Evaluate(split, TightResults(split), witnesses);
  ASSERT_EQ(a.size(), b.size());
  std::map<std::string, int> passes;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].check.family == "fs.mounts" || a[i].check.family == "env.secret" || a[i].check.variant == "mount_root") continue;
    EXPECT_EQ(a[i].outcome, b[i].outcome) << a[i].check.id << ": " << a[i].observed << " vs " << b[i].observed;
    ++passes[std::string(OutcomeName(b[i].outcome))];
  }
  EXPECT_GT(passes["pass"], 900) << "the denials passed, with their controls in every part";
}

}  // namespace
}  // namespace sandprobe
