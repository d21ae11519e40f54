#include "io/sigpipe_block.h"

#include <unistd.h>

#include <cerrno>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

bool SigpipeIsBlocked() {
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  return sigismember(&mask, SIGPIPE);
}

// Had the SIGPIPE raised by the write stayed pending, restoring the mask would deliver it and
// kill this test binary.
TEST(LauncherSigpipeBlockTest, WriteToAClosedPipeIsEpipeAndLeavesNoSignalBehind) {
  ASSERT_FALSE(SigpipeIsBlocked());
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  {
    ScopedSigpipeBlock block;
    EXPECT_TRUE(SigpipeIsBlocked());
    EXPECT_EQ(write(fds[1], "x", 1), -1);
    EXPECT_EQ(errno, EPIPE);
  }
  EXPECT_FALSE(SigpipeIsBlocked());
  sigset_t pending;
  sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
  close(fds[1]);
}

TEST(LauncherSigpipeBlockTest, AnAlreadyBlockedSigpipeStaysBlocked) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  { ScopedSigpipeBlock block; }
  EXPECT_TRUE(SigpipeIsBlocked());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace
}  // namespace sandprobe
