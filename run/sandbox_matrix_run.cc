#include "run/sandbox_matrix_run.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "contract/exit_code.h"
#include "io/atomic_file.h"
#include "reports/matrix_report.h"

namespace sandprobe {
namespace {

// The row of --matrix in ReportFormats(): written once, over every sandbox's report.
std::size_t MatrixFormatIndex() {
  return static_cast<std::size_t>(FindReportFormat("matrix") - ReportFormats().data());
}

// Why the exit code is what it is, for the closing line of several runs.
std::string WhyThisExitCode(const std::vector<MatrixRunExit>& exits) {
  const auto skipped = static_cast<std::size_t>(
      std::count_if(exits.begin(), exits.end(), [](const MatrixRunExit& e) { return e.backend_skipped; }));
  if (skipped == 0) return "the worst of the runs";
  if (skipped == exits.size()) return "no sandbox's backend was available: nothing was judged";
  return fmt::format("the worst of the runs; {} whose backend was unavailable not counted (--allow-missing-backend)",
                     skipped);
}

}  // namespace

StatusOr<std::vector<MatrixSandbox>> PlanMatrixSandboxes(const std::vector<std::string>& profile_paths,
                                                         const ReportPaths& outputs,
                                                         std::vector<RunInputs> inputs) {
  if (inputs.size() != profile_paths.size()) {
    return Status::Error(fmt::format("plan the sandboxes: {} profiles but {} loaded inputs", profile_paths.size(),
                                     inputs.size()));
  }
  std::vector<MatrixSandbox> sandboxes;
  for (std::size_t i = 0; i < profile_paths.size(); ++i) {
    MatrixSandbox sandbox{profile_paths[i], outputs, std::move(inputs[i])};
    if (MatrixFormatIndex() < sandbox.outputs.size()) sandbox.outputs[MatrixFormatIndex()].clear();
    if (profile_paths.size() > 1) {
      for (std::size_t f = 0; f < sandbox.outputs.size(); ++f) {
        if (sandbox.outputs[f].empty()) continue;
        if (WritesToStdout(sandbox.outputs[f])) {
          return Status::Error(fmt::format("{} {}: with several sandboxes each run writes its own file; "
                                           "name a file (--matrix may go to stdout)",
                                           ReportFormats()[f].flag, sandbox.outputs[f]));
        }
        sandbox.outputs[f] = PerSandboxPath(sandbox.outputs[f], sandbox.inputs.profile.name);
      }
    }
    sandboxes.push_back(std::move(sandbox));
  }
  return sandboxes;
}

const std::string& MatrixOutputPath(const ReportPaths& outputs) {
  static const std::string kNone;
  return MatrixFormatIndex() < outputs.size() ? outputs[MatrixFormatIndex()] : kNone;
}

Status CheckMatrixOutputs(const std::vector<MatrixSandbox>& sandboxes, const std::string& matrix_path) {
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const MatrixSandbox& sandbox : sandboxes) {
    for (auto& named : NamedOutputs(sandbox.outputs)) outputs.push_back(std::move(named));
  }
  if (!matrix_path.empty()) outputs.emplace_back("--matrix", matrix_path);
  return CheckReportOutputs(outputs);
}

SandboxMatrixRun::SandboxMatrixRun(std::vector<MatrixSandbox> sandboxes, SandboxMatrixOptions options,
                                   const RunEnvironment& env)
    : sandboxes_(std::move(sandboxes)), options_(std::move(options)), env_(env) {}

bool SandboxMatrixRun::Interrupted() const { return options_.run.cancel != nullptr && options_.run.cancel->load(); }

void SandboxMatrixRun::SayError(const std::string& message) const {
  const std::string_view program = options_.publish.program;
  std::fprintf(options_.publish.errors, "%.*s: %s\n", static_cast<int>(program.size()), program.data(),
               message.c_str());
  std::fflush(options_.publish.errors);
}

SandboxMatrixRun::OneResult SandboxMatrixRun::RunOne(MatrixSandbox& sandbox) {
  RunOptions options = options_.run;
  options.profile_path = sandbox.profile_path;
  options.inputs = std::move(sandbox.inputs);
  if (options_.on_stalled) {
    options.on_stalled = [this, &sandbox](const std::string& why) { options_.on_stalled(sandbox, why); };
  }
  StatusOr<RunReport> report = RunProfile(options, env_);
  if (options_.on_run_ended) options_.on_run_ended();
  if (!report.ok()) {
    SayError(report.status().message());
    if (report.status().code() == StatusCode::kInvalidInput) {
      return {std::nullopt, kExitUsage, report.status().message()};
    }
    // The harness failed before any verdict: the reports still say so, so a CI job that
    // publishes them finds both files and one error in them.
    RunReport failed = HarnessFailureReport(options.tool_version, sandbox.profile_path, "sandprobe.harness",
                                            report.status().message(), false);
    for (const Status& s : WriteReports({failed}, sandbox.outputs)) SayError(s.message());
    return {std::move(failed), kExitHarness, ""};
  }
  const PublishResult published = Publish(*report, sandbox.outputs, options_.publish);
  OneResult result{std::nullopt, published.exit_code, "", published.backend_skipped};
  if (report->interrupted) {
    SayError("interrupted; unfinished checks are reported as errors");
    result.exit_code = kExitHarness;
    result.backend_skipped = false;
  }
  result.report = std::move(*report);
  return result;
}

SandboxMatrixResult SandboxMatrixRun::Run() {
  SandboxMatrixResult result;
  for (MatrixSandbox& sandbox : sandboxes_) {
    if (Interrupted()) {  // the rest never start
      SayError(fmt::format("interrupted; {} sandbox(es) not run", sandboxes_.size() - result.reports.size()));
      result.exits.push_back({kExitHarness});
      break;
    }
    OneResult one = RunOne(sandbox);
    result.exits.push_back({one.exit_code, one.backend_skipped});
    if (one.report) {
      result.reports.push_back(std::move(*one.report));
    } else {  // invalid input only this run found (its plan): a column that says so
      result.reports.push_back(HarnessFailureReport(options_.run.tool_version, sandbox.profile_path, "sandprobe.input",
                                                    "invalid input: " + one.invalid_input, false));
    }
  }
  FILE* console = options_.publish.console;
  if (sandboxes_.size() > 1) {
    std::fputs(("\n" + RenderMatrixConsole(BuildMatrix(result.reports))).c_str(), console);
    std::fflush(console);
  }
  if (!options_.matrix_path.empty()) {
    if (Status s = WriteMatrixReport(result.reports, options_.matrix_path); !s.ok()) {
      SayError(s.message());
      result.exits.push_back({kExitHarness});
    }
  }
  result.exit_code = MatrixExitCode(result.exits);
  if (sandboxes_.size() > 1) {
    const std::string_view program = options_.publish.program;
    std::fprintf(console, "%.*s: %zu of %zu sandboxes run; exit %d (%s)\n", static_cast<int>(program.size()),
                 program.data(), result.reports.size(), sandboxes_.size(), result.exit_code,
                 WhyThisExitCode(result.exits).c_str());
    std::fflush(console);
  }
  return result;
}

}  // namespace sandprobe
