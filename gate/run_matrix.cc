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

int MatrixExitCode(const std::vector<MatrixRunExit>& runs) {
  std::vector<int> codes;
  for (const MatrixRunExit& run : runs) {
    if (!run.backend_skipped) codes.push_back(run.exit_code);
  }
  // No column judged anything (every backend skipped, or no column at all): not green.
  if (codes.empty()) return kExitHarness;
  return WorstExitCode(codes);
}

}  // namespace sandprobe
