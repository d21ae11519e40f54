// A profile's sweep specs expanded for the run registry (launch/run_registry.h), when the run
// starts: what `sandprobe sweep` runs for the run if it dies, without ever reading the profile
// file again (it may be gone, or rewritten since by whoever can write it).
//
// The expansion is the one the run's own end-of-run sweep makes (run/sandbox.h: the profile's
// vars, {run_id}, {workspace}, {probe_dir}, {probe}, an empty {instance}); only {id} stays
// open, as the places a listed id goes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "launch/run_registry.h"
#include "load/profile.h"
#include "model/status.h"

namespace sandprobe {

// Every sweep spec of `profile`, expanded with `scalars` (every placeholder but {id}).
StatusOr<std::vector<RecordedSweep>> ExpandSweepsForRecord(const Profile& profile,
                                                           const std::map<std::string, std::string>& scalars);

// The scalars of a run's sandbox launches that a sweep spec may use, as run/sandbox.cc makes
// them for a launch of no instance.
std::map<std::string, std::string> SweepScalars(const Profile& profile, const std::string& run_id,
                                                const std::string& workspace, const std::string& probe_dir);

}  // namespace sandprobe
