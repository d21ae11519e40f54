#include "gate/run_matrix.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/exit_code.h"
#include "families/plan.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;

const std::string kData = SANDPROBE_SOURCE_DIR;

TEST(RunMatrixTest, PerSandboxPathPutsTheNameBeforeTheExtension) {
  EXPECT_EQ(PerSandboxPath("out.json", "docker-hardened"), "out.docker-hardened.json");
  EXPECT_EQ(PerSandboxPath("/r/junit.xml", "bwrap-strict"), "/r/junit.bwrap-strict.xml");
  EXPECT_EQ(PerSandboxPath("r/report.sarif.json", "b"), "r/report.sarif.b.json");
  EXPECT_EQ(PerSandboxPath("out", "b"), "out.b");
  EXPECT_EQ(PerSandboxPath("/tmp/.hidden", "b"), "/tmp/.hidden.b");
}

TEST(RunMatrixTest, WorstExitCodeRanksInvalidInputThenHarnessThenFail) {
  EXPECT_EQ(WorstExitCode({}), kExitPass);
  EXPECT_EQ(WorstExitCode({kExitPass, kExitFail, kExitPass}), kExitFail);
  EXPECT_EQ(WorstExitCode({kExitFail, kExitHarness, kExitPass}), kExitHarness);
  EXPECT_EQ(WorstExitCode({kExitHarness, kExitUsage, kExitFail}), kExitUsage);
}

TEST(RunMatrixTest, PreloadNamesTheProfilesAndRefusesBadInputBeforeAnyRun) {
  std::vector<std::string> suites = {kData + "/suites/default.json", kData + "/suites/network.json"};
  StatusOr<std::vector<RunInputs>> inputs = PreloadRunInputs(
      {kData + "/sandboxes/bwrap-strict.json", kData + "/sandboxes/docker-hardened.json"}, "", suites, KnownFamilies());
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  ASSERT_EQ(inputs->size(), 2u);
  EXPECT_EQ((*inputs)[0].profile.name, "bwrap-strict");
  EXPECT_EQ((*inputs)[1].profile.name, "docker-hardened");
  EXPECT_EQ((*inputs)[0].suite.name, "default+network") << "each run gets the suites merged";

  StatusOr<std::vector<RunInputs>> twice = PreloadRunInputs(
      {kData + "/sandboxes/bwrap-strict.json", kData + "/sandboxes/bwrap-strict.json"}, "", suites, KnownFamilies());
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidInput);
  EXPECT_THAT(twice.status().message(), HasSubstr("two profiles are named bwrap-strict"));

  StatusOr<std::vector<RunInputs>> missing = PreloadRunInputs(
      {kData + "/sandboxes/bwrap-strict.json", kData + "/sandboxes/nope.json"}, "", suites, KnownFamilies());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.json"));

  StatusOr<std::vector<RunInputs>> bad_suite = PreloadRunInputs(
      {kData + "/sandboxes/bwrap-strict.json"}, "", {kData + "/policies/tier-low.json"}, KnownFamilies());
  EXPECT_FALSE(bad_suite.ok()) << "a policy is not a suite";

  // One sandbox named twice is one run: no collision to refuse.
  EXPECT_TRUE(PreloadRunInputs({kData + "/sandboxes/bwrap-strict.json"}, kData + "/policies/tier-low.json",
                               suites, KnownFamilies()).ok());
}

}  // namespace
}  // namespace sandprobe
