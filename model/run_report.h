// RunReport: everything one `sandprobe run` of one profile knows at the end, facts and
// verdicts together. The report writers (reports/) turn it into JSON, JUnit and console text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/launch_record.h"
#include "model/utc_time.h"
#include "model/verdict.h"

namespace sandprobe {

inline constexpr const char* kReportSchema = "sandprobe-report/1";

// What --waivers did to a run beyond the checks it waived (Verdict::waiver).
struct WaiverSummary {
  std::string source_path;           // the waivers file
  std::vector<std::string> expired;  // "waivers.json:3:5: fs.read.* expired 2026-01-31": fail the gate
  std::vector<std::string> unused;   // waivers that matched no fail of this run
};

// Set only on a report made by `sandprobe report RUN.json`: the recorded run it re-judged and
// the policy it re-judged against. No probe ran for this report.
struct RejudgedFrom {
  std::string run_id;
  std::string policy_name;
  std::string policy_path;
};

// What a run was asked to check: its suites and --check/--skip. Recorded so `sandprobe diff`
// can tell a check a narrower run left out from one that disappeared.
struct RunSelection {
  std::vector<std::string> suites;    // the suites' names, in the order given
  std::vector<std::string> families;  // the families those suites name, once each
  std::vector<std::string> check;     // --check globs (none: every check of the suites)
  std::vector<std::string> skip;      // --skip globs
};

struct RunReport {
  std::string tool_version;
  std::string run_id;
  std::optional<UtcTime> started_at;  // unset in a report of a run that never started
  std::optional<UtcTime> finished_at;
  double duration_seconds = 0;
  nlohmann::json host = nlohmann::json::object();  // kernel, hostname, backend versions
  std::string profile_name;
  std::string profile_path;
  nlohmann::json profile = nlohmann::json::object();  // as loaded
  std::string policy_name;
  std::string policy_path;
  nlohmann::json policy = nlohmann::json::object();   // as loaded
  std::string suite_name;  // "default", or the suites joined: "default+network"
  std::optional<RunSelection> selection;  // unset when the run failed before loading its suites
  std::vector<Verdict> verdicts;  // one per planned check, in plan order
  std::vector<LaunchRecord> launches;
  nlohmann::json witnesses = nlohmann::json::object();  // what the host-side witnesses saw
  bool interrupted = false;
  // Steps the run's deadline (--timeout) cut short: "L7 cleanup: not started: the run's
  // deadline had passed" (LaunchRecord::cut_short, with the launch's id and purpose).
  std::vector<std::string> cut_short;
  // The run dir left in the registry because something the run made may still exist (its
  // cleanup and sweep failed or were cut): `sandprobe sweep` removes it. "" when none.
  std::string left_for_sweep;
  std::optional<WaiverSummary> waivers;  // set only with --waivers
  // Set only when --allow-missing-backend turned a failed preflight into skips: the
  // preflight's failure. The gate names it; without the flag such a run has errors instead.
  std::string backend_skipped;
  // The plan record (recorded/rejudge_record.h): what a later re-judge needs. Null when the run
  // planned nothing (a harness failure).
  nlohmann::json plan = nullptr;
  std::optional<RejudgedFrom> rejudged_from;
};

// The report of a run that produced no verdicts of its own: one error check, `check_id`, saying
// why, so a CI job still finds both report files. `interrupted`: the run was given up.
inline RunReport HarnessFailureReport(const std::string& tool_version, const std::string& profile_path,
                                      const std::string& check_id, const std::string& why,
                                      bool interrupted) {
  RunReport report;
  report.tool_version = tool_version;
  report.profile_path = profile_path;
  report.interrupted = interrupted;
  Verdict v;
  v.check.id = check_id;
  v.check.family = "harness";
  v.check.severity = Severity::kHigh;
  v.outcome = Outcome::kError;
  v.observed = why;
  report.verdicts.push_back(std::move(v));
  return report;
}

// The report of a run given up by its watchdog (stuck even after its launches were killed):
// nothing of the run can be trusted, so it holds one error check saying why.
inline RunReport AbandonedRunReport(const std::string& tool_version, const std::string& profile_path,
                                    const std::string& why) {
  return HarnessFailureReport(tool_version, profile_path, "sandprobe.watchdog", why, true);
}

}  // namespace sandprobe
