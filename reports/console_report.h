// The console report: what a person reads at the end of `sandprobe run`.
//
// A warning line per distinct program that launches ran from a place where it is easy to
// forge (LaunchRecord::executable_warning); then the findings: fails worst first (by severity,
// then plan order; a leaked file's aliases on its line), each a headline, what was expected and
// observed, and the fix; errors grouped by cause, each with its launch's failure and what to do
// (not the leak's fix: an error judged nothing); inconclusive checks worst first; one line per
// skip reason; then a table of counts per outcome, fails per severity. Lines are cut to the
// layout's width (the full text is in the JSON/JUnit/SARIF/Markdown reports). Probe-controlled
// text is stripped of escapes and controls, so a hostile probe cannot drive the user's terminal.
#pragma once

#include <cstddef>
#include <string>

#include "model/run_report.h"

namespace sandprobe {

struct ConsoleLayout {
  // ANSI colours; the caller decides (NO_COLOR, --no-color, isatty). Without, no ESC byte at all.
  bool color = false;
  // Columns every line is cut to (an ellipsis marks a cut); 0: lines are not cut.
  std::size_t width = 0;
};

std::string RenderConsole(const RunReport& report, const ConsoleLayout& layout);
// Not cut: RenderConsole(report, {.color = color}).
std::string RenderConsole(const RunReport& report, bool color);

}  // namespace sandprobe
