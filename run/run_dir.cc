#include "run/run_dir.h"

#include <sys/stat.h>

#include <filesystem>

#include <fmt/format.h>

#include "launch/run_registry.h"

namespace sandprobe {

namespace fs = std::filesystem;

StatusOr<RunDir> RunDir::Create(const std::string& parent, const std::string& run_id,
                                const std::string& profile_path) {
  RunDir dir(fmt::format("{}/{}{}", parent, kRunDirPrefix, run_id));
  std::error_code ec;
  fs::create_directories(dir.workspace(), ec);
  if (ec) {
    std::string why = fmt::format("mkdir({}): {}", dir.workspace(), ec.message());
    dir.root_.clear();  // nothing of ours to remove
    return Status::HarnessError(why);
  }
  ::chmod(dir.workspace().c_str(), 0777);
  ::chmod(dir.root_.c_str(), 0755);
  // Before anything is launched, so a sweep can always find what this run leaves behind.
  if (Status claimed = ClaimRunDir(dir.root_, profile_path); !claimed.ok()) {
    return claimed.AsHarnessError();
  }
  return dir;
}

RunDir::RunDir(RunDir&& other) noexcept : root_(std::move(other.root_)), fate_(other.fate_) {
  other.root_.clear();
}

RunDir::~RunDir() {
  if (root_.empty()) return;
  switch (fate_) {
    case RunDirFate::kRemove: {
      std::error_code ec;
      fs::remove_all(root_, ec);
      return;
    }
    case RunDirFate::kKeep:
      MarkRunDirKept(root_);  // so no sweep removes it
      return;
    case RunDirFate::kLeaveForSweep:
      return;
  }
}

}  // namespace sandprobe
