// The plan record: what a JSON report keeps so that the run can be judged again later
// (`sandprobe report RUN.json --policy P`) without launching anything.
//
// A report's checks and launches alone do not say which planned batch each launch ran, which
// values the witnesses handed the planner (listener addresses, the persistence token) or how
// the harness itself read each launch's end (complete or not, its nonce). The record keeps
// exactly that, beside the suite as loaded; the frames stay in the report's launches[].
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/evaluate_types.h"
#include "model/plan_types.h"
#include "model/status.h"
#include "load/suite.h"

namespace sandprobe {

// The report's "plan" object (docs/report.schema.json #/$defs/plan). `results[i]` belongs to
// `plan.batches[i]`; `witness_keys` are the keys of WitnessFacts::observed, whose values the
// report keeps under "witnesses".
nlohmann::json RecordPlan(const Suite& suite, const PlanContext& context, const Plan& plan,
                          const std::vector<BatchResult>& results, const WitnessFacts& witnesses);

// A recorded run, read back: enough for Evaluate to judge it again.
struct RecordedRun {
  std::string run_id;
  nlohmann::json suite;  // as loaded, for ParseSuite
  PlanContext context;
  Plan plan;                         // the batches as launched, with the recorded checks
  std::vector<BatchResult> results;  // one per plan batch, frames from the report's launches
  WitnessFacts witnesses;
};

// Reads a whole JSON report back. Invalid input (StatusCode::kInvalidInput) names `file` and
// the field: not a sandprobe report, another schema version, a report without a plan record
// (written by an older sandprobe, or a harness failure that planned nothing).
StatusOr<RecordedRun> ReadRecordedRun(const nlohmann::json& report, const std::string& file);

}  // namespace sandprobe
