// fs.mounts: the sandbox's mount table as the sandbox sees it (/proc/self/mountinfo).
//
// One fact per mount (key: its mount point, variant "id:<mount id>", unique even when mounts
// stack on one point), at most kMaxMounts, then a summary fact with the count and whether the
// table was cut. Facts only: whether a mount is the host's root or a host disk is decided on
// the host side, against the host's own mount table.
#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/families.h"
#include "contract/mountinfo.h"

namespace sandprobe {

std::string CheckFsMountsArgs(const FamilyArgs& args) {
  return args.empty() ? "" : "fs.mounts: takes no arguments";
}

void RunFsMounts(const ProbeContext& ctx, const FamilyArgs& /*args*/) {
  int error = 0;
  const std::string text = ReadMountinfoText(&error);
  bool truncated = false;
  const std::vector<MountEntry> mounts = ParseMountinfo(text, &truncated);
  for (const MountEntry& m : mounts) {
    nlohmann::json fact = {{"family", "fs.mounts"},
                           {"variant", "id:" + std::to_string(m.mount_id)},
                           {"mount_id", m.mount_id},
                           {"parent_id", m.parent_id},
                           {"dev", std::to_string(m.major) + ":" + std::to_string(m.minor)}};
    // Every text field is the kernel's bytes (a FUSE fstype or source is the mounter's choice).
    SetBytesField(fact, "fstype", m.fstype);
    SetBytesField(fact, "mount_options", m.mount_options);
    SetBytesField(fact, "super_options", m.super_options);
    SetBytesField(fact, "path", m.mount_point);
    SetBytesField(fact, "root", m.root);
    SetBytesField(fact, "source", m.source);
    ctx.out.Emit(fact);
  }
  nlohmann::json summary = {{"family", "fs.mounts"},
                            {"variant", "summary"},
                            {"path", ""},
                            {"ok", error == 0 && !text.empty()},
                            {"mounts", mounts.size()},
                            {"truncated", truncated || text.size() >= kMaxMountinfoBytes}};
  if (error != 0) summary["errno"] = ErrnoName(error);
  ctx.out.Emit(summary);
}

}  // namespace sandprobe
