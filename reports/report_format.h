// The report formats `sandprobe run` can write, as one table: a flag, its help, a writer.
//
// main.cc adds one option per row and hands every row's path to CheckReportOutputs before the
// run and to the row's writer after it, so a new format is its own file (render + write) and
// one row in report_format.cc; nothing in main.cc changes. The names are what a `--format`
// option would accept.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/run_report.h"
#include "model/status.h"

namespace sandprobe {

// Writes the reports of one invocation (one per profile x policy x suite run) to `path`: a
// file replaced atomically, "-" for stdout, a device or FIFO written through (atomic_file.h).
using ReportWriter = Status (*)(const std::vector<RunReport>& reports, const std::string& path);

struct ReportFormat {
  std::string_view name;  // "json": for `--format`
  std::string_view flag;  // "--json": the run option that names the output path
  std::string_view help;
  ReportWriter write;
};

// Every format, in the order their flags appear in `--help`.
std::span<const ReportFormat> ReportFormats();

// The row named `name`, or nullptr.
const ReportFormat* FindReportFormat(std::string_view name);

// One output path per row of ReportFormats() (same index); "" where the flag was not given.
using ReportPaths = std::vector<std::string>;

// {flag, path} for every given output, as CheckReportOutputs wants them.
std::vector<std::pair<std::string, std::string>> NamedOutputs(const ReportPaths& paths);

// True when any given output goes to the harness's stdout (the console text then goes to
// stderr, so stdout carries the report alone).
bool AnyOutputOnStdout(const ReportPaths& paths);

// Writes every given output; returns the errors of those that failed (empty: all written).
// `skip_stdout`: leave out outputs that go to stdout (a watchdog's last-resort report, written
// while a stuck thread may hold stdout's lock).
std::vector<Status> WriteReports(const std::vector<RunReport>& reports, const ReportPaths& paths,
                                 bool skip_stdout = false);

}  // namespace sandprobe
