#include "gate/run_matrix.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/exit_code.h"

namespace sandprobe {
namespace {

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

// A column whose backend --allow-missing-backend skipped is no column; all of them: nothing judged.
TEST(RunMatrixTest, ASkippedBackendDoesNotGateTheMatrixUnlessEveryOneIs) {
  EXPECT_EQ(MatrixExitCode({{kExitHarness, true}, {kExitPass, false}}), kExitPass);
  EXPECT_EQ(MatrixExitCode({{kExitHarness, true}, {kExitFail, false}}), kExitFail);
  EXPECT_EQ(MatrixExitCode({{kExitHarness, true}, {kExitHarness, true}}), kExitHarness);
  EXPECT_EQ(MatrixExitCode({{kExitHarness, false}, {kExitPass, false}}), kExitHarness);
  EXPECT_EQ(MatrixExitCode({}), kExitHarness);  // a matrix of nothing checked nothing
}

}  // namespace
}  // namespace sandprobe
