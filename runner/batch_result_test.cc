#include "runner/batch_result.h"

#include <gtest/gtest.h>

#include "runner/frames.h"

namespace sandprobe {
namespace {

const char kNonce[] = "n0nce";

LaunchRecord Complete() {
  LaunchRecord record;
  record.id = "L1";
  record.exit_code = 0;
  record.frames = ParseFrames("@@sandprobe n0nce {\"family\":\"hello\"}\n@@sandprobe n0nce {\"done\":true}\n",
                              kNonce, false);
  return record;
}

TEST(BatchResultTest, ACleanRunIsComplete) {
  BatchResult result = ToBatchResult(Complete(), kNonce);
  EXPECT_EQ(result.state, BatchResult::State::kRan);
  EXPECT_TRUE(result.complete) << result.reason;
  EXPECT_EQ(result.nonce, kNonce);
}

// Complete frames do not make a clean run: the sandbox's own exit status is the host's fact.
TEST(BatchResultTest, ANonZeroExitOrASignalAfterTheDoneFrameIsIncomplete) {
  LaunchRecord exited = Complete();
  exited.exit_code = 1;
  BatchResult result = ToBatchResult(exited, kNonce);
  EXPECT_FALSE(result.complete);
  EXPECT_NE(result.reason.find("exit 1"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("did not exit 0"), std::string::npos) << result.reason;

  LaunchRecord killed = Complete();
  killed.exit_code.reset();
  killed.signal = 9;
  result = ToBatchResult(killed, kNonce);
  EXPECT_FALSE(result.complete);
  EXPECT_NE(result.reason.find("killed by signal 9"), std::string::npos) << result.reason;
}

// A launch that started and printed nothing is still judged (witnesses may prove a leak).
TEST(BatchResultTest, ALaunchThatStartedIsJudgedEvenWithoutFrames) {
  LaunchRecord silent;
  silent.id = "L1";
  silent.exit_code = 0;
  BatchResult result = ToBatchResult(silent, kNonce);
  EXPECT_EQ(result.state, BatchResult::State::kRan);
  EXPECT_FALSE(result.complete);
  LaunchRecord never;
  never.error = "execve(bwrap): ENOENT";
  EXPECT_EQ(ToBatchResult(never, kNonce).state, BatchResult::State::kLaunchFailed);
  never.error = "interrupted";
  EXPECT_EQ(ToBatchResult(never, kNonce).state, BatchResult::State::kInterrupted);
}

// A program from a directory anyone can write to may have printed anything.
TEST(BatchResultTest, AProgramAnyoneCouldHaveReplacedDecidesNothing) {
  LaunchRecord shadowed = Complete();
  shadowed.executable = "/tmp/x/env";
  shadowed.executable_warning = "it lives in a world-writable directory /tmp/x";
  BatchResult result = ToBatchResult(shadowed, kNonce);
  EXPECT_FALSE(result.complete);
  EXPECT_NE(result.reason.find("/tmp/x/env: it lives in a world-writable directory"), std::string::npos)
      << result.reason;
}

}  // namespace
}  // namespace sandprobe
