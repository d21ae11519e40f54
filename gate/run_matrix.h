// `sandprobe run --sandbox a,b,c`: the same suites against several sandboxes, one run each.
//
// Every input is loaded before the first run (a typo in the third profile is exit 2, not a
// failure after two runs of minutes); each run writes its own reports, their paths marked
// with the sandbox's name; the exit code is the worst of the runs.
#pragma once

#include <string>
#include <vector>

namespace sandprobe {

// A report path for one sandbox of several: its name before the extension.
// "out.json" -> "out.docker-hardened.json", "r/junit.xml" -> "r/junit.docker-hardened.xml",
// "out" -> "out.docker-hardened", ".hidden" -> ".hidden.docker-hardened".
std::string PerSandboxPath(const std::string& path, const std::string& sandbox);

// The exit code of several runs: 2 (invalid input: the user's to fix) before 3 (a harness
// error, inconclusive or interrupted: a sandbox not verified) before 1 (a fail) before 0.
int WorstExitCode(const std::vector<int>& codes);

// One run of several, as the matrix's exit code needs it.
struct MatrixRunExit {
  int exit_code = 0;
  // It judged nothing because its backend was unavailable and --allow-missing-backend let that
  // through (GateResult::backend_skipped): a column that may be absent.
  bool backend_skipped = false;
};
// The exit code of several runs: the worst of them, where a run whose backend was skipped
// counts as no run at all; when every run's backend was skipped (or there was no run), nothing
// was judged: 3.
int MatrixExitCode(const std::vector<MatrixRunExit>& runs);

}  // namespace sandprobe
