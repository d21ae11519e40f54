// Exit codes: one definition for the CLI (cli/main.cc), its judgement (ExitCodeFor) and the
// in-sandbox probe, so a code means the same thing on both sides of the sandbox.
#pragma once

namespace sandprobe {

enum ExitCode : int {
  kExitPass = 0,     // every check passed (skips allowed); the probe: it ran to its done frame
  kExitFail = 1,     // a check failed at or above --fail-on
  kExitUsage = 2,    // usage error or invalid input (profile, policy, suite, probe arguments)
  kExitHarness = 3,  // a harness error, an inconclusive check or an interrupted run (no fail)
  kExitProbeDeadline = 124,  // the probe's own deadline ended it (as timeout(1) reports it)
};

}  // namespace sandprobe
