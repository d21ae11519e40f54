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
};

// `operators` may be another backend class's: then every operator is not applicable.
MutantSetup SetUpMutant(const Profile& profile, const MutationOperatorFile& operators, const MutationOperator& op,
                        HostCommands& host);

}  // namespace sandprobe
