// The executables' SHA-256s kept from one run to the next (launch_executable.h says why every
// launch records the hash of what it ran).
//
// Hashing /usr/bin/docker (45 MB) takes ~45 ms of CPU, on a thread beside the launch it belongs
// to; on 2 vCPUs that is CPU the container start needs. docker-hardened's privileges suite, 21
// interleaved runs: 341 ms with the hash, 324 ms without. Every run is a process of its own, so
// the in-process cache only spares a run's later launches.
//
// Kept by the file's identity, as the in-process cache: (device, inode, size, mtime, ctime, in
// ns). Any write to the file changes its ctime, which its owner cannot set back, so an entry is
// only ever found for the bytes that were hashed. A hash found here is still the harness's own
// observation, made by an earlier run.
//
// The file is RunDirParent()/sandprobe.executable-sha256.json. /var/tmp is world-writable, so a
// file someone else could have written is never believed: it must be a regular file (a link is
// not followed), owned by this process's user and writable by no one else. It is replaced
// atomically (never through a link), and holds at most kMaxPersistedHashes entries; past that
// it starts over. Every failure to read or write it only means hashing again.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <optional>
#include <string>

namespace sandprobe {

inline constexpr std::size_t kMaxPersistedHashes = 64;
// Smaller files are hashed again by every run: that costs no more than a look into the cache.
inline constexpr off_t kPersistHashFromBytes = 1024 * 1024;

// The key of both hash caches, the process's and this one: "dev:ino:size:mtime:ctime" (ns).
std::string FileIdentity(const struct stat& st);

// RunDirParent()/sandprobe.executable-sha256.json (not "sandprobe-": that prefix is a run dir's).
std::string PersistedHashesPath();

// The SHA-256 (lowercase hex) recorded in `cache` for the file `st` describes, if `cache` may be
// believed and has one.
std::optional<std::string> FindPersistedHash(const std::string& cache, const struct stat& st);

// Records `sha256` of `executable` (the file `st` describes) in `cache`, unless `cache` is
// there and may not be believed (then it is left alone).
void PersistHash(const std::string& cache, const struct stat& st, const std::string& executable,
                 const std::string& sha256);

}  // namespace sandprobe
