// Sandbox: runs probe launches through a profile's argv templates (its lifecycle), and cleans
// up after them. Backends are data: nothing here knows docker from bwrap.
//
//   oneshot: each probe launch is `run` in a fresh {instance}, then that instance's `cleanup`.
//   session: `start` once (first use), `exec` per probe launch, then `stop` and `cleanup`; a
//            launch that asks for a fresh instance stops the open one and starts another.
// `teardown` runs once at the end of a run (what outlives instances on purpose, e.g. a volume).
// `sweep` (end of run) lists what still carries this run's label and removes it by id.
// RunProbe may be called from several threads at once; Close, Teardown and Sweep may not (they
// run when no probe launch does).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/deadline.h"
#include "model/launch_record.h"
#include "launch/launcher.h"
#include "load/profile.h"
#include "model/status.h"

namespace sandprobe {

struct SandboxContext {
  std::string run_id;     // {run_id}
  std::string probe_dir;  // {probe_dir}: host directory holding only the probe binary
  std::string workspace;  // {workspace}: host directory this run owns
  // Added to the environment of every launch (the canary env secret lives here).
  std::vector<std::pair<std::string, std::string>> env;
  // Set by the SIGINT handler: running probe launches are killed, no new ones start.
  const std::atomic<bool>* cancel = nullptr;
  // The run's deadline bounds every launch, housekeeping too: each gets min(its own timeout,
  // what is left), and one with nothing left is not started (LaunchRecord::cut_short).
  Deadline deadline;
  // Set when the run has an egress lab (run/run_lab.h): probe launches that ask for it
  // (ProbeLaunchOptions::join_lab; the run's launches all do) run inside it. A session profile's exec joins, its start
  // does not: "lab": "join" is meant for one-shot process sandboxes.
  std::optional<LabJoin> lab_join;
  // The egress lab's placeholders for a "docker-gateway" profile (run/run_lab.h scalars()):
  // {lab_network}, {lab_dns}. Empty without one.
  std::map<std::string, std::string> lab_scalars;
};

class Sandbox {
 public:
  Sandbox(const Profile& profile, Launcher& launcher, SandboxContext context);
  ~Sandbox();  // closes an open session
  const Profile& profile() const { return profile_; }

  // Runs the profile's `requires` commands. The error names the backend, the failed command
  // with its output, and the profile's install hint.
  Status Preflight();

  // How one probe launch runs (from its LaunchBatch).
  struct ProbeLaunchOptions {
    std::chrono::milliseconds timeout{0};  // zero: the profile's timeout_seconds
    bool fresh_instance = false;  // a session profile stops its open instance and starts another
    bool host_readings = true;    // run the profile's `inspect` after it
    bool probe_process = false;   // watch for the probe process (host_readings does too)
    // Left running when it outlives the launch (LaunchSpec::spare_processes_with_arg).
    std::string spare_processes_with_arg;
    bool join_lab = false;  // run inside the egress lab, when the run has one (SandboxContext::lab_join)
    // One-shot: leave the instance's `cleanup` to the caller (CleanupInstance with the record's
    // instance), which may run it beside the next launch (run/run_launches.cc).
    bool defer_cleanup = false;
  };
  // One probe launch (nonce already in `probe_args`); frames parsed with `nonce`. A one-shot
  // launch is always a fresh instance.
  LaunchRecord RunProbe(const std::vector<std::string>& probe_args, const std::string& nonce,
                        const ProbeLaunchOptions& options);
  LaunchRecord RunProbe(const std::vector<std::string>& probe_args, const std::string& nonce) {
    return RunProbe(probe_args, nonce, ProbeLaunchOptions{});
  }

  // Runs the profile's `cleanup` for a one-shot instance whose probe launch deferred it
  // (ProbeLaunchOptions::defer_cleanup). Safe beside other launches.
  void CleanupInstance(const std::string& instance) { Cleanup(instance); }

  // Stops an open session and runs its cleanup. Safe to call twice.
  void Close();

  // Runs the profile's `teardown` (once, at the end of a run, after Close()).
  void Teardown();

  // Removes whatever still carries this run's label (profile `sweep`). The sweep is the safety
  // net for what housekeeping could not remove, so it is skipped when housekeeping provably
  // removed everything: the run was not interrupted, it made at least one instance (`sandprobe
  // sweep` of a dead run makes none and always sweeps), the profile has a `cleanup`, every
  // instance's cleanup exited 0, any `teardown` exited 0, and no probe launch was cut short
  // (timed out, interrupted, or failed to run, which can leave a container its cleanup raced).
  // `sandprobe sweep` stays the net for a run that died. Only whole ids of the listed output
  // are removed (run/sweep_ids.h); what was not taken makes the sweep "incomplete".
  // Returns what each spec listed and removed (empty when skipped).
  struct SweepListing {
    LaunchRecord list;                                           // the spec's `list` launch
    std::vector<std::pair<std::string, LaunchRecord>> removals;  // each id, with its `remove`
    std::vector<std::string> incomplete;  // why ids may be missing (run/sweep_ids.h)
  };
  // `interrupted`: the run was cut short (the caller knows it before the cancel flag's
  // watcher may have said so): always sweep.
  std::vector<SweepListing> Sweep(bool interrupted = false);
  // What Sweep did, for the report: "ran", "failed: <why>", "skipped: <why>" or
  // "none: <why>".
  std::string sweep_summary() const { return sweep_summary_; }
  // Whether something this run made may still exist: housekeeping did not provably remove
  // everything and the sweep did not make up for it (it failed, was cut by the deadline, or
  // the profile has none). The run then keeps its registry entry so `sandprobe sweep` (and the
  // next run's sweep of dead runs) tries again.
  bool may_have_left_objects() const;

  // Every launch made so far (probe and housekeeping), in order; ids are L1, L2, ...
  const std::vector<LaunchRecord>& records() const { return records_; }

  // Host readings by probe launch id (profile `inspect`): {"L3": {"oom_killed": true, ...}},
  // and for launches that ask for host readings, the cgroup limits of the probe process when
  // the host could see it (run/probe_process_reading.h: host_cgroup_cpu_quota_cores, ...).
  // A reading whose pointer finds nothing is absent; a failed inspect is "inspect_error".
  const nlohmann::json& host_readings() const { return host_readings_; }

 private:
  std::map<std::string, std::string> Scalars(const std::string& instance) const;
  std::string NewInstance();
  // One argv template to expand and launch.
  struct TemplateLaunch {
    const std::vector<std::string>& argv_template;
    std::string instance;
    std::string purpose;  // LaunchRecord::purpose
    std::vector<std::string> probe_args;
    std::map<std::string, std::string> extra_scalars;  // e.g. {id} for sweep.remove
    bool cancellable = false;  // probe launches stop on SIGINT; housekeeping always runs
    bool enveloped = false;    // probe launches get the profile's envelope
    bool removes = false;      // stop, cleanup, teardown, sweep: Deadline::ForRemoval
    std::chrono::milliseconds timeout{60000};
    std::string spare_processes_with_arg;  // LaunchSpec's
    bool join_lab = false;                 // LaunchSpec::lab_join from SandboxContext::lab_join
  };
  // Launches and records it; returns a copy of the record and, if asked, the raw result and
  // the record's index in records_.
  LaunchRecord LaunchTemplate(const TemplateLaunch& launch, LaunchResult* raw = nullptr,
                              std::size_t* index_out = nullptr);
  void StoreRecord(std::size_t index, const LaunchRecord& record);
  void Cleanup(const std::string& instance);
  // Every instance's cleanup exited 0 and no launch or teardown was cut short; the caller holds
  // records_mutex_. Then the sweep is skipped, and nothing is left for a later one.
  bool HousekeepingRemovedAll() const;
  void Inspect(const std::string& instance, const std::string& probe_launch_id);
  nlohmann::json ReadInspect(const std::string& instance);  // one run of the profile's inspect

  const Profile& profile_;
  Launcher& launcher_;
  SandboxContext context_;
  // Probe launches may run on several threads at once (run -j N): records_ and host_readings_
  // are guarded by records_mutex_, the session's start and stop by session_mutex_.
  // Pids cgroups of launches that left spared processes inside (LaunchResult::kept_cgroup):
  // removed, with whatever is still in them, when the sandbox goes.
  std::vector<std::string> kept_cgroups_;
  mutable std::mutex records_mutex_;
  std::vector<LaunchRecord> records_;
  std::mutex session_mutex_;
  std::string session_instance_;  // non-empty while a session is open
  std::atomic<int> instances_{0};
  // What Sweep needs to know (guarded by records_mutex_): instances whose cleanup all exited 0,
  // and whether anything could have left a labelled object behind.
  std::set<std::string> instances_cleaned_;
  bool housekeeping_incomplete_ = false;
  std::string sweep_summary_ = "none: the profile has no sweep";
  bool sweep_complete_ = false;  // a sweep ran, listed, and removed every id it listed
  nlohmann::json host_readings_ = nlohmann::json::object();
};

}  // namespace sandprobe
