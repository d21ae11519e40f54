// The probe a run hands to its sandboxes ({probe_dir}, {probe}), and the proof that it is the
// probe this build made.
//
// Which probe: the profile's "probe" (load/profile.h ProbeChoice): a runtime's probe from its
// own directory (the data layout's, load/data_dir.h ProbeDirFor, or --probe-dir), or a probe
// file the profile names. What it must be: the build's table (run/probe_builds.h) says the
// SHA-256 of the file the build made and what its hello says; a probe file's hash is pinned when
// the run starts. The run hashes the file it puts in place before the first launch and checks
// every launch's hello after (contract/probe_identity.h): a --probe-dir holding another program
// or a sandbox that runs its own file at the probe path is refused (issue 25).
//
// Sandboxes may start as an unprivileged host user (bwrap-strict runs bwrap as `nobody`), so
// the probe must be reachable by any uid: every directory on its path searchable by others and
// the file readable (and, for a binary, executable) by others. A checkout below a private
// directory (/root, mode 0700) is not; then the run uses a copy in its own run directory (mode
// 0755), which the run removes with everything else. A copy, not a hard link: a sandbox that
// could write the probe must not be able to change the build's file.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "contract/probe_identity.h"
#include "load/profile.h"
#include "model/status.h"
#include "run/probe_builds.h"

namespace sandprobe {

// True when `path` and every directory above it let any uid reach it (o+x on directories,
// `other_bits` on `path` itself, e.g. S_IROTH | S_IXOTH).
bool ReachableByAnyUid(const std::string& path, unsigned other_bits);

// `path` with symlinks resolved when it exists, else absolute and lexically normal. What the
// harness hands a sandbox is resolved: a runtime's allowlist (deno --allow-read=DIR) compares
// resolved paths, so a {workspace} under a symlinked /tmp would never match.
std::string ResolvedPath(const std::string& path);

// The probe one run injects, found before anything launches.
struct InjectedProbe {
  std::string dir;        // its host directory: the layout's or --probe-dir's, or a probe file's
  std::string file_name;  // the probe's file in `dir`
  std::string runtime;    // "native", "js", ...; "" for a probe file (its hellos say, and must agree)
  std::string sha256;     // what the placed file must hash to
  std::string where;      // how it was found, for messages: "--probe-dir /x", "the build's js probe"
  bool executable = true;  // the sandbox executes it (native); a script is only read by its runtime
  // What a built probe's hello must say; unset for a probe file.
  std::optional<ProbeIdentity> identity;
  std::string path() const { return dir + "/" + file_name; }
};

// The probe of `choice`: a probe file (its hash taken now), or the runtime's probe in
// `probe_dir_flag` (--probe-dir) when given, else in the data layout whose native probe
// directory is `layout_probe_dir`, checked against its row of `builds`. Harness error (exit 3)
// when this build made no probe of that runtime or the file is not there.
StatusOr<InjectedProbe> FindInjectedProbe(const ProbeChoice& choice, const std::string& probe_dir_flag,
                                          const std::string& layout_probe_dir,
                                          std::span<const ProbeBuild> builds);

// Puts the probe where every uid can reach it (its own directory, or a copy under `run_dir`)
// and returns that directory; the file there must hash to probe.sha256, else invalid input
// (exit 2) naming both hashes and where the probe came from.
StatusOr<std::string> PlaceProbe(const InjectedProbe& probe, const std::string& run_dir);

}  // namespace sandprobe
