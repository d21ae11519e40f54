// Test-only: small runs for the matrix tests (matrix_report_test.cc, saved_runs_test.cc).
#pragma once

#include <string>
#include <vector>

#include "model/run_report.h"
#include "model/verdict.h"

namespace sandprobe::matrix_test {

inline Verdict MakeVerdict(const std::string& id, Outcome outcome, Direction direction = Direction::kNone,
                           Severity severity = Severity::kHigh, const std::string& observed = "") {
  Verdict v;
  v.check.id = id;
  v.check.family = id.substr(0, id.find(':'));
  v.check.severity = severity;
  v.outcome = outcome;
  v.direction = direction;
  v.observed = observed;
  return v;
}

inline RunReport MakeRun(const std::string& profile, const std::string& policy, std::vector<Verdict> verdicts) {
  RunReport r;
  r.profile_name = profile;
  r.policy_name = policy;
  r.suite_name = "default+network";
  r.run_id = "id-" + profile;
  r.verdicts = std::move(verdicts);
  return r;
}

// Two sandboxes: one check agrees, one differs (with a direction), one only the second planned.
inline std::vector<RunReport> TwoRuns() {
  return {MakeRun("bwrap-strict", "tier-low",
              {MakeVerdict("fs.read:/etc/shadow", Outcome::kPass),
               MakeVerdict("net.tcp:loopback", Outcome::kPass, Direction::kNone, Severity::kMedium)}),
          MakeRun("docker-hardened", "tier-low",
              {MakeVerdict("fs.read:/etc/shadow", Outcome::kPass),
               MakeVerdict("net.tcp:loopback", Outcome::kFail, Direction::kTooPermissive, Severity::kCritical),
               MakeVerdict("res.pids:50", Outcome::kPass)})};
}

}  // namespace sandprobe::matrix_test
