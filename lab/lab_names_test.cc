// The lab's names: allowed ones from the policy, controls that the policy denies.
#include "lab/lab_names.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

std::vector<AllowEntry> Allow(std::initializer_list<const char*> texts) {
  std::vector<AllowEntry> out;
  for (const char* text : texts) out.push_back(*ParseAllowEntry(text));
  return out;
}

TEST(LabNamesTest, AllowedNamesAndTheirLookAlikes) {
  std::vector<AllowEntry> allow = Allow({"pypi.lab.test", "*.wild.test", "loopback-tcp", "192.0.2.0/24"});
  StatusOr<LabNames> names = MakeLabNames(allow);
  ASSERT_TRUE(names.ok()) << names.status().message();
  struct Want {
    const char* name;
    LabNameKind kind;
  };
  for (const Want& want : {Want{"pypi.lab.test", LabNameKind::kAllowed},
                           Want{"sp-lab.wild.test", LabNameKind::kAllowed},
                           Want{"unrelated.evil.test", LabNameKind::kUnrelated},
                           Want{"pypi.lab.test.evil.test", LabNameKind::kAllowedAsPrefix},
                           Want{"evilpypi.lab.test", LabNameKind::kGluedPrefix},
                           Want{"pypi.lab.test-evil.test", LabNameKind::kGluedSuffix},
                           Want{"evil.pypi.lab.test", LabNameKind::kSubdomain},
                           Want{"wild.test", LabNameKind::kWildcardBase}}) {
    const LabName* found = names->Find(want.name);
    ASSERT_NE(found, nullptr) << want.name;
    EXPECT_EQ(found->kind, want.kind) << want.name;
    const bool allowed = want.kind == LabNameKind::kAllowed;
    EXPECT_EQ(AllowListNamesName(allow, want.name), allowed) << want.name;
    EXPECT_TRUE(InNetwork(found->v4, *ParseIpAddress(allowed ? "192.0.2.0" : "198.51.100.0"), 24)) << want.name;
    EXPECT_TRUE(InNetwork(found->v6, *ParseIpAddress("2001:db8::"), 32)) << want.name;
  }
  // "evil.sp-lab.wild.test" is allowed by the wildcard: it cannot be a control.
  EXPECT_EQ(names->Find("evil.sp-lab.wild.test"), nullptr);
  EXPECT_EQ(names->Find("PYPI.lab.test.")->kind, LabNameKind::kAllowed);
}

TEST(LabNamesTest, AddressesAreDistinct) {
  StatusOr<LabNames> names = MakeLabNames(Allow({"a.test", "b.test", "*.c.test"}));
  ASSERT_TRUE(names.ok());
  std::set<std::string> seen;
  for (const LabName& n : names->names) {
    EXPECT_TRUE(seen.insert(n.v4.Text()).second) << n.name;
    EXPECT_TRUE(seen.insert(n.v6.Text()).second) << n.name;
  }
  EXPECT_EQ(seen.count(LabResolverV4().Text()), 0u);
  EXPECT_EQ(LabResolverV6().Text(), "2001:db8:53::53");
}

TEST(LabNamesTest, TooManyNamesIsAnError) {
  std::vector<AllowEntry> allow;
  for (int i = 0; i < 201; ++i) allow.push_back(*ParseAllowEntry("n" + std::to_string(i) + ".test"));
  StatusOr<LabNames> names = MakeLabNames(allow);
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().message(), "network.allow names 201 host names; the egress lab serves at most 200");
}

}  // namespace
}  // namespace sandprobe
