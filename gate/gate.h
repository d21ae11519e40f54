// The gate: a finished run's verdicts (with their waivers) -> the exit code, and why.
//
// 1: a fail at or above --fail-on that no active waiver covers, or an expired waiver;
// else 3: an error or inconclusive check, or nothing judged at all (every check a skip: a gate
// that checked nothing is not green); else 0. `--fail-on none` reports without gating: no fail
// and no expired waiver gives 1, but an error, an inconclusive check or a run that judged
// nothing still gives 3 (the harness did not do its job, so there is nothing to report on).
// Skips are counted in `why`: a skip by design (a limit the probe cannot measure) leaves the
// gate green when other checks were judged; so does a backend skipped by
// --allow-missing-backend (RunReport::backend_skipped), which the line names.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/check.h"
#include "model/run_report.h"

namespace sandprobe {

struct FailOn {
  std::optional<Severity> threshold;  // nullopt: --fail-on none
};

// "critical" ... "info", or "none"; nullopt for anything else.
std::optional<FailOn> ParseFailOn(std::string_view text);

struct GateResult {
  int exit_code = 0;
  std::string why;  // "exit 1: 2 fails at or above low (1 more waived)"
  int judged = 0;   // checks that passed or failed: judged on evidence
  // Nothing judged because the backend was unavailable and --allow-missing-backend let that
  // through (RunReport::backend_skipped): in a matrix such a column does not fail the others.
  bool backend_skipped = false;
};

GateResult Gate(const RunReport& report, FailOn fail_on);

}  // namespace sandprobe
