// The plan's plain data: probe invocations, launches, the plan, and the values the planner
// substitutes. Shared by the planner (plan.h), the families (family.h) and the judge; no
// functions, so a family can name them without reaching the planner.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/check.h"

namespace sandprobe {

// One family call inside a probe launch: `FAMILY ARGS...` on the probe's command line.
struct ProbeInvocation {
  std::string family;
  std::vector<std::string> args;
};

// One probe launch: several families, separated by --next on the probe command line.
struct LaunchBatch {
  std::string id;  // "B1", ...
  std::vector<ProbeInvocation> invocations;
  std::vector<std::size_t> check_indexes;  // into Plan::checks
  // Resource probes run alone (never beside another launch).
  bool exclusive = false;
  // Checks and no invocations: decided at plan time, nothing to launch (planned only when
  // PlanContext::launchless_checks says the runner judges it without a launch).
  // Per-launch timeout for this batch; 0: the profile's timeout_seconds.
  int timeout_seconds = 0;
  // Run in a fresh sandbox instance: a session profile stops its instance and starts a new one
  // first (a one-shot profile's launches are always fresh). Persistence needs "turn 2 in the
  // same session" and "a new session" as distinct launches.
  bool fresh_instance = false;
  // Run the profile's `inspect` after this launch: only checks that read host readings (the
  // resource limits: OOMKilled, HostConfig) need it, and it costs a backend call per launch.
  bool host_readings = false;
  // Watch for the probe's process on the host while it runs (run/probe_process_reading.h)
  // without the profile's `inspect`: priv.tiocsti.session compares its session with the
  // harness's. host_readings watches too.
  bool probe_process = false;
  // Non-empty: a process of this launch carrying this argv element is left running after it
  // (the policy says background processes outlive a launch); the persist witness ends it at
  // the end of the run.
  std::string spare_processes_with_arg;
  // Set: never launched, its checks are skip with this reason ("not expressible in js: ...").
  // The planner puts here the checks of families the run's probe does not implement
  // (SetAsideInexpressible), which are never sent to it.
  std::string not_expressible;
  // Non-empty (exclusive launches only): the launch may run beside the shared launches and
  // beside launches of other chains, never beside an exclusive launch without one; launches of
  // one chain run one after another (run/scheduler.h). Only where every launch is a sandbox
  // instance of its own (a one-shot profile): res.pids and res.memory, whose judges read the
  // host's reading of their own instance's cgroup and count only what their own probe made, and
  // persistence's plant and check. res.cpu (its CPU time) and res.wall (its clock) stay alone.
  std::string overlap_chain;
};

struct Plan {
  std::vector<Check> checks;
  std::vector<LaunchBatch> batches;
};

// Values the planner substitutes into policy paths.
struct PlanContext {
  std::string host_canary;  // {host_canary}: the canary file's path (same path inside a leaky sandbox)
  std::string workspace;    // {workspace}: where the workspace appears inside the sandbox
  // What the run's witnesses offer the probes, keyed "<witness>.<key>" (RunWitness::PlanValues).
  std::map<std::string, std::string> values;
  // The profile keeps one sandbox instance across launches (lifecycle "session"), so "the next
  // launch" and "a fresh instance" differ; in a one-shot profile every launch is fresh.
  bool session = false;
  // The runner judges a batch with checks and no invocations without launching anything (an
  // empty, complete result): a family whose judge decides from the policy alone (res.wall above
  // kMaxMeasuredWallSeconds: always skipped) then plans no launch. Off: such checks get a
  // launch as before (a runner that would start an empty probe must not get such a batch).
  bool launchless_checks = false;
};

}  // namespace sandprobe
