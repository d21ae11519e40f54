#include "model/policy_ref.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

TEST(PolicyRefTest, TextNamesFilePositionPointerAndNote) {
  PolicyRef ref{.file = "policies/tier-low.json", .pointer = "/filesystem/unreadable/2",
                .position = {7, 44}};
  EXPECT_EQ(ref.Text(), "policies/tier-low.json:7:44 /filesystem/unreadable/2");
  EXPECT_EQ(ref.Where(), "policies/tier-low.json:7:44");
  ref.position = {};
  EXPECT_EQ(ref.Text(), "policies/tier-low.json /filesystem/unreadable/2");
  ref.words = "not listed (ephemeral)";
  EXPECT_EQ(ref.Text(), "policies/tier-low.json /filesystem/unreadable/2: not listed (ephemeral)");
  EXPECT_EQ(PolicyRef::InWords("the profile's canaries_in").Text(), "the profile's canaries_in");
  EXPECT_TRUE(PolicyRef{}.empty());
}

TEST(PolicyRefTest, TextReadsBackAsTheSameRef) {
  for (const PolicyRef& ref : {
           PolicyRef{.file = "policies/tier-low.json", .pointer = "/filesystem/unreadable/2", .position = {7, 44}},
           PolicyRef{.file = "/a b/p.json", .pointer = "/limits/pids"},
           PolicyRef{.file = "p.json", .pointer = "/persistence", .position = {3, 5},
                     .words = "not listed (ephemeral)"},
           PolicyRef{.file = "x:9.json", .pointer = "/limits/cpus", .position = {1, 2}},
       }) {
    std::optional<PolicyRef> back = ParsePolicyRef(ref.Text());
    ASSERT_TRUE(back) << ref.Text();
    EXPECT_EQ(*back, ref) << ref.Text();
  }
  // Reports written before PolicyRef said "file: /pointer".
  std::optional<PolicyRef> old = ParsePolicyRef("tier-low.json: /limits/pids");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->file, "tier-low.json");
  EXPECT_EQ(old->pointer, "/limits/pids");
  EXPECT_FALSE(ParsePolicyRef("the suite's fs.mounts entry"));
  EXPECT_FALSE(ParsePolicyRef(""));
  EXPECT_FALSE(ParsePolicyRef(" /limits/pids"));
}

}  // namespace
}  // namespace sandprobe
