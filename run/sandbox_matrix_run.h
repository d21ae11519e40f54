// SandboxMatrixRun: `sandprobe run --sandbox a,b,c`, the same suites against several sandboxes,
// one after another, each judged, gated and reported on its own; then the matrix over them and
// one exit code.
//
// Every input is loaded before the first run (the CLI: PreloadRunInputs), so a typo in the third
// profile is exit 2, not a failure after two runs of minutes. Each sandbox writes its own reports
// (with several, its name before each path's extension: PerSandboxPath); stdout cannot be split
// between them, so "-" is refused. A harness failure of one sandbox is its column of one error,
// and the next sandbox still runs; an interrupt stops the ones not yet started. The exit code is
// the worst of the runs (MatrixExitCode), where a column skipped for a missing backend
// (--allow-missing-backend) is not counted. The CLI parses flags and builds this; unit tests
// drive it with a fake launcher (run/sandbox_matrix_run_test.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gate/run_matrix.h"
#include "load/run_inputs.h"
#include "model/run_report.h"
#include "model/status.h"
#include "reports/publish.h"
#include "reports/report_format.h"
#include "run/run.h"
#include "run/run_environment.h"

namespace sandprobe {

// One sandbox of the run: its profile file, what was loaded from it (with the policy and the
// suites) before the first run, and the report paths it writes (never --matrix: that one is
// written once, over every sandbox).
struct MatrixSandbox {
  std::string profile_path;
  ReportPaths outputs;
  RunInputs inputs;
};

// One MatrixSandbox per profile (`inputs` in the same order). With several, every output but
// --matrix gets the sandbox's name before its extension (out.json -> out.NAME.json: the JSON
// report holds one run); an output that writes to stdout is then invalid input naming its flag.
StatusOr<std::vector<MatrixSandbox>> PlanMatrixSandboxes(const std::vector<std::string>& profile_paths,
                                                         const ReportPaths& outputs,
                                                         std::vector<RunInputs> inputs);

// The --matrix path among `outputs` ("" when not given).
const std::string& MatrixOutputPath(const ReportPaths& outputs);

// Every report path the runs will write, and the matrix's, checked before a run of minutes
// (CheckReportOutputs): one that cannot be written is refused now, not after the runs.
Status CheckMatrixOutputs(const std::vector<MatrixSandbox>& sandboxes, const std::string& matrix_path);

struct SandboxMatrixOptions {
  // What every sandbox's run shares (policy, suites, probe dirs and builds,
  // --allow-missing-backend, --timeout, --check/--skip, cancel, progress, tool_version); the
  // loop sets profile_path, inputs and on_stalled per sandbox.
  RunOptions run;
  std::string matrix_path;  // --matrix: written over every report; "" for none
  // How each sandbox's report is published (waivers, console, gate, files); its console and
  // errors streams also take the loop's own lines (the matrix, the closing line, what failed).
  PublishOptions publish;
  // The watchdog's last resort for the sandbox running now (RunOptions::on_stalled with the
  // sandbox named); the CLI's writes a report that says so and exits. Null: none.
  std::function<void(const MatrixSandbox& sandbox, const std::string& why)> on_stalled;
  // Called when a sandbox's run has ended, before anything is printed about it (the CLI clears
  // its progress line there). Null: none.
  std::function<void()> on_run_ended;
};

struct SandboxMatrixResult {
  int exit_code = 0;
  // One per sandbox that ran, in order: its report, or for a sandbox the run found invalid
  // (its plan), a report of one error saying so, so the matrix has its column.
  std::vector<RunReport> reports;
  // What decided exit_code: one per sandbox run, plus one for sandboxes an interrupt kept from
  // starting and one for a matrix that could not be written.
  std::vector<MatrixRunExit> exits;
};

class SandboxMatrixRun {
 public:
  SandboxMatrixRun(std::vector<MatrixSandbox> sandboxes, SandboxMatrixOptions options, const RunEnvironment& env);

  // Runs every sandbox in order, publishes each, then (with several) prints the matrix and the
  // closing line, writes --matrix, and returns the combined exit code.
  SandboxMatrixResult Run();

 private:
  struct OneResult {
    std::optional<RunReport> report;  // unset: invalid input found by the run (exit 2)
    int exit_code = 0;
    std::string invalid_input;     // what it was
    bool backend_skipped = false;  // GateResult::backend_skipped
  };
  OneResult RunOne(MatrixSandbox& sandbox);
  bool Interrupted() const;
  void SayError(const std::string& message) const;

  std::vector<MatrixSandbox> sandboxes_;
  SandboxMatrixOptions options_;
  const RunEnvironment& env_;
};

}  // namespace sandprobe
