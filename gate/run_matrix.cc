#include "gate/run_matrix.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "contract/exit_code.h"

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
