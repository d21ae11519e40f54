// The run registry: which /var/tmp/sandprobe-<run_id>/ directories still belong to a live
// `sandprobe run`, and which were left behind by a runner that died (kill -9, OOM kill, power
// loss) and need sweeping (run/run_sweep.h).
//
// A run claims its directory with owner.json:
//   {"pid": 4242, "start_time_ticks": 981234, "pid_namespace": "pid:[4026531836]",
//    "profile_path": "/abs/sandboxes/docker-hardened.json",
//    "sweep": [{"list": ["docker", "ps", "-aq", "--filter", "label=sandprobe.run=3f2a1b2c4d5e"],
//               "remove": [["docker"], ["rm"], ["-f"], ["", ""]]}],
//    "process_tokens": ["sandprobe-3f2a1b2c4d5e", "sandprobe-canary-..."],
//    "planted_files": [{"token": "persist3f...", "dirs": ["/tmp", "/root", ...]}],
//    "pids_cgroups": "/sys/fs/cgroup/pids/sandprobe/4242-981234-"}
// The owner is alive while a process with that pid has that start time (field 22 of
// /proc/<pid>/stat): a recycled pid is not mistaken for the runner. Pids are compared only
// within the same pid namespace; a run dir claimed from another one is never judged dead.
// Process tokens are strings ([A-Za-z0-9-], at least 16 characters) that appear in the argv of
// processes the run starts or may leave behind; the run dir's own name is always one (it is
// in every argv that names the workspace or the canary file). Planted files: a token (of the
// same form) that names files a probe of the run may plant in those host directories (the
// persistence probe's `.sandprobe-persist-<token>`); a sweep removes the regular files whose
// name holds it. pids_cgroups: where the harness's launch cgroups go and how their names begin
// (launch/launch_pids_cgroup.h), so a sweep removes those a killed harness left.
//
// Everything a sweep acts on is in owner.json, recorded by the run itself: the profile's sweep
// commands are expanded when the run starts, before its first launch (`sweep`; the profile
// file is named for people only and never read again: it may be gone, or rewritten by whoever
// can write it). owner.json is only believed when only its owner could have written it: a
// regular file (opened O_NOFOLLOW) of the run dir's uid, neither group- nor world-writable
// (written 0600), in a run dir of that uid that no other uid can write. A sweep acts on the run
// dirs of its own uid only; another uid's dead runs are listed (include_foreign), never acted on.
#pragma once

#include <sys/types.h>


#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/run_root.h"
#include "model/status.h"

namespace sandprobe {

// Where runs put their directories: RunDirParent() (io/run_root.h), and their names' prefix.
inline constexpr const char* kRunDirPrefix = "sandprobe-";

// One profile `sweep` spec as the run expanded it when it started (run/recorded_sweep.h).
struct RecordedSweep {
  std::vector<std::string> list;  // ready to run: prints the ids of leftovers, one per line
  // The remove argv: each element as the pieces a listed id is put between ("{id}" alone is
  // ["", ""], "sandprobe-ws-{id}" is ["sandprobe-ws-", ""], "rm" is ["rm"]).
  std::vector<std::vector<std::string>> remove;
  std::vector<std::string> RemoveArgv(const std::string& id) const;
};

// Files a run's probes may plant on the host: names holding `token`, in `dirs`.
struct PlantedFiles {
  std::string token;
  std::vector<std::string> dirs;  // absolute
};

struct OwnerRecord {
  int pid = 0;
  unsigned long long start_ticks = 0;  // JSON start_time_ticks
  std::string pid_namespace;           // readlink(/proc/self/ns/pid) of the owner
  std::string profile_path;            // absolute; for people: a sweep never reads it
  // The profile's sweep commands, expanded before the first launch; nullopt: an owner.json of
  // an older sandprobe, which recorded none.
  std::optional<std::vector<RecordedSweep>> sweeps;
  std::vector<std::string> process_tokens;
  std::vector<PlantedFiles> planted_files;
  std::string pids_cgroups;  // LaunchCgroupPrefix() of the owner; "" when unknown
  // Canary files the run planted outside its run dir (a profile's canaries_in): the sweep
  // removes each that is still a regular file named sandprobe-canary-*.txt.
  std::vector<std::string> planted_canaries;
  // The run ended normally with --keep-run-dir: the dir stays until removed by hand, and is
  // never swept.
  bool kept = false;
};

// Writes owner.json for this process into `run_root` (atomically, mode 0600), with no sweep
// commands yet. Call right after creating the run dir, before anything is launched.
Status ClaimRunDir(const std::string& run_root, const std::string& profile_path);

// Records the run's expanded sweep commands in owner.json. Call before the first launch: an
// error means a dead run could not be swept, so the run must not launch anything.
Status RecordSweeps(const std::string& run_root, const std::vector<RecordedSweep>& sweeps);

// Adds `token` to owner.json (atomic rewrite). Tokens that are not [A-Za-z0-9-]{16,} are
// refused (a short token would match unrelated processes); so is a run dir this process does
// not own. Best effort: a failure only means a later sweep cannot find that process.
void RecordProcessToken(const std::string& run_root, const std::string& token);

// Adds `path` (absolute) to owner.json's planted_canaries (atomic rewrite). Best effort, like
// RecordProcessToken.
void RecordPlantedCanary(const std::string& run_root, const std::string& path);

// Whether `path` is a file a sweep may remove as a planted canary: absolute, a regular file
// (not a symlink) owned by this uid, named sandprobe-canary-<hex>.txt.
bool IsPlantedCanary(const std::string& path);

// Adds planted files (a token of the process-token form, absolute dirs) to owner.json, as
// RecordProcessToken does (same refusals, best effort).
void RecordPlantedFiles(const std::string& run_root, const std::string& token,
                        const std::vector<std::string>& dirs);

// Marks a run dir kept (--keep-run-dir) when its run ends normally. Best effort.
void MarkRunDirKept(const std::string& run_root);

// owner.json of `run_root`, when `owner` alone could have written it (see the top); an error
// when missing, unreadable, malformed or writable by anyone else. LoadOwner: this euid's.
StatusOr<OwnerRecord> LoadOwnerOf(const std::string& run_root, uid_t owner);
StatusOr<OwnerRecord> LoadOwner(const std::string& run_root);

// owner.json's text (read from `path`, for messages) as a record; for LoadOwnerOf and fuzzing.
StatusOr<OwnerRecord> ParseOwnerRecord(std::string_view text, const std::string& path);

// True for [A-Za-z0-9-]{16,}.
bool IsProcessToken(const std::string& token);

// A run dir whose run is over without having cleaned up.
struct DeadRun {
  std::string run_id;
  std::string root;                  // <parent>/sandprobe-<run_id>
  std::string why;                   // "owner pid 4242 is gone"
  std::optional<OwnerRecord> owner;  // nullopt: no (readable) owner.json
  // Set: the run dir belongs to this other uid. Listed so root sees it; never swept by us (it
  // would run, kill and remove what that user recorded): that user's own sweep removes it.
  std::optional<uid_t> foreign_uid;
};

// Run dirs under `parent` owned by this uid (not symlinks) whose owner is dead (and that are
// not kept), and those with no readable owner.json (older sandprobe, or a crash before the
// claim) untouched for `unowned_age`. `include_foreign`: also other uids' run dirs whose
// owner.json this process can read and that are dead (foreign_uid set). Sorted by run id.
std::vector<DeadRun> FindDeadRuns(const std::string& parent = RunDirParent(),
                                  std::chrono::seconds unowned_age = std::chrono::hours(1),
                                  bool include_foreign = false);

}  // namespace sandprobe
