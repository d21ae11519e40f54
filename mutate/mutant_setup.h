// From an operator to an auditable mutant: whether the operator's class and `requires` fit this
// profile on this host, its host values, the edit applied (mutate/profile_mutation.h) and the
// mutant parsed as a profile. What cannot be audited is decided here, with why.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "load/profile.h"
#include "mutate/mutate.h"
#include "mutate/mutation_operators.h"

namespace sandprobe {

// Runs the operators' host commands (`requires`, `host_values`) through the launcher, once per
// distinct argv.
class HostCommands {
 public:
  explicit HostCommands(Launcher& launcher) : launcher_(launcher) {}
  // The first line of its stdout when it exits 0; else an error naming the command and its end.
  StatusOr<std::string> FirstLine(const std::vector<std::string>& argv);

 private:
  Launcher& launcher_;
  std::map<std::vector<std::string>, StatusOr<std::string>> done_;
};

// A mutant before its audit: the result so far, and the profile to audit unless it is decided.
struct MutantSetup {
  MutantResult result;             // name, description, edit, applied; status and why if decided
  std::optional<Profile> profile;  // set when it is to be audited
  // Decided without an audit: not applicable (another class, a failed `requires` or host
  // value, an edit that does not apply) or invalid (the mutant does not load as a profile).
  std::optional<MutantStatus> decided;
  // The operator's equivalence claim for this profile (EquivalenceClaim), when it holds: a
  // survivor is then "equivalent" with this reason. When the profile has a claim whose
  // `holds_while` no longer stands, `claim_lapsed` says which run is missing and the mutant is
  // judged as any other.
  std::optional<std::string> equivalent_because;
  std::string claim_lapsed;
};

// The claim of `op` for `profile` (by its name), and whether each of its `holds_while` runs
// stands in a row in the profile's sandbox argv: sets `equivalent_because` or `claim_lapsed`.
void ApplyEquivalenceClaim(const Profile& profile, const MutationOperator& op, MutantSetup& setup);

// `operators` may be another backend class's: then every operator is not applicable.
MutantSetup SetUpMutant(const Profile& profile, const MutationOperatorFile& operators, const MutationOperator& op,
                        HostCommands& host);

}  // namespace sandprobe
