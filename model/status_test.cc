#include "model/status.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

// The code survives context: the CLI picks exit 2 or 3 from it (contract/exit_code.h).
TEST(StatusTest, TheCodeSurvivesContextAndCanBeRaisedToAHarnessError) {
  EXPECT_EQ(Status::Error("bad key").WithContext("p.json:1:2").code(), StatusCode::kInvalidInput);
  Status harness = Status::HarnessError("EROFS").WithContext("mkdir(/var/tmp/x)");
  EXPECT_EQ(harness.code(), StatusCode::kHarness);
  EXPECT_EQ(harness.message(), "mkdir(/var/tmp/x): EROFS");
  EXPECT_EQ(Status::Error("EACCES").AsHarnessError().code(), StatusCode::kHarness);
  EXPECT_TRUE(Status::Ok().AsHarnessError().ok());
  StatusOr<int> failed = Status::HarnessError("x");
  EXPECT_EQ(failed.status().code(), StatusCode::kHarness);
}

}  // namespace
}  // namespace sandprobe
