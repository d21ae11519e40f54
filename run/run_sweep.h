// Sweeping dead runs: what a runner that died (launch/run_registry.h) would have cleaned up
// itself. For each dead run:
//   1. the recorded profile's `sweep` spec, for the dead run's run_id, through Sandbox::Sweep
//      (e.g. `docker rm -f` of every container labelled sandprobe.run=<run_id>);
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
  };
  Kind kind;
  std::string id;      // the listed id, the pid, or the path
  std::string detail;  // the remove command, or the process's argv
};
// "sandbox", "process", "cgroup", "file", "planted_canary", "run_dir"
std::string_view SweptKindName(SweptItem::Kind kind);

struct SweepSummary {
  DeadRun run;
  std::vector<SweptItem> removed;   // in a dry run: what would be removed
  std::vector<std::string> errors;  // what could not be removed (or not even looked for)
  std::string skipped;              // non-empty: not swept, and why
};

struct SweepOptions {
  bool dry_run = false;        // list what would go; only the profile's `list` command runs
  std::string only_run_id;     // empty: every dead run
  std::string parent = RunDirParent();
  std::chrono::seconds unowned_age = std::chrono::hours(1);  // see FindDeadRuns
};

SweepSummary SweepDeadRun(const DeadRun& run, Launcher& launcher, bool dry_run);

// FindDeadRuns + SweepDeadRun for each (or for `only_run_id` alone, if it is dead).
std::vector<SweepSummary> SweepDeadRuns(Launcher& launcher, const SweepOptions& options);

// For `sandprobe sweep --json`: {"run_id", "run_dir", "why", "removed": [{"kind", "id",
// "detail"}], "errors": [...], "skipped"}.
nlohmann::json SweepSummaryToJson(const SweepSummary& summary);

// For people, one line per item: "dead run 3f2a (/var/tmp/sandprobe-3f2a): owner pid 42 is
// gone" then "  removed sandbox 7d1e: docker rm -f 7d1e", "  killed process 77: sh -c ...".
std::string DescribeSweep(const SweepSummary& summary, bool dry_run);

}  // namespace sandprobe
