#include "load/run_inputs.h"

#include <algorithm>

#include <fmt/format.h>

namespace sandprobe {

StatusOr<RunInputs> LoadRunInputs(const std::string& profile_path, const std::string& policy_path,
                                  const std::vector<std::string>& suite_paths, const FamilyCatalog& families) {
  StatusOr<Profile> profile = LoadProfile(profile_path);
  if (!profile.ok()) return profile.status();
  const std::string& judged_by = policy_path.empty() ? profile->policy_path : policy_path;
  if (judged_by.empty()) {
    return Status::Error(fmt::format("{}: the profile names no policy; pass --policy", profile_path));
  }
  StatusOr<Policy> policy = LoadPolicy(judged_by);
  if (!policy.ok()) {
    // The profile's own policy is named by the profile: say which profile, as --policy needs not.
    return policy_path.empty() ? policy.status().WithContext(fmt::format("{}: its policy", profile_path))
                               : policy.status();
  }
  std::vector<Suite> suites;
  for (const std::string& path : suite_paths) {
    StatusOr<Suite> suite = LoadSuite(path, families);
    if (!suite.ok()) return suite.status();
    suites.push_back(std::move(*suite));
  }
  StatusOr<Suite> merged = MergeSuites(std::move(suites), families);
  if (!merged.ok()) return merged.status();
  return RunInputs{std::move(*profile), std::move(*policy), std::move(*merged)};
}

StatusOr<std::vector<RunInputs>> PreloadRunInputs(const std::vector<std::string>& profile_paths,
                                                  const std::string& policy_path,
                                                  const std::vector<std::string>& suite_paths,
                                                  const FamilyCatalog& families) {
  std::vector<RunInputs> runs;
  for (const std::string& path : profile_paths) {
    StatusOr<RunInputs> inputs = LoadRunInputs(path, policy_path, suite_paths, families);
    if (!inputs.ok()) return inputs.status();
    const std::string& name = inputs->profile.name;
    bool taken = std::any_of(runs.begin(), runs.end(), [&name](const RunInputs& r) { return r.profile.name == name; });
    if (profile_paths.size() > 1 && taken) {
      return Status::Error(fmt::format("--sandbox: two profiles are named {} ({}); their reports would "
                                       "overwrite each other",
                                       name, path));
    }
    runs.push_back(std::move(*inputs));
  }
  return runs;
}

}  // namespace sandprobe
