// The privileges suite against real backends: each known-bad profile must be caught at the
// right severity, the hardened ones must not be, and the host (no sandbox) is the control that
// shows the probes fire. Each test names what it observed when it fails.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kSuite = {"--suite", SourcePath("suites/privileges.json"), "--require-backend"};
// runc's error where dockerd's own bounding set lacks a capability that --privileged grants a
// root process (this project's CI VM: CAP_SYS_RESOURCE).
const char kCannotApplyCaps[] = "unable to apply caps";

std::string Describe(const json& report, const std::string& id) {
  const json* check = FindCheck(report, id);
  return check ? id + ": " + check->value("verdict", "?") + ": " + check->value("observed", "") : id + ": missing";
}

// Every check was decided (no error, no inconclusive): the families observed something.
// `undecidable`: checks the profile cannot decide, by what the probe can see (named in the test).
void ExpectAllDecided(const json& report, const std::set<std::string>& undecidable = {}) {
  ASSERT_TRUE(report.contains("checks")) << report.dump().substr(0, 2000);
  EXPECT_EQ(report["checks"].size(), 60u);  // the privileges suite on every profile
  for (const json& c : report["checks"]) {
    if (undecidable.count(c.value("id", ""))) continue;
    const std::string v = c.value("verdict", "?");
    EXPECT_TRUE(v == "pass" || v == "fail") << c.value("id", "?") << ": " << v << ": " << c.value("observed", "");
  }
}

std::vector<std::string> FailsAtOrAbove(const json& report, const std::set<std::string>& severities) {
  std::vector<std::string> ids;
  for (const json& c : report["checks"]) {
    if (c.value("verdict", "") == "fail" && severities.count(c.value("severity", ""))) ids.push_back(c.value("id", ""));
  }
  return ids;
}

// The report of a run that never started: every check an error or a skip, one naming `reason`.
bool NeverStartedBecause(const CliRun& run, const std::string& reason) {
  if (!run.report.contains("checks") || run.report["checks"].empty()) {
    return run.err.find(reason) != std::string::npos;
  }
  bool named = false;
  for (const json& c : run.report["checks"]) {
    const std::string v = c.value("verdict", "?");
    if (v != "error" && v != "skip") return false;
    named = named || c.value("observed", "").find(reason) != std::string::npos;
  }
  return named;
}

// A kernel interface present on the host must be exposed in the container (and absent is a pass).
void ExpectExposedWhereTheHostHasIt(const json& report, const std::string& id, const std::string& host_path) {
  const bool on_host = ::access(host_path.c_str(), F_OK) == 0;
  ExpectVerdict(report, id, on_host ? "fail" : "pass");
}

// This run's canary host process does not outlive it. (Only this run's: tests run in parallel,
// and other runs' canaries are alive while they run.)
void ExpectNoCanaryLeft(const json& report) {
  const json& canary = report["witnesses"]["priv"]["canary_process"];
  ASSERT_TRUE(canary.value("started", false)) << canary.dump();
  long pid = canary.value("host_pid", 0L);
  ASSERT_GT(pid, 0);
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(cmdline.find("sandprobe-canary-"), std::string::npos) << "canary left: pid " << pid;
}

TEST(PrivilegesTest, HostIsTheControlEveryExposureFires) {
  CliRun run = RunProfile("sandboxes/host.json", kSuite);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json& r = run.report;
  ExpectAllDecided(r);
  for (const char* id : {"priv.seccomp", "priv.no_new_privs", "priv.syscall:mount", "priv.syscall:bpf",
                         "priv.namespace:pid", "priv.namespace:net", "priv.namespace:mnt", "host.pid_namespace",
                         "priv.devices", "priv.masked:/proc/keys"}) {
    ExpectVerdict(r, id, "fail");
  }
  if (::geteuid() == 0) {
    for (const char* id : {"priv.identity.root", "priv.caps.sys_admin", "priv.userns",
                           "priv.kernel_knob:/proc/sys/kernel/core_pattern", "priv.cgroup.writable"}) {
      ExpectVerdict(r, id, "fail");
    }
  }
  // The launcher hands the probe only fds 0-2 and a cwd inside the root even on the host.
  ExpectVerdict(r, "priv.fds.inherited", "pass");
  ExpectVerdict(r, "priv.cwd", "pass");
  ExpectNoCanaryLeft(r);
}

TEST(PrivilegesTest, DockerHardenedHasNoCriticalOrHighFindingAndListsFilteredSyscalls) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-hardened.json", kSuite);
  const json& r = run.report;
  ExpectAllDecided(r);
  EXPECT_EQ(FailsAtOrAbove(r, {"critical", "high"}), std::vector<std::string>{}) << run.out;
  for (const char* s : {"mount", "unshare", "setns", "bpf", "keyctl", "perf_event_open", "open_by_handle_at"}) {
    const std::string id = std::string("priv.syscall:") + s;
    ExpectVerdict(r, id, "pass");
    const json* c = FindCheck(r, id);
    if (c) {
      EXPECT_EQ(c->value("observed", "").rfind("filtered", 0), 0u) << Describe(r, id);
    }
  }
  ExpectVerdict(r, "priv.seccomp", "pass");
  ExpectVerdict(r, "host.pid_namespace", "pass");
  // unshare is judged by its real flags, all refused by docker's filter without CAP_SYS_ADMIN.
  EXPECT_NE(CheckField(r, "priv.syscall:unshare", "observed").find("unshare(CLONE_NEWUSER) -> EPERM"), std::string::npos)
      << Describe(r, "priv.syscall:unshare");
  // clone: docker's filter passes clone without namespace flags (the invalid CLONE_THREAD gets
  // EINVAL from the kernel) and refuses every namespace flag: judged by the real flags, filtered.
  ExpectVerdict(r, "priv.syscall:clone", "pass");
  const std::string clone = CheckField(r, "priv.syscall:clone", "observed");
  EXPECT_EQ(clone.rfind("filtered", 0), 0u) << clone;
  EXPECT_NE(clone.find("clone(CLONE_NEWUSER) -> EPERM"), std::string::npos) << clone;
  EXPECT_NE(clone.find("clone(CLONE_THREAD alone: invalid) -> EINVAL"), std::string::npos) << clone;
  // No CAP_NET_RAW: the kernel refuses AF_PACKET. AF_VSOCK is the daemon's filter's and the
  // kernel's call: a socket made (docker 20.10 on a VM with vsock) fails, and says so.
  ExpectVerdict(r, "priv.syscall:socket(AF_PACKET)", "pass");
  const std::string vsock = CheckField(r, "priv.syscall:socket(AF_VSOCK)", "observed");
  EXPECT_EQ(CheckField(r, "priv.syscall:socket(AF_VSOCK)", "verdict") == "fail",
            vsock.find("socket(AF_VSOCK, SOCK_STREAM, 0) -> returned") != std::string::npos)
      << vsock;
  ExpectVerdict(r, "priv.userns", "pass");
  EXPECT_NE(CheckField(r, "priv.userns", "observed").find("clone(CLONE_NEWUSER): EPERM"), std::string::npos)
      << Describe(r, "priv.userns");
  // The report's host object names the daemon's version (the profile's `version` command), and
  // the io_uring fix fits it: docker's default profile lets io_uring through before 25.0.
  ASSERT_TRUE(r["host"].contains("backend_version")) << r["host"].dump();
  const std::string version = r["host"]["backend_version"].get<std::string>();
  const int major = std::atoi(version.c_str());
  EXPECT_GT(major, 0) << version;
  const std::string uring_fix = CheckField(r, "priv.syscall:io_uring_setup", "remediation");
  EXPECT_EQ(uring_fix.find("lets io_uring through") != std::string::npos, major < 25) << version << ": " << uring_fix;
  // No terminal reaches the probe (the launcher gives it /dev/null and pipes); the filter is
  // probed on fd -1, both spellings of TIOCSTI.
  ExpectVerdict(r, "priv.tiocsti", "pass");
  EXPECT_NE(CheckField(r, "priv.tiocsti", "observed").find("TIOCSTI | 1 << 32"), std::string::npos)
      << Describe(r, "priv.tiocsti");
  ExpectNoContainerLeft(r);
  ExpectNoCanaryLeft(r);
}

// gVisor: the workload's syscalls reach the sentry, not Linux. The harness tells it by kernel
// identity signals (its build, boot time and nsfs device are not the host's), not by its name;
// the verdicts say so, and the sentry's "Seccomp: 0" and its reachable syscalls are not a
// missing filter in front of the host's kernel.
TEST(PrivilegesTest, GvisorIsAnotherKernel) {
  if (!BackendAvailable("gvisor", {"docker", "run", "--rm", "--pull", "never", "--runtime", "runsc", "--network",
                                   "none", "sandprobe/agent:latest", "true"})) {
    return;
  }
  CliRun run = RunProfile("sandboxes/gvisor.json", kSuite);
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.err;
  for (const char* id : {"priv.seccomp", "priv.syscall:mount", "priv.syscall:unshare", "priv.syscall:io_uring_setup"}) {
    ExpectVerdict(r, id, "pass");
    EXPECT_NE(CheckField(r, id, "observed").find("another kernel: build '4.4.0"), std::string::npos)
        << Describe(r, id);
  }
  // gVisor's /proc/self/status has no NoNewPrivs: prctl answers, and docker set it.
  ExpectVerdict(r, "priv.no_new_privs", "pass");
  EXPECT_NE(CheckField(r, "priv.no_new_privs", "observed").find("prctl"), std::string::npos)
      << Describe(r, "priv.no_new_privs");
  // A user namespace is the policy's promise, and gVisor's kernel makes one: a fail, named as
  // the sentry's namespace.
  ExpectVerdict(r, "priv.userns", "fail");
  EXPECT_NE(CheckField(r, "priv.userns", "observed").find("a user namespace of another kernel"), std::string::npos)
      << Describe(r, "priv.userns");
  // Capabilities are still judged (none held here), and named as the sentry's.
  ExpectVerdict(r, "priv.caps.sys_admin", "pass");
  EXPECT_NE(CheckField(r, "priv.caps.sys_admin", "observed").find("not in the host's kernel"), std::string::npos);
  // Emulated is not host (issue 26, 13): gVisor's own /dev/net/tun and /dev/fuse are sentry
  // devices, and the namespaces it shows no link for are its own: every check decided.
  ExpectAllDecided(r);
  ExpectVerdict(r, "priv.devices", "pass");
  EXPECT_NE(CheckField(r, "priv.devices", "observed").find("not the host's drivers"), std::string::npos)
      << Describe(r, "priv.devices");
  for (const char* ns : {"mnt", "ipc", "uts", "cgroup", "pid", "net", "user"}) ExpectVerdict(r, std::string("priv.namespace:") + ns, "pass");
  EXPECT_EQ(FailsAtOrAbove(r, {"critical"}), std::vector<std::string>{}) << run.out;
  ExpectNoContainerLeft(r);
  ExpectNoCanaryLeft(r);
}

// A user namespace of the probe's own, made by the root harness (uid_map "0 0 1"): core_pattern
// opens for write as the host's root (sysctls check the global euid: a fail), while the host's
// cgroup v1 release_agent files open but Linux >= 5.17 refuses their writes outside the initial
// user namespace (a pass that says so, not a critical fail).
TEST(PrivilegesTest, ChildUserNamespaceOfTheHostsRootTellsReleaseAgentFromSysctl) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs a root harness: uid 0 inside must be host uid 0";
  if (!BackendAvailable("unshare", {"unshare", "--user", "--map-root-user", "true"})) return;
  CliRun run = RunProfile("tests/data/unshare-userns-root.json", kSuite);
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.err;
  ExpectVerdict(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern", "fail");
  EXPECT_NE(CheckField(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern", "observed").find("-> host uid 0"),
            std::string::npos) << Describe(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern");
  if (::access("/sys/fs/cgroup/cpu/release_agent", F_OK) == 0) {
    ExpectVerdict(r, "priv.cgroup.release_agent", "pass");
    EXPECT_NE(CheckField(r, "priv.cgroup.release_agent", "observed").find("only in its own user namespace"),
              std::string::npos) << Describe(r, "priv.cgroup.release_agent");
  }
  ExpectNoCanaryLeft(r);
}

// Root only inside its own user namespace (uid_map "0 65534 1"): the host's /proc is mounted
// read-write, but writes there are checked against the host's root, which this is not: the
// open for write of core_pattern is refused, so the read-write mount writes nothing.
TEST(PrivilegesTest, RootOnlyInItsOwnUserNamespaceIsNotTheHostsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "setpriv --reuid 65534 needs a root harness";
  if (!BackendAvailable("unshare", {"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "unshare",
                                    "--user", "--map-root-user", "true"})) {
    return;
  }
  CliRun run = RunProfile("tests/data/unshare-userns-nobody.json", kSuite);
  const json& r = run.report;
  ASSERT_TRUE(r.contains("checks")) << run.err;
  ExpectVerdict(r, "priv.kernel_knob:/proc/sys[mount]", "pass");
  EXPECT_NE(CheckField(r, "priv.kernel_knob:/proc/sys[mount]", "observed").find("no sysctl under it opens for write"),
            std::string::npos)
      << Describe(r, "priv.kernel_knob:/proc/sys[mount]");
  for (const char* id : {"priv.kernel_knob:/proc/sys/kernel/core_pattern", "priv.cgroup.release_agent"}) {
    ExpectVerdict(r, id, "pass");
  }
  ExpectNoCanaryLeft(r);
}

TEST(PrivilegesTest, DockerPrivilegedIsCaught) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-privileged.json", kSuite);
  // Some hosts cannot start a privileged root container at all (runc: "unable to apply caps"
  // when dockerd's own bounding set lacks a capability, as on this project's CI VM, which lacks
  // CAP_SYS_RESOURCE). That is the host, not a missing backend: skip with the reason even when
  // backends are required, and let the approximation below stand in.
  if (run.exit_code != 1 && NeverStartedBecause(run, kCannotApplyCaps)) {
    const json* c = run.report.contains("checks") && !run.report["checks"].empty() ? &run.report["checks"][0] : nullptr;
    GTEST_SKIP() << "this host cannot start docker --privileged as root; "
                 << "PrivilegesTest.DockerPrivilegedApproxIsCaught runs sandboxes/docker-privileged-approx.json "
                 << "(--cap-add ALL --cap-drop SYS_RESOURCE, seccomp/AppArmor off, systempaths=unconfined, "
                 << "--device /dev, -v /sys:/sys) instead. Reason: "
                 << (c ? c->value("observed", "") : run.err).substr(0, 500);
  }
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json& r = run.report;
  for (const char* id : {"priv.caps.sys_admin", "priv.caps.effective", "priv.seccomp", "priv.devices",
                         "priv.kernel_knob:/proc/sys/kernel/core_pattern", "priv.kernel_knob:/proc/sys[mount]",
                         "priv.cgroup.writable"}) {
    ExpectVerdict(r, id, "fail");
  }
  EXPECT_FALSE(FailsAtOrAbove(r, {"critical"}).empty());
  ExpectNoContainerLeft(r);
}

// docker-privileged-approx.json rebuilds --privileged flag by flag for hosts where it cannot start
// (see the profile's comment): the same findings must fire. It binds the host's /sys, so on a
// cgroup v1 host it also exposes the hierarchy roots' release_agent, which --privileged (the
// container's own cgroup directory) does not show: priv.cgroup.release_agent is not asserted.
TEST(PrivilegesTest, DockerPrivilegedApproxIsCaught) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-privileged-approx.json", kSuite);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json& r = run.report;
  ExpectAllDecided(r);

  // Root with (nearly) every capability: docker's ALL (37 on docker 20.10, which knows none
  // after CAP_AUDIT_READ) less CAP_SYS_RESOURCE, the one the profile drops.
  ExpectVerdict(r, "priv.identity.root", "fail");
  for (const char* id : {"priv.caps.effective", "priv.caps.sys_admin", "priv.caps.bounding"}) ExpectVerdict(r, id, "fail");
  if (const json* caps = FindCheck(r, "priv.caps.effective")) {
    const std::string observed = caps->value("observed", "");
    const std::size_t count = std::count(observed.begin(), observed.end(), ',') + 1;
    EXPECT_GE(count, 37u) << observed;
    for (const char* cap : {"CAP_SYS_ADMIN", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH",
                            "CAP_NET_ADMIN", "CAP_MKNOD", "CAP_SYS_BOOT", "CAP_SYSLOG", "CAP_MAC_ADMIN"}) {
      EXPECT_NE(observed.find(cap), std::string::npos) << cap << " missing: " << observed;
    }
    EXPECT_EQ(observed.find("CAP_SYS_RESOURCE"), std::string::npos) << observed;
  }
  ExpectVerdict(r, "priv.caps.inheritable", "pass");

  // Seccomp off: the dangerous syscalls reach the kernel.
  ExpectVerdict(r, "priv.seccomp", "fail");
  ExpectVerdict(r, "priv.no_new_privs", "fail");
  for (const char* s : {"mount", "unshare", "setns", "bpf", "keyctl", "add_key", "chroot", "open_by_handle_at"}) {
    ExpectVerdict(r, std::string("priv.syscall:") + s, "fail");
  }

  // Extra devices, writable kernel knobs (access W_OK only), writable cgroupfs, nothing masked.
  ExpectVerdict(r, "priv.devices", "fail");
  ExpectVerdict(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern", "fail");
  ExpectVerdict(r, "priv.kernel_knob:/proc/sys[mount]", "fail");
  ExpectVerdict(r, "priv.cgroup.writable", "fail");
  // Kernels built without modules, magic SysRq or /proc/kcore (the CI VM's) have no such file to
  // expose: absent is a pass there, present must be exposed.
  ExpectExposedWhereTheHostHasIt(r, "priv.kernel_knob:/proc/sys/kernel/modprobe", "/proc/sys/kernel/modprobe");
  ExpectExposedWhereTheHostHasIt(r, "priv.kernel_knob:/proc/sysrq-trigger", "/proc/sysrq-trigger");
  ExpectExposedWhereTheHostHasIt(r, "priv.masked:/proc/kcore", "/proc/kcore");
  ExpectExposedWhereTheHostHasIt(r, "priv.masked:/proc/keys", "/proc/keys");
  ExpectExposedWhereTheHostHasIt(r, "priv.masked:/proc/timer_list", "/proc/timer_list");

  // Critical severity: CAP_SYS_ADMIN and the writable core_pattern among the fails, and the
  // release_agent of the host's cgroup v1 hierarchies (bound in with /sys) where it has them:
  // root in the initial user namespace writes them as the host's root.
  const std::vector<std::string> critical = FailsAtOrAbove(r, {"critical"});
  std::vector<std::string> must = {"priv.caps.sys_admin", "priv.kernel_knob:/proc/sys/kernel/core_pattern"};
  if (::access("/sys/fs/cgroup/cpu/release_agent", F_OK) == 0) must.push_back("priv.cgroup.release_agent");
  for (const std::string& id : must) {
    EXPECT_NE(std::find(critical.begin(), critical.end(), id), critical.end()) << Describe(r, id) << ": not a critical fail";
  }
  EXPECT_NE(CheckField(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern", "observed").find("the initial user namespace"),
            std::string::npos) << Describe(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern");
  // --privileged shares no namespace but the cgroup and user ones (cgroup v1 default, no
  // userns-remap): the pid, net and mount namespaces stay the container's own.
  for (const char* id : {"priv.namespace:pid", "priv.namespace:net", "priv.namespace:mnt", "host.pid_namespace",
                         "priv.runtime_sockets"}) {
    ExpectVerdict(r, id, "pass");
  }
  ExpectNoContainerLeft(r);
  ExpectNoCanaryLeft(r);
}

TEST(PrivilegesTest, DockerHostPidSeesTheCanaryProcess) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-hostpid.json", kSuite);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json& r = run.report;
  ExpectAllDecided(r);
  ExpectVerdict(r, "host.pid_namespace", "fail");
  const json* c = FindCheck(r, "host.pid_namespace");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->value("severity", ""), "critical");
  EXPECT_NE(c->value("remediation", "").find("--pid host"), std::string::npos);
  ExpectVerdict(r, "priv.namespace:pid", "fail");
  ExpectVerdict(r, "priv.namespace:net", "pass");
  ExpectNoContainerLeft(r);
  ExpectNoCanaryLeft(r);
}

TEST(PrivilegesTest, DockerCapSysAdminHoldsTheCapAndReachesMount) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-capsysadmin.json", kSuite);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json& r = run.report;
  ExpectAllDecided(r);
  ExpectVerdict(r, "priv.caps.sys_admin", "fail");
  ExpectVerdict(r, "priv.syscall:mount", "fail");
  ExpectVerdict(r, "priv.syscall:unshare", "fail");
  ExpectVerdict(r, "priv.seccomp", "pass");  // docker's profile is on, it just lets SYS_ADMIN calls in
  EXPECT_NE(FindCheck(r, "priv.caps.sys_admin"), nullptr);
  EXPECT_EQ(FindCheck(r, "priv.caps.sys_admin")->value("severity", ""), "critical");
  ExpectNoContainerLeft(r);
}

TEST(PrivilegesTest, DockerSeccompUnconfinedReachesTheSyscalls) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  CliRun run = RunProfile("sandboxes/docker-seccomp-unconfined.json", kSuite);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json& r = run.report;
  ExpectAllDecided(r);
  ExpectVerdict(r, "priv.seccomp", "fail");
  for (const char* s : {"mount", "unshare", "setns", "bpf", "keyctl", "add_key", "chroot"}) {
    ExpectVerdict(r, std::string("priv.syscall:") + s, "fail");
  }
  // Capabilities are still dropped: reachable is not the same as permitted.
  ExpectVerdict(r, "priv.caps.effective", "pass");
  ExpectNoContainerLeft(r);
}

TEST(PrivilegesTest, BwrapStrictIsolatesNamespacesButHasNoSeccompFilter) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunProfile("sandboxes/bwrap-strict.json", kSuite);
  const json& r = run.report;
  // bwrap mounts its own read-write /proc inside a child user namespace, but its euid maps to
  // the host's uid 65534: the open for write of core_pattern is refused, so the read-write
  // mount writes nothing (issue 26, 14: it was inconclusive, and the suite exited 3 every time).
  const std::string mount_knob = "priv.kernel_knob:/proc/sys[mount]";
  ExpectAllDecided(r);
  ExpectVerdict(r, mount_knob, "pass");
  EXPECT_NE(CheckField(r, mount_knob, "observed").find("core_pattern: not writable: open for write: EACCES"),
            std::string::npos) << Describe(r, mount_knob);
  for (const char* ns : {"pid", "net", "mnt", "ipc", "uts", "cgroup", "user"}) {
    ExpectVerdict(r, std::string("priv.namespace:") + ns, "pass");
  }
  for (const char* id : {"host.pid_namespace", "priv.fds.inherited", "priv.fds.directory", "priv.caps.effective",
                         "priv.caps.sys_admin", "priv.runtime_sockets", "priv.devices", "priv.no_new_privs"}) {
    ExpectVerdict(r, id, "pass");
  }
  // The truth about this profile against tier-low, as its description says: bwrap installs no
  // seccomp filter.
  ExpectVerdict(r, "priv.seccomp", "fail");
  ExpectVerdict(r, "priv.syscall:mount", "fail");
  // --disable-userns: no nested user namespace, by unshare or by clone. The kernel's own limit
  // (ENOSPC), not a filter, refuses them: unshare and clone are not usable, and say why.
  ExpectVerdict(r, "priv.userns", "pass");
  EXPECT_NE(CheckField(r, "priv.userns", "observed").find("clone(CLONE_NEWUSER): ENOSPC"), std::string::npos)
      << Describe(r, "priv.userns");
  for (const char* id : {"priv.syscall:unshare", "priv.syscall:clone"}) {
    ExpectVerdict(r, id, "pass");
    const std::string observed = CheckField(r, id, "observed");
    EXPECT_EQ(observed.rfind("not usable", 0), 0u) << observed;
    EXPECT_NE(observed.find("(CLONE_NEWUSER) -> ENOSPC"), std::string::npos) << observed;
  }
  // No /dev/ptmx in this sandbox: the pty ioctls are reported as not tried, never as refused.
  EXPECT_NE(CheckField(r, "priv.syscall:ioctl", "observed").find("not tried (open(/dev/ptmx): ENOENT)"), std::string::npos)
      << Describe(r, "priv.syscall:ioctl");
  // Started as nobody, the sandbox's uid 1000 is the host's uid 65534, never root: the knobs
  // that check the global uid (core_pattern) stay out of reach. (Started by root, as this
  // profile once was, uid 1000 mapped to host uid 0 and core_pattern opened for write.)
  ExpectVerdict(r, "priv.identity.root", "pass");
  ExpectVerdict(r, "priv.kernel_knob:/proc/sys/kernel/core_pattern", "pass");
  ExpectNoCanaryLeft(r);
}

// firejail's filter (--seccomp) refuses unshare's and clone's mount, net and pid namespace flags
// but lets a user namespace be made by either call: the real flags show it.
TEST(PrivilegesTest, FirejailLetsAUserNamespaceThroughCloneAndUnshare) {
  if (!BackendAvailable("firejail", {"firejail", "--quiet", "--noprofile", "true"})) return;
  CliRun run = RunProfile("sandboxes/firejail.json", kSuite);
  const json& r = run.report;
  // This firejail hides the run's workspace (under /var/tmp) although tier-low promises it
  // readable, so the probe cannot answer its launch's fresh control: no pass, and no
  // too-restrictive fail, rests on such a launch (issue 25). Its leaks stay proven fails.
  ASSERT_TRUE(r.contains("checks")) << run.err;
  EXPECT_EQ(r["checks"].size(), 60u);
  for (const json& c : r["checks"]) {
    const std::string v = c.value("verdict", "?");
    if (v == "fail") {
      EXPECT_EQ(c.value("direction", ""), "too-permissive") << c.value("id", "");
      continue;
    }
    EXPECT_EQ(v, "error") << c.value("id", "?") << ": " << c.value("observed", "");
    EXPECT_NE(c.value("observed", "").find("although the policy declares {workspace} readable"), std::string::npos)
        << c.value("id", "?") << ": " << c.value("observed", "");
  }
  EXPECT_EQ(run.exit_code, 1) << "a proven leak outranks the errors";
  for (const char* id : {"priv.syscall:clone", "priv.syscall:unshare"}) {
    ExpectVerdict(r, id, "fail");
    const std::string observed = CheckField(r, id, "observed");
    EXPECT_NE(observed.find("(CLONE_NEWUSER) -> returned"), std::string::npos) << observed;
    EXPECT_NE(observed.find("(CLONE_NEWNS) -> EPERM"), std::string::npos) << observed;
  }
  ExpectVerdict(r, "priv.userns", "fail");
  EXPECT_NE(CheckField(r, "priv.userns", "observed").find("clone(CLONE_NEWUSER): succeeded"), std::string::npos)
      << Describe(r, "priv.userns");
  ExpectNoCanaryLeft(r);
}

}  // namespace
}  // namespace sandprobe::testing
