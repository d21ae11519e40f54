// Applying a mutation operator (mutate/mutation_operators.h) to a profile: the edit runs over
// the profile's JSON as loaded (Profile::raw), and the mutant is parsed back with ParseProfile,
// so a mutant is exactly as valid as a profile a user could write.
//
// The argv edited is the one that makes the sandbox: `run` (oneshot) or `start` (session).
// Anchors, flags and values are matched against the template text, placeholders unexpanded.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/profile.h"
#include "model/status.h"
#include "mutate/mutation_operators.h"

namespace sandprobe {

struct ProfileMutation {
  // The mutant's profile JSON; null when no step applied (the operator is not applicable).
  nlohmann::json profile;
  // What each step that applied did: "inserted --pid host after run", "removed --cap-drop ALL".
  std::vector<std::string> applied;
  // Why the operator does not apply, when `profile` is null: "no --cap-drop in run".
  std::string not_applicable;
};

// The mutant of `profile` (a Profile::raw) under `op`. `host_values` are the operator's
// host_values, already read on this host; they join the mutant's "vars". An error only when
// the edit cannot be made as written (a host value would replace a profile variable of the
// same name with another value).
StatusOr<ProfileMutation> MutateProfileJson(const nlohmann::json& profile, const MutationOperator& op,
                                            const std::map<std::string, std::string>& host_values);

// The mutant as a Profile: "<profile name>.<operator name>", parsed by ParseProfile as if it
// were the file at `source_path` (so its relative "policy" resolves as the original's and a
// dead run's sweep finds the original's sweep spec). Errors name the operator.
StatusOr<Profile> ParseMutant(const nlohmann::json& mutant, const std::string& source_path,
                              const std::string& operator_name);

}  // namespace sandprobe
