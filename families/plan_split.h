// Splitting a launch that has too many probe arguments. bwrap refuses more than 9,000
// arguments in all (a 5,000-path policy makes ~15,000: one per path in fs.read, fs.write and
// fs.alias), and execve's ARG_MAX bounds their bytes. A shared launch over the budget becomes
// several launches, each with a slice of the denied paths — the same slice in every family, so
// a judge that reads one path across families (fs.read and fs.alias of /etc/shadow) finds
// them in one launch — and every other argument (options, the allowed paths that are the
// launch's read and write controls) in each part that runs that family. Checks that are not
// about a denied path stay in the first part.
#pragma once

#include <cstddef>

#include "families/plan.h"

namespace sandprobe {

// Well under bwrap's 9,000, leaving room for the profile's own arguments.
inline constexpr std::size_t kMaxProbeArgsPerLaunch = 4000;

// The probe arguments of a launch: `--nonce N`, each family with its arguments, and the
// `--next` between them (as ProbeCommandArgs builds them).
std::size_t ProbeArgCount(const LaunchBatch& batch);

// Splits every non-exclusive launch of more than `max_args` probe arguments. A launch whose
// arguments that cannot be sliced already exceed the budget is left whole (the launch then
// reports what refused it).
void SplitByArgumentBudget(Plan& plan, std::size_t max_args = kMaxProbeArgsPerLaunch);

}  // namespace sandprobe
