// ScopedSigpipeBlock: part of the launcher (ProcessLauncher::Launch holds one for the whole
// launch); its own file because it is a concept of its own.
#pragma once

#include <signal.h>
#include <time.h>

namespace sandprobe {

// Writing stdin to a child that stopped reading raises SIGPIPE in the writing thread, which
// would kill the whole harness. Blocked, the write fails with EPIPE instead; the pending
// thread-directed SIGPIPE is consumed before the old mask comes back.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~ScopedSigpipeBlock() {
    if (sigismember(&old_, SIGPIPE)) return;
    struct timespec zero {};
    while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_, old_;
};

}  // namespace sandprobe
