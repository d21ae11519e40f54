// The phases of a mutation session: how the suites of one audit are split so that the
// profile's and the mutants' runs can share the machine where that is harmless, and run alone
// where the checks measure it (mutate/mutate.h says in which order they run).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "load/suite.h"
#include "model/status.h"
#include "model/verdict.h"
#include "mutate/mutant_verdicts.h"

namespace sandprobe {

struct AuditPhase {
  Suite suite;
  // A family of the suite is exclusive (FamilyRow::exclusive): its launches run alone within a
  // run, so the profile's own run of the suite runs alone too, before any mutant's.
  bool exclusive = false;
  // The profile's run of the suite judged measured limits (MeasuresLimits): every run of the
  // suite runs alone. Known once the profile's run is in; false for the shared phase.
  bool measures = false;
  // The profile's verdicts, once its run of this phase is in.
  std::optional<std::map<std::string, VerdictOutcome>> baseline;
  // Why the phase was left out: the profile's run planned no check of it for this policy.
  std::string skipped;
};

// The suites none of whose families is exclusive, merged into one phase (first, when there are
// any), then each suite with an exclusive family as a phase of its own, in the order given.
StatusOr<std::vector<AuditPhase>> PlanAuditPhases(const std::vector<std::string>& suite_paths,
                                                  const FamilyCatalog& families);

// Whether a run's checks measured limits: a check with a tolerance band (Check::tolerance, the
// resource probes) is a measurement of the machine, which another run beside it would disturb.
bool MeasuresLimits(const std::vector<Verdict>& verdicts);

}  // namespace sandprobe
