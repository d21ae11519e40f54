// `sandprobe matrix REPORT.json...`: saved reports (one per sandbox and node, as a fleet audit
// writes them) read back as matrix columns and merged into one table (reports/matrix_report.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/run_report.h"
#include "model/status.h"
#include "reports/matrix_report.h"

namespace sandprobe {

// A saved JSON report (`sandprobe run --json`, one per sandbox and node) as a matrix column:
// the run's facts (json_report_read.h) and the verdicts it recorded in checks[], as that run
// judged them (nothing is re-judged). Invalid input names `file` and what is wrong.
StatusOr<RunReport> ReadSavedRun(const nlohmann::json& report, const std::string& file);

struct SavedRun {
  std::string file;  // as given on the command line
  RunReport report;
};

// `sandprobe matrix`: one column per saved run, in the order given, the disagreements first.
// Columns that would share a name (the same sandbox on two nodes) stay apart, named
// "sandbox@host" by the host the report records, else "sandbox (file)".
Matrix MergeSavedRuns(const std::vector<SavedRun>& runs);

// Reads every file (LoadJsonReport, then ReadSavedRun); the first that does not read is
// the error, naming the file.
StatusOr<std::vector<SavedRun>> LoadSavedRuns(const std::vector<std::string>& files);

}  // namespace sandprobe
