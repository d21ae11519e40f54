// Plan: suite x policy -> Checks, and Checks -> as few probe launches as possible.
//
// A new probe family is one row in the family table in plan.cc (its check expansion) plus the
// probe's own file; everything downstream works from Checks and LaunchBatches.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/check.h"
#include "runner/policy.h"
#include "runner/status.h"
#include "runner/suite.h"

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

// Families the planner knows how to expand (what a suite may name), with the variants each
// takes (FamilyRow::variants).
const FamilyCatalog& KnownFamilies();

// Alias variants fs.alias tries when the suite names none.
const std::vector<std::string>& DefaultAliasVariants();

StatusOr<Plan> ExpandChecks(const Policy& policy, const Suite& suite, const PlanContext& context);

// For parallel runs (-j N): splits the shared launch into up to `parts` launches by family
// group (fs, env, net, priv: the text before the first '.'), keeping each group whole (a
// group's judges may read each other's facts: fs.alias uses fs.read's control). The number
// of launches still grows with the number of groups, never with the number of checks.
void SplitSharedLaunch(Plan& plan, int parts);

// The probe's command line after the probe path: --nonce N FAMILY ARGS [--next FAMILY ARGS]...
std::vector<std::string> ProbeCommandArgs(const LaunchBatch& batch, std::string_view nonce);

// The most bytes of probe arguments one launch may carry, counted as execve does (each string,
// its NUL and its argv pointer). The kernel refuses an execve whose arguments and environment
// pass ARG_MAX (a quarter of the stack limit: 2 MiB by default) with E2BIG, and the sandbox's
// own argv and environment share that budget; half of it is left to them. A policy large enough to pass it (the loaders' 1 MiB input cap allows ~60,000 short
// paths) is refused per launch with the sizes, not launched into an obscure E2BIG.
inline constexpr std::size_t kMaxProbeArgvBytes = 1 << 20;
// Why `args` cannot be one launch's probe command line, or nullopt when it fits.
std::optional<std::string> ProbeArgvTooLong(const std::vector<std::string>& args);

}  // namespace sandprobe
