// Shared by the filesystem family files (family_fs*.cc): how a read seen inside the sandbox is
// weighed against the host's own facts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "families/family.h"

namespace sandprobe {

// A fact's string field, or "" when it is absent or not a string.
std::string FactString(const nlohmann::json& fact, const char* key);
// `inner` is `outer` or lies under it (absolute, normalised paths).
bool PathWithin(const std::string& inner, const std::string& outer);
// The first `shown` items joined by "; ", then "; and N more": one clause of `observed`.
std::string JoinedFirst(const std::vector<std::string>& items, std::size_t shown);

// Alias variants fs.alias tries when the suite names none.
const std::vector<std::string>& DefaultAliasVariants();

// What one successful read of a denied path showed, decided against the host's witness.
struct ReadWeight {
  bool leak = false;  // the host's data (or the host's object) was seen
  std::string why;    // one clause for `observed`: "decoy: ..." or "matches the host's content"
};

// A read (`got`: an fs.read / fs.alias fact, or one mount_root hit, with ok:true) of a denied
// path whose host-side facts are `host` (witness_host_paths.h "paths" entry; null: none), with
// every host object the harness witnessed in `witnesses` (each denied path's host copy, the
// critical host directories of witness_host_mounts.h):
//   - the same device and inode as the host's object: the host's object itself -> leak;
//   - the same device and inode as any other witnessed host object, or the same non-empty
//     content (a file's bytes; a directory's listing, of 4 names or more for the critical
//     directories) -> that host object, under another name -> leak, before anything below
//     (the host lacking the path itself proves nothing then);
//   - the same sha256 as the host's non-empty content -> leak;
//   - the same sha256 as the host's *empty* content (a 0-byte file, a directory of 0 entries):
//     a leak only when nothing tells them apart; with another device/inode it is a decoy;
//   - another kind or sha256 -> a decoy (a tmpfs, a 0-byte bind) or the sandbox's own file;
//     except truncated directory listings, which cannot be compared -> leak;
//   - the host has no such path (ENOENT) -> the sandbox's own file;
//   - no host witness, or the host could not read its copy -> leak (nothing to clear it).
ReadWeight WeighRead(const nlohmann::json& got, const nlohmann::json* host,
                     const WitnessFacts* witnesses = nullptr);

// The canary a check is about: the host canary ({host_canary}) or a mounted canary
// ({mounted_canary:DIR}). nullopt: not a canary check; "" : a canary whose hash is unknown.
std::optional<std::string> CanarySha(const Check& check, const WitnessFacts& witnesses);

// Where a canary's sha256 appears in any fact of the launches (this one, then the others when
// JudgeInput::launches is set): "" when nowhere, else the first place, for `observed`; the
// frame index is added to the verdict's evidence when it is this launch's.
std::string FindCanaryAnywhere(const JudgeInput& in, const std::string& sha, Verdict& v);

// The host canary's checks against the host's own watch of it (observed["canary_watch"],
// family_fs_canary_watch.cc): a change to the canary fails the check (critical, a write to the
// host) whatever its expectation; an open fails a denied one; a denied pass the watch confirms
// is witnessed. Nothing for other checks, or without a watch (an older report).
void ApplyCanaryWatch(const JudgeInput& in, Verdict& v);

// The host witness entry of `path` (observed["host_paths"]["paths"][path]), or null.
const nlohmann::json* HostPathFact(const WitnessFacts& witnesses, const std::string& path);

// Why the mount table was not the probe's to read, when the runtime's own permission model
// refused it (a language-runtime sandbox: the JS probe's "denied_by": "runtime-permission");
// nullopt otherwise. There the code runs in the host's mount namespace and the runtime, not a
// mount namespace, is the boundary: fs.read and fs.alias judge it, and fs.mounts checks skip
// saying so (family_fs_mounts.cc).
std::optional<std::string> MountTableRefusedByRuntime(const nlohmann::json& summary);

// Expansion and judgement of fs.mounts (family_fs_mounts.cc).
Status ExpandFsMounts(const ExpandInput& in, BatchBuilder& batch);
Verdict JudgeFsMounts(const JudgeInput& in);

// The host directories whose exposure fs.mounts judges each by its own check and severity
// (family_fs_host_dirs.cc): the host's root, its configuration and users' data, the runtime's
// data and the kernel's views. The host_mounts witness records their identities.
struct CriticalHostDir {
  const char* path;
  Severity severity;
  // Its listing is host-specific data, so a sandbox's directory with the same listing is this
  // directory even where device numbers say nothing (another kernel: gVisor, a VM). Not so for
  // "/" (a distribution image's root lists the same names), /proc, /sys, /dev (every instance
  // of those filesystems lists alike).
  bool listing_identifies;
};
const std::vector<CriticalHostDir>& CriticalHostDirs();

// Expansion and judgement of fs.storage (family_fs_storage.cc).
Status ExpandFsStorage(const ExpandInput& in, BatchBuilder& batch);
Verdict JudgeFsStorage(const JudgeInput& in);

// A sandbox mount as its mountinfo line names it: device, filesystem type, root within it.
struct SandboxMountId {
  std::string dev, fstype, root;
};
// The host directory that sandbox mount shows (matched by device, type and root against the
// host_mounts witness, family_fs_host_dirs.cc): "/var/lib/docker/volumes/x" or "/" for the host's
// root; "" when the host has no such mount (the sandbox's own fresh mount), when the witness is
// missing, or when the sandbox's device numbers are not shown to be the host kernel's (the
// probe's executable, `summary`'s exe_dev/exe_ino, is not the host file the harness handed in).
std::string HostDirectoryOfMount(const WitnessFacts& witnesses, const nlohmann::json& summary,
                                 const SandboxMountId& mount);

// fs.mounts.host-dir:<dir> per CriticalHostDirs() entry and fs.mounts.host-dirs (every other
// host directory the sandbox sees where the policy does not declare it readable).
Status ExpandHostDirs(const ExpandInput& in, BatchBuilder& batch);
// Whether `check` is one of them, and its judge.
bool IsHostDirCheck(const Check& check);
Verdict JudgeHostDirs(const JudgeInput& in);
// The non-empty lines of a check's resolved target (the lists fs.mounts and fs.storage plan).
std::vector<std::string> NonEmptyLines(const std::string& text);

}  // namespace sandprobe
