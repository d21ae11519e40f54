// The probe families: one file per family, each a row in the probe table (probe_table.cc,
// assembled from one function per family group). A family only reports facts; judging them is
// the host's job.
#pragma once

#if !defined(__wasi__)
#include <signal.h>
#endif

#include <cstddef>
#include <string>
#include <vector>

#include "contract/frame_writer.h"
#include "contract/path_content.h"  // kMaxReadBytes, kMaxDirEntries

namespace sandprobe {

// Bounds shared by all families: a probe run stays small however large its argument list.
inline constexpr std::size_t kMaxPathsPerFamily = 4096;

// What every family gets: the frame channel and the run's nonce (used in scratch file names,
// so concurrent or earlier runs never collide with this one's files).
struct ProbeContext {
  const FrameWriter& out;
  const std::string& nonce;
};

using FamilyArgs = std::vector<std::string>;

// A row of the probe table.
struct ProbeFamilyRow {
  const char* name;   // "fs.read": what the runner passes on the command line
  const char* usage;  // "PATH...": the arguments, for the usage message
  // Checks the arguments before any frame is written: "" or the usage error.
  std::string (*check)(const FamilyArgs&);
  void (*run)(const ProbeContext&, const FamilyArgs&);
};

// Every family, assembled from the groups below (probe_table.cc).
const std::vector<ProbeFamilyRow>& ProbeFamilyTable();
// One function per family group, each defined in that group's file.
std::vector<ProbeFamilyRow> FilesystemProbeFamilies();  // fs_group.cc
std::vector<ProbeFamilyRow> NetworkProbeFamilies();     // net_group.cc
std::vector<ProbeFamilyRow> PrivilegeProbeFamilies();   // priv_group.cc
std::vector<ProbeFamilyRow> ResourceProbeFamilies();    // resource_group.cc
std::vector<ProbeFamilyRow> PersistenceProbeFamilies();  // persist.cc

// Argument checks run for every family before the first frame is written, so bad usage exits 2
// without a single fact. They return an error message, or "" when the arguments are usable.
std::string CheckFsReadArgs(const FamilyArgs& args);
std::string CheckFsWriteArgs(const FamilyArgs& args);
std::string CheckFsAliasArgs(const FamilyArgs& args);
std::string CheckFsMountsArgs(const FamilyArgs& args);
std::string CheckFsStorageArgs(const FamilyArgs& args);
std::string CheckEnvSecretArgs(const FamilyArgs& args);

// fs.read PATH...: open + fstat + read (4 KiB) or readdir (1024 names) each path.
void RunFsRead(const ProbeContext& ctx, const FamilyArgs& args);
// fs.write DIR...: create, write, close and unlink a nonce file in each dir; statvfs it.
void RunFsWrite(const ProbeContext& ctx, const FamilyArgs& args);
// fs.alias --scratch DIR PATH...: read each path through dotdot, /proc/self/root, a symlink and
// under every other mount's root (mount_root).
void RunFsAlias(const ProbeContext& ctx, const FamilyArgs& args);
// fs.mounts: the mount table, one fact per mount, then a summary.
void RunFsMounts(const ProbeContext& ctx, const FamilyArgs& args);
// fs.storage [DIR...]: per mount, a real write (create + unlink) at its root and, while refused,
// in the directories of that mount a bounded walk reaches; DIRs (the declared-writable ones)
// are never tried (fs_storage.cc).
void RunFsStorage(const ProbeContext& ctx, const FamilyArgs& args);
// env.secret PREFIX: hashes of matching variables in environ and readable /proc/*/environ.
void RunEnvSecret(const ProbeContext& ctx, const FamilyArgs& args);

// Holds off the deadline's SIGALRM while a family owns a file it created (create .. unlink):
// the deadline exits the process on the spot, and that must never strand a nonce file or link
// in a directory that may be the host's. A pending alarm fires as soon as the hold ends.
#if defined(__wasi__)
// WASI has no signals or timers: the probe checks its own clock where a run can take long (the
// resource loops, each sleep step, between steps: StopIfPastDeadline) and ends there as the
// alarm would. Checks inside a hold wait for its end; the hold's end checks (probe_main.cc).
void StopIfPastDeadline();
void EnterDeadlineHold();
void LeaveDeadlineHold();
class DeadlineHold {
 public:
  DeadlineHold() { EnterDeadlineHold(); }
  ~DeadlineHold() { LeaveDeadlineHold(); }
  DeadlineHold(const DeadlineHold&) = delete;
  DeadlineHold& operator=(const DeadlineHold&) = delete;
};
#else
// Natively SIGALRM ends the run wherever it is (probe_main.cc): nothing to check.
inline void StopIfPastDeadline() {}
class DeadlineHold {
 public:
  DeadlineHold() {
    sigset_t alarm;
    sigemptyset(&alarm);
    sigaddset(&alarm, SIGALRM);
    sigprocmask(SIG_BLOCK, &alarm, &previous_);
  }
  ~DeadlineHold() { sigprocmask(SIG_SETMASK, &previous_, nullptr); }
  DeadlineHold(const DeadlineHold&) = delete;
  DeadlineHold& operator=(const DeadlineHold&) = delete;

 private:
  sigset_t previous_;
};
#endif

// Creates `file` exclusively (O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file, never through a
// symlink), writes `nonce`, closes and unlinks it, under a DeadlineHold (fs_write.cc). Adds to
// `fact` ok/created/removed and, on the first failing step, step + errno.
void TryCreateAndRemove(const std::string& file, const std::string& nonce, nlohmann::json& fact);

// The dotdot alias of absolute `path` seen from `scratch`:
// ("/tmp", "/etc/shadow") -> "/tmp/../etc/shadow".
std::string DotDotAlias(const std::string& scratch, const std::string& path);

// Shared by the path-taking families: "" or "FAMILY: no paths" / "...: more than 4096 paths".
std::string CheckPathList(const std::string& family, const FamilyArgs& paths);

}  // namespace sandprobe
