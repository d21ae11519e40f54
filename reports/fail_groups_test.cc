#include "reports/fail_groups.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

Verdict Fail(const std::string& family, const std::string& target, const std::string& variant = "") {
  Verdict v;
  v.outcome = Outcome::kFail;
  v.check.family = family;
  v.check.target = target;
  v.check.variant = variant;
  v.check.expect = Expectation::kDenied;
  v.check.id = family == "fs.alias" ? "fs.alias.denied:" + target + "[" + variant + "]"
                                    : family + ".denied:" + target;
  return v;
}

TEST(GroupFailsTest, AReadAndItsAliasesAreOneGroupLedByThePlainRead) {
  // The aliases come first in the report; the plain read still leads.
  std::vector<Verdict> vs = {Fail("fs.alias", "/etc/shadow", "symlink"),
                             Fail("fs.alias", "/etc/shadow", "dotdot"),
                             Fail("fs.read", "/etc/shadow"),
                             Fail("fs.alias", "/etc/shadow", "proc_root")};
  std::vector<FailGroup> groups = GroupFails(vs);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].lead, &vs[2]);
  EXPECT_EQ(groups[0].size(), 4u);
  EXPECT_EQ(AliasList(groups[0]), "symlink, dotdot, proc_root");
}

TEST(GroupFailsTest, OtherFilesOtherFamiliesAndPassesStayApart) {
  std::vector<Verdict> vs = {Fail("fs.read", "/etc/shadow"), Fail("fs.read", "{host_canary}"),
                             Fail("fs.alias", "{host_canary}", "dotdot"),
                             Fail("fs.write", "/etc/shadow"), Fail("env.secret", "")};
  Verdict pass = Fail("fs.alias", "/etc/shadow", "symlink");
  pass.outcome = Outcome::kPass;
  vs.push_back(pass);
  std::vector<FailGroup> groups = GroupFails(vs);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].lead, &vs[0]);
  EXPECT_EQ(groups[0].size(), 1u);
  EXPECT_EQ(groups[1].lead, &vs[1]);
  EXPECT_EQ(AliasList(groups[1]), "dotdot");
  EXPECT_EQ(groups[2].lead, &vs[3]);  // a denied write is another promise
  EXPECT_EQ(groups[3].lead, &vs[4]);
}

TEST(GroupFailsTest, AnAllowedReadThatFailedIsNotALeak) {
  Verdict allowed = Fail("fs.read", "/workspace");
  allowed.check.expect = Expectation::kAllowed;
  std::vector<Verdict> vs = {allowed, Fail("fs.alias", "/workspace", "symlink")};
  EXPECT_EQ(GroupFails(vs).size(), 2u);
}

TEST(GroupFailsTest, AWaivedFailDoesNotHideInAnUnwaivedGroup) {
  std::vector<Verdict> vs = {Fail("fs.read", "/etc/shadow"), Fail("fs.alias", "/etc/shadow", "symlink")};
  vs[1].waiver = AppliedWaiver{.pattern = "fs.alias.*", .reason = "r", .expires = "2099-01-01"};
  EXPECT_EQ(GroupFails(vs).size(), 2u);
}

}  // namespace
}  // namespace sandprobe
