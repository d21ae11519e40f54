// The console report: what a person reads at the end of `sandprobe run`.
//
// A warning line per distinct program that launches ran from a place where it is easy to
// forge (LaunchRecord::executable_warning), then one line per check that did not pass (fail, then error, then inconclusive, each in plan
// order) with its remediation, then a table of counts per outcome. Probe-controlled text is
// stripped of escapes and controls, so a hostile probe cannot drive the user's terminal.
#pragma once

#include <string>

#include "model/run_report.h"

namespace sandprobe {

// `color` adds ANSI colours; the caller decides it (NO_COLOR, --no-color, isatty(stdout)).
// With color == false the text holds no ESC byte at all.
std::string RenderConsole(const RunReport& report, bool color);

}  // namespace sandprobe
