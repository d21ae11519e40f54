// The Markdown summary: what a person reads on a CI job's page (`--summary "$GITHUB_STEP_SUMMARY"`
// on GitHub Actions, or a file a GitLab job links or posts to a merge request).
//
// Per run (profile x policy x suite): a headline, the counts per outcome, the failures grouped by
// severity (most severe first) with what was expected, observed and the fix, the checks that
// proved nothing (error, inconclusive) with why, and the skips grouped by their reason. Passes
// are only counted. Probe-controlled text is cleaned (no controls or escapes), capped per cell,
// and escaped so it cannot break the table or inject HTML.
//
// The file is replaced, like every report (io/atomic_file.h): in a GitHub step that writes
// other summary text too, write to a file and append it to $GITHUB_STEP_SUMMARY yourself.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/run_report.h"
#include "model/status.h"

namespace sandprobe {

// Bytes kept of one table cell before it is cut (GitHub caps a step summary at 1 MiB).
inline constexpr std::size_t kMarkdownCellCap = 300;
// Checks named per skip reason; the rest are counted.
inline constexpr std::size_t kMarkdownSkipNames = 5;

// `text` as one Markdown table cell: cleaned, capped, one line, with |, <, >, & escaped.
std::string MarkdownCell(std::string_view text, std::size_t cap = kMarkdownCellCap);
// `text` as an inline code span inside one cell (a check id): MarkdownCell with each backtick
// made a quote, so the span cannot end early.
std::string MarkdownCode(std::string_view text);

std::string RenderMarkdownSummary(const std::vector<RunReport>& reports);

// Writes RenderMarkdownSummary to `path` atomically, or to stdout for "-".
Status WriteMarkdownSummary(const std::vector<RunReport>& reports, const std::string& path);

}  // namespace sandprobe
