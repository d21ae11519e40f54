#include "runner/batch_result.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

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

namespace sandprobe {
namespace {

LaunchRecord WithExitLine(std::string_view status) {
  LaunchRecord record = Complete();
  record.frames = ParseFrames(
      "@@sandprobe n0nce {\"family\":\"hello\"}\n@@sandprobe n0nce {\"done\":true}\n"
      "@@sandprobe-exit " + std::string(status) + "\r\n", kNonce, false);
  return record;
}

// A VM monitor exits 0 whatever its guest did: the exit status line is the launch's status.
TEST(BatchResultExitLine, TheExitLineDecidesWhenTheProcessExitedZero) {
  BatchResult clean = ToBatchResult(WithExitLine("0"), kNonce);
  EXPECT_TRUE(clean.complete) << clean.reason;
  EXPECT_EQ(clean.end.exit_code, 0);

  BatchResult failed = ToBatchResult(WithExitLine("137"), kNonce);
  EXPECT_FALSE(failed.complete);
  EXPECT_EQ(failed.end.exit_code, 137);  // what the resource judges read as a kill
  EXPECT_NE(failed.reason.find("exit 137 (the sandbox's exit status line"), std::string::npos)
      << failed.reason;
}

// The line never hides a failing sandbox process: its own non-zero status or signal stays.
TEST(BatchResultExitLine, AFailingProcessKeepsItsOwnStatus) {
  LaunchRecord record = WithExitLine("0");
  record.exit_code = 2;
  BatchResult result = ToBatchResult(record, kNonce);
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.end.exit_code, 2);

  record = WithExitLine("0");
  record.exit_code.reset();
  record.signal = 9;
  result = ToBatchResult(record, kNonce);
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.end.exit_code, std::nullopt);
}

// A stream whose exit line is not last carries no status, and the launch is not complete.
TEST(BatchResultExitLine, AnExitLineThatIsNotLastMakesTheLaunchIncomplete) {
  LaunchRecord record = Complete();
  record.frames = ParseFrames("@@sandprobe-exit 0\n@@sandprobe n0nce {\"done\":true}\n", kNonce, false);
  BatchResult result = ToBatchResult(record, kNonce);
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.end.exit_code, 0);  // the process's own
}

}  // namespace
}  // namespace sandprobe
