// What tells a mutant apart from its profile: the verdicts of the two audits, check by check.
//
// A mutant is KILLED when at least one check moved the permissive way — the audit saw the
// mutant allow what the profile did not:
//   - to fail (too-permissive) from pass, inconclusive or fail (too-restrictive);
//   - to pass from fail (too-restrictive): the mutant allows what the profile over-restricted.
// Either is a verdict the harness only gives on positive evidence (a fail cites what was done,
// a pass what was refused or allowed), so neither is noise.
// Nothing else kills:
//   - a check whose profile verdict is error or skip has no baseline to move from;
//   - pass <-> inconclusive is the machine's load (limits.cpus under contention), not the
//     mutant;
//   - a move the restrictive way (pass -> too-restrictive) sees a change but not the weakening;
//   - error in the mutant is a launch or the harness failing, never a verdict about the sandbox:
//     a mutant the backend refuses (docker exit 125) cannot be launched, and is INVALID, not
//     killed. A mutant with no kill and a check that errored where the profile's did not is
//     invalid too: the error may hide the check that would have killed it.
// Those moves are kept as `changed`, so a reader sees everything that moved.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/verdict.h"

namespace sandprobe {

// A verdict reduced to what comparison needs.
struct VerdictOutcome {
  Outcome outcome = Outcome::kError;
  Direction direction = Direction::kNone;
  std::string observed;
};

// Whether an audit decided the check: pass, fail, or inconclusive (no proof either way). Error
// and skip decided nothing; a mutant cannot move from them.
bool IsDecided(Outcome outcome);

// "pass", "fail too-permissive", "inconclusive", ...
std::string DescribeOutcome(const VerdictOutcome& v);

// A check's verdict in the profile's audit and in the mutant's.
struct CheckMove {
  std::string id;
  VerdictOutcome from;
  VerdictOutcome to;
};

struct MutantDistinction {
  std::vector<std::string> flipped;  // ids of the checks that moved the permissive way
  std::vector<CheckMove> kills;      // the same moves, with what the mutant's audit observed
  std::vector<CheckMove> changed;    // every other check whose outcome (or direction) moved
  std::vector<CheckMove> new_errors; // the subset of `changed` that became error
};

// Whether `from` -> `to` is a permissive move (the rules above).
bool MovesPermissive(const VerdictOutcome& from, const VerdictOutcome& to);

// Compares the mutant's verdicts with the profile's (by check id). A check only one of the
// two planned is not compared.
MutantDistinction CompareWithBaseline(const std::map<std::string, VerdictOutcome>& baseline,
                                      const std::vector<Verdict>& mutant);

// The checks of one audit by id; an id already there keeps its first verdict (an audit in
// several runs: a family two of them plan is judged by the first).
void AddVerdicts(std::map<std::string, VerdictOutcome>& into, const std::vector<Verdict>& verdicts);

}  // namespace sandprobe
