// ReportDiff: what changed between two JSON reports of `sandprobe run` (`sandprobe diff`).
//
// Checks are matched by id. A change is a different verdict, direction or measured value
// (the "measured N unit" of a resource check's observation), or a check only one report has.
// A regression is a verdict that got worse (pass/skip -> inconclusive/error -> fail), a new
// check that fails, or a check that disappeared (what is no longer checked is no longer
// guarded): CI gates on those. Reports of different suites or policies are still compared,
// with a warning: their differences are then mostly the inputs', not the sandbox's.
//
// A check only the old report has is not a regression when the new report's recorded selection
// (its suites' families, --check, --skip) left it out on purpose: it is listed as not selected
// and compared no further.
//
// Measurements jitter (CPU time over a 2 s window: 1.001 cores, then 0.998). A measured value
// that moved by no more than the check's tolerance (the report's checks[].tolerance: high -
// declared), with the same verdict and direction, is listed as "within tolerance" and is not
// a change for --fail-on-change. A verdict change or a larger move still is.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/status.h"

namespace sandprobe {

struct CheckState {
  bool present = false;
  std::string verdict, direction, measured;  // measured: "512 MiB", "" when none
  std::string severity;                      // "high", "" in reports that lack it
  std::string observed;                      // the check's observation as the report has it
  std::optional<double> value;               // measured's number: 512
  std::string unit;                          // measured's unit: "MiB"
  std::string family;                        // "fs.read", "" in reports that lack it
  // How far the measured value may move and still be the same result (tolerance.high -
  // tolerance.declared), when the report gives the check a tolerance.
  std::optional<double> allowed_drift;
};

struct CheckChange {
  std::string id;
  CheckState before, after;
  bool regressed = false;
  // Only the measured value moved, by no more than the check's tolerance.
  bool within_tolerance = false;
};

// A check of the old report the new run did not select: why ("--skip priv.*").
struct NotSelected {
  std::string id;
  std::string why;
};

struct ReportDiff {
  std::string old_label, new_label;  // "docker-hardened (run 567d9c095cd9)"
  std::vector<CheckChange> changes;   // in the new report's check order, then removed ones
  // The two runs differ in their inputs: "suite default -> network", "policy tier-low ->
  // tier-medium", "policy tier-low: its content differs between the runs".
  std::vector<std::string> warnings;
  std::vector<NotSelected> not_selected;  // old checks the new run's selection left out
  int regressions = 0;
  int within_tolerance = 0;  // changes that are only a measurement within tolerance
  // The changes that count for --fail-on-change.
  int Significant() const { return static_cast<int>(changes.size()) - within_tolerance; }
};

// Both arguments are parsed JSON reports; an error names what is missing ("OLD: no checks[]").
StatusOr<ReportDiff> DiffReports(const nlohmann::json& before, const nlohmann::json& after);

// Warnings first, then per change:
// "[high] limits.memory_mib:512: pass -> fail (too-restrictive); measured 510 MiB -> 255 MiB  [regressed]"
// "    now: measured 255 MiB vs declared 512"   (the new observation; "gone" for a removed check)
std::string RenderDiffText(const ReportDiff& diff);
nlohmann::json DiffToJson(const ReportDiff& diff);

// `sandprobe diff`'s exit code: 1 when something regressed, or when `fail_on_change` and a
// change beyond tolerance exists; else 0.
int DiffExitCode(const ReportDiff& diff, bool fail_on_change);

}  // namespace sandprobe
