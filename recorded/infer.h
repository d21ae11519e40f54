// Infer: the policy a recorded run's sandbox actually enforces (`sandprobe infer RUN.json`),
// as a policy file `run --policy` and `validate` accept. The fastest first policy for a new
// backend: run it against a strict policy, infer, read the diff, decide.
//
// It starts from the policy the run was judged against and changes only what the run's own
// verdicts decided against it, one rule per kind of policy field (a table, infer.cc):
//  - a path the probe showed on the other side (a denied read that worked, a promised write
//    that failed) moves to the opposite list (unreadable <-> readable, unwritable <-> writable);
//  - a switch that failed flips (egress deny -> allow, root false -> true, ...);
//  - a limit enforced at another value takes the value its judge measured; one not enforced
//    at all, a network destination or a persistence location that behaved otherwise is
//    dropped (a note says what was seen); a fail no field can express is only noted.
// A promise the run could not decide (error, inconclusive, skip) is dropped where the field
// may be absent (paths, limits) and kept with a note otherwise: infer never claims what the
// run did not observe, and a pass stays a promise.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/status.h"

namespace sandprobe {

struct InferredPolicy {
  nlohmann::json policy;           // valid for LoadPolicy (checked before it is returned)
  std::vector<std::string> notes;  // one line per promise changed or left undecided
};

// `report` is a JSON report (reports/json_report.h) read from `file`; `name` is the policy's
// name ("" for "<profile>-inferred"). Invalid input: not a report of this schema, a report
// without verdicts of its own policy (a harness failure).
StatusOr<InferredPolicy> InferPolicy(const nlohmann::json& report, const std::string& file,
                                     const std::string& name);

}  // namespace sandprobe
