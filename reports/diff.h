// ReportDiff: what changed between two JSON reports of `sandprobe run` (`sandprobe diff`).
//
// Checks are matched by id. A change is a different verdict, direction or measured value
// (the "measured N unit" of a resource check's observation), or a check only one report has.
// A regression is a verdict that got worse (pass/skip -> inconclusive/error -> fail) or a new
// check that fails: CI gates on those.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/status.h"

namespace sandprobe {

struct CheckState {
  bool present = false;
  std::string verdict, direction, measured;  // measured: "512 MiB", "" when none
};

struct CheckChange {
  std::string id;
  CheckState before, after;
  bool regressed = false;
};

struct ReportDiff {
  std::string old_label, new_label;  // "docker-hardened (run 567d9c095cd9)"
  std::vector<CheckChange> changes;   // in the new report's check order, then removed ones
  int regressions = 0;
};

// Both arguments are parsed JSON reports; an error names what is missing ("OLD: no checks[]").
StatusOr<ReportDiff> DiffReports(const nlohmann::json& before, const nlohmann::json& after);

// "limits.memory_mib:512: pass -> fail (too-restrictive); measured 510 MiB -> 255 MiB  [regressed]"
std::string RenderDiffText(const ReportDiff& diff);
nlohmann::json DiffToJson(const ReportDiff& diff);

}  // namespace sandprobe
