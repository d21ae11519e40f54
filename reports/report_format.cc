#include "reports/report_format.h"

#include "io/atomic_file.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "reports/markdown_report.h"
#include "reports/matrix_report.h"
#include "reports/sarif_report.h"

namespace sandprobe {
namespace {

// The JSON report holds one run; `sandprobe run` makes exactly one.
Status WriteJson(const std::vector<RunReport>& reports, const std::string& path) {
  if (reports.size() != 1) {
    return Status::Error("write JSON report: one run per JSON report, got " +
                         std::to_string(reports.size()));
  }
  return WriteJsonReport(reports.front(), path);
}

constexpr ReportFormat kFormats[] = {
    {"json", "--json", "write the JSON report here ('-' for stdout)", WriteJson},
    {"junit", "--junit", "write the JUnit XML report here", WriteJunitReport},
    {"sarif", "--sarif", "write the SARIF 2.1.0 report (code scanning) here", WriteSarifReport},
    {"summary", "--summary", "write a Markdown summary here (e.g. \"$GITHUB_STEP_SUMMARY\")",
     WriteMarkdownSummary},
    {"html", "--html", "write a self-contained HTML report here (summary by severity, findings worst first)",
     WriteHtmlReport},
    {"matrix", "--matrix",
     "write the checks x sandboxes table of every --sandbox here (Markdown; JSON for *.json; an HTML heatmap for *.html)",
     WriteMatrixReport},
};

}  // namespace

std::span<const ReportFormat> ReportFormats() { return kFormats; }

const ReportFormat* FindReportFormat(std::string_view name) {
  for (const ReportFormat& f : kFormats) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> NamedOutputs(const ReportPaths& paths) {
  std::vector<std::pair<std::string, std::string>> named;
  for (std::size_t i = 0; i < paths.size() && i < std::size(kFormats); ++i) {
    if (!paths[i].empty()) named.emplace_back(std::string(kFormats[i].flag), paths[i]);
  }
  return named;
}

bool AnyOutputOnStdout(const ReportPaths& paths) {
  for (const std::string& path : paths) {
    if (!path.empty() && WritesToStdout(path)) return true;
  }
  return false;
}

std::vector<Status> WriteReports(const std::vector<RunReport>& reports, const ReportPaths& paths,
                                 bool skip_stdout) {
  std::vector<Status> failed;
  for (std::size_t i = 0; i < paths.size() && i < std::size(kFormats); ++i) {
    if (paths[i].empty() || (skip_stdout && WritesToStdout(paths[i]))) continue;
    if (Status s = kFormats[i].write(reports, paths[i]); !s.ok()) failed.push_back(s);
  }
  return failed;
}

}  // namespace sandprobe
