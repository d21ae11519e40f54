#include "mutate/mutant_verdicts.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

const VerdictOutcome kPass{Outcome::kPass, Direction::kNone, ""};
const VerdictOutcome kPermissive{Outcome::kFail, Direction::kTooPermissive, ""};
const VerdictOutcome kRestrictive{Outcome::kFail, Direction::kTooRestrictive, ""};
const VerdictOutcome kInconclusive{Outcome::kInconclusive, Direction::kNone, ""};
const VerdictOutcome kError{Outcome::kError, Direction::kNone, "launch failed"};
const VerdictOutcome kSkip{Outcome::kSkip, Direction::kNone, ""};

TEST(MutantVerdictsTest, OnlyAPermissiveMoveFromADecidedBaselineKills) {
  EXPECT_TRUE(MovesPermissive(kPass, kPermissive));
  EXPECT_TRUE(MovesPermissive(kInconclusive, kPermissive));
  EXPECT_TRUE(MovesPermissive(kRestrictive, kPermissive));
  EXPECT_TRUE(MovesPermissive(kRestrictive, kPass));
  EXPECT_FALSE(MovesPermissive(kPermissive, kPermissive)) << "no move";
  EXPECT_FALSE(MovesPermissive(kPass, kInconclusive)) << "the machine's load";
  EXPECT_FALSE(MovesPermissive(kInconclusive, kPass));
  EXPECT_FALSE(MovesPermissive(kPass, kRestrictive)) << "a change, not the weakening";
  EXPECT_FALSE(MovesPermissive(kPass, kError)) << "a launch that failed proves nothing";
  EXPECT_FALSE(MovesPermissive(kPermissive, kPass));
  EXPECT_FALSE(MovesPermissive(kError, kPermissive)) << "no baseline to move from";
  EXPECT_FALSE(MovesPermissive(kSkip, kPermissive));
}

Verdict V(const std::string& id, const VerdictOutcome& o) {
  Verdict v;
  v.check.id = id;
  v.outcome = o.outcome;
  v.direction = o.direction;
  v.observed = o.observed;
  return v;
}

TEST(MutantVerdictsTest, SortsEveryMoveAndIgnoresChecksOnlyOneSidePlanned) {
  std::map<std::string, VerdictOutcome> baseline = {
      {"a", kPass}, {"b", kPass}, {"c", kPass}, {"d", kInconclusive}, {"e", kPermissive}, {"f", kPass}};
  MutantDistinction d = CompareWithBaseline(baseline, {V("a", kPermissive), V("b", kError), V("c", kPass),
                                                       V("d", kPass), V("e", kPermissive), V("f", kRestrictive),
                                                       V("only-in-mutant", kPermissive)});
  EXPECT_EQ(d.flipped, (std::vector<std::string>{"a"}));
  ASSERT_EQ(d.kills.size(), 1u);
  EXPECT_EQ(DescribeOutcome(d.kills[0].from), "pass");
  EXPECT_EQ(DescribeOutcome(d.kills[0].to), "fail too-permissive");
  ASSERT_EQ(d.changed.size(), 3u);
  EXPECT_EQ(d.changed[0].id, "b");
  EXPECT_EQ(d.changed[1].id, "d");
  EXPECT_EQ(d.changed[2].id, "f");
  EXPECT_EQ(DescribeOutcome(d.changed[2].to), "fail too-restrictive");
  ASSERT_EQ(d.new_errors.size(), 1u);
  EXPECT_EQ(d.new_errors[0].id, "b");
  EXPECT_EQ(d.new_errors[0].to.observed, "launch failed");
}

TEST(MutantVerdictsTest, AnAuditInSeveralRunsKeepsTheFirstVerdictOfACheck) {
  std::map<std::string, VerdictOutcome> into;
  AddVerdicts(into, {V("a", kPass)});
  AddVerdicts(into, {V("a", kPermissive), V("b", kSkip)});
  EXPECT_EQ(into.at("a").outcome, Outcome::kPass);
  EXPECT_EQ(into.at("b").outcome, Outcome::kSkip);
}

}  // namespace
}  // namespace sandprobe
