// The fresh control is asked where the probe answers it and the sandbox gets the workspace;
// elsewhere the run says why not.
#include "run/launch_control_site.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

InjectedProbe Probe(const std::string& runtime) {
  InjectedProbe probe;
  probe.dir = "/p";
  probe.file_name = "probe";
  probe.runtime = runtime;
  return probe;
}

Profile Bound(const std::string& workspace_path, std::vector<std::string> run) {
  Profile p;
  p.workspace_path = workspace_path;
  p.run = std::move(run);
  return p;
}

TEST(LaunchControlSiteTest, TheWorkspaceWhenTheProbeAnswersAndTheSandboxGetsIt) {
  ControlSiteChoice c = ChooseControlSite(Bound("/workspace", {"bwrap", "--bind", "{workspace}", "/workspace"}),
                                          Probe("native"), "/run/ws", "/workspace");
  ASSERT_TRUE(c.site.has_value()) << c.unavailable;
  EXPECT_EQ(c.site->host_dir, "/run/ws");
  EXPECT_EQ(c.site->inside_dir, "/workspace");
  EXPECT_TRUE(ChooseControlSite(Bound("{workspace}", {"deno", "run"}), Probe("js"), "/w", "/w").site);
  EXPECT_TRUE(ChooseControlSite(Bound("{workspace}", {"python3"}), Probe("python"), "/w", "/w").site);
}

TEST(LaunchControlSiteTest, NotAskedOfAProbeThatCannotAnswerOrASandboxWithoutTheWorkspace) {
  const Profile bound = Bound("/workspace", {"x", "{workspace}"});
  ControlSiteChoice wasi = ChooseControlSite(bound, Probe("wasi"), "/w", "/workspace");
  EXPECT_FALSE(wasi.site);
  EXPECT_NE(wasi.unavailable.find("the wasi probe does not answer --control"), std::string::npos);
  ControlSiteChoice file = ChooseControlSite(bound, Probe(""), "/w", "/workspace");
  EXPECT_FALSE(file.site);
  EXPECT_NE(file.unavailable.find("probe file /p/probe"), std::string::npos);
  ControlSiteChoice unbound = ChooseControlSite(Bound("/workspace", {"x", "{probe}"}), Probe("native"), "/w", "/workspace");
  EXPECT_FALSE(unbound.site);
  EXPECT_NE(unbound.unavailable.find("never hands {workspace}"), std::string::npos);
}

TEST(LaunchControlSiteTest, ThePolicyPromisesTheWorkspaceOnlyByNamingIt) {
  Policy policy;
  EXPECT_FALSE(PolicyPromisesWorkspaceRead(policy));
  policy.filesystem.readable = {{"/"}, {"/tmp"}};  // the sandbox's own root, not the host's workspace
  EXPECT_FALSE(PolicyPromisesWorkspaceRead(policy));
  policy.filesystem.readable.push_back({"{workspace}"});
  EXPECT_TRUE(PolicyPromisesWorkspaceRead(policy));
}

}  // namespace
}  // namespace sandprobe
