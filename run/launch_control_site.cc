#include "run/launch_control_site.h"

#include <algorithm>

#include <fmt/format.h>

#include "contract/launch_control.h"
#include "contract/probe_runtime.h"

namespace sandprobe {
namespace {

constexpr std::string_view kWorkspace = "{workspace}";

bool Mentions(const std::vector<std::string>& argv) {
  return std::any_of(argv.begin(), argv.end(),
                     [](const std::string& arg) { return arg.find(kWorkspace) != std::string::npos; });
}

// The sandbox reaches the host's workspace: a command line binds or names it, or the sandbox
// sees the host's own paths (workspace_path "{workspace}...").
bool HandsOverWorkspace(const Profile& profile) {
  return profile.workspace_path.starts_with(kWorkspace) || Mentions(profile.run) || Mentions(profile.start) ||
         Mentions(profile.exec);
}

}  // namespace

ControlSiteChoice ChooseControlSite(const Profile& profile, const InjectedProbe& probe,
                                    const std::string& workspace, const std::string& workspace_inside) {
  if (probe.runtime.empty()) {
    return {std::nullopt, fmt::format("the profile's probe file {} may not answer {}", probe.path(), kControlArg)};
  }
  std::optional<ProbeRuntime> runtime = ParseProbeRuntime(probe.runtime);
  if (!runtime || !RuntimeAnswersControl(*runtime)) {
    return {std::nullopt, fmt::format("the {} probe does not answer {}", probe.runtime, kControlArg)};
  }
  if (!HandsOverWorkspace(profile)) {
    return {std::nullopt, fmt::format("the profile never hands {} to the sandbox, where the control is planted",
                                      kWorkspace)};
  }
  return {ChallengeSite{workspace, workspace_inside}, ""};
}

bool PolicyPromisesWorkspaceRead(const Policy& policy) {
  return std::any_of(policy.filesystem.readable.begin(), policy.filesystem.readable.end(),
                     [](const PolicyPath& p) { return p.path == kWorkspace; });
}

}  // namespace sandprobe
