// The host's own view of what the filesystem checks deny, taken by the harness before the
// first launch, so a read inside the sandbox counts as a leak only when it shows the host's
// data (architecture.md, "Witnesses"): a decoy (a 0-byte file bound over /etc/shadow, an empty
// tmpfs over /root) is told apart from the real thing.
//
// WitnessFacts::observed["host_paths"] (and the report's witnesses.host_paths):
//   {"paths": {"/etc/shadow": {"ok": true, "kind": "file", "bytes": 1234, "truncated": false,
//                              "sha256": "...", "dev": "254:0", "ino": 123},
//              "/missing": {"ok": false, "step": "open", "errno": "ENOENT"}},
//    "root": {"dev": "254:0", "root": "/", "mount_point": "/", "source": "/dev/vda"},
//    "block_mounts": [{"dev": "254:0", "root": "/", "mount_point": "/", "source": "/dev/vda"}, ...],
//    "mountinfo_error": "ENOENT",   (only when the host's mount table was unreadable)
//    "host_root": "/proc/1/root"}   (only when read through --host-root: witness_host_view.h)
// "paths" hashes each path exactly as the probe does (contract/path_content.h). "root" is the
// host's "/" mount; "block_mounts" every host mount of a block device (source /dev/...): what
// fs.mounts compares the sandbox's mount table with.
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "families/plan.h"
#include "witnesses/witness_host_view.h"

namespace sandprobe {

// The host paths whose content decides the plan's denied fs.read / fs.alias checks: their
// resolved targets, except the canaries (judged by their own token's hash).
std::set<std::string> DeniedHostPaths(const Plan& plan);

// The host's facts for `paths` and its mount table, read through `host` ("host_root" names the
// view when it is not the harness's own root).
nlohmann::json HostPathFacts(const std::set<std::string>& paths, const HostView& host = {});

// HostPathFacts(DeniedHostPaths(plan)): what run.cc stores as observed["host_paths"].
inline nlohmann::json HostPathWitness(const Plan& plan, const HostView& host) {
  return HostPathFacts(DeniedHostPaths(plan), host);
}

}  // namespace sandprobe
