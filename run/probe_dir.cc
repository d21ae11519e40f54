#include "run/probe_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "launch/launch_executable.h"
#include "load/data_dir.h"

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

std::string ResolvedPath(const std::string& path) {
  std::error_code ec;
  fs::path resolved = fs::canonical(path, ec);
  if (!ec) return resolved.string();
  fs::path absolute = fs::absolute(path, ec);
  return (ec ? fs::path(path) : absolute).lexically_normal().string();
}

namespace {

StatusOr<InjectedProbe> ProbeFile(const std::string& file) {
  const std::string path = ResolvedPath(file);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::Error(fmt::format("probe {}: not a regular file (the profile's \"probe\")", file));
  }
  StatusOr<std::string> sha256 = ExecutableSha256(path);
  if (!sha256.ok()) return sha256.status().WithContext("probe " + file);
  fs::path p(path);
  return InjectedProbe{.dir = p.parent_path().string(), .file_name = p.filename().string(), .runtime = "",
                       .sha256 = *sha256, .where = "the profile's probe file " + file,
                       .executable = (st.st_mode & S_IXUSR) != 0};
}

}  // namespace

StatusOr<InjectedProbe> FindInjectedProbe(const ProbeChoice& choice, const std::string& probe_dir_flag,
                                          const std::string& layout_probe_dir,
                                          std::span<const ProbeBuild> builds) {
  if (!choice.file.empty()) return ProbeFile(choice.file);
  const std::string_view runtime = ProbeRuntimeName(choice.runtime);
  const ProbeBuild* build = FindProbeBuild(builds, choice.runtime);
  if (build == nullptr) {
    std::vector<std::string_view> built;
    for (const ProbeBuild& b : builds) built.push_back(ProbeRuntimeName(b.runtime));
    return Status::HarnessError(fmt::format(
        "this sandprobe was built without a {} probe (it has: {}); the profile's \"probe\" needs one",
        runtime, built.empty() ? "none" : fmt::format("{}", fmt::join(built, ", "))));
  }
  InjectedProbe probe{.dir = ResolvedPath(probe_dir_flag.empty() ? ProbeDirFor(layout_probe_dir, choice.runtime)
                                                             : probe_dir_flag),
                      .file_name = std::string(ProbeFileName(choice.runtime)),
                      .runtime = std::string(runtime),
                      .sha256 = build->sha256,
                      .where = probe_dir_flag.empty() ? fmt::format("the build's {} probe", runtime)
                                                      : fmt::format("--probe-dir {}", probe_dir_flag),
                      .executable = choice.runtime == ProbeRuntime::kNative,
                      .identity = ProbeIdentity{std::string(runtime), build->build_id, build->families}};
  if (::access(probe.path().c_str(), R_OK) != 0) {
    return Status::HarnessError(
        fmt::format("probe {} is missing (build it, or pass --probe-dir)", probe.path()));
  }
  return probe;
}

StatusOr<std::string> PlaceProbe(const InjectedProbe& probe, const std::string& run_dir) {
  std::string dir = probe.dir;
  if (!ReachableByAnyUid(probe.path(), probe.executable ? S_IROTH | S_IXOTH : S_IROTH)) {
    dir = run_dir + "/probe";
    const std::string copy = dir + "/" + probe.file_name;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (!ec) fs::copy_file(probe.path(), copy, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return Status::HarnessError(fmt::format("copy {} to {} (it is not reachable by every uid): {}",
                                              probe.path(), dir, ec.message()));
    }
    ::chmod(dir.c_str(), 0755);
    ::chmod(copy.c_str(), 0755);
  }
  // The file the sandboxes get, hashed as placed: what runs is what the build made.
  const std::string placed = dir + "/" + probe.file_name;
  StatusOr<std::string> sha256 = ExecutableSha256(placed);
  if (!sha256.ok()) return sha256.status().WithContext("hash the probe " + placed).AsHarnessError();
  if (*sha256 != probe.sha256) {
    const std::string expected = probe.identity ? fmt::format("the {} probe this build made has {}", probe.runtime, probe.sha256)
                                                : fmt::format("it had {} when the run started", probe.sha256);
    const std::string from = dir == probe.dir ? probe.where : fmt::format("a copy of {}, {}", probe.path(), probe.where);
    return Status::Error(fmt::format(
        "the probe that would run is not ours: {} ({}) has SHA-256 {}, {}; refusing to judge what it reports",
        placed, from, *sha256, expected));
  }
  return dir;
}

}  // namespace sandprobe
