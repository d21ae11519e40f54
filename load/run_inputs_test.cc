#include "load/run_inputs.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using ::testing::HasSubstr;

const std::string kDir = SANDPROBE_SOURCE_DIR "/load/testdata/load/";
const FamilyCatalog kFamilies = {
    {"fs.alias", {VariantKind::kOneOf, {"symlink", "dotdot", "proc_root"}}},
    {"fs.read", {}},
};

TEST(RunInputsTest, LoadsTheProfileItsOwnPolicyAndTheSuitesMerged) {
  StatusOr<RunInputs> inputs = LoadRunInputs(kDir + "profile_oneshot.json", "",
                                             {kDir + "suite_default.json", kDir + "suite_default.json"}, kFamilies);
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  EXPECT_EQ(inputs->profile.source_path, kDir + "profile_oneshot.json");
  EXPECT_EQ(inputs->policy.name, "tier-test") << "the policy the profile names";
  EXPECT_EQ(inputs->suite.entries.size(), 2u) << "one suite named twice plans each family once";
}

TEST(RunInputsTest, AGivenPolicyWinsOverTheProfiles) {
  // profile_bad_policy.json names a policy that does not load: --policy means it is never read.
  StatusOr<RunInputs> inputs =
      LoadRunInputs(kDir + "profile_bad_policy.json", kDir + "policy_full.json", {kDir + "suite_default.json"}, kFamilies);
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  EXPECT_EQ(inputs->policy.source_path, kDir + "policy_full.json");
}

TEST(RunInputsTest, ErrorsNameTheFileTheyComeFrom) {
  StatusOr<RunInputs> bad_policy =
      LoadRunInputs(kDir + "profile_bad_policy.json", "", {kDir + "suite_default.json"}, kFamilies);
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_EQ(bad_policy.status().code(), StatusCode::kInvalidInput);
  EXPECT_THAT(bad_policy.status().message(), HasSubstr("profile_bad_policy.json: its policy"));
  EXPECT_THAT(bad_policy.status().message(), HasSubstr("policy_bad_pids.json:"));

  StatusOr<RunInputs> no_policy = LoadRunInputs(kDir + "profile_session.json", "", {kDir + "suite_default.json"}, kFamilies);
  ASSERT_FALSE(no_policy.ok());
  EXPECT_THAT(no_policy.status().message(), HasSubstr("the profile names no policy; pass --policy"));

  StatusOr<RunInputs> no_suite = LoadRunInputs(kDir + "profile_oneshot.json", "", {}, kFamilies);
  EXPECT_FALSE(no_suite.ok()) << "no suite is invalid input";

  StatusOr<RunInputs> not_a_suite =
      LoadRunInputs(kDir + "profile_oneshot.json", "", {kDir + "policy_full.json"}, kFamilies);
  ASSERT_FALSE(not_a_suite.ok());
  EXPECT_THAT(not_a_suite.status().message(), HasSubstr("policy_full.json"));
}

TEST(RunInputsTest, PreloadNamesTheProfilesAndRefusesBadInputBeforeAnyRun) {
  const std::string policy = kDir + "policy_full.json";
  const std::vector<std::string> suites = {kDir + "suite_default.json"};
  StatusOr<std::vector<RunInputs>> inputs =
      PreloadRunInputs({kDir + "profile_oneshot.json", kDir + "profile_session.json"}, policy, suites, kFamilies);
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  ASSERT_EQ(inputs->size(), 2u);
  EXPECT_EQ((*inputs)[0].profile.source_path, kDir + "profile_oneshot.json") << "in the order given";
  EXPECT_EQ((*inputs)[1].profile.source_path, kDir + "profile_session.json");

  StatusOr<std::vector<RunInputs>> twice =
      PreloadRunInputs({kDir + "profile_oneshot.json", kDir + "profile_oneshot.json"}, policy, suites, kFamilies);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidInput);
  EXPECT_THAT(twice.status().message(), HasSubstr("two profiles are named"));

  StatusOr<std::vector<RunInputs>> missing =
      PreloadRunInputs({kDir + "profile_oneshot.json", kDir + "nope.json"}, policy, suites, kFamilies);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.json"));

  // One sandbox named once is one run: no collision to refuse.
  EXPECT_TRUE(PreloadRunInputs({kDir + "profile_oneshot.json"}, policy, suites, kFamilies).ok());
}

}  // namespace
}  // namespace sandprobe
