// The host-mounts witness ("host_mounts"): the host's own mount table and the identities of the
// host objects the filesystem families match the sandbox's view against, by device and inode
// (and, across kernels, by a directory's listing), never by the path the sandbox shows them at.
//
// Taken when the witness starts (before the first launch) and again at Collect (after the
// last): only mounts present both times are kept, so a device number the kernel handed to a
// sandbox's fresh tmpfs or proc after some host mount went away is never read as that host
// mount's.
//
// WitnessFacts::observed["host_mounts"] (and the report's witnesses.host_mounts):
//   {"mounts": [{"id": 27, "dev": "254:0", "root": "/", "mount_point": "/", "fstype": "ext4"}, ...],
//    "unstable": 1,                  (mounts seen at only one of the two reads, left out)
//    "critical": {"/etc": {"ok": true, "kind": "dir", "dev": "254:0", "ino": 19,
//                          "entries": 154, "sha256": "..."}, ...},   (CriticalHostDirs())
//    "handed_in": [{"what": "workspace", "path": "/var/tmp/sandprobe-x/workspace", "kind": "dir",
//                   "dev": "254:0", "ino": 5}, {"what": "probe_dir", ...}, {"what": "probe", ...}],
//    "mountinfo_error": "EACCES",    (only when the host's table could not be read)
//    "host_root": "/proc/1/root"}    (only when read through --host-root: witness_host_view.h)
// "handed_in" is what the harness itself gives the sandbox: the run's workspace, the probe
// directory and the files in it (the probe's own executable among them).
//
// PlanValues: "walk_devs": the devices ("MAJOR:MINOR,...") of the host's mounts that can hold a
// socket file, for the probe's socket walk (net.unix, priv.runtime_sockets).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/mountinfo.h"
#include "witnesses/witness_host_view.h"

namespace sandprobe {

struct HostMountsInput {
  HostView host;                           // where the mount table and critical dirs are read
  std::vector<std::string> critical_dirs;  // host paths whose identity is recorded
  std::string workspace, probe_dir;        // what the harness hands in ("" when none), read as the harness sees it
};

// The identities and the first mount table read ("mounts" then holds that table whole).
nlohmann::json ReadHostMounts(const HostMountsInput& input);

// Keeps in `facts["mounts"]` only the mounts also in `later` (the same id, device, root, mount
// point and type), and counts the others in "unstable".
void KeepStableMounts(nlohmann::json& facts, const std::vector<MountEntry>& later);

// "254:0,0:23": the devices of `mounts` ("mounts" entries) whose filesystem type can hold a
// socket file (not proc, sysfs, cgroupfs, devpts, ...), in table order, once each.
std::string SocketWalkDevices(const nlohmann::json& mounts);

}  // namespace sandprobe
