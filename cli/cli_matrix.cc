#include "cli/cli_matrix.h"

#include <cstdio>
#include <iostream>
#include <memory>

#include "contract/exit_code.h"
#include "io/atomic_file.h"
#include "reports/html_report.h"
#include "reports/matrix_report.h"
#include "reports/saved_runs.h"

namespace sandprobe {
namespace {

struct MatrixFlags {
  std::vector<std::string> reports;
  std::string markdown, json, html;
};

// The outputs as {flag, path}, in the order they are written.
std::vector<std::pair<std::string, std::string>> Outputs(const MatrixFlags& flags) {
  std::vector<std::pair<std::string, std::string>> outputs;
  for (auto [flag, path] : {std::pair{"--markdown", &flags.markdown}, std::pair{"--json", &flags.json},
                            std::pair{"--html", &flags.html}}) {
    if (!path->empty()) outputs.emplace_back(flag, *path);
  }
  return outputs;
}

std::string Render(const std::string& flag, const Matrix& matrix, const std::vector<RunReport>& reports) {
  if (flag == "--json") return MatrixToJson(matrix).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (flag == "--html") return RenderMatrixHtml(matrix, reports);
  return RenderMatrixMarkdown(matrix);
}

// Exit: 0 the matrix was made and written, 2 bad input (a report that does not read, an output
// that cannot be written), 3 a write failed after the reports were read. The matrix does not
// gate: gate each run (`run`, `report`), compare them here.
int MergeMatrix(const MatrixFlags& flags) {
  const std::vector<std::pair<std::string, std::string>> outputs = Outputs(flags);
  if (Status s = CheckReportOutputs(outputs); !s.ok()) {
    return std::cerr << "sandprobe matrix: " << s.message() << "\n", kExitUsage;
  }
  StatusOr<std::vector<SavedRun>> runs = LoadSavedRuns(flags.reports);
  if (!runs.ok()) return std::cerr << "sandprobe matrix: " << runs.status().message() << "\n", kExitUsage;
  const Matrix matrix = MergeSavedRuns(*runs);
  std::vector<RunReport> reports;
  for (const SavedRun& run : *runs) reports.push_back(run.report);
  bool any_on_stdout = false;
  for (const auto& [flag, path] : outputs) any_on_stdout = any_on_stdout || WritesToStdout(path);
  // With an output on stdout, stdout carries it alone.
  std::fputs(RenderMatrixConsole(matrix).c_str(), any_on_stdout ? stderr : stdout);
  int exit_code = 0;
  for (const auto& [flag, path] : outputs) {
    if (Status s = WriteReportOutput(path, Render(flag, matrix, reports)); !s.ok()) {
      std::cerr << "sandprobe matrix: " << s.WithContext("write matrix report (" + flag + ")").message() << "\n";
      exit_code = kExitHarness;
    }
  }
  return exit_code;
}

}  // namespace

CliHandler SetupMatrix(CLI::App& command, const CliGlobals&) {
  auto flags = std::make_shared<MatrixFlags>();
  command.add_option("reports", flags->reports,
                     "JSON reports of `sandprobe run --json`, one column each (one per sandbox and node; "
                     "one sandbox on several hosts is one column per host: sandbox@host)")
      ->required();
  command.add_option("--markdown", flags->markdown, "write the matrix as Markdown here ('-' for stdout)");
  command.add_option("--json", flags->json, "write the matrix as JSON (sandprobe-matrix/1) here ('-' for stdout)");
  command.add_option("--html", flags->html,
                     "write a self-contained HTML page here: a heatmap of checks x sandboxes (disagreements "
                     "first, filterable by family) and each run's findings");
  return [flags] { return MergeMatrix(*flags); };
}

}  // namespace sandprobe
