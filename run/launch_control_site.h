// Whether a run can ask its launches the fresh positive control (contract/launch_control.h),
// and where its files go: the run's workspace, which the profile hands to the sandbox.
//
// It cannot when the probe would not understand `--control` (a runtime whose probe does not
// answer it, a profile's probe file of unknown make) or when the sandbox never gets the
// workspace (no {workspace} in its command lines, and workspace_path is not the host's own
// path). Then the report says why and no pass of the run rests on more than the probe's word.
#pragma once

#include <optional>
#include <string>

#include "load/policy.h"
#include "load/profile.h"
#include "run/probe_dir.h"
#include "witnesses/witness_launch_challenge.h"

namespace sandprobe {

struct ControlSiteChoice {
  std::optional<ChallengeSite> site;  // set: every launch gets a control there
  std::string unavailable;            // else why not
};

// `workspace` is the run's host workspace, `workspace_inside` where the sandbox sees it.
ControlSiteChoice ChooseControlSite(const Profile& profile, const InjectedProbe& probe,
                                    const std::string& workspace, const std::string& workspace_inside);

// The policy lists {workspace} in filesystem.readable: reading the control must work there
// (ChallengeSite::readable_by_policy).
bool PolicyPromisesWorkspaceRead(const Policy& policy);

}  // namespace sandprobe
