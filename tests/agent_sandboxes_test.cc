// The two agent sandboxes installed by scripts/setup.sh from the npm registry, against what they
// document (policies/srt.json, policies/codex.json): Anthropic's sandbox-runtime (`srt`) and
// OpenAI's Codex CLI (`codex sandbox -P :workspace`). One run of tests/data/agent-sandboxes-
// suite.json (the default, network and privileges families together: one shared probe launch)
// per sandbox, plus the persistence suite for codex, whose host /tmp is where a file outlives
// its command. The resources suite has nothing to check: neither sandbox documents a limit.
//
// Each test has two blocks. "True findings" are what the sandbox really does (run as root, as in
// CI), asserted with their exact verdicts, including what passes for the right reason.
// "False alarms before issue 13's fixes" asserts the correct verdict for checks that sandprobe
// once got wrong (decoy over a denied path, runtime socket refused with EPERM, host interfaces
// read from sysfs, syscalls probed with invalid arguments).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kSrtUp = {"/opt/sandprobe-agents/node_modules/.bin/srt", "--version"};
const std::vector<std::string> kCodexUp = {"/opt/sandprobe-agents/node_modules/.bin/codex", "--version"};

CliRun RunAgentSuite(const std::string& profile, const std::string& suite) {
  return RunProfile(profile, {"--suite", SourcePath(suite), "--require-backend"});
}

void ExpectFails(const json& r, const std::vector<std::string>& ids) {
  for (const std::string& id : ids) ExpectVerdict(r, id, "fail", "too-permissive");
}
void ExpectPasses(const json& r, const std::vector<std::string>& ids) {
  for (const std::string& id : ids) ExpectVerdict(r, id, "pass");
}

TEST(AgentSandboxesTest, SrtFindings) {
  if (!BackendAvailable("srt", kSrtUp)) return;
  CliRun run = RunAgentSuite("sandboxes/srt.json", "tests/data/agent-sandboxes-suite.json");
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(SchemaProblem(r), "");
  for (const json& v : r["checks"]) {
    EXPECT_NE(v.value("verdict", ""), "error") << v.value("id", "") << ": " << v.value("observed", "");
    EXPECT_NE(v.value("verdict", ""), "inconclusive") << v.value("id", "");
  }

  // True findings.
  // Reads are allowed everywhere but denyRead (documented): the host canary is read.
  ExpectFails(r, {"fs.read.denied:host-canary", "fs.alias.denied:host-canary[symlink]",
                  "fs.alias.denied:host-canary[dotdot]", "fs.alias.denied:host-canary[proc_root]"});
  // A root caller's command holds every capability in srt's nested user namespace (documented),
  // whose uid 0 is the host's: DAC override holds for root-owned host files.
  ExpectFails(r, {"priv.caps.effective", "priv.caps.sys_admin", "priv.caps.bounding"});
  // srt's seccomp filter is for AF_UNIX sockets and namespaces only: these calls reach the kernel.
  ExpectFails(r, {"priv.syscall:chroot", "priv.syscall:bpf", "priv.syscall:keyctl",
                  "priv.syscall:add_key", "priv.syscall:perf_event_open", "priv.syscall:userfaultfd",
                  "priv.syscall:open_by_handle_at"});
  // bubblewrap unshares pid, net, mnt and user only: the host's ipc, uts and cgroup namespaces.
  ExpectFails(r, {"priv.namespace:ipc", "priv.namespace:uts", "priv.namespace:cgroup"});
  // The nested namespace remounts /proc without covering /proc/sys, and the caller's euid is the
  // host's uid 0, which is what sysctl write permission checks: host kernel knobs are writable.
  ExpectFails(r, {"priv.kernel_knob:/proc/sys/kernel/core_pattern", "priv.kernel_knob:/proc/sys[mount]"});
  ExpectFails(r, {"priv.masked:/proc/keys", "priv.masked:/proc/timer_list", "priv.masked:/sys/firmware"});
  // What srt enforces as documented.
  ExpectPasses(r, {"fs.read.denied:/etc/shadow", "fs.alias.denied:/etc/shadow[proc_root]",
                   "fs.write.allowed:workspace", "fs.write.denied:/", "fs.write.denied:/etc",
                   "fs.write.denied:/tmp", "fs.write.denied:/var/tmp", "env.secret.visible",
                   "net.tcp.denied:loopback", "net.tcp.denied:bridge", "net.udp.denied:loopback",
                   "net.udp.denied:bridge", "net.dns.denied", "priv.identity.root", "priv.seccomp",
                   "priv.no_new_privs", "priv.userns", "priv.syscall:mount", "priv.syscall:setns",
                   "priv.namespace:pid", "priv.namespace:net", "host.pid_namespace", "priv.tiocsti"});

  // False alarms before issue 13's fixes; these assert the fixed verdicts.
  // denyRead of a directory mounts an empty tmpfs over it: a decoy, not the host's /root.
  ExpectPasses(r, {"fs.read.denied:/root", "fs.alias.denied:/root[symlink]",
                   "fs.alias.denied:/root[dotdot]", "fs.alias.denied:/root[proc_root]"});
  // The socket file is visible, but seccomp refuses socket(AF_UNIX) with EPERM.
  ExpectPasses(r, {"net.unix.hidden:/var/run/docker.sock", "net.unix.hidden:/run/docker.sock"});
  // /sys is the host's sysfs, but the sandbox's network namespace has only lo.
  ExpectPasses(r, {"net.ifaces.loopback-only", "net.ifaces.host-netns-hidden"});
  // The filter refuses unshare by its flags: CLONE_NEWUSER and CLONE_NEWNS get EPERM (priv.userns
  // passes). Probed with real flags, CLONE_NEWNET still goes through: reachable, a true finding
  // (the invalid-flag probe alone could not have told).
  ExpectFails(r, {"priv.syscall:unshare"});
  EXPECT_NE(CheckField(r, "priv.syscall:unshare", "observed").find("unshare(CLONE_NEWNET) -> returned"),
            std::string::npos) << CheckField(r, "priv.syscall:unshare", "observed");
}

TEST(AgentSandboxesTest, CodexFindings) {
  if (!BackendAvailable("codex", kCodexUp)) return;
  CliRun run = RunAgentSuite("sandboxes/codex.json", "tests/data/agent-sandboxes-suite.json");
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(SchemaProblem(r), "");
  for (const json& v : r["checks"]) {
    EXPECT_NE(v.value("verdict", ""), "error") << v.value("id", "") << ": " << v.value("observed", "");
    EXPECT_NE(v.value("verdict", ""), "inconclusive") << v.value("id", "");
  }

  // True findings.
  // Commands run as the caller (root) and read the whole disk: /etc/shadow and the host canary.
  ExpectFails(r, {"priv.identity.root", "fs.read.denied:/etc/shadow", "fs.read.denied:host-canary",
                  "fs.alias.denied:/etc/shadow[proc_root]", "fs.alias.denied:host-canary[dotdot]"});
  // The whole environment goes through, the harness's canary secret included.
  ExpectFails(r, {"env.secret.hidden"});
  // Codex's seccomp filter is a network filter: namespace and other calls reach the kernel, and
  // an unprivileged user namespace (with a mount namespace in it) can be made.
  ExpectFails(r, {"priv.syscall:chroot", "priv.syscall:mount", "priv.syscall:unshare",
                  "priv.syscall:setns", "priv.syscall:bpf", "priv.syscall:keyctl",
                  "priv.syscall:add_key", "priv.syscall:perf_event_open", "priv.syscall:userfaultfd",
                  "priv.syscall:open_by_handle_at", "priv.userns"});
  ExpectFails(r, {"priv.namespace:uts", "priv.namespace:cgroup"});
  // /proc is fresh but /proc/sys is not covered read-only, and the euid is the host's uid 0.
  ExpectFails(r, {"priv.kernel_knob:/proc/sys/kernel/core_pattern", "priv.kernel_knob:/proc/sys[mount]"});
  ExpectFails(r, {"priv.masked:/proc/keys", "priv.masked:/proc/timer_list", "priv.masked:/sys/firmware"});
  // What codex enforces as documented.
  ExpectPasses(r, {"fs.write.allowed:workspace", "fs.write.allowed:/tmp", "fs.write.denied:/",
                   "fs.write.denied:/etc", "fs.write.denied:/var/tmp", "fs.write.denied:/root",
                   "net.tcp.denied:loopback", "net.tcp.denied:bridge", "net.udp.denied:loopback",
                   "net.udp.denied:bridge", "net.dns.denied", "priv.caps.effective",
                   "priv.caps.bounding", "priv.seccomp", "priv.no_new_privs", "priv.namespace:pid",
                   "priv.namespace:net", "priv.namespace:ipc", "host.pid_namespace", "priv.tiocsti"});

  // False alarms before issue 13's fixes; these assert the fixed verdicts.
  // The socket file is visible, but seccomp refuses connect with EPERM.
  ExpectPasses(r, {"net.unix.hidden:/var/run/docker.sock", "net.unix.hidden:/run/docker.sock"});
  // /sys is the host's sysfs, but the sandbox's network namespace has only lo.
  ExpectPasses(r, {"net.ifaces.loopback-only", "net.ifaces.host-netns-hidden"});
}

// `:workspace` binds the host's own /tmp writable: what a command leaves there outlives it (and
// is the host's). The workspace survives, as declared; a background process dies with the PID
// namespace.
TEST(AgentSandboxesTest, CodexTmpIsTheHostsAndOutlivesTheCommand) {
  if (!BackendAvailable("codex", kCodexUp)) return;
  CliRun run = RunAgentSuite("sandboxes/codex.json", "suites/persistence.json");
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  ExpectFails(r, {"persist.session.ephemeral:/tmp"});
  ExpectPasses(r, {"persist.session.survives:workspace", "persist.session.ephemeral:/var/tmp",
                   "persist.session.ephemeral:/root", "persist.session.ephemeral:background-process",
                   "persist.host:background-process"});
}

}  // namespace
}  // namespace sandprobe::testing
