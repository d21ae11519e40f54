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

#include "model/check.h"
#include "model/plan_types.h"
#include "load/policy.h"
#include "model/status.h"
#include "load/suite.h"

namespace sandprobe {

// Families the planner knows how to expand (what a suite may name), with the variants each
// takes (FamilyRow::variants).
const FamilyCatalog& KnownFamilies();

StatusOr<Plan> ExpandChecks(const Policy& policy, const Suite& suite, const PlanContext& context);

// The probe a run injects, as far as planning goes: its runtime and the families it implements
// (run/probe_builds.h), known before any launch.
struct ProbeAbilities {
  std::string runtime;                // "js"
  std::vector<std::string> families;  // what its hello will list
};

// Moves the checks that need a family `probe` does not implement (a suite family "persist"
// needs persist.plant and persist.check) out of their launches into one unlaunched batch per
// family (LaunchBatch::not_expressible: "not expressible in js: the js probe does not implement
// priv.caps"): they are skipped, never errors and never passes, and the family is never sent to
// the probe (it would refuse the whole launch). Launches left without checks are dropped. Run
// after SelectChecks and before the splits.
void SetAsideInexpressible(Plan& plan, const ProbeAbilities& probe);

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
