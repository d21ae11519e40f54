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
  StatusOr<std::vector<std::string>> names = PreloadRunInputs(
      {kData + "/sandboxes/bwrap-strict.json", kData + "/sandboxes/docker-hardened.json"}, "", suites, KnownFamilies());
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"bwrap-strict", "docker-hardened"}));

  StatusOr<std::vector<std::string>> twice = PreloadRunInputs(
      {kData + "/sandboxes/bwrap-strict.json", kData + "/sandboxes/bwrap-strict.json"}, "", suites, KnownFamilies());
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidInput);
  EXPECT_THAT(twice.status().message(), HasSubstr("two profiles are named bwrap-strict"));

  StatusOr<std::vector<std::string>> missing = PreloadRunInputs(
      {kData + "/sandboxes/bwrap-strict.json", kData + "/sandboxes/nope.json"}, "", suites, KnownFamilies());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.json"));

  StatusOr<std::vector<std::string>> bad_suite = PreloadRunInputs(
      {kData + "/sandboxes/bwrap-strict.json"}, "", {kData + "/policies/tier-low.json"}, KnownFamilies());
  EXPECT_FALSE(bad_suite.ok()) << "a policy is not a suite";

  // One sandbox named twice is one run: no collision to refuse.
  EXPECT_TRUE(PreloadRunInputs({kData + "/sandboxes/bwrap-strict.json"}, kData + "/policies/tier-low.json",
                               suites, KnownFamilies()).ok());
}

}  // namespace
}  // namespace sandprobe
