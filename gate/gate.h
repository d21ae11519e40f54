// The gate: a finished run's verdicts (with their waivers) -> the exit code, and why.
//
// 1: a fail at or above --fail-on that no active waiver covers, or an expired waiver;
// else 3: an error or inconclusive check; else 0. `--fail-on none` reports without gating:
// no fail and no expired waiver gives 1, but an error or inconclusive check still gives 3
// (the harness did not do its job, so there is nothing to report on).
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
};

GateResult Gate(const RunReport& report, FailOn fail_on);

}  // namespace sandprobe
