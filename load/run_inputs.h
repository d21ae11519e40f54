// RunInputs: what one sandbox run judges with, loaded once: the profile, the policy it is judged
// against and the suites merged into one.
//
// `sandprobe run` loads every sandbox's inputs before the first run (bad input is exit 2 before
// minutes of runs) and hands them to the run, so what was validated is exactly what runs and
// nothing is read or parsed twice.
#pragma once

#include <string>
#include <vector>

#include "load/policy.h"
#include "load/profile.h"
#include "load/suite.h"
#include "model/status.h"

namespace sandprobe {

struct RunInputs {
  Profile profile;
  Policy policy;
  Suite suite;  // MergeSuites of the suites named, in order
};

// `policy_path` empty: the policy the profile names (an error when it names none). Any error is
// invalid input, with the file it came from.
StatusOr<RunInputs> LoadRunInputs(const std::string& profile_path, const std::string& policy_path,
                                  const std::vector<std::string>& suite_paths, const FamilyCatalog& families);

// Loads every profile, the policy each is judged against (`policy_path` when given, else the
// profile's) and the suites (LoadRunInputs above), one RunInputs per profile in order; each run is
// handed its own. Any load error, and with several sandboxes two profiles of one name (their
// report paths would collide), is invalid input.
StatusOr<std::vector<RunInputs>> PreloadRunInputs(const std::vector<std::string>& profile_paths,
                                                  const std::string& policy_path,
                                                  const std::vector<std::string>& suite_paths,
                                                  const FamilyCatalog& families);

}  // namespace sandprobe
