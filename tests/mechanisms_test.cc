// Issue 26's mechanisms, on real backends: weaknesses the shipped profiles do not have, made by
// one edit of a shipped profile (written into a temp dir), each found by mechanism rather than
// by a list of usual paths:
//   1. a host object read under another name is judged by its identity;
//   2. a host directory mounted anywhere (host /etc, the host's /run) is found;
//   3. a runtime socket under a directory no list names is found by what it answers;
//   4. a visible host process is a door to the host's files (/proc/<pid>/root, /cwd);
//   9. a canary the policy declares readable stays allowed;
//  12. a runtime socket whose mode refuses the probe's uid and groups is denied.
#include <grp.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

json ReadJsonWithComments(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
}

// A shipped profile with `extra` inserted into its run argv before `anchor` (the image for
// docker, --remount-ro for bwrap), its policy absolute (or `policy`), written into `dir`.
std::string Variant(const std::string& shipped, const std::string& name, const std::string& anchor,
                    const std::vector<std::string>& extra, const std::string& dir, const std::string& policy = "") {
  json profile = ReadJsonWithComments(SourcePath("sandboxes/" + shipped + ".json"));
  profile["name"] = name;
  profile["policy"] = policy.empty() ? SourcePath("policies/tier-low.json") : policy;
  std::vector<std::string> run = profile["run"].get<std::vector<std::string>>();
  auto at = std::find(run.begin(), run.end(), anchor);
  EXPECT_NE(at, run.end()) << shipped << " has no " << anchor;
  run.insert(at, extra.begin(), extra.end());
  profile["run"] = run;
  return WriteFile(dir, name + ".json", profile.dump(1));
}

// tier-low with `unreadable` (and `readable`, when given) replaced, written into `dir`.
std::string Policy(const std::string& dir, const std::string& name, const std::vector<std::string>& unreadable,
                   const std::vector<std::string>& readable = {}) {
  json policy = ReadJsonWithComments(SourcePath("policies/tier-low.json"));
  policy["name"] = name;
  policy["filesystem"]["unreadable"] = unreadable;
  if (!readable.empty()) policy["filesystem"]["readable"] = readable;
  return WriteFile(dir, name + ".json", policy.dump(1));
}

// `sandprobe run` of the profile at absolute path `profile` with --require-backend; the JSON
// report is read back.
CliRun RunStrict(const std::string& profile, const std::vector<std::string>& extra = {}) {
  const std::string report = MakeTempDir("mech-report") + "/report.json";
  std::vector<std::string> args = {"run", "--sandbox", profile, "--no-color", "--require-backend", "--json", report};
  args.insert(args.end(), extra.begin(), extra.end());
  CliRun run = RunCli(args);
  std::ifstream in(report);
  if (in) run.report = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return run;
}

std::string Observed(const json& report, const std::string& id) { return CheckField(report, id, "observed"); }

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kImage = "sandprobe/agent:latest";

// ---- 1. identity, not path ----

TEST(MechanismsTest, HostEtcReadUnderAnotherNameIsTheHostsEtc) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string dir = MakeTempDir("mech1");
  // The host has no /hostetc: before, what was read there was "the sandbox's own".
  const std::string policy = Policy(dir, "deny-hostetc", {"/etc/shadow", "/root", "{host_canary}", "/hostetc"});
  CliRun run = RunStrict(Variant("bwrap-strict", "bwrap-hostetc", "--remount-ro", {"--ro-bind", "/etc", "/hostetc"}, dir, policy));
  ExpectVerdict(run.report, "fs.read.denied:/hostetc", "fail", "too-permissive");
  EXPECT_TRUE(Has(Observed(run.report, "fs.read.denied:/hostetc"), "the host's /etc itself"))
      << Observed(run.report, "fs.read.denied:/hostetc");
  EXPECT_EQ(run.exit_code, 1) << run.err;
}

TEST(MechanismsTest, HostRootHomeBoundAsDataIsFoundByMountRootAndIdentity) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  const std::string dir = MakeTempDir("mech1d");
  // Root in the container (the owner of the host's /root), the host's /root at /data.
  const std::string policy = Policy(dir, "deny-data", {"/etc/shadow", "/root", "{host_canary}", "/data"});
  CliRun run = RunStrict(Variant("docker-hardened", "docker-root-data", kImage, {"-v", "/root:/data:ro", "--user", "0:0"}, dir, policy));
  ExpectVerdict(run.report, "fs.read.denied:/data", "fail", "too-permissive");
  EXPECT_TRUE(Has(Observed(run.report, "fs.read.denied:/data"), "the host's /root")) << Observed(run.report, "fs.read.denied:/data");
  // The mount point itself is the host's /root: fs.alias looks there too now.
  ExpectVerdict(run.report, "fs.alias.denied:/root[mount_root]", "fail", "too-permissive");
  EXPECT_TRUE(Has(Observed(run.report, "fs.alias.denied:/root[mount_root]"), "via /data:"))
      << Observed(run.report, "fs.alias.denied:/root[mount_root]");
  ExpectVerdict(run.report, "fs.mounts.host-dir:/root", "fail", "too-permissive");
  ExpectNoContainerLeft(run.report);
}

// ---- 2. host subtrees mounted anywhere ----

TEST(MechanismsTest, HostEtcMountedAnywhereFailsInBwrapAndDocker) {
  const std::string dir = MakeTempDir("mech2");
  if (BackendAvailable("bwrap", kBwrapUp)) {
    CliRun run = RunStrict(Variant("bwrap-strict", "bwrap-etc-somewhere", "--remount-ro", {"--ro-bind", "/etc", "/somewhere"}, dir));
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    ExpectVerdict(run.report, "fs.mounts.host-dir:/etc", "fail", "too-permissive");
    EXPECT_EQ(CheckField(run.report, "fs.mounts.host-dir:/etc", "severity"), "high");
    EXPECT_TRUE(Has(Observed(run.report, "fs.mounts.host-dir:/etc"), "visible at /somewhere"));
    ExpectVerdict(run.report, "fs.mounts.host-dir:/", "pass");
    ExpectVerdict(run.report, "fs.mounts.host-dirs", "pass");
  }
  if (BackendAvailable("docker", kDockerUp)) {
    CliRun run = RunStrict(Variant("docker-hardened", "docker-etc-somewhere", kImage, {"-v", "/etc:/somewhere:ro"}, dir));
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    ExpectVerdict(run.report, "fs.mounts.host-dir:/etc", "fail", "too-permissive");
    // docker's own /etc/hosts, /etc/hostname, /etc/resolv.conf (host files) and the handed-in
    // workspace and probe directory are not counted.
    ExpectVerdict(run.report, "fs.mounts.host-dirs", "pass");
    ExpectNoContainerLeft(run.report);
  }
}

TEST(MechanismsTest, HostRunMountedAnywhereIsAnUndeclaredHostDirectory) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  const std::string dir = MakeTempDir("mech2r");
  // uid 1000 outside the docker group: the socket itself is denied, the directory is not.
  CliRun run = RunStrict(Variant("docker-hardened", "docker-run-anything", kImage, {"-v", "/var/run:/anything:ro"}, dir));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  ExpectVerdict(run.report, "fs.mounts.host-dirs", "fail", "too-permissive");
  EXPECT_TRUE(Has(Observed(run.report, "fs.mounts.host-dirs"), "/anything (a bind of host directory /run"))
      << Observed(run.report, "fs.mounts.host-dirs");
  ExpectNoContainerLeft(run.report);
}

// ---- 3. runtime sockets by what they are ----

TEST(MechanismsTest, DockerSocketUnderAnUnlistedDirectoryAnswersAndFails) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  const group* docker = ::getgrnam("docker");
  ASSERT_NE(docker, nullptr) << "no docker group on a machine whose dockerd is up";
  const std::string dir = MakeTempDir("mech3");
  CliRun run = RunStrict(Variant("docker-hardened", "docker-run-socket", kImage,
                           {"-v", "/var/run:/anything:ro", "--group-add", std::to_string(docker->gr_gid)}, dir),
                   {"--suite", SourcePath("tests/data/runtime-sockets-suite.json")});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  for (const char* id : {"net.unix.runtime-api", "priv.runtime_sockets"}) {
    ExpectVerdict(run.report, id, "fail", "too-permissive");
    EXPECT_EQ(CheckField(run.report, id, "severity"), "critical");
    EXPECT_TRUE(Has(Observed(run.report, id), "/anything/docker.sock (found: walk)")) << Observed(run.report, id);
    EXPECT_TRUE(Has(Observed(run.report, id), "Api-Version")) << Observed(run.report, id);
  }
  // Every listed path is absent: those checks still pass, as they must.
  ExpectVerdict(run.report, "net.unix.hidden:/var/run/docker.sock", "pass");
  ExpectNoContainerLeft(run.report);
}

// ---- 4. host processes are doors ----

TEST(MechanismsTest, HostPidWithPtraceReadsTheCanaryThroughTheCanaryProcess) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  const std::string dir = MakeTempDir("mech4");
  CliRun run = RunStrict(Variant("docker-hardened", "docker-pid-ptrace", kImage,
                           {"--pid", "host", "--cap-add", "SYS_PTRACE", "--user", "0:0"}, dir),
                   {"--suite", "default,privileges"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  ExpectVerdict(run.report, "priv.host_pid.door:host-canary", "fail", "too-permissive");
  const std::string door = Observed(run.report, "priv.host_pid.door:host-canary");
  EXPECT_TRUE(Has(door, "/root/var/tmp/") && Has(door, "read the canary")) << door;
  EXPECT_TRUE(Has(door, "/cwd/canary-")) << door;
  // The canary's hash in the door's fact fails the direct canary read too.
  ExpectVerdict(run.report, "fs.read.denied:host-canary", "fail", "too-permissive");
  ExpectNoContainerLeft(run.report);

  // The shipped --pid host profile (uid 1000, no capabilities): the process is visible, its
  // doors are closed.
  CliRun closed = RunStrict(SourcePath("sandboxes/docker-hostpid.json"), {"--suite", "privileges"});
  ExpectVerdict(closed.report, "host.pid_namespace", "fail", "too-permissive");
  ExpectVerdict(closed.report, "priv.host_pid.door:host-canary", "pass");
  EXPECT_TRUE(Has(Observed(closed.report, "priv.host_pid.door:host-canary"), "every door closed"))
      << Observed(closed.report, "priv.host_pid.door:host-canary");
}

// ---- 9. expected-allowed stays allowed ----

TEST(MechanismsTest, CanaryThePolicyDeclaresReadableStaysAllowed) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string dir = MakeTempDir("mech9");
  const std::string policy = Policy(dir, "canary-readable", {"/etc/shadow", "/root"}, {"{workspace}", "/tmp", "{host_canary}"});
  CliRun run = RunStrict(SourcePath("sandboxes/bwrap-leaky.json"), {"--policy", policy});
  ExpectVerdict(run.report, "fs.read.allowed:host-canary", "pass");
  EXPECT_TRUE(Has(Observed(run.report, "fs.read.allowed:host-canary"), "matches the host canary"))
      << Observed(run.report, "fs.read.allowed:host-canary");
}

// ---- 12. denied by mode is denied ----

TEST(MechanismsTest, SocketWhoseModeRefusesTheUidIsDenied) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  // docker.sock (root:docker 0660) bound in for uid 1000 outside the docker group.
  CliRun run = RunStrict(SourcePath("tests/data/docker-sock-nonroot.json"),
                   {"--suite", SourcePath("tests/data/runtime-sockets-suite.json")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  for (const char* id : {"net.unix.hidden:/var/run/docker.sock", "priv.runtime_sockets", "net.unix.runtime-api"}) {
    ExpectVerdict(run.report, id, "pass");
  }
  EXPECT_TRUE(Has(Observed(run.report, "net.unix.hidden:/var/run/docker.sock"), "denied by the file's mode 0660"))
      << Observed(run.report, "net.unix.hidden:/var/run/docker.sock");
}

}  // namespace
}  // namespace sandprobe::testing
