// fs.mounts: the sandbox's mount table as the sandbox sees it (/proc/self/mountinfo).
//
// One fact per mount (key: its mount point, variant "id:<mount id>", unique even when mounts
// stack on one point), at most kMaxMounts, then a summary fact with the count and whether the
// table was cut. Each mount point is also stat'ed: what is there ("kind"), its inode and, when
// the device differs from the table's, the device stat shows ("stat_dev": another mount covers
// it); a directory's listing is hashed as fs.read hashes it ("sha256", "entries"). The summary
// names the probe's own executable by device and inode ("exe_dev", "exe_ino"): the harness
// knows which host file it handed in, so it can tell whether these device numbers are its
// kernel's. Facts only: whether a mount is the host's root, a host disk or a host directory is
// decided on the host side, against the host's own mount table.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "contract/mountinfo.h"
#include "contract/path_content.h"
#include "contract/sha256.h"
#include "probes/families.h"
#include "probes/read_path.h"

namespace sandprobe {
namespace {

std::string DevText(dev_t dev) { return DeviceText(major(dev), minor(dev)); }

// What the mount point shows now: kind, inode, the device when it is not the mount's own, and
// a directory's listing.
void AddMountPointFacts(const MountEntry& m, nlohmann::json& fact) {
  struct stat st {};
  if (::stat(m.mount_point.c_str(), &st) != 0) {
    fact["stat_errno"] = ErrnoName(errno);
    return;
  }
  fact["kind"] = FileKindName(st.st_mode);
  fact["ino"] = static_cast<unsigned long long>(st.st_ino);
  if (major(st.st_dev) != m.major || minor(st.st_dev) != m.minor) fact["stat_dev"] = DevText(st.st_dev);
  if (!S_ISDIR(st.st_mode)) return;
  const PathContent c = ReadPathContent(m.mount_point);
  if (!c.ok || c.kind != PathContent::Kind::kDir) return;
  fact["entries"] = c.entries;
  fact["listing_truncated"] = c.truncated;
  fact["sha256"] = Sha256Hex(c.hashed);
}

}  // namespace

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
                           {"dev", DeviceText(m.major, m.minor)}};
    // Every text field is the kernel's bytes (a FUSE fstype or source is the mounter's choice).
    SetBytesField(fact, "fstype", m.fstype);
    SetBytesField(fact, "mount_options", m.mount_options);
    SetBytesField(fact, "super_options", m.super_options);
    SetBytesField(fact, "path", m.mount_point);
    SetBytesField(fact, "root", m.root);
    SetBytesField(fact, "source", m.source);
    AddMountPointFacts(m, fact);
    ctx.out.Emit(fact);
  }
  nlohmann::json summary = {{"family", "fs.mounts"},
                            {"variant", "summary"},
                            {"path", ""},
                            {"ok", error == 0 && !text.empty()},
                            {"mounts", mounts.size()},
                            {"truncated", truncated || text.size() >= kMaxMountinfoBytes}};
  if (error != 0) summary["errno"] = ErrnoName(error);
  struct stat exe {};
  if (::stat("/proc/self/exe", &exe) == 0) {
    summary["exe_dev"] = DevText(exe.st_dev);
    summary["exe_ino"] = static_cast<unsigned long long>(exe.st_ino);
  }
  ctx.out.Emit(summary);
}

}  // namespace sandprobe
