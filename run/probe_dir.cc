#include "run/probe_dir.h"

#include <sys/stat.h>

#include <filesystem>

#include <fmt/format.h>

namespace sandprobe {

namespace fs = std::filesystem;

bool ReachableByAnyUid(const std::string& path, unsigned other_bits) {
  std::error_code ec;
  fs::path at = fs::absolute(path, ec);
  if (ec) return false;
  struct stat st {};
  if (::stat(at.c_str(), &st) != 0 || (st.st_mode & other_bits) != other_bits) return false;
  for (fs::path dir = at.parent_path(); ; dir = dir.parent_path()) {
    if (::stat(dir.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) return false;
    if (dir == dir.root_path()) return true;
  }
}

StatusOr<std::string> ProbeDirForSandboxes(const std::string& probe_dir, const std::string& run_dir) {
  const std::string probe = probe_dir + "/sandprobe-probe";
  if (ReachableByAnyUid(probe, S_IROTH | S_IXOTH)) return probe_dir;
  const std::string copy_dir = run_dir + "/probe";
  std::error_code ec;
  fs::create_directories(copy_dir, ec);
  if (!ec) fs::copy_file(probe, copy_dir + "/sandprobe-probe", fs::copy_options::overwrite_existing, ec);
  if (ec) {
    return Status::Error(fmt::format("copy {} to {} (it is not reachable by every uid): {}", probe,
                                     copy_dir, ec.message()));
  }
  ::chmod(copy_dir.c_str(), 0755);
  ::chmod((copy_dir + "/sandprobe-probe").c_str(), 0755);
  return copy_dir;
}

}  // namespace sandprobe
