// The persistence suite against real backends: the three agent sandboxes, a session that
// wrongly reuses its container, the host (files and a background process outlive a launch;
// the harness kills the process) and bwrap-strict (bound workspace kept, tmpfs /tmp not).
#include <set>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "launch/proc_info.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

CliRun RunPersistence(const std::string& profile) {
  return RunProfile(profile, {"--suite", SourcePath("suites/persistence.json"), "--require-backend"});
}

// Nothing of the run left: containers and volumes by its label, processes by its token.
void ExpectNothingLeft(const json& report) {
  const std::string label = "label=sandprobe.run=" + report.value("run_id", "?");
  ExpectNoContainerLeft(report);
  EXPECT_EQ(RunCommand({"docker", "volume", "ls", "-q", "--filter", label}).out, "") << "volumes left";
  std::string token = report["witnesses"]["persist"].value("token", "");
  ASSERT_FALSE(token.empty());
  EXPECT_TRUE(FindProcessesWithArg(token).empty()) << "a planted process outlived the run";
}

TEST(PersistenceTest, AgentDockerOneshotKeepsNothing) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunPersistence("sandboxes/agent-docker-oneshot.json");
  const json& r = run.report;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  for (const json& v : r["checks"]) {
    if (v.value("verdict", "") == "skip") continue;  // a directory judged under another name
    EXPECT_EQ(v.value("verdict", ""), "pass") << v.value("id", "") << ": " << v.value("observed", "");
  }
  ExpectVerdict(r, "persist.session.ephemeral:/tmp", "pass");
  ExpectVerdict(r, "persist.session.ephemeral:background-process", "pass");
  // No turn checks: every command is a fresh container.
  for (const json& v : r["checks"]) {
    EXPECT_NE(v.value("id", "").rfind("persist.turn.", 0), 0u) << v.value("id", "");
  }
  ExpectNothingLeft(r);
}

TEST(PersistenceTest, AgentDockerSessionKeepsTheWorkspaceAcrossSessionsAndTmpAcrossTurns) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunPersistence("sandboxes/agent-docker-session.json");
  const json& r = run.report;
  ExpectVerdict(r, "persist.turn.survives:workspace", "pass");
  ExpectVerdict(r, "persist.session.survives:workspace", "pass");
  ExpectVerdict(r, "persist.turn.survives:/tmp", "pass");
  ExpectVerdict(r, "persist.session.ephemeral:/tmp", "pass");
  ExpectVerdict(r, "persist.turn.survives:background-process", "pass");
  ExpectVerdict(r, "persist.session.ephemeral:background-process", "pass");
  ExpectVerdict(r, "persist.host:background-process", "pass");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  // Two instances: the session check ran in a container the plant never saw.
  std::set<std::string> instances;
  for (const json& l : r["launches"]) {
    if (l.value("purpose", "") == "probe") instances.insert(l.value("instance", ""));
  }
  EXPECT_EQ(instances.size(), 2u);
  EXPECT_EQ(SchemaProblem(r), "");
  ExpectNothingLeft(r);
}

TEST(PersistenceTest, ASessionThatReusesItsContainerIsCaught) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunPersistence("tests/data/agent-docker-session-reused.json");
  const json& r = run.report;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  ExpectVerdict(r, "persist.session.ephemeral:/tmp", "fail", "too-permissive");
  ExpectVerdict(r, "persist.session.ephemeral:background-process", "fail", "too-permissive");
  ExpectVerdict(r, "persist.session.survives:workspace", "pass");
  ExpectNothingLeft(r);
}

TEST(PersistenceTest, AgentDockerManagedReportsWhatItsConfigurationMisses) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunPersistence("sandboxes/agent-docker-managed.json");
  const json& r = run.report;
  ExpectVerdict(r, "persist.session.survives:workspace", "pass");
  ExpectVerdict(r, "persist.turn.survives:/tmp", "pass");
  ExpectVerdict(r, "persist.session.ephemeral:/tmp", "pass");
  ExpectNothingLeft(r);
  // Its privileges as configured: root with docker's default capabilities, no no-new-privs.
  CliRun priv = RunProfile("sandboxes/agent-docker-managed.json",
                           {"--suite", SourcePath("suites/privileges.json"), "--require-backend"});
  EXPECT_EQ(priv.exit_code, 1) << priv.err;
  ExpectVerdict(priv.report, "priv.no_new_privs", "fail", "too-permissive");
  ExpectVerdict(priv.report, "priv.caps.effective", "fail", "too-permissive");
}

TEST(PersistenceTest, HostKeepsTmpAndTheHarnessKillsTheBackgroundProcess) {
  CliRun run = RunPersistence("sandboxes/host.json");
  const json& r = run.report;
  EXPECT_EQ(run.exit_code, 1) << run.err;
  ExpectVerdict(r, "persist.session.ephemeral:/tmp", "fail", "too-permissive");
  ExpectVerdict(r, "persist.host:background-process", "fail", "too-permissive");
  EXPECT_EQ(CheckField(r, "persist.host:background-process", "severity"), "high");
  ExpectNothingLeft(r);
}

// Issue 26 item 10: a policy that keeps background processes and shares the host's pid
// namespace (a sandbox that is a plain host shell session, say). Before, the launcher killed
// the planted process as a leftover and the run reported it missing (too-restrictive) and on
// the host (too-permissive): two false FAILs. Now it is spared, seen alive in the next
// instance, and ended by the run's persist witness at the end.
TEST(PersistenceTest, APolicyThatKeepsBackgroundProcessesIsFollowedNotFailed) {
  std::string tier_low = RunCommand({"cat", SourcePath("policies/tier-low.json")}).out;
  const std::string die = "\"background_processes\": \"die\"";
  const std::string isolated = "\"pid_namespace\": \"isolated\"";
  ASSERT_NE(tier_low.find(die), std::string::npos);
  ASSERT_NE(tier_low.find(isolated), std::string::npos);
  tier_low.replace(tier_low.find(die), die.size(), "\"background_processes\": \"survive\"");
  tier_low.replace(tier_low.find(isolated), isolated.size(), "\"pid_namespace\": \"shared\"");
  std::string dir = MakeTempDir("keep-background");
  std::string policy = WriteFile(dir, "keeps-background.json", tier_low);
  CliRun run = RunProfile("sandboxes/host.json", {"--suite", SourcePath("suites/persistence.json"),
                                                   "--policy", policy});
  const json& r = run.report;
  ExpectVerdict(r, "persist.session.survives:background-process", "pass");
  // The policy declares the host's pid namespace shared: on the host by design, it must start.
  ExpectVerdict(r, "persist.host:background-process", "pass");
  int spared = 0;
  for (const json& launch : r["launches"]) {
    spared += static_cast<int>(launch.value("spared_processes", json::array()).size());
    EXPECT_FALSE(launch.contains("leftover_processes")) << launch.dump();
  }
  EXPECT_EQ(spared, 1) << "the plant launch left its background process running";
  // Ended at the run's end (with its kept pids cgroup, or by the persist witness's token).
  EXPECT_EQ(SchemaProblem(r), "");
  ExpectNothingLeft(r);
}

TEST(PersistenceTest, BwrapStrictKeepsTheBoundWorkspaceNotTmp) {
  if (!BackendAvailable("bwrap", {"bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"})) return;
  CliRun run = RunPersistence("sandboxes/bwrap-strict.json");
  const json& r = run.report;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  ExpectVerdict(r, "persist.session.survives:workspace", "pass");
  ExpectVerdict(r, "persist.session.ephemeral:/tmp", "pass");
  ExpectVerdict(r, "persist.host:background-process", "pass");
  // The token reached the host side of the workspace: the sandbox's /workspace is that dir.
  EXPECT_FALSE(r["witnesses"]["persist"]["workspace_files"].empty());
  ExpectNothingLeft(r);
}

}  // namespace
}  // namespace sandprobe::testing
