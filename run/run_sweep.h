// Sweeping dead runs: what a runner that died (launch/run_registry.h) would have cleaned up
// itself. For each dead run of this uid:
//   1. the sweep commands the run recorded when it started (owner.json "sweep", the profile's
//      `sweep` specs expanded for its run_id; the profile file is never read): each list, then
//      its remove for every id listed (e.g. `docker rm -f` of every container labelled
//      sandprobe.run=<run_id>);
//   2. SIGKILL to every process whose /proc/<pid>/cmdline contains one of the run's process
//      tokens, and to everything below it (never pid 1, this process or its ancestors), each
//      pinned by a pidfd and confirmed before the signal (launch/pinned_process.h);
//   3. the pids cgroups the dead harness's envelope made (owner.json "pids_cgroups"), with
//      whatever is still inside them (an orphan that carries no token);
//   4. the files the run's probes planted on the host (owner.json "planted_files": regular
//      files whose name holds the token, in the recorded directories; never through a symlink);
//   5. the run dir itself, unless something above could not be removed (or the profile's list
//      was incomplete): it holds what the next sweep needs to try again.
// A sweep holds flock(2) on the run dir, so two sandprobes never sweep the same run at once.
// Another uid's dead runs are listed (include_foreign), never swept: root does not run, kill or
// remove what another user's owner.json says. After the runs: the partial reports writers that
// were killed mid-write left (io/write_temp.h).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/launcher.h"
#include "launch/run_registry.h"

namespace sandprobe {

struct SweptItem {
  enum class Kind {
    kSandboxObject,  // an id the profile's sweep listed (a container id), removed by its `remove`
    kProcess,        // a process carrying a token, or below one
    kCgroup,         // a pids cgroup of the dead harness's envelope
    kFile,           // a file a probe planted on the host
    kPlantedCanary,  // a canary file the run planted in a host directory (canaries_in)
    kRunDir,
    kPartialReport,  // the temp file of a report write whose writer was killed
  };
  Kind kind;
  std::string id;      // the listed id, the pid, or the path
  std::string detail;  // the remove command, or the process's argv
};
// "sandbox", "process", "cgroup", "file", "planted_canary", "run_dir", "partial_report"
std::string_view SweptKindName(SweptItem::Kind kind);

struct SweepSummary {
  DeadRun run;  // a partial report: root is its temp file, why says whose it was
  std::vector<SweptItem> removed;   // in a dry run: what would be removed
  std::vector<std::string> errors;  // what could not be removed (or not even looked for)
  std::string skipped;              // non-empty: not swept, and why
  std::vector<std::string> notes;   // swept, but the user should know (what was forgotten)
  bool partial_report = false;      // not a dead run: a killed writer's temp file
};

// How one dead run is swept.
struct DeadRunSweep {
  bool dry_run = false;
  // An owner.json of an older sandprobe records no sweep commands (step 1 cannot run): forget the
  // run anyway (steps 2-5, then the run dir), saying what may be left. Only when the user asks for
  // that run by id, after removing its labelled sandboxes by hand: otherwise such a run is an error
  // every sweep, so nobody loses track of containers nothing can list.
  bool forget_unrecorded = false;
};

struct SweepOptions {
  bool dry_run = false;        // list what would go; only the profile's `list` command runs
  std::string only_run_id;     // empty: every dead run
  std::string parent = RunDirParent();
  std::chrono::seconds unowned_age = std::chrono::hours(1);  // see FindDeadRuns
  bool include_foreign = false;  // also list other uids' dead runs (skipped, never swept)
  bool forget_unrecorded = false;  // see DeadRunSweep; honoured only with only_run_id
};

SweepSummary SweepDeadRun(const DeadRun& run, Launcher& launcher, DeadRunSweep how);

// FindDeadRuns + SweepDeadRun for each (or for `only_run_id` alone, if it is dead), then
// (without only_run_id) the partial reports of dead writers (SweepDeadWrites).
std::vector<SweepSummary> SweepDeadRuns(Launcher& launcher, const SweepOptions& options);

// For `sandprobe sweep --json`: {"run_id", "run_dir", "why", "removed": [{"kind", "id",
// "detail"}], "errors": [...], "notes": [...], "skipped"} (and "owner_uid" for another uid's run); a partial
// report: {"partial_report", "why", "removed", "errors"}.
nlohmann::json SweepSummaryToJson(const SweepSummary& summary);

// For people, one line per item: "dead run 3f2a (/var/tmp/sandprobe-3f2a): owner pid 42 is
// gone" then "  removed sandbox 7d1e: docker rm -f 7d1e", "  killed process 77: sh -c ...".
std::string DescribeSweep(const SweepSummary& summary, bool dry_run);

}  // namespace sandprobe
