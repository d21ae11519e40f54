#include "run/run_dir.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <fmt/format.h>

#include "io/remove_tree.h"
#include "launch/run_registry.h"
#include "model/errno_text.h"
#include "run/recorded_sweep.h"
#include "run/run_lab_gateway.h"
#include "run/workspace_owner.h"

namespace sandprobe {

StatusOr<RunDir> RunDir::Create(const std::string& parent, const std::string& run_id, const Profile& profile) {
  RunDir dir(fmt::format("{}/{}{}", parent, kRunDirPrefix, run_id), run_id);
  // mkdir, not create_directories: a directory of that name someone else made is not ours.
  if (::mkdir(dir.root_.c_str(), 0700) != 0) {
    std::string why = fmt::format("mkdir({}): {}", dir.root_, ErrnoText(errno));
    dir.root_.clear();  // nothing of ours to remove
    return Status::HarnessError(why);
  }
  if (::chmod(dir.root_.c_str(), 0755) != 0) {
    return Status::HarnessError(fmt::format("chmod({}, 0755): {}", dir.root_, ErrnoText(errno)));
  }
  if (::mkdir(dir.workspace().c_str(), 0700) != 0) {
    return Status::HarnessError(fmt::format("mkdir({}): {}", dir.workspace(), ErrnoText(errno)));
  }
  if (Status given = GiveWorkspace(dir.workspace(), profile.workspace_owner); !given.ok()) return given;
  // Before anything is launched, so a sweep can always find what this run leaves behind.
  if (Status claimed = ClaimRunDir(dir.root_, profile.source_path); !claimed.ok()) {
    return claimed.AsHarnessError();
  }
  return dir;
}

Status RunDir::RecordSweeps(const Profile& profile, const std::string& probe_dir) const {
  StatusOr<std::vector<RecordedSweep>> sweeps =
      ExpandSweepsForRecord(profile, SweepScalars(profile, run_id_, workspace(), probe_dir));
  if (!sweeps.ok()) return sweeps.status();
  // A docker lab gateway (run/run_lab_gateway.h) is the run's too, whatever the profile sweeps.
  if (profile.lab == LabMode::kDockerGateway) {
    for (RecordedSweep& sweep : LabGatewaySweeps(run_id_, LabGatewayEngineFor(profile.backend))) {
      sweeps->push_back(std::move(sweep));
    }
  }
  return sandprobe::RecordSweeps(root_, *sweeps).AsHarnessError();
}

nlohmann::json RunDir::DiskFacts() const {
  struct statvfs vfs {};
  if (::statvfs(workspace().c_str(), &vfs) != 0) {
    return {{"path", workspace()}, {"error", fmt::format("statvfs: {}", ErrnoText(errno))}};
  }
  unsigned long long bytes_free = static_cast<unsigned long long>(vfs.f_bavail) * vfs.f_frsize;
  // f_files 0: a filesystem without an inode count (btrfs): never "no inode left".
  bool no_inodes = vfs.f_files > 0 && vfs.f_favail == 0;
  return {{"path", workspace()},
          {"bytes_free", bytes_free},
          {"inodes_free", static_cast<unsigned long long>(vfs.f_favail)},
          {"read_only", (vfs.f_flag & ST_RDONLY) != 0},
          {"full", bytes_free < kFullBelowBytes || no_inodes}};
}

RunDir::RunDir(RunDir&& other) noexcept
    : root_(std::move(other.root_)), run_id_(std::move(other.run_id_)), fate_(other.fate_) {
  other.root_.clear();
}

RunDir::~RunDir() {
  if (root_.empty()) return;
  switch (fate_) {
    case RunDirFate::kRemove:
      // Never through a link the sandbox's uid made in its workspace (io/remove_tree.h).
      (void)RemoveTree(root_);
      return;
    case RunDirFate::kKeep:
      MarkRunDirKept(root_);  // so no sweep removes it
      return;
    case RunDirFate::kLeaveForSweep:
      return;
  }
}

}  // namespace sandprobe
