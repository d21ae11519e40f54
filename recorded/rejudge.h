// Rejudge: a recorded run's facts judged against another policy, without launching anything
// (`sandprobe report RUN.json --policy P`).
//
// The policy is expanded again with the suite and plan values the run recorded; each new
// check is judged on the recorded launch that asked the probe for its fact, by the same pure
// judges as a live run (Evaluate). A check the run never probed is skip, never a pass: the
// re-judge believes exactly what the recorded run's harness observed, nothing more.
#pragma once

#include <string>
#include <vector>

#include "load/policy.h"
#include "model/run_report.h"
#include "recorded/rejudge_record.h"
#include "model/status.h"
#include "load/suite.h"
#include "model/verdict.h"

namespace sandprobe {

struct Rejudged {
  Plan plan;  // the new checks, in the recorded batches that hold their facts
  std::vector<BatchResult> results;  // one per plan batch: the recorded ones, then launchless
  // One per plan.checks entry, in order; checks never probed are skip "not probed in run ...".
  std::vector<Verdict> verdicts;
};

// A policy that expands to no check with the recorded suite is invalid input, as in `run`.
StatusOr<Rejudged> Rejudge(const RecordedRun& run, const Policy& policy, const Suite& suite);

// The whole re-judged report of the JSON report `report` (read from `file`): the recorded
// run's facts, the verdicts of `policy_path` (empty: the policy the run recorded), marked
// rejudged_from, with a plan record of its own so it can be re-judged again. Invalid input:
// not a report of this schema, no plan record, a policy that does not load.
StatusOr<RunReport> RejudgeReport(const nlohmann::json& report, const std::string& file,
                                  const std::string& policy_path);

}  // namespace sandprobe
