#include "gate/run_matrix.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "contract/exit_code.h"
#include "load/policy.h"
#include "load/profile.h"

namespace sandprobe {

std::string PerSandboxPath(const std::string& path, const std::string& sandbox) {
  std::filesystem::path p(path);
  std::string stem = p.stem().string(), extension = p.extension().string();
  std::filesystem::path out = p.parent_path() / (stem + "." + sandbox + extension);
  return out.string();
}

int WorstExitCode(const std::vector<int>& codes) {
  constexpr int kRank[] = {kExitPass, kExitFail, kExitHarness, kExitUsage};  // worse to the right
  int worst = 0;
  for (int code : codes) {
    auto rank = [&kRank](int c) {
      auto it = std::find(std::begin(kRank), std::end(kRank), c);
      return it == std::end(kRank) ? static_cast<int>(std::size(kRank)) : static_cast<int>(it - std::begin(kRank));
    };
    if (rank(code) > rank(worst)) worst = code;
  }
  return worst;
}

StatusOr<std::vector<std::string>> PreloadRunInputs(const std::vector<std::string>& profile_paths,
                                                    const std::string& policy_path,
                                                    const std::vector<std::string>& suite_paths,
                                                    const FamilyCatalog& families) {
  for (const std::string& path : suite_paths) {
    if (StatusOr<Suite> suite = LoadSuite(path, families); !suite.ok()) return suite.status();
  }
  if (!policy_path.empty()) {
    if (StatusOr<Policy> policy = LoadPolicy(policy_path); !policy.ok()) return policy.status();
  }
  std::vector<std::string> names;
  for (const std::string& path : profile_paths) {
    StatusOr<Profile> profile = LoadProfile(path);
    if (!profile.ok()) return profile.status();
    if (policy_path.empty() && profile->policy_path.empty()) {
      return Status::Error(fmt::format("{}: the profile names no policy; pass --policy", path));
    }
    if (policy_path.empty()) {
      if (StatusOr<Policy> policy = LoadPolicy(profile->policy_path); !policy.ok()) {
        return policy.status().WithContext(fmt::format("{}: its policy", path));
      }
    }
    if (profile_paths.size() > 1 && std::find(names.begin(), names.end(), profile->name) != names.end()) {
      return Status::Error(fmt::format("--sandbox: two profiles are named {} ({}); their reports would "
                                       "overwrite each other",
                                       profile->name, path));
    }
    names.push_back(profile->name);
  }
  return names;
}

}  // namespace sandprobe
