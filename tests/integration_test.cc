// End-to-end runs of `sandprobe run` against real backends. Each test asserts what the report
// says about specific checks, so a harness that stopped observing would fail here.
#include <algorithm>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

std::string Verdict(const json& report, const std::string& id) {
  const json* check = FindCheck(report, id);
  return check ? check->value("verdict", "?") : "missing";
}
std::string Direction(const json& report, const std::string& id) {
  const json* check = FindCheck(report, id);
  return check && (*check)["direction"].is_string() ? (*check)["direction"].get<std::string>() : "";
}

// Every check of the file-system and env families in `report` has `verdict`.
void ExpectAll(const json& report, const std::string& verdict) {
  ASSERT_TRUE(report.contains("checks")) << report.dump();
  ASSERT_FALSE(report["checks"].empty());
  for (const json& check : report["checks"]) {
    EXPECT_EQ(check.value("verdict", "?"), verdict)
        << check.value("id", "?") << ": " << check.value("observed", "");
  }
}

void ExpectValidJunit(const CliRun& run) {
  CliRun lint = RunCommand({"xmllint", "--noout", "--schema",
                            SANDPROBE_JUNIT_XSD, run.junit_path});
  EXPECT_EQ(lint.exit_code, 0) << lint.err;
}

TEST(IntegrationTest, HostFailsTierLowWithTheCanaryReadProvenByHash) {
  CliRun run = RunProfile("sandboxes/host.json");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json& r = run.report;
  EXPECT_EQ(Verdict(r, "fs.read.denied:host-canary"), "fail");
  EXPECT_EQ(Direction(r, "fs.read.denied:host-canary"), "too-permissive");
  const json* canary = FindCheck(r, "fs.read.denied:host-canary");
  ASSERT_NE(canary, nullptr);
  EXPECT_NE(canary->value("observed", "").find("matches the host canary"), std::string::npos);
  EXPECT_EQ(Verdict(r, "fs.alias.denied:host-canary[symlink]"), "fail");
  EXPECT_EQ(Verdict(r, "env.secret.hidden"), "fail");
  EXPECT_EQ(Verdict(r, "fs.write.allowed:workspace"), "pass");
  EXPECT_EQ(Verdict(r, "fs.read.allowed:/tmp"), "pass");
  ExpectValidJunit(run);
}

TEST(IntegrationTest, BwrapStrictPassesTierLow) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunProfile("sandboxes/bwrap-strict.json", {"--require-backend"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  ExpectAll(run.report, "pass");
  EXPECT_EQ(Verdict(run.report, "env.secret.hidden"), "pass");
  ExpectValidJunit(run);
}

TEST(IntegrationTest, BwrapLeakyFailsTheCanaryRead) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunProfile("sandboxes/bwrap-leaky.json", {"--require-backend"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(Verdict(run.report, "fs.read.denied:host-canary"), "fail");
  EXPECT_EQ(Direction(run.report, "fs.read.denied:host-canary"), "too-permissive");
  EXPECT_EQ(Verdict(run.report, "env.secret.hidden"), "fail");
  ExpectValidJunit(run);
}

TEST(IntegrationTest, ReadOnlyWorkspaceFailsAsTooRestrictive) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunProfile("tests/data/bwrap-ro-workspace.json", {"--require-backend"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(Verdict(run.report, "fs.write.allowed:workspace"), "fail");
  EXPECT_EQ(Direction(run.report, "fs.write.allowed:workspace"), "too-restrictive");
  EXPECT_EQ(Verdict(run.report, "fs.write.allowed:/tmp"), "pass");
}

TEST(IntegrationTest, DockerHardenedPassesTierLowAndLeavesNoContainer) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-hardened.json", {"--require-backend"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  ExpectAll(run.report, "pass");
  EXPECT_EQ(Verdict(run.report, "env.secret.hidden"), "pass");
  ExpectValidJunit(run);
  ExpectNoContainerLeft(run.report);
  // preflight on_failure: a run whose launches all completed paid for no `requires` launch;
  // every cleanup exited 0, so the label sweep had nothing to find (ExpectNoContainerLeft
  // above looks for itself).
  for (const json& launch : run.report["launches"]) {
    EXPECT_NE(launch["purpose"], "requires");
    EXPECT_NE(launch["purpose"], "sweep");
  }
  EXPECT_EQ(run.report["witnesses"]["preflight"],
            "not run: every probe launch completed (profile preflight: on_failure)");
  EXPECT_EQ(run.report["witnesses"]["sweep"].get<std::string>().rfind("skipped: ", 0), 0u)
      << run.report["witnesses"]["sweep"];
}

// A missing backend: every check is error and the exit code 3 (nothing was checked), its reason
// names the backend, the failed command, the cause and the install hint; --require-backend (now
// the default) says the same. --allow-missing-backend makes every check skip, and the run, having
// judged nothing, is still exit 3. Returns the default run's report.
json ExpectMissingBackend(const std::string& profile) {
  CliRun required = RunProfile(profile);
  EXPECT_EQ(required.exit_code, 3) << required.out << required.err;
  ExpectAll(required.report, "error");
  std::string observed = CheckField(required.report, "fs.read.denied:/etc/shadow", "observed");
  EXPECT_NE(observed.find("backend other unavailable"), std::string::npos) << observed;
  EXPECT_NE(observed.find("cause: missing program: sandprobe-no-such-backend is not installed"), std::string::npos)
      << observed;
  EXPECT_NE(observed.find("fix: install: apt-get install no-such-backend"), std::string::npos) << observed;

  CliRun flag = RunProfile(profile, {"--require-backend"});
  EXPECT_EQ(flag.exit_code, 3);
  ExpectAll(flag.report, "error");

  CliRun skipped = RunProfile(profile, {"--allow-missing-backend"});
  EXPECT_EQ(skipped.exit_code, 3) << skipped.out << skipped.err;
  ExpectAll(skipped.report, "skip");
  const std::string n = std::to_string(skipped.report["checks"].size());
  EXPECT_NE(skipped.out.find("exit 3: nothing was judged: " + n + " of " + n +
                             " check(s) skipped: backend other unavailable"),
            std::string::npos)
      << skipped.out;
  return required.report;
}

std::vector<std::string> LaunchPurposes(const json& report) {
  std::vector<std::string> purposes;
  for (const json& launch : report["launches"]) purposes.push_back(launch["purpose"]);
  return purposes;
}

TEST(IntegrationTest, MissingBackendIsAnErrorWithTheCauseOrASkipWhenAllowed) {
  json report = ExpectMissingBackend("tests/data/missing-backend.json");
  EXPECT_EQ(LaunchPurposes(report), (std::vector<std::string>{"requires"}));
}

// preflight on_failure: the launch is tried first; its failure runs the preflight, whose
// message (backend, command, install hint) becomes every check's reason, as with "before".
TEST(IntegrationTest, MissingBackendWithPreflightOnFailureSaysTheSame) {
  json report = ExpectMissingBackend("tests/data/missing-backend-on-failure.json");
  EXPECT_EQ(LaunchPurposes(report), (std::vector<std::string>{"probe", "requires"}));
}

// What makes preflight on_failure safe for docker: with `--pull never` a missing image fails
// the launch (`run`, or a session's `start`) at once and no registry is asked (the network
// rule), then the preflight names the image. Every check is error (exit 3); nothing is left.
void ExpectMissingImageNeverPulled(const std::string& profile, const std::string& failing_purpose) {
  CliRun run = RunProfile(profile);
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  ExpectAll(run.report, "error");
  std::string observed = CheckField(run.report, "fs.read.denied:/etc/shadow", "observed");
  EXPECT_NE(observed.find("sandprobe/no-such-image:latest"), std::string::npos) << observed;
  EXPECT_NE(observed.find("cause: backend refused"), std::string::npos) << observed;
  ASSERT_FALSE(run.report["launches"].empty());
  const json& first = run.report["launches"][0];
  EXPECT_EQ(first["purpose"], failing_purpose);
  std::string err = first.value("stderr_tail", "");
  EXPECT_NE(err.find("No such image"), std::string::npos) << err;
  EXPECT_EQ(err.find("Pulling"), std::string::npos) << err;
  EXPECT_EQ(err.find("Unable to find image"), std::string::npos) << err;
  std::vector<std::string> purposes = LaunchPurposes(run.report);
  EXPECT_NE(std::find(purposes.begin(), purposes.end(), "requires"), purposes.end());
  ExpectNoContainerLeft(run.report);
}

TEST(IntegrationTest, DockerMissingImageNeverPullsAndIsAnError) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  ExpectMissingImageNeverPulled("tests/data/docker-missing-image.json", "probe");
}

TEST(IntegrationTest, DockerSessionMissingImageNeverPullsAndIsAnError) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  ExpectMissingImageNeverPulled("tests/data/docker-missing-image-session.json", "start");
}

TEST(IntegrationTest, ProbeImageRunsFromScratch) {
  if (!BackendAvailable("docker", {"docker", "image", "inspect", "sandprobe/probe:latest"})) return;
  CliRun run = RunCommand({"docker", "run", "--rm", "--network", "none", "sandprobe/probe:latest",
                           "/sandprobe-probe", "--nonce", "n0", "fs.read", "/sandprobe-probe"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("@@sandprobe n0 {\"done\":true}"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace sandprobe::testing
