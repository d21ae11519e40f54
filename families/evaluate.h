// Evaluate: the one place where facts become judgement. Pure: no I/O, no clock, no globals.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/check.h"
#include "model/evaluate_types.h"
#include "model/launch_record.h"
#include "families/plan.h"
#include "model/verdict.h"

namespace sandprobe {

// `results[i]` belongs to `plan.batches[i]`. Returns one verdict per plan.checks entry, in order.
std::vector<Verdict> Evaluate(const Plan& plan, const std::vector<BatchResult>& results,
                              const WitnessFacts& witnesses);

// Process exit code for a finished run: 1 when a fail at or above `fail_on` exists, else 3 when
// any check is error or inconclusive, else 0.
int ExitCodeFor(const std::vector<Verdict>& verdicts, Severity fail_on);

}  // namespace sandprobe
