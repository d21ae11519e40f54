// The HTML report (`--html FILE` on run, report and matrix): one self-contained page a reviewer
// opens in a browser, where the console gives walls of text.
//
// A run's page: the verdict summary by severity, the findings worst first (fail, then error,
// then inconclusive, then waived fails; by severity within each) with what was expected and
// observed, the evidence and the fix, the skips grouped by reason, and every check in a table.
// A matrix's page adds a heatmap of checks x sandboxes, each cell coloured by its verdict (a
// fail by its check's severity), the rows where the sandboxes disagree first. Both filter by
// family (a select; a few lines of inline script).
//
// Self-contained: inline CSS and script only, no external asset, font or request; a
// Content-Security-Policy of default-src 'none' makes sure a browser fetches nothing even if a
// later edit slipped one in. Every string from a report (ids, evidence, names: probe-controlled
// or user-named) is cleaned (invalid UTF-8, escapes and controls, reports/sanitize.h), capped,
// and HTML-escaped, so a value holding `<script>` shows as text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/run_report.h"
#include "model/status.h"
#include "reports/matrix_report.h"

namespace sandprobe {

// Bytes kept of one report string (an observation, an output tail) before it is cut.
inline constexpr std::size_t kHtmlTextCap = 4000;

// `text` as HTML text or a double-quoted attribute value: cleaned, capped at `cap` bytes, and
// with & < > " ' escaped.
std::string HtmlText(std::string_view text, std::size_t cap = kHtmlTextCap);

// The page of one or more runs (one section each).
std::string RenderHtmlReport(const std::vector<RunReport>& reports);

// The page of a matrix: its columns' summary, the heatmap, then each run's findings.
// `reports`: the runs behind the columns, in column order (empty: the heatmap only).
std::string RenderMatrixHtml(const Matrix& matrix, const std::vector<RunReport>& reports);

// The --html writer (a ReportFormats() row): RenderHtmlReport to `path`, replaced atomically
// (io/atomic_file.h), or to stdout for "-".
Status WriteHtmlReport(const std::vector<RunReport>& reports, const std::string& path);

}  // namespace sandprobe
