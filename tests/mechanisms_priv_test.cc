// Issue 26's privilege and resource mechanisms, each on a real backend built for it: a sandbox
// shape that fooled a shortcut (access(W_OK), a boot_id alone, a host-wide task count, one
// file per limit, ...) and the verdict the mechanism gives instead. Each test says what the
// shortcut concluded.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

std::string Describe(const json& report, const std::string& id) {
  const json* check = FindCheck(report, id);
  return check ? id + ": " + check->value("verdict", "?") + ": " + check->value("observed", "") : id + ": missing";
}

// A profile written for this test (a path of the build, e.g. the Landlock wrapper, cannot be
// in a checked-in file); the policy is named on the command line.
std::string WriteProfile(const std::string& name, const json& profile) {
  return WriteFile(MakeTempDir("mech"), name + ".json", profile.dump(2));
}

// A shipped profile with one edit to its run argv: `insert` before position `at`.
std::string Variant(const std::string& shipped, const std::string& name, std::size_t at,
                    const std::vector<std::string>& insert) {
  std::ifstream in(SourcePath(shipped));
  json profile = json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  EXPECT_TRUE(profile.is_object()) << shipped;
  if (!profile.is_object()) return "";
  profile["name"] = name;
  profile.erase("policy");
  std::vector<std::string> run = profile["run"].get<std::vector<std::string>>();
  run.insert(run.begin() + static_cast<std::ptrdiff_t>(std::min(at, run.size())), insert.begin(), insert.end());
  profile["run"] = run;
  return WriteProfile(name, profile);
}

CliRun RunSuite(const std::string& profile, const std::string& suite, const std::string& check) {
  return RunProfile(profile, {"--policy", SourcePath("policies/tier-low.json"), "--suite",
                              SourcePath("suites/" + suite + ".json"), "--check", check, "--require-backend"});
}

// 5. Try, don't ask. Root on the host, confined by Landlock alone (tests/landlock_wrap.c):
// access(W_OK) calls core_pattern, every cgroupfs and every release_agent writable, since
// Landlock does not mediate access(2); an open for write gets EACCES. access(W_OK) made four
// critical/high fails of it.
TEST(MechanismsPrivTest, LandlockRefusesTheOpenThatAccessCalledWritable) {
  if (::geteuid() != 0) GTEST_SKIP() << "access(W_OK) only calls these files writable for root";
  if (!BackendAvailable("landlock", {SANDPROBE_LANDLOCK_WRAP, "--", "true"})) return;
  const std::string profile = WriteProfile(
      "landlock-root",
      {{"name", "landlock-root"},
       {"description", "root on the host, writes refused by Landlock outside the workspace and /tmp"},
       {"backend", "host"},
       {"lifecycle", "oneshot"},
       {"injection", "host-path"},
       {"probe_path", "{probe_dir}/sandprobe-probe"},
       {"workspace_path", "{workspace}"},
       {"run", {SANDPROBE_LANDLOCK_WRAP, "--allow-write", "{workspace}", "--allow-write", "/tmp", "--", "{probe}",
                "{probe_args...}"}},
       {"timeout_seconds", 30}});
  CliRun run = RunProfile(profile, {"--policy", SourcePath("policies/tier-low.json"), "--suite",
                                    SourcePath("suites/privileges.json"), "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.err;
  for (const char* id : {"priv.kernel_knob:/proc/sys/kernel/core_pattern", "priv.kernel_knob:/proc/sys[mount]",
                         "priv.cgroup.writable", "priv.cgroup.release_agent"}) {
    ExpectVerdict(r, id, "pass");
  }
  EXPECT_NE(CheckField(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern", "observed")
                .find("open for write: EACCES (access(W_OK) said writable"),
            std::string::npos)
      << Describe(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern");
  // Still root in the host's namespaces: the checks that do not depend on a write still fire.
  ExpectVerdict(r, "priv.identity.root", "fail");
  ExpectVerdict(r, "priv.namespace:pid", "fail");
}

// 6. Kernel and namespace identity from more than one signal. bwrap as root without a user or
// cgroup namespace of its own, and a random boot_id of its own mounted over
// /proc/sys/kernel/random/boot_id: the boot_id alone made every namespace "another kernel's"
// (all seven passed). The build and the boot time are the harness's, so the host's user and
// cgroup namespaces fail and the unshared ones pass.
TEST(MechanismsPrivTest, AMountedBootIdDoesNotMakeAnotherKernel) {
  if (::geteuid() != 0) GTEST_SKIP() << "bwrap without a user namespace needs root";
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string dir = MakeTempDir("mech-bootid");
  const std::string boot_id = WriteFile(dir, "boot_id", "0badb007-dead-beef-0000-000000000000\n");
  const std::string profile = WriteProfile(
      "bwrap-own-boot-id",
      {{"name", "bwrap-own-boot-id"},
       {"description", "root bwrap sharing the host's user and cgroup namespaces, with a boot_id of its own"},
       {"backend", "bwrap"},
       {"lifecycle", "oneshot"},
       {"injection", "ro-bind"},
       {"environment", "empty"},
       {"probe_path", "/opt/sandprobe/sandprobe-probe"},
       {"workspace_path", "{workspace}"},
       {"run", {"bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
                "--new-session", "--clearenv", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs",
                "/tmp", "--ro-bind", boot_id, "/proc/sys/kernel/random/boot_id", "--tmpfs", "/opt", "--ro-bind",
                "{probe_dir}", "/opt/sandprobe", "--bind", "{workspace}", "{workspace}", "--chdir", "{workspace}",
                "{probe}", "{probe_args...}"}},
       {"timeout_seconds", 30}});
  CliRun run = RunProfile(profile, {"--policy", SourcePath("policies/tier-low.json"), "--suite",
                                    SourcePath("suites/privileges.json"), "--check", "priv.namespace*",
                                    "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.err;
  ExpectVerdict(r, "priv.namespace:user", "fail", "too-permissive");
  ExpectVerdict(r, "priv.namespace:cgroup", "fail", "too-permissive");
  for (const char* ns : {"pid", "net", "ipc", "uts", "mnt"}) ExpectVerdict(r, std::string("priv.namespace:") + ns, "pass");
  EXPECT_NE(CheckField(r, "priv.namespace:user", "observed").find("the same as the harness's"), std::string::npos)
      << Describe(r, "priv.namespace:user");
}

// 7. Count only what the sandbox made. docker-hardened with the host's pid namespace: /proc shows
// every host process, and counting them made "221 tasks, above 50" of a cgroup that stopped
// the probe's own at 50. The cgroup's own counter (and the probe's own cgroup's processes)
// decide.
TEST(MechanismsPrivTest, APidsLimitCountsOnlyTheSandboxsTasks) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  const std::string profile = Variant("sandboxes/docker-hardened.json", "docker-hardened-hostpid", 2, {"--pid", "host"});
  CliRun run = RunSuite(profile, "resources", "limits.pids*");
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.err;
  ExpectVerdict(r, "limits.pids.max:50", "pass");
  const std::string observed = CheckField(r, "limits.pids.max:50", "observed");
  EXPECT_NE(observed.find("measured 50 tasks"), std::string::npos) << observed;
  EXPECT_NE(observed.find("counted by the cgroup's own pids.current"), std::string::npos) << observed;
  EXPECT_NE(observed.find("processes visible, the others not the sandbox's"), std::string::npos) << observed;
  ExpectNoContainerLeft(r);
}

// 8. A limit is its total. bwrap-strict (a tmpfs /tmp of no size) under RLIMIT_FSIZE=100 MiB:
// one file stopped at EFBIG made "100 MiB, enforced" of a /tmp that holds 200 MiB as two files.
TEST(MechanismsPrivTest, APerFileLimitIsNotATmpLimit) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string profile =
      Variant("sandboxes/bwrap-strict.json", "bwrap-fsize-100m", 0, {"prlimit", "--fsize=104857600", "--"});
  CliRun run = RunSuite(profile, "resources", "limits.tmp_mib*");
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.err;
  ExpectVerdict(r, "limits.tmp_mib:100", "fail", "too-permissive");
  const std::string observed = CheckField(r, "limits.tmp_mib:100", "observed");
  EXPECT_NE(observed.find("not enforced up to 130 MiB"), std::string::npos) << observed;
  // The control: the same /tmp as a tmpfs of 100 MiB is a total, and passes.
  const std::string bounded = Variant("sandboxes/bwrap-strict.json", "bwrap-tmp-100m", 0, {});
  std::ifstream in(bounded);
  json sized = json::parse(in);
  for (std::size_t i = 0; i + 1 < sized["run"].size(); ++i) {
    if (sized["run"][i] == "--tmpfs" && sized["run"][i + 1] == "/tmp") {
      std::vector<std::string> run = sized["run"].get<std::vector<std::string>>();
      run.insert(run.begin() + static_cast<std::ptrdiff_t>(i), {"--size", "104857600"});
      sized["run"] = run;
      break;
    }
  }
  CliRun control = RunSuite(WriteProfile("bwrap-tmp-100m", sized), "resources", "limits.tmp_mib*");
  ExpectVerdict(control.report, "limits.tmp_mib:100", "pass");
}

// 11. No contradiction becomes a verdict. tier-low with the host's network namespace "shared" and
// egress written "deny" on a sandbox that shares it (bwrap-share-net): both fields judged gave
// an "allowed" check of the host's loopback beside denied ones. `validate` names both fields
// where they are written; the run says so first and judges the loopback by /network/egress.
TEST(MechanismsPrivTest, APolicyThatContradictsItselfIsSaidAndJudgedByTheExplicitField) {
  std::ifstream in(SourcePath("policies/tier-low.json"));
  json policy = json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  ASSERT_TRUE(policy.is_object());
  policy["name"] = "tier-low-shared-net";
  policy["host"]["network_namespace"] = "shared";
  const std::string path = WriteFile(MakeTempDir("mech"), "contradiction.json", policy.dump(2));
  CliRun validate = RunCli({"validate", path});
  EXPECT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_NE(validate.err.find("/host/network_namespace: contradicts " + path + ":"), std::string::npos) << validate.err;
  EXPECT_NE(validate.err.find("judged by /network/egress"), std::string::npos) << validate.err;

  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunProfile(SourcePath("sandboxes/bwrap-share-net.json"),
                          {"--policy", path, "--suite", SourcePath("suites/network.json"), "--check", "net.tcp*",
                           "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.err;
  EXPECT_NE(run.err.find("contradicts"), std::string::npos) << run.err;
  for (const json& check : r["checks"]) EXPECT_NE(check.value("id", ""), "net.tcp.allowed:loopback");
  ExpectVerdict(r, "net.tcp.denied:loopback", "fail", "too-permissive");
}

}  // namespace
}  // namespace sandprobe::testing
