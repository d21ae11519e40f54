#include "families/batch_result.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "contract/frame_reader.h"

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
  shadowed.executable_forgeable = true;
  BatchResult result = ToBatchResult(shadowed, kNonce);
  EXPECT_FALSE(result.complete);
  EXPECT_NE(result.reason.find("/tmp/x/env: it lives in a world-writable directory"), std::string::npos)
      << result.reason;
}

// ~/.local/bin or /snap/bin on PATH: a warning (its path and hash are in the report), not distrust.
TEST(BatchResultTest, AProgramFoundOnPathOutsideTheSystemDirectoriesIsJudged) {
  LaunchRecord local = Complete();
  local.executable = "/root/.local/bin/bwrap";
  local.executable_warning = "found on PATH in /root/.local/bin, outside the system paths /usr/bin";
  BatchResult result = ToBatchResult(local, kNonce);
  EXPECT_TRUE(result.complete) << result.reason;
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

// A profile that promises the exit status line (probe_exit: exit_line, a VM) proves nothing
// by the process's exit 0: without a valid last line the launch is incomplete, and says why.
TEST(BatchResultExitLine, AMandatoryExitLineThatIsMissingMakesTheLaunchIncomplete) {
  BatchResult result = ToBatchResult(Complete(), kNonce, ProbeExit::kExitLine);
  EXPECT_EQ(result.state, BatchResult::State::kRan);
  EXPECT_FALSE(result.complete);
  EXPECT_NE(result.reason.find("exit 0; no valid final \"@@sandprobe-exit N\" line, and the profile "
                               "takes the probe's status from it (probe_exit: exit_line)"),
            std::string::npos)
      << result.reason;
  EXPECT_TRUE(ToBatchResult(Complete(), kNonce, ProbeExit::kProcess).complete)
      << "the same launch is clean when the profile takes the process's status";
}

// Whatever the process's status: a failing process without the line is named for both.
TEST(BatchResultExitLine, AMandatoryExitLineIsMissingWhateverTheProcessExitStatus) {
  LaunchRecord record = Complete();
  record.exit_code = 125;
  BatchResult result = ToBatchResult(record, kNonce, ProbeExit::kExitLine);
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.end.exit_code, 125);
  EXPECT_NE(result.reason.find("exit 125; no valid final"), std::string::npos) << result.reason;
}

// A line that is there but not valid (not last, repeated, malformed) counts as missing.
TEST(BatchResultExitLine, AMandatoryExitLineMustBeValidAndLast) {
  for (const char* stream : {"@@sandprobe-exit 0\n@@sandprobe n0nce {\"done\":true}\n",
                             "@@sandprobe n0nce {\"done\":true}\n@@sandprobe-exit 0\n@@sandprobe-exit 0\n",
                             "@@sandprobe n0nce {\"done\":true}\n@@sandprobe-exit 256\n",
                             "@@sandprobe n0nce {\"done\":true}\n@@sandprobe-exit 0"}) {
    LaunchRecord record = Complete();
    record.frames = ParseFrames(stream, kNonce, false);
    BatchResult result = ToBatchResult(record, kNonce, ProbeExit::kExitLine);
    EXPECT_FALSE(result.complete) << stream;
    EXPECT_NE(result.reason.find("no valid final"), std::string::npos) << result.reason;
  }
  BatchResult clean = ToBatchResult(WithExitLine("0"), kNonce, ProbeExit::kExitLine);
  EXPECT_TRUE(clean.complete) << clean.reason;
  BatchResult failed = ToBatchResult(WithExitLine("3"), kNonce, ProbeExit::kExitLine);
  EXPECT_FALSE(failed.complete);
  EXPECT_EQ(failed.end.exit_code, 3);
}

}  // namespace
}  // namespace sandprobe
