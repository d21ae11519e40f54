// Judges of the privilege families, with hand-made facts: a hardened sandbox passes, each kind
// of exposure fails at its severity, a missing fact is inconclusive, an incomplete launch never
// passes, and remediation names the backend's own flag.
#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/family_priv.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;

const char* const kAllPriv[] = {"priv.identity", "priv.caps", "priv.seccomp", "priv.syscalls",
                                "priv.userns", "priv.namespaces", "priv.host_pid",
                                "priv.runtime_sockets", "priv.fds", "priv.cwd", "priv.tiocsti",
                                "priv.kernel_knobs", "priv.cgroups", "priv.devices", "priv.masked"};
const std::string kCanarySha(64, 'a');

Plan PrivPlan(const Policy& policy = testing::TierLowPolicy()) {
  Suite suite = testing::SuiteOf({});
  for (const char* f : kAllPriv) suite.entries.push_back({f, {}, "/families/x"});
  PlanContext context{"/c", "/workspace", {{"priv.canary_sha256", kCanarySha}}};
  auto plan = ExpandChecks(policy, suite, context);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan.ok() ? *plan : Plan{};
}

WitnessFacts Witness(const std::string& backend = "docker", bool canary_alive = true) {
  WitnessFacts w{"/c", "c", "e"};
  json ns = json::object();
  for (const char* n : {"pid", "net", "mnt", "ipc", "uts", "cgroup", "user"}) {
    ns[n] = std::string(n) + ":[1]";
  }
  w.observed["priv"] = {{"backend", backend}, {"host_namespaces", ns},
                        {"canary_process", {{"started", true}, {"host_pid", 42}, {"alive_at_collect", canary_alive}}}};
  // The host's reading of the probe process (run/probe_process_reading.h): a session of its own.
  w.observed["host_readings"] = {{"L1", {{"probe_host_pid", 4242}, {"probe_host_session", 4242}, {"harness_session", 100}}}};
  return w;
}

// What docker-hardened reports (uid 1000, no caps, seccomp filter, everything masked).
std::vector<json> HardenedFacts() {
  std::vector<json> f = {
      {{"family", "priv.identity"}, {"uid", 1000}, {"euid", 1000}, {"gid", 1000}, {"uid_map", "0 0 4294967295\n"}},
      {{"family", "priv.caps"}, {"ok", true}, {"effective", json::array()}, {"permitted", json::array()},
       {"inheritable", json::array()}, {"ambient", json::array()}, {"bounding", json::array()}},
      {{"family", "priv.seccomp"}, {"ok", true}, {"seccomp", 2}, {"seccomp_filters", 1}, {"no_new_privs", 1}},
      {{"family", "priv.userns"}, {"newuser_ok", false}, {"newuser_errno", "EPERM"}, {"newns_ok", false}},
      {{"family", "priv.host_pid"}, {"summary", true}, {"seen", false}, {"processes_scanned", 1}, {"cmdlines_readable", 1}},
      {{"family", "priv.runtime_sockets"}, {"summary", true}, {"paths", 0}},
      {{"family", "priv.fds"}, {"summary", true}, {"ok", true}, {"inherited", 0}},
      {{"family", "priv.cwd"}, {"cwd", "/workspace"}, {"getcwd_ok", true}, {"reaches_root", true}},
      {{"family", "priv.tiocsti"}, {"summary", true}, {"ttys", 0}},
      {{"family", "priv.kernel_knobs"}, {"path", "/proc/sys"}, {"variant", "mount"}, {"ok", true}, {"read_only", true}},
      {{"family", "priv.cgroups"}, {"summary", true}, {"ok", true}},
      {{"family", "priv.cgroups"}, {"path", "/sys/fs/cgroup"}, {"exists", true}, {"writable", false}, {"errno", "EROFS"}},
      {{"family", "priv.devices"}, {"summary", true}, {"ok", true}, {"nodes", 1}},
      {{"family", "priv.devices"}, {"path", "/dev/null"}, {"kind", "char"}, {"major", 1}, {"minor", 3}},
  };
  for (const char* s : {"chroot", "mount", "unshare", "setns", "bpf", "keyctl", "add_key", "ptrace",
                        "perf_event_open", "userfaultfd", "io_uring_setup", "open_by_handle_at",
                        "init_module", "kexec_load", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "clone3", "personality", "clone", "ioctl",
                        "socket(AF_PACKET)", "socket(AF_VSOCK)", "socket(AF_BLUETOOTH)", "socket(AF_NETLINK)"}) {
    f.push_back({{"family", "priv.syscalls"}, {"path", s}, {"errno", "EPERM"}});
  }
  for (const char* n : {"pid", "net", "mnt", "ipc", "uts", "cgroup", "user"}) {
    f.push_back({{"family", "priv.namespaces"}, {"path", n}, {"ok", true}, {"link", std::string(n) + ":[2]"}});
  }
  for (const char* k : {"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sysrq-trigger"}) {
    f.push_back({{"family", "priv.kernel_knobs"}, {"path", k}, {"exists", true}, {"writable", false}, {"errno", "EROFS"}});
  }
  for (const char* m : {"/proc/kcore", "/proc/keys", "/proc/timer_list"}) {
    f.push_back({{"family", "priv.masked"}, {"path", m}, {"ok", true}, {"kind", "other"}, {"bytes", 0}});
  }
  f.push_back({{"family", "priv.masked"}, {"path", "/sys/firmware"}, {"ok", true}, {"kind", "dir"}, {"entries", 0}});
  return f;
}

json& FactOf(std::vector<json>& facts, const std::string& family, const std::string& path = "") {
  for (json& f : facts) {
    if (f.value("family", "") == family && f.value("path", "") == path && !f.value("summary", false)) return f;
  }
  for (json& f : facts) {
    if (f.value("family", "") == family && f.value("summary", false)) return f;
  }
  ADD_FAILURE() << "no fact " << family << " " << path;
  static json none;
  return none;
}

BatchResult Ran(std::vector<json> facts, bool complete = true) {
  BatchResult r;
  r.state = BatchResult::State::kRan;
  r.launch_id = "L1";
  r.frames.facts = std::move(facts);
  r.frames.done = complete;
  r.complete = complete;
  if (!complete) r.reason = "killed";
  return r;
}

Verdict Judged(const std::vector<json>& facts, const std::string& id, const WitnessFacts& w = Witness(),
               bool complete = true, const Plan& plan = PrivPlan()) {
  for (const Verdict& v : Evaluate(plan, {Ran(facts, complete)}, w)) {
    if (v.check.id == id) return v;
  }
  ADD_FAILURE() << "no verdict " << id;
  return {};
}

TEST(FamilyPrivTest, HardenedSandboxPassesEveryCheckInOneLaunch) {
  Plan plan = PrivPlan();
  EXPECT_EQ(plan.batches.size(), 1u);
  // 20 syscalls + clone, ioctl and four socket families; the host_pid door; priv.tiocsti.session
  EXPECT_EQ(plan.checks.size(), 60u);
  EXPECT_TRUE(plan.batches[0].probe_process) << "priv.tiocsti.session reads the probe process from the host";
  for (const Verdict& v : Evaluate(plan, {Ran(HardenedFacts())}, Witness())) {
    EXPECT_EQ(v.outcome, Outcome::kPass) << v.check.id << ": " << v.observed;
  }
}

TEST(FamilyPrivTest, CapSysAdminIsCriticalAndNamedInTheDockerFix) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.caps")["effective"] = {"CAP_SYS_ADMIN"};
  Verdict v = Judged(facts, "priv.caps.sys_admin");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.check.severity, Severity::kCritical);
  EXPECT_NE(v.remediation.find("--cap-drop ALL"), std::string::npos);
  EXPECT_EQ(Judged(facts, "priv.caps.effective").outcome, Outcome::kFail);
  // The same finding under bwrap names bwrap's flag.
  EXPECT_NE(Judged(facts, "priv.caps.sys_admin", Witness("bwrap")).remediation.find("bwrap --cap-drop ALL"),
            std::string::npos);
}

TEST(FamilyPrivTest, AllowedCapabilityIsNotAFinding) {
  Policy policy = testing::TierLowPolicy();
  policy.privileges.capabilities = {"CAP_NET_BIND_SERVICE"};
  auto facts = HardenedFacts();
  FactOf(facts, "priv.caps")["effective"] = {"CAP_NET_BIND_SERVICE"};
  Plan plan = PrivPlan(policy);
  for (const Verdict& v : Evaluate(plan, {Ran(facts)}, Witness())) {
    if (v.check.family == "priv.caps") {
      EXPECT_EQ(v.outcome, Outcome::kPass) << v.check.id;
    }
  }
}

TEST(FamilyPrivTest, SeccompRequiredIsHighOptionalIsInfo) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.seccomp")["seccomp"] = 0;
  Verdict v = Judged(facts, "priv.seccomp");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.check.severity, Severity::kHigh);
  EXPECT_NE(v.remediation.find("seccomp"), std::string::npos);

  Policy optional = testing::TierLowPolicy();
  optional.privileges.seccomp = SeccompRequirement::kOptional;
  for (const Verdict& o : Evaluate(PrivPlan(optional), {Ran(facts)}, Witness())) {
    if (o.check.id == "priv.seccomp") {
      EXPECT_EQ(o.check.severity, Severity::kInfo);
    }
    if (o.check.family == "priv.syscalls") {
      EXPECT_EQ(o.check.severity, Severity::kInfo) << o.check.id;
    }
  }
}

TEST(FamilyPrivTest, SyscallErrnoDecidesReachability) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.syscalls", "mount") = {{"family", "priv.syscalls"}, {"path", "mount"}, {"errno", "EFAULT"}};
  FactOf(facts, "priv.syscalls", "bpf") = {{"family", "priv.syscalls"}, {"path", "bpf"}, {"signal", "SIGSYS"}};
  FactOf(facts, "priv.syscalls", "setns") = {{"family", "priv.syscalls"}, {"path", "setns"}, {"errno", "ENOSYS"}};
  EXPECT_EQ(Judged(facts, "priv.syscall:mount").outcome, Outcome::kFail);
  EXPECT_EQ(Judged(facts, "priv.syscall:bpf").outcome, Outcome::kPass);
  EXPECT_EQ(Judged(facts, "priv.syscall:setns").outcome, Outcome::kPass);
  // ptrace is reported, not judged: reachable is still a pass at info.
  FactOf(facts, "priv.syscalls", "ptrace")["errno"] = "ESRCH";
  Verdict ptrace = Judged(facts, "priv.syscall:ptrace");
  EXPECT_EQ(ptrace.outcome, Outcome::kPass);
  EXPECT_NE(ptrace.observed.find("reachable"), std::string::npos);
}

TEST(FamilyPrivTest, MissingFactsAreInconclusive) {
  auto facts = HardenedFacts();
  std::erase_if(facts, [](const json& f) {
    return f["family"] == "priv.seccomp" || f["family"] == "priv.caps" ||
           (f["family"] == "priv.syscalls" && f["path"] == "mount");
  });
  EXPECT_EQ(Judged(facts, "priv.seccomp").outcome, Outcome::kInconclusive);
  EXPECT_EQ(Judged(facts, "priv.caps.sys_admin").outcome, Outcome::kInconclusive);
  EXPECT_EQ(Judged(facts, "priv.syscall:mount").outcome, Outcome::kInconclusive);
  // No host namespace from the witness: nothing to compare with.
  EXPECT_EQ(Judged(HardenedFacts(), "priv.namespace:pid", WitnessFacts{}).outcome, Outcome::kInconclusive);
}

TEST(FamilyPrivTest, IncompleteLaunchNeverPassesButAProvenLeakStaysAFail) {
  auto facts = HardenedFacts();
  EXPECT_EQ(Judged(facts, "priv.seccomp", Witness(), false).outcome, Outcome::kError);
  FactOf(facts, "priv.host_pid")["seen"] = true;
  EXPECT_EQ(Judged(facts, "host.pid_namespace", Witness(), false).outcome, Outcome::kFail);
}

TEST(FamilyPrivTest, CanaryProcessSeenIsCriticalAndUnseenNeedsALiveCanary) {
  auto facts = HardenedFacts();
  Verdict unseen = Judged(facts, "host.pid_namespace");
  EXPECT_EQ(unseen.outcome, Outcome::kPass);
  EXPECT_EQ(Judged(facts, "host.pid_namespace", Witness("docker", false)).outcome, Outcome::kInconclusive);
  FactOf(facts, "priv.host_pid")["seen"] = true;
  Verdict seen = Judged(facts, "host.pid_namespace");
  EXPECT_EQ(seen.outcome, Outcome::kFail);
  EXPECT_EQ(seen.check.severity, Severity::kCritical);
  EXPECT_NE(seen.remediation.find("--pid host"), std::string::npos);
  EXPECT_NE(Judged(facts, "host.pid_namespace", Witness("bwrap")).remediation.find("--unshare-pid"),
            std::string::npos);
}

TEST(FamilyPrivTest, SharedNamespaceFailsAtItsSeverityUnlessThePolicySharesIt) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.namespaces", "pid")["link"] = "pid:[1]";
  Verdict v = Judged(facts, "priv.namespace:pid");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.check.severity, Severity::kCritical);
  Policy shared = testing::TierLowPolicy();
  shared.host.pid_namespace = NamespaceSharing::kShared;
  for (const Verdict& s : Evaluate(PrivPlan(shared), {Ran(facts)}, Witness())) {
    if (s.check.id == "priv.namespace:pid") {
      EXPECT_EQ(s.outcome, Outcome::kPass);
    }
  }
}

// The harness's kernel in the "kernel" witness, and a probe "kernel" context differing from it
// in the given keys.
const json kHarnessKernel = {{"release", "6.18.44-fc-v669"}, {"version", "#1 SMP PREEMPT_DYNAMIC"},
                             {"boot_id", "host-boot"}, {"boot_time_ms", 1795733722000LL}, {"nsfs_dev", "0:4"}};
json ProbeKernel(const json& changes = json::object()) {
  json kernel = kHarnessKernel;
  kernel.update(changes);
  return kernel;
}
const json kGuestKernel = ProbeKernel({{"release", "6.1.0-26-amd64"}, {"boot_id", "guest-boot"},
                                       {"boot_time_ms", 1795738000000LL}});

// A VM's guest kernel numbers its initial namespaces as the host's does: equal links in
// another kernel (decided by several signals) are not the host's namespaces.
TEST(FamilyPrivTest, EqualNamespaceNumbersInAnotherKernelAreNotShared) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.namespaces", "pid")["link"] = "pid:[1]";
  FactOf(facts, "priv.namespaces", "pid")["kernel"] = kGuestKernel;
  WitnessFacts w = Witness();
  w.observed["kernel"] = kHarnessKernel;
  Verdict other = Judged(facts, "priv.namespace:pid", w);
  EXPECT_EQ(other.outcome, Outcome::kPass) << other.observed;
  EXPECT_NE(other.observed.find("in another kernel"), std::string::npos) << other.observed;
  // The same kernel: the numbers decide.
  FactOf(facts, "priv.namespaces", "pid")["kernel"] = ProbeKernel();
  EXPECT_EQ(Judged(facts, "priv.namespace:pid", w).outcome, Outcome::kFail);
  // Unknown on the host side: the numbers decide.
  w.observed.erase("kernel");
  EXPECT_EQ(Judged(facts, "priv.namespace:pid", w).outcome, Outcome::kFail);
}

// A runtime that mounts a random boot_id of its own over /proc/sys/kernel/random/boot_id: the
// build and the boot time are still the harness's, so the user namespace (the host's) fails.
TEST(FamilyPrivTest, AMountedBootIdIsNotAnotherKernel) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.namespaces", "user")["link"] = "user:[1]";
  for (json& f : facts) {
    if (f.value("family", "") == "priv.namespaces") f["kernel"] = ProbeKernel({{"boot_id", "random-mounted"}});
  }
  WitnessFacts w = Witness();
  w.observed["kernel"] = kHarnessKernel;
  Verdict user = Judged(facts, "priv.namespace:user", w);
  EXPECT_EQ(user.outcome, Outcome::kFail) << user.observed;
  EXPECT_EQ(Judged(facts, "priv.namespace:pid", w).outcome, Outcome::kPass);
  // The old rule (boot_id alone) would have passed it: an older report's namespaces fact with
  // only a boot_id is not enough either.
  FactOf(facts, "priv.namespaces", "user").erase("kernel");
  FactOf(facts, "priv.namespaces", "user")["boot_id"] = "random-mounted";
  for (json& f : facts) f.erase("kernel");
  EXPECT_EQ(Judged(facts, "priv.namespace:user", w).outcome, Outcome::kFail);
}

// gVisor shows no link for some namespaces (mnt, ipc, uts, cgroup): in another kernel that is
// a pass, not a missing fact.
TEST(FamilyPrivTest, AMissingNamespaceLinkInAnotherKernelPasses) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.namespaces", "mnt") = {{"family", "priv.namespaces"}, {"path", "mnt"}, {"ok", false},
                                             {"errno", "ENOENT"},
                                             {"kernel", ProbeKernel({{"release", "4.4.0"}, {"nsfs_dev", "0:10"},
                                                                     {"boot_time_ms", 1795738028000LL}})}};
  WitnessFacts w = Witness();
  w.observed["kernel"] = kHarnessKernel;
  Verdict mnt = Judged(facts, "priv.namespace:mnt", w);
  EXPECT_EQ(mnt.outcome, Outcome::kPass) << mnt.observed;
  EXPECT_NE(mnt.observed.find("no mnt namespace link in another kernel"), std::string::npos) << mnt.observed;
  // In the harness's kernel a missing link is still inconclusive.
  FactOf(facts, "priv.namespaces", "mnt")["kernel"] = ProbeKernel();
  EXPECT_EQ(Judged(facts, "priv.namespace:mnt", w).outcome, Outcome::kInconclusive);
}

TEST(FamilyPrivTest, RootBehindAUserNamespaceMapIsRoot) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.identity")["uid_map"] = "      1000          0          1\n";
  Verdict v = Judged(facts, "priv.identity.root");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_NE(v.observed.find("uid 0 in the parent user namespace"), std::string::npos);
  FactOf(facts, "priv.identity")["uid_map"] = "1000 100000 1\n";
  EXPECT_EQ(Judged(facts, "priv.identity.root").outcome, Outcome::kPass);
}

TEST(FamilyPrivTest, KernelInterfaces) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.kernel_knobs", "/proc/sys/kernel/core_pattern") =
      {{"family", "priv.kernel_knobs"}, {"path", "/proc/sys/kernel/core_pattern"}, {"exists", true}, {"writable", true}};
  Verdict core = Judged(facts, "priv.kernel_knob:/proc/sys/kernel/core_pattern");
  EXPECT_EQ(core.outcome, Outcome::kFail);
  EXPECT_EQ(core.check.severity, Severity::kCritical);
  facts.push_back({{"family", "priv.cgroups"}, {"path", "/sys/fs/cgroup/cpu/release_agent"},
                   {"variant", "release_agent"}, {"exists", true}, {"writable", true}});
  EXPECT_EQ(Judged(facts, "priv.cgroup.release_agent").outcome, Outcome::kFail);
  EXPECT_EQ(Judged(facts, "priv.cgroup.writable").outcome, Outcome::kPass);
  facts.push_back({{"family", "priv.devices"}, {"path", "/dev/sda"}, {"kind", "block"}, {"major", 8}, {"minor", 0}});
  Verdict dev = Judged(facts, "priv.devices");
  EXPECT_EQ(dev.outcome, Outcome::kFail);
  EXPECT_NE(dev.observed.find("/dev/sda (block 8:0)"), std::string::npos);
  FactOf(facts, "priv.masked", "/proc/kcore")["bytes"] = 1;
  EXPECT_EQ(Judged(facts, "priv.masked:/proc/kcore").outcome, Outcome::kFail);
}

TEST(FamilyPrivTest, HostExposure) {
  auto facts = HardenedFacts();
  facts.push_back({{"family", "priv.runtime_sockets"}, {"path", "/var/run/docker.sock"}, {"exists", true},
                   {"kind", "socket"}, {"connect_ok", true}});
  facts.push_back({{"family", "priv.fds"}, {"fd", 5}, {"target", "/"}, {"kind", "dir"}});
  Verdict sock = Judged(facts, "priv.runtime_sockets");
  EXPECT_EQ(sock.outcome, Outcome::kFail);
  EXPECT_EQ(sock.check.severity, Severity::kCritical);
  EXPECT_EQ(Judged(facts, "priv.fds.directory").outcome, Outcome::kFail);
  EXPECT_EQ(Judged(facts, "priv.fds.inherited").outcome, Outcome::kFail);
  FactOf(facts, "priv.cwd")["reaches_root"] = false;
  EXPECT_EQ(Judged(facts, "priv.cwd").outcome, Outcome::kFail);
  facts.push_back({{"family", "priv.tiocsti"}, {"path", "fd0"}, {"isatty", true}, {"errno", "EFAULT"}});
  EXPECT_EQ(Judged(facts, "priv.tiocsti").outcome, Outcome::kFail);
}

// The witness with the harness's own facts: initial user namespace user:[1], a 6.18 kernel.
WitnessFacts WitnessWith(const json& extra, const std::string& backend = "docker") {
  WitnessFacts w = Witness(backend);
  w.observed["priv"]["harness_userns_initial"] = true;
  w.observed["priv"]["host_kernel"] = "6.18.44-fc-v657";
  if (extra.is_object()) w.observed["priv"].update(extra);
  return w;
}

json Userns(long euid, const std::string& link, const std::string& uid_map, bool cap_sys_admin = false) {
  return {{"euid", euid}, {"link", link}, {"uid_map", uid_map}, {"cap_sys_admin", cap_sys_admin}};
}

// core_pattern writable (access W_OK) seen from `userns`, and a writable release_agent.
std::vector<json> WritableKnobs(const json& userns) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.kernel_knobs", "/proc/sys/kernel/core_pattern") =
      {{"family", "priv.kernel_knobs"}, {"path", "/proc/sys/kernel/core_pattern"}, {"exists", true},
       {"writable", true}, {"userns", userns}};
  facts.push_back({{"family", "priv.cgroups"}, {"path", "/sys/fs/cgroup/cpu/release_agent"},
                   {"variant", "release_agent"}, {"exists", true}, {"writable", true}, {"userns", userns}});
  return facts;
}

TEST(FamilyPrivTest, WritableOnlyInItsOwnUserNamespaceIsNotTheHosts) {
  // unshare -r by uid 65534: root inside, nobody outside.
  auto facts = WritableKnobs(Userns(0, "user:[9]", "         0      65534          1\n"));
  Verdict core = Judged(facts, "priv.kernel_knob:/proc/sys/kernel/core_pattern", WitnessWith({}));
  EXPECT_EQ(core.outcome, Outcome::kPass) << core.observed;
  EXPECT_NE(core.observed.find("only in its own user namespace"), std::string::npos) << core.observed;
  EXPECT_NE(core.observed.find("host uid 65534"), std::string::npos) << core.observed;
  Verdict agent = Judged(facts, "priv.cgroup.release_agent", WitnessWith({}));
  EXPECT_EQ(agent.outcome, Outcome::kPass) << agent.observed;
  EXPECT_NE(agent.observed.find("5.17"), std::string::npos) << agent.observed;
  // A /proc/sys mounted read-write in that namespace, knobs from before the open was tried:
  // the namespace decides, the same reading.
  FactOf(facts, "priv.kernel_knobs", "/proc/sys")["read_only"] = false;
  FactOf(facts, "priv.kernel_knobs", "/proc/sys")["userns"] = Userns(0, "user:[9]", "0 65534 1");
  EXPECT_EQ(Judged(facts, "priv.kernel_knob:/proc/sys[mount]", WitnessWith({})).outcome, Outcome::kPass);
}

// Landlock (or any LSM that mediates opens): access(W_OK) says writable, the open for write gets
// EACCES. Root in the initial user namespace, /proc/sys read-write: nothing is writable.
TEST(FamilyPrivTest, AnOpenRefusedByALsmIsNotWritableWhateverAccessSaid) {
  auto facts = HardenedFacts();
  const json root = Userns(0, "user:[1]", "0 0 4294967295\n", true);
  for (const char* k : {"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sysrq-trigger"}) {
    FactOf(facts, "priv.kernel_knobs", k) = {{"family", "priv.kernel_knobs"}, {"path", k}, {"exists", true},
                                             {"tried", "open"}, {"access_writable", true}, {"writable", false},
                                             {"errno", "EACCES"}, {"userns", root}};
  }
  FactOf(facts, "priv.kernel_knobs", "/proc/sys") = {{"family", "priv.kernel_knobs"}, {"path", "/proc/sys"},
                                                     {"variant", "mount"}, {"ok", true}, {"read_only", false},
                                                     {"mount_point", "/proc"}, {"fstype", "proc"}, {"userns", root}};
  FactOf(facts, "priv.cgroups", "/sys/fs/cgroup") = {{"family", "priv.cgroups"}, {"path", "/sys/fs/cgroup"},
                                                     {"fstype", "cgroup2"}, {"read_only_mount", false},
                                                     {"exists", true}, {"tried", "open"},
                                                     {"tried_path", "/sys/fs/cgroup/cgroup.procs"},
                                                     {"access_writable", true}, {"writable", false},
                                                     {"errno", "EACCES"}, {"userns", root}};
  facts.push_back({{"family", "priv.cgroups"}, {"path", "/sys/fs/cgroup/cpu/release_agent"}, {"variant", "release_agent"},
                   {"exists", true}, {"tried", "open"}, {"access_writable", true}, {"writable", false},
                   {"errno", "EACCES"}, {"userns", root}});
  for (const char* id : {"priv.kernel_knob:/proc/sys/kernel/core_pattern", "priv.kernel_knob:/proc/sys/kernel/modprobe",
                         "priv.kernel_knob:/proc/sysrq-trigger", "priv.kernel_knob:/proc/sys[mount]",
                         "priv.cgroup.writable", "priv.cgroup.release_agent"}) {
    Verdict v = Judged(facts, id, WitnessWith({}));
    EXPECT_EQ(v.outcome, Outcome::kPass) << id << ": " << v.observed;
  }
  EXPECT_NE(Judged(facts, "priv.kernel_knob:/proc/sys/kernel/core_pattern", WitnessWith({}))
                .observed.find("access(W_OK) said writable: a security module refused the open"),
            std::string::npos);
  EXPECT_NE(Judged(facts, "priv.kernel_knob:/proc/sys[mount]", WitnessWith({})).observed.find("no sysctl under it opens"),
            std::string::npos);
  // The same mount with core_pattern opening for write: the mount fails too.
  FactOf(facts, "priv.kernel_knobs", "/proc/sys/kernel/core_pattern")["writable"] = true;
  FactOf(facts, "priv.kernel_knobs", "/proc/sys/kernel/core_pattern").erase("errno");
  EXPECT_EQ(Judged(facts, "priv.kernel_knob:/proc/sys[mount]", WitnessWith({})).outcome, Outcome::kFail);
  EXPECT_EQ(Judged(facts, "priv.kernel_knob:/proc/sys/kernel/core_pattern", WitnessWith({})).outcome, Outcome::kFail);
  // ... unless that kernel is not the harness's (gVisor's own /proc/sys).
  facts.push_back({{"family", "priv.devices"}, {"summary", true}, {"ok", true}, {"nodes", 1},
                   {"kernel", kGuestKernel}});
  std::erase_if(facts, [](const json& f) { return f.value("family", "") == "priv.devices" && f.value("summary", false) &&
                                                  !f.contains("kernel"); });
  WitnessFacts w = WitnessWith({});
  w.observed["kernel"] = kHarnessKernel;
  EXPECT_EQ(Judged(facts, "priv.kernel_knob:/proc/sys/kernel/core_pattern", w).outcome, Outcome::kPass);
}

// gVisor's /dev/net/tun and /dev/fuse are its sentry's, not host drivers: another kernel's
// device nodes pass; the same nodes in the harness's kernel fail.
TEST(FamilyPrivTest, DevicesOfAnotherKernelAreNotTheHostsDrivers) {
  auto facts = HardenedFacts();
  facts.push_back({{"family", "priv.devices"}, {"path", "/dev/net/tun"}, {"kind", "char"}, {"major", 10}, {"minor", 200}});
  facts.push_back({{"family", "priv.devices"}, {"path", "/dev/fuse"}, {"kind", "char"}, {"major", 10}, {"minor", 229}});
  FactOf(facts, "priv.devices")["nodes"] = 3;  // the summary counts what it lists (list_counts.h)
  FactOf(facts, "priv.devices")["kernel"] =
      ProbeKernel({{"release", "4.4.0"}, {"version", "#1 SMP Sun Jan 10 15:06:54 PST 2016"}, {"nsfs_dev", "0:10"},
                   {"boot_time_ms", 1795738028000LL}});
  FactOf(facts, "priv.devices").erase("boot_id");
  WitnessFacts w = Witness();
  w.observed["kernel"] = kHarnessKernel;
  Verdict gvisor = Judged(facts, "priv.devices", w);
  EXPECT_EQ(gvisor.outcome, Outcome::kPass) << gvisor.observed;
  EXPECT_NE(gvisor.observed.find("not the host's drivers"), std::string::npos) << gvisor.observed;
  FactOf(facts, "priv.devices")["kernel"] = ProbeKernel();
  Verdict host = Judged(facts, "priv.devices", w);
  EXPECT_EQ(host.outcome, Outcome::kFail) << host.observed;
}

TEST(FamilyPrivTest, WritableAsTheHostsRootStaysACriticalFail) {
  // bwrap --uid 1000 started by root: uid 1000 inside is host uid 0, and sysctls check that.
  auto bwrap = WritableKnobs(Userns(1000, "user:[9]", "1000 0 1\n"));
  Verdict core = Judged(bwrap, "priv.kernel_knob:/proc/sys/kernel/core_pattern", WitnessWith({}));
  EXPECT_EQ(core.outcome, Outcome::kFail) << core.observed;
  EXPECT_EQ(core.check.severity, Severity::kCritical);
  EXPECT_NE(core.observed.find("host uid 0"), std::string::npos) << core.observed;
  // ... but its release_agent is refused by Linux >= 5.17 outside the initial namespace,
  EXPECT_EQ(Judged(bwrap, "priv.cgroup.release_agent", WitnessWith({})).outcome, Outcome::kPass);
  // which older kernels did not check (CVE-2022-0492).
  EXPECT_EQ(Judged(bwrap, "priv.cgroup.release_agent", WitnessWith({{"host_kernel", "5.10.0-28-amd64"}})).outcome,
            Outcome::kFail);
  // The initial user namespace as root (docker --privileged): both are the host's.
  auto privileged = WritableKnobs(Userns(0, "user:[1]", "0 0 4294967295\n", true));
  EXPECT_EQ(Judged(privileged, "priv.kernel_knob:/proc/sys/kernel/core_pattern", WitnessWith({})).outcome, Outcome::kFail);
  Verdict agent = Judged(privileged, "priv.cgroup.release_agent", WitnessWith({}));
  EXPECT_EQ(agent.outcome, Outcome::kFail) << agent.observed;
  EXPECT_EQ(agent.check.severity, Severity::kCritical);
  // Without the harness's namespace to compare with, the identity map says "initial".
  EXPECT_EQ(Judged(privileged, "priv.cgroup.release_agent", WitnessFacts{}).outcome, Outcome::kFail);
  // No namespace context at all (an older probe): taken as the host's.
  EXPECT_EQ(Judged(WritableKnobs(json()), "priv.kernel_knob:/proc/sys/kernel/core_pattern", WitnessWith({})).outcome,
            Outcome::kFail);
}

TEST(FamilyPrivTest, AnotherKernelIsNamedAndItsSeccompIsNotAMissingFilter) {
  const json gvisor = ProbeKernel({{"release", "4.4.0"}, {"version", "#1 SMP Sun Jan 10 15:06:54 PST 2016"},
                                   {"nsfs_dev", "0:10"}, {"boot_time_ms", 1795738028000LL}});
  auto facts = HardenedFacts();
  FactOf(facts, "priv.seccomp") = {{"family", "priv.seccomp"}, {"ok", true}, {"seccomp", 0}, {"kernel", gvisor},
                                   {"no_new_privs_prctl", 1}};
  FactOf(facts, "priv.syscalls", "mount") = {{"family", "priv.syscalls"}, {"path", "mount"}, {"errno", "EFAULT"}};
  FactOf(facts, "priv.caps")["effective"] = {"CAP_SYS_ADMIN"};
  WitnessFacts w = Witness();
  w.observed["kernel"] = kHarnessKernel;
  auto judged = [&](const char* id) { return Judged(facts, id, w); };
  Verdict seccomp = judged("priv.seccomp");
  EXPECT_EQ(seccomp.outcome, Outcome::kPass) << seccomp.observed;
  EXPECT_NE(seccomp.observed.find("another kernel: build '4.4.0"), std::string::npos) << seccomp.observed;
  Verdict mount = judged("priv.syscall:mount");
  EXPECT_EQ(mount.outcome, Outcome::kPass) << mount.observed;
  EXPECT_NE(mount.observed.find("the host's kernel never saw the call"), std::string::npos);
  // So is a user namespace: still the policy's promise, named as that kernel's.
  FactOf(facts, "priv.userns")["newuser_ok"] = true;
  Verdict userns = judged("priv.userns");
  EXPECT_EQ(userns.outcome, Outcome::kFail);
  EXPECT_NE(userns.observed.find("a user namespace of another kernel"), std::string::npos) << userns.observed;
  // Capabilities stay the policy's promise; the verdict says whose they are.
  Verdict caps = judged("priv.caps.sys_admin");
  EXPECT_EQ(caps.outcome, Outcome::kFail);
  EXPECT_NE(caps.observed.find("not in the host's kernel"), std::string::npos);
  // NoNewPrivs missing from status: prctl's answer decides.
  Verdict nnp = judged("priv.no_new_privs");
  EXPECT_EQ(nnp.outcome, Outcome::kPass) << nnp.observed;
  EXPECT_NE(nnp.observed.find("prctl"), std::string::npos);
  FactOf(facts, "priv.seccomp")["no_new_privs_prctl"] = 0;
  EXPECT_EQ(judged("priv.no_new_privs").outcome, Outcome::kFail);
  // The same Seccomp: 0 from the harness's kernel is the high fail it always was, and the
  // gVisor build string alone (one signal) does not make another kernel.
  FactOf(facts, "priv.seccomp")["kernel"] = ProbeKernel();
  EXPECT_EQ(judged("priv.seccomp").outcome, Outcome::kFail);
  EXPECT_EQ(judged("priv.syscall:mount").outcome, Outcome::kFail);
  FactOf(facts, "priv.seccomp")["kernel"] = ProbeKernel({{"version", "#1 SMP Sun Jan 10 15:06:54 PST 2016"}});
  EXPECT_EQ(judged("priv.seccomp").outcome, Outcome::kFail);
}

// "seccomp": "optional" (what `infer` writes after a missing filter) promises nothing: no fail.
TEST(FamilyPrivTest, AnOptionalSeccompFilterIsNeverFailed) {
  Policy policy = testing::TierLowPolicy();
  policy.privileges.seccomp = SeccompRequirement::kOptional;
  auto facts = HardenedFacts();
  FactOf(facts, "priv.seccomp")["seccomp"] = 0;
  Verdict v = Judged(facts, "priv.seccomp", Witness(), true, PrivPlan(policy));
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_EQ(v.check.severity, Severity::kInfo);
  EXPECT_NE(v.observed.find("not required by the policy"), std::string::npos) << v.observed;
}

TEST(FamilyPrivTest, TiocstiCountsOnlyATerminalFromOutsideAndTheSixtyFourBitBypass) {
  auto facts = HardenedFacts();
  facts.push_back({{"family", "priv.tiocsti"}, {"path", "fd0"}, {"isatty", true}, {"dev", "0:99"},
                   {"rdev", "136:0"}, {"errno", "EFAULT"}});
  facts.push_back({{"family", "priv.tiocsti"}, {"path", "fd-1"}, {"variant", "filter"}, {"errno", "EBADF"},
                   {"cmd64", {{"errno", "EBADF"}}}});
  // The sandbox's own devpts (systemd-nspawn): the same pty number as the harness's, another instance.
  const json harness = {{"host_ttys", {{{"fd", 0}, {"dev", "0:24"}, {"rdev", "136:0"}}}}};
  Verdict own = Judged(facts, "priv.tiocsti", WitnessWith(harness));
  EXPECT_EQ(own.outcome, Outcome::kPass) << own.observed;
  EXPECT_NE(own.observed.find("its own terminal"), std::string::npos) << own.observed;
  // The harness's own terminal (same devpts instance and pty) is the injection path.
  FactOf(facts, "priv.tiocsti", "fd0")["dev"] = "0:24";
  Verdict outside = Judged(facts, "priv.tiocsti", WitnessWith(harness));
  EXPECT_EQ(outside.outcome, Outcome::kFail) << outside.observed;
  // Reached only through the 64-bit request: still reached.
  FactOf(facts, "priv.tiocsti", "fd0")["errno"] = "EPERM";
  FactOf(facts, "priv.tiocsti", "fd0")["cmd64"] = {{"errno", "EFAULT"}};
  EXPECT_EQ(Judged(facts, "priv.tiocsti", WitnessWith(harness)).outcome, Outcome::kFail);
  // No terminal at all, but a filter that stops TIOCSTI and not TIOCSTI | 1 << 32.
  std::erase_if(facts, [](const json& f) { return f.value("path", "") == "fd0"; });
  EXPECT_EQ(Judged(facts, "priv.tiocsti", WitnessWith(harness)).outcome, Outcome::kPass);
  FactOf(facts, "priv.tiocsti", "fd-1")["errno"] = "EPERM";
  Verdict bypass = Judged(facts, "priv.tiocsti", WitnessWith(harness));
  EXPECT_EQ(bypass.outcome, Outcome::kFail) << bypass.observed;
  EXPECT_NE(bypass.observed.find("CVE-2019-10063"), std::string::npos);
  FactOf(facts, "priv.tiocsti", "fd-1")["cmd64"] = {{"signal", "SIGSYS"}};
  EXPECT_EQ(Judged(facts, "priv.tiocsti", WitnessWith(harness)).outcome, Outcome::kPass);
}

TEST(FamilyPrivTest, UnshareIsJudgedByItsRealArgument) {
  auto facts = HardenedFacts();
  // firejail: the invalid flag passes, every real namespace flag is refused.
  FactOf(facts, "priv.syscalls", "unshare") = {
      {"family", "priv.syscalls"}, {"path", "unshare"}, {"call", "unshare(0x1: invalid flag)"}, {"errno", "EINVAL"},
      {"real", {{{"call", "unshare(CLONE_NEWUSER)"}, {"errno", "EPERM"}}, {{"call", "unshare(CLONE_NEWNS)"}, {"errno", "EPERM"}}}}};
  Verdict refused = Judged(facts, "priv.syscall:unshare");
  EXPECT_EQ(refused.outcome, Outcome::kPass) << refused.observed;
  EXPECT_NE(refused.observed.find("invalid argument: unshare(0x1: invalid flag) -> EINVAL"), std::string::npos)
      << refused.observed;
  // One real flag gets through: reachable.
  FactOf(facts, "priv.syscalls", "unshare")["real"][0] = {{"call", "unshare(CLONE_NEWUSER)"}, {"returned", true}};
  Verdict reached = Judged(facts, "priv.syscall:unshare");
  EXPECT_EQ(reached.outcome, Outcome::kFail) << reached.observed;
  EXPECT_NE(reached.observed.find("unshare(CLONE_NEWUSER) -> returned"), std::string::npos) << reached.observed;
  // Without real attempts the invalid argument still decides (the other syscalls).
  FactOf(facts, "priv.syscalls", "unshare").erase("real");
  EXPECT_EQ(Judged(facts, "priv.syscall:unshare").outcome, Outcome::kFail);
}

json Attempt(const std::string& call, const std::string& end) {
  if (end == "returned") return {{"call", call}, {"returned", true}};
  if (end == "SIGSYS") return {{"call", call}, {"signal", "SIGSYS"}};
  if (end.rfind("not_tried:", 0) == 0) return {{"call", call}, {"not_tried", end.substr(10)}};
  return {{"call", call}, {"errno", end}};
}

json SyscallFact(const std::string& name, const std::string& invalid_errno, std::vector<json> real) {
  return {{"family", "priv.syscalls"}, {"path", name}, {"call", name + "(invalid)"}, {"errno", invalid_errno},
          {"real", real}};
}

// docker's filter passes clone(CLONE_THREAD) (no namespace flag) and refuses every namespace
// flag without CAP_SYS_ADMIN: the invalid argument alone would call clone reachable.
// firejail's passes clone(CLONE_NEWUSER): usable.
TEST(FamilyPrivTest, CloneIsJudgedByItsRealNamespaceFlags) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.syscalls", "clone") =
      SyscallFact("clone", "EINVAL", {Attempt("clone(CLONE_NEWUSER)", "EPERM"), Attempt("clone(CLONE_NEWNS)", "EPERM")});
  Verdict docker = Judged(facts, "priv.syscall:clone");
  EXPECT_EQ(docker.check.severity, Severity::kMedium);
  EXPECT_EQ(docker.outcome, Outcome::kPass) << docker.observed;
  EXPECT_EQ(docker.observed.rfind("filtered: real arguments: refused", 0), 0u) << docker.observed;
  FactOf(facts, "priv.syscalls", "clone")["real"][0] = Attempt("clone(CLONE_NEWUSER)", "returned");
  Verdict firejail = Judged(facts, "priv.syscall:clone");
  EXPECT_EQ(firejail.outcome, Outcome::kFail) << firejail.observed;
  EXPECT_NE(firejail.observed.find("worked: clone(CLONE_NEWUSER) -> returned"), std::string::npos) << firejail.observed;
  // The reverse: a filter that refuses the invalid value but lets a real flag through.
  FactOf(facts, "priv.syscalls", "clone")["errno"] = "EPERM";
  EXPECT_EQ(Judged(facts, "priv.syscall:clone").outcome, Outcome::kFail);
}

// Past every filter, the kernel itself refused (bwrap --disable-userns: ENOSPC; a kernel without
// the family: EAFNOSUPPORT): nothing usable, and the verdict says no filter stopped it.
TEST(FamilyPrivTest, RealArgumentsTheKernelRefusedAreNotUsable) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.syscalls", "unshare") = SyscallFact(
      "unshare", "EINVAL", {Attempt("unshare(CLONE_NEWUSER)", "ENOSPC"), Attempt("unshare(CLONE_NEWNS)", "EPERM")});
  Verdict unshare = Judged(facts, "priv.syscall:unshare");
  EXPECT_EQ(unshare.outcome, Outcome::kPass) << unshare.observed;
  EXPECT_EQ(unshare.observed.rfind("not usable", 0), 0u) << unshare.observed;
  EXPECT_NE(unshare.observed.find("refused by the kernel: unshare(CLONE_NEWUSER) -> ENOSPC"), std::string::npos)
      << unshare.observed;
  FactOf(facts, "priv.syscalls", "socket(AF_BLUETOOTH)") =
      SyscallFact("socket(AF_BLUETOOTH)", "EINVAL", {Attempt("socket(AF_BLUETOOTH, SOCK_SEQPACKET, 0)", "EAFNOSUPPORT")});
  EXPECT_EQ(Judged(facts, "priv.syscall:socket(AF_BLUETOOTH)").outcome, Outcome::kPass);
}

// A socket family is its own check: a filter that compares the family refuses even the invalid
// type (EPERM); one that does not lets the real socket be made (docker 20.10 and AF_VSOCK).
TEST(FamilyPrivTest, SocketFamiliesAreJudgedOneByOne) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.syscalls", "socket(AF_VSOCK)") =
      SyscallFact("socket(AF_VSOCK)", "EPERM", {Attempt("socket(AF_VSOCK, SOCK_STREAM, 0)", "EPERM")});
  EXPECT_EQ(Judged(facts, "priv.syscall:socket(AF_VSOCK)").outcome, Outcome::kPass);
  FactOf(facts, "priv.syscalls", "socket(AF_VSOCK)") =
      SyscallFact("socket(AF_VSOCK)", "EINVAL", {Attempt("socket(AF_VSOCK, SOCK_STREAM, 0)", "returned")});
  Verdict vsock = Judged(facts, "priv.syscall:socket(AF_VSOCK)");
  EXPECT_EQ(vsock.outcome, Outcome::kFail) << vsock.observed;
  EXPECT_NE(vsock.remediation.find("refuses socket() for this family"), std::string::npos) << vsock.remediation;
  EXPECT_EQ(vsock.remediation.find("keep docker's default"), std::string::npos) << vsock.remediation;
  // AF_PACKET's fix is the capability docker grants root by default.
  FactOf(facts, "priv.syscalls", "socket(AF_PACKET)") =
      SyscallFact("socket(AF_PACKET)", "EINVAL", {Attempt("socket(AF_PACKET, SOCK_RAW, 0)", "returned")});
  Verdict packet = Judged(facts, "priv.syscall:socket(AF_PACKET)");
  EXPECT_EQ(packet.outcome, Outcome::kFail);
  EXPECT_NE(packet.remediation.find("--cap-drop NET_RAW"), std::string::npos) << packet.remediation;
  // AF_NETLINK (NETLINK_ROUTE) is how ordinary tools read addresses: reported, never failed.
  FactOf(facts, "priv.syscalls", "socket(AF_NETLINK)") =
      SyscallFact("socket(AF_NETLINK)", "EINVAL", {Attempt("socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)", "returned")});
  Verdict netlink = Judged(facts, "priv.syscall:socket(AF_NETLINK)");
  EXPECT_EQ(netlink.check.severity, Severity::kInfo);
  EXPECT_EQ(netlink.outcome, Outcome::kPass);
  EXPECT_EQ(netlink.observed.rfind("reachable", 0), 0u) << netlink.observed;
}

// A real attempt whose own setup failed (no /dev/ptmx for a pty) was not made: it neither
// passes nor fails the call, and the invalid argument decides, with the reason in the verdict.
TEST(FamilyPrivTest, RealAttemptsNotTriedLeaveTheInvalidArgumentToDecide) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.syscalls", "clone") =
      SyscallFact("clone", "EINVAL", {Attempt("clone(CLONE_NEWUSER)", "not_tried:fork: EAGAIN")});
  Verdict clone = Judged(facts, "priv.syscall:clone");
  EXPECT_EQ(clone.outcome, Outcome::kFail) << clone.observed;
  EXPECT_NE(clone.observed.find("clone(CLONE_NEWUSER) -> not tried (fork: EAGAIN)"), std::string::npos) << clone.observed;
  FactOf(facts, "priv.syscalls", "ioctl") = SyscallFact(
      "ioctl", "EBADF",
      {Attempt("ioctl(own pty, TIOCSTI)", "not_tried:open(/dev/ptmx): ENOENT"), Attempt("ioctl(own pty, TIOCLINUX)", "ENOTTY")});
  Verdict ioctl = Judged(facts, "priv.syscall:ioctl");
  EXPECT_EQ(ioctl.check.severity, Severity::kInfo);
  EXPECT_NE(ioctl.observed.find("not tried (open(/dev/ptmx): ENOENT)"), std::string::npos) << ioctl.observed;
  EXPECT_NE(ioctl.observed.find("refused by the kernel: ioctl(own pty, TIOCLINUX) -> ENOTTY"), std::string::npos)
      << ioctl.observed;
}

// clone(CLONE_NEWUSER) makes a user namespace as surely as unshare: a filter stopping only
// unshare does not deny user namespaces.
TEST(FamilyPrivTest, UserNamespacesCountCloneAsWellAsUnshare) {
  auto facts = HardenedFacts();
  EXPECT_EQ(Judged(facts, "priv.userns").outcome, Outcome::kPass);
  FactOf(facts, "priv.userns")["clone_newuser_ok"] = false;
  FactOf(facts, "priv.userns")["clone_newuser_errno"] = "EPERM";
  Verdict refused = Judged(facts, "priv.userns");
  EXPECT_EQ(refused.outcome, Outcome::kPass);
  EXPECT_NE(refused.observed.find("clone(CLONE_NEWUSER): EPERM"), std::string::npos) << refused.observed;
  FactOf(facts, "priv.userns")["clone_newuser_ok"] = true;
  Verdict made = Judged(facts, "priv.userns");
  EXPECT_EQ(made.outcome, Outcome::kFail);
  EXPECT_NE(made.observed.find("clone(CLONE_NEWUSER): succeeded"), std::string::npos) << made.observed;
}

TEST(FamilyPrivTest, RemediationFitsTheBackendVersionAndCgroupVersion) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.syscalls", "io_uring_setup")["errno"] = "EFAULT";
  Verdict old_docker = Judged(facts, "priv.syscall:io_uring_setup", WitnessWith({{"backend_version", "20.10.24+dfsg1"}}));
  EXPECT_EQ(old_docker.outcome, Outcome::kFail);
  EXPECT_NE(old_docker.remediation.find("docker 20.10 lets io_uring through"), std::string::npos) << old_docker.remediation;
  EXPECT_EQ(old_docker.remediation.find("keep docker's default"), std::string::npos);
  Verdict new_docker = Judged(facts, "priv.syscall:io_uring_setup", WitnessWith({{"backend_version", "25.0.3"}}));
  EXPECT_NE(new_docker.remediation.find("keep docker's default"), std::string::npos) << new_docker.remediation;
  EXPECT_NE(Judged(facts, "priv.syscall:io_uring_setup", WitnessWith({})).remediation.find("keep docker's default"),
            std::string::npos);
  // A shared cgroup namespace on cgroup v1 is docker's default: the fix is --cgroupns private.
  FactOf(facts, "priv.namespaces", "cgroup")["link"] = "cgroup:[1]";
  EXPECT_NE(Judged(facts, "priv.namespace:cgroup", WitnessWith({{"host_cgroup", "v1"}})).remediation.find("--cgroupns private"),
            std::string::npos);
  EXPECT_NE(Judged(facts, "priv.namespace:cgroup", WitnessWith({{"host_cgroup", "v2"}})).remediation.find("--cgroupns host"),
            std::string::npos);
}

TEST(FamilyPrivTest, VersionsAndUidMapsParse) {
  ASSERT_TRUE(ParseVersion("20.10.24+dfsg1"));
  EXPECT_FALSE(ParseVersion("20.10.24+dfsg1")->AtLeast(25, 0));
  EXPECT_TRUE(ParseVersion("bubblewrap 0.8.0")->AtLeast(0, 8));
  EXPECT_TRUE(ParseVersion("6.18.44-fc-v657")->AtLeast(5, 17));
  EXPECT_FALSE(ParseVersion("5.16.0")->AtLeast(5, 17));
  EXPECT_FALSE(ParseVersion("no digits"));
  EXPECT_EQ(MapToParent("0 100000 65536\n", 1000), 101000);
  EXPECT_EQ(MapToParent("1000 0 1\n", 0), std::nullopt);
}

TEST(FamilyPrivTest, HostPidNeedsTheWitness) {
  Suite suite = testing::SuiteOf({"priv.host_pid"});
  EXPECT_FALSE(ExpandChecks(testing::TierLowPolicy(), suite, PlanContext{"/c", "/w", {}}).ok());
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

// The bounding set matters only to an exec that raises capabilities; under no_new_privs with
// nothing permitted none can (busybox's setpriv in the microVM cannot drop the bounding set).
TEST(FamilyPrivTest, ABoundingSetOutOfReachUnderNoNewPrivsPasses) {
  auto facts = HardenedFacts();
  FactOf(facts, "priv.caps")["bounding"] = {"CAP_SYS_ADMIN", "CAP_NET_RAW"};
  Verdict nnp = Judged(facts, "priv.caps.bounding");
  EXPECT_EQ(nnp.outcome, Outcome::kPass) << nnp.observed;
  EXPECT_NE(nnp.observed.find("no exec can raise capabilities into it"), std::string::npos) << nnp.observed;
  FactOf(facts, "priv.seccomp")["no_new_privs"] = 0;
  EXPECT_EQ(Judged(facts, "priv.caps.bounding").outcome, Outcome::kFail);
  FactOf(facts, "priv.seccomp")["no_new_privs"] = 1;
  FactOf(facts, "priv.caps")["permitted"] = {"CAP_NET_RAW"};
  EXPECT_EQ(Judged(facts, "priv.caps.bounding").outcome, Outcome::kFail);
}

// A host namespace the policy declares shared is allowed (info), and points at its field.
TEST(FamilyPrivTest, ASharedHostNamespaceIsJudgedByItsField) {
  Policy policy = testing::TierLowPolicy();
  policy.host.user_namespace = NamespaceSharing::kShared;
  auto facts = HardenedFacts();
  FactOf(facts, "priv.namespaces", "user")["link"] = "user:[1]";
  Verdict shared = Judged(facts, "priv.namespace:user", Witness(), true, PrivPlan(policy));
  EXPECT_EQ(shared.outcome, Outcome::kPass) << shared.observed;
  EXPECT_EQ(shared.check.severity, Severity::kInfo);
  EXPECT_EQ(shared.check.reference.pointer, "/host/user_namespace");
  Verdict isolated = Judged(facts, "priv.namespace:user");
  EXPECT_EQ(isolated.outcome, Outcome::kFail);
  EXPECT_EQ(isolated.check.reference.pointer, "/host/user_namespace");
}

}  // namespace

// bwrap without --new-session: the probe is in the harness's own session, read on the host.
TEST(FamilyPrivTest, AProbeInTheHarnessSessionFailsByTheHostsReading) {
  WitnessFacts w = Witness("bwrap");
  Verdict own = Judged(HardenedFacts(), "priv.tiocsti.session", w);
  EXPECT_EQ(own.outcome, Outcome::kPass) << own.observed;
  EXPECT_EQ(own.tier(), EvidenceTier::kMeasured);
  w.observed["host_readings"]["L1"]["probe_host_session"] = 100;
  Verdict shared = Judged(HardenedFacts(), "priv.tiocsti.session", w);
  EXPECT_EQ(shared.outcome, Outcome::kFail) << shared.observed;
  EXPECT_EQ(shared.direction, Direction::kTooPermissive);
  EXPECT_EQ(shared.check.severity, Severity::kMedium);
  EXPECT_EQ(shared.tier(), EvidenceTier::kMeasured);
  EXPECT_NE(shared.observed.find("the harness's own session (100)"), std::string::npos) << shared.observed;
  EXPECT_NE(shared.remediation.find("--new-session"), std::string::npos) << shared.remediation;
  // No process the host could see (gVisor's sentry, a VM): nothing measured, a skip, never a pass.
  w.observed.erase("host_readings");
  Verdict unseen = Judged(HardenedFacts(), "priv.tiocsti.session", w);
  EXPECT_EQ(unseen.outcome, Outcome::kSkip) << unseen.observed;
  EXPECT_EQ(unseen.tier(), EvidenceTier::kNone);
  // Unseen, and the kernel identity signals say another kernel answered (gVisor, a VM's
  // guest): its sessions are not the harness's. A pass on the probe's signals: reported.
  auto guest = HardenedFacts();
  for (json& f : guest) {
    if (f.value("family", "") == "priv.namespaces") f["kernel"] = kGuestKernel;
  }
  w.observed["kernel"] = kHarnessKernel;
  Verdict other = Judged(guest, "priv.tiocsti.session", w);
  EXPECT_EQ(other.outcome, Outcome::kPass) << other.observed;
  EXPECT_EQ(other.tier(), EvidenceTier::kReported);
  EXPECT_NE(other.observed.find("another kernel"), std::string::npos) << other.observed;
  // The same kernel and unseen: still nothing to decide by.
  EXPECT_EQ(Judged(HardenedFacts(), "priv.tiocsti.session", w).outcome, Outcome::kSkip);
}

}  // namespace sandprobe
