// Host exposure, host side: host namespaces (priv.namespaces, priv.host_pid with the canary
// process), container runtime sockets, inherited descriptors, a leaked working directory and
// TIOCSTI into the harness's terminal.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "families/family_net.h"
#include "families/family_priv.h"
#include "families/family_resource_measure.h"
#include "families/runtime_socket_judgement.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// ---- priv.namespaces ----

struct NamespaceSpec {
  const char* ns;
  Severity severity;  // when the policy asks for isolation (pid, net) or always (the rest)
};
const std::vector<NamespaceSpec>& NamespaceSpecs() {
  static const std::vector<NamespaceSpec> kSpecs = {
      {"pid", Severity::kCritical}, {"net", Severity::kCritical}, {"mnt", Severity::kHigh},
      {"ipc", Severity::kMedium},   {"uts", Severity::kLow},      {"cgroup", Severity::kLow},
      {"user", Severity::kLow},
  };
  return kSpecs;
}

Status ExpandNamespaces(const ExpandInput& in, BatchBuilder& batch) {
  for (const NamespaceSpec& spec : NamespaceSpecs()) {
    const std::string ns = spec.ns;
    // Each namespace has its host.<ns>_namespace field (load/policy.h HostNamespace): pid and
    // net are promises; for mnt, ipc, uts, cgroup and user isolation is hardening, judged at its
    // exposure (a shared mount namespace is the host's filesystem tree) unless "shared".
    const std::optional<HostNamespaceField> field = HostNamespace(in.policy.host, ns);
    const std::string pointer = field ? field->pointer : "/host";
    const bool shared_ok = field && field->sharing == NamespaceSharing::kShared;
    Check check = PrivCheck(in, "priv.namespaces", "priv.namespace:" + ns,
                            shared_ok ? Severity::kInfo : spec.severity,
                            shared_ok ? Expectation::kAllowed : Expectation::kDenied, pointer, ns);
    batch.AddArg("priv.namespaces", ns);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  return Status::Ok();
}

Verdict JudgeNamespaces(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const std::string& ns = in.check.target;
  v.expected = in.check.expect == Expectation::kDenied ? ns + " namespace differs from the harness's"
                                                       : ns + " namespace may be shared";
  const std::string flag = ns == "pid" ? "--pid host" : ns == "net" ? "--network host" : ns == "ipc" ? "--ipc host" : ns == "uts" ? "--uts host" : ns == "cgroup" ? "--cgroupns host" : ns == "user" ? "--userns host (or enable userns-remap)" : "bind mounts of host paths";
  const json& witness = PrivWitnessFacts(in);
  // On a cgroup v1 host docker's default is the host's cgroup namespace: the fix is a flag to add.
  const bool cgroup_v1 = witness.is_object() && witness.value("host_cgroup", "") == "v1";
  const std::string docker_fix =
      ns == "cgroup" && cgroup_v1
          ? "docker run --cgroupns private (on this cgroup v1 host docker shares the host's cgroup "
            "namespace by default)"
          : fmt::format("do not run docker with {} (and not --privileged)", flag);
  v.remediation = RemedyFor(
      in, {docker_fix.c_str(),
           (ns == "mnt" ? std::string("bwrap always unshares the mount namespace: run the workload inside it")
                       : fmt::format("bwrap --unshare-{} (or --unshare-all)", ns == "net" ? "net" : ns)).c_str(),
           fmt::format("run the workload in a sandbox with its own {} namespace", ns).c_str()});
  const json& w = PrivWitnessFacts(in);
  const json* f = PrivFactAt(in, v, "priv.namespaces", ns);
  // Every kernel numbers its initial namespaces alike: equal links mean "shared" only when the
  // probe ran on the harness's kernel, decided by independent signals (kernel_identity.h; a
  // boot_id the runtime mounted is not another kernel). In another kernel nothing is the
  // host's namespace, whether or not that kernel shows a link for it (gVisor has none for mnt).
  if (f != nullptr) {
    if (std::optional<std::string> other = AnotherKernelOf(in, v)) {
      v.observed = fmt::format("{} in {}: not the host's namespace whatever its number",
                               f->value("ok", false) ? f->value("link", "?") : "no " + ns + " namespace link",
                               *other);
      JudgeFinding(v, false);
      return v;
    }
  }
  if (f == nullptr || !f->value("ok", false)) {
    Inconclusive(v, f == nullptr ? "the probe reported no namespace link"
                                 : "readlink /proc/self/ns/" + ns + ": " + f->value("errno", std::string("?")));
    return v;
  }
  const std::string host = w.is_object() && w.contains("host_namespaces")
                               ? w["host_namespaces"].value(ns, "") : "";
  if (host.empty()) {
    Inconclusive(v, "the harness could not read its own " + ns + " namespace");
    return v;
  }
  const std::string link = f->value("link", "");
  v.evidence.witness_facts.push_back("harness " + ns + " namespace " + host);
  v.observed = link == host ? fmt::format("{}: the same as the harness's", link)
                            : fmt::format("{} (the harness's is {})", link, host);
  JudgeFinding(v, link == host);
  return v;
}

// ---- priv.host_pid (the canary process) ----

constexpr const char* kDoorCheck = "priv.host_pid.door:host-canary";

// The probe gets the canary's hash, and for the doors the canary process's host pid and the
// canary file's host path (the process runs in the file's directory: witness_priv.cc).
Status ExpandHostPid(const ExpandInput& in, BatchBuilder& batch) {
  auto it = in.context.values.find("priv.canary_sha256");
  if (it == in.context.values.end()) {
    return Status::Error(in.entry.pointer + ": priv.host_pid: the priv witness offered no canary process");
  }
  const bool shared_ok = in.policy.host.pid_namespace == NamespaceSharing::kShared;
  batch.AddArg("priv.host_pid", it->second);
  if (Status s = batch.AddCheck(PrivCheck(in, "priv.host_pid", "host.pid_namespace",
                                          shared_ok ? Severity::kInfo : Severity::kCritical,
                                          shared_ok ? Expectation::kAllowed : Expectation::kDenied,
                                          "/host/pid_namespace", "canary host process"));
      !s.ok()) {
    return s;
  }
  auto canary_file = in.path_values.find("host_canary");
  if (canary_file == in.path_values.end() || canary_file->second.empty()) return Status::Ok();
  std::vector<std::string>& args = batch.Invocation("priv.host_pid").args;
  if (auto pid = in.context.values.find("priv.canary_pid"); pid != in.context.values.end() && pid->second != "0") {
    args.insert(args.end(), {"--canary-pid", pid->second});
  }
  args.insert(args.end(), {"--canary-file", canary_file->second});
  // The canary is judged as fs.read judges it: denied unless the policy declares it readable.
  bool readable = false;
  for (const PolicyPath& path : in.policy.filesystem.readable) readable = readable || path.path == "{host_canary}";
  Check door = PrivCheck(in, "priv.host_pid", kDoorCheck, Severity::kCritical,
                         readable ? Expectation::kAllowed : Expectation::kDenied,
                         readable ? "/filesystem/readable" : "/host/pid_namespace", "{host_canary}");
  door.resolved_target = canary_file->second;
  return batch.AddCheck(std::move(door));
}

// A host process the sandbox sees is a door to the host's files: /proc/<pid>/root and /cwd.
Verdict JudgeHostPidDoor(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const bool denied = in.check.expect == Expectation::kDenied;
  v.expected = denied ? "the host canary not readable through a host process's /proc/<pid>/root or /proc/<pid>/cwd"
                      : "the host canary may be read (the policy declares it readable)";
  v.remediation = RemedyFor(in, {"do not run docker with --pid host (and not with --cap-add SYS_PTRACE or "
                                 "--privileged): a visible host process is a door to the host's files",
                                 "bwrap --unshare-pid", "run the workload in a sandbox with its own PID namespace"});
  const std::string& sha = in.witnesses.canary_sha256;
  const json* summary = PrivFact(in, v, "priv.host_pid", true);
  if (summary == nullptr || sha.empty()) {
    Inconclusive(v, summary == nullptr ? "the probe reported no process scan" : "the harness has no record of the canary's hash");
    return v;
  }
  v.evidence.witness_facts.push_back("canary sha256 " + sha);
  std::vector<std::string> leaked, closed;
  for (int index : in.facts.OfFamily("priv.host_pid")) {
    const json& f = in.facts.Fact(index);
    const std::string variant = f.value("variant", "");
    if (variant != "door_root" && variant != "door_cwd") continue;
    v.evidence.frame_indexes.push_back(index);
    const std::string via = f.value("path", "?");
    if (FactOk(f) && f.value("sha256", "") == sha) {
      leaked.push_back(via + ": read the canary (its sha256)");
    } else {
      closed.push_back(via + ": " + (FactOk(f) ? "read something else (not the canary)" : DescribeFailure(f)));
    }
  }
  if (leaked.empty() && closed.empty()) {
    v.observed = summary->value("seen", false) ? "the canary process is visible, but the probe was given no canary "
                                                 "file to read through it"
                                               : "no host process to read through (the canary process is not visible, "
                                                 "and the probe had no host pid to try)";
  } else {
    v.observed = leaked.empty() ? "every door closed: " + JoinLimited(closed)
                                : "the host's files through a host process: " + JoinLimited(leaked);
    if (!leaked.empty() && !closed.empty()) v.observed += "; closed: " + JoinLimited(closed);
  }
  JudgeFinding(v, !leaked.empty());
  return v;
}

Verdict JudgeHostPid(const JudgeInput& in) {
  if (in.check.id == kDoorCheck) return JudgeHostPidDoor(in);
  Verdict v = StartVerdict(in);
  v.expected = in.check.expect == Expectation::kDenied ? "the canary host process is not visible"
                                                       : "host processes may be visible";
  v.remediation = RemedyFor(in, {"do not run docker with --pid host", "bwrap --unshare-pid",
                                 "run the workload in a sandbox with its own PID namespace"});
  const json& w = PrivWitnessFacts(in);
  const json canary = w.is_object() ? w.value("canary_process", json::object()) : json::object();
  if (canary.value("host_pid", 0L) != 0) {
    v.evidence.witness_facts.push_back(fmt::format("canary process host pid {}", canary.value("host_pid", 0L)));
  }
  const json* f = PrivFact(in, v, "priv.host_pid", true);
  if (f == nullptr) {
    Inconclusive(v, "the probe reported no process scan");
    return v;
  }
  if (f->value("seen", false)) {
    v.observed = fmt::format("the canary host process (host pid {}) is visible as pid {} among {} "
                             "processes", canary.value("host_pid", 0L), f->value("pid", 0L),
                             f->value("processes_scanned", 0L));
    JudgeFinding(v, true);
    return v;
  }
  const long readable = f->value("cmdlines_readable", 0L);
  v.observed = fmt::format("the canary host process is not among the {} processes visible ({} "
                           "command lines readable)", f->value("processes_scanned", 0L), readable);
  if (!canary.value("alive_at_collect", false)) {
    Inconclusive(v, v.observed + "; but the canary process was not running to the end, so not "
                                 "seeing it proves nothing");
  } else if (readable == 0) {
    Inconclusive(v, v.observed + "; no command line was readable, so not seeing it proves nothing");
  } else {
    JudgeFinding(v, false);
  }
  return v;
}

// ---- priv.runtime_sockets ----

Status ExpandRuntimeSockets(const ExpandInput& in, BatchBuilder& batch) {
  const bool visible_ok = in.policy.host.runtime_sockets == Visibility::kVisible;
  for (const std::string& path : RuntimeSocketPaths()) batch.AddArg("priv.runtime_sockets", path);
  AddWalkDevs(in, batch.Invocation("priv.runtime_sockets"));
  return batch.AddCheck(PrivCheck(in, "priv.runtime_sockets", "priv.runtime_sockets",
                                  visible_ok ? Severity::kInfo : Severity::kCritical,
                                  visible_ok ? Expectation::kAllowed : Expectation::kDenied,
                                  "/host/runtime_sockets", "docker/containerd/podman/crio sockets"));
}

Verdict JudgeRuntimeSockets(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = in.check.expect == Expectation::kDenied ? "no container runtime socket connectable"
                                                       : "runtime sockets may be visible";
  v.remediation = RemedyFor(in, {"do not bind-mount the runtime socket (-v /var/run/docker.sock:...)",
                                 "do not --bind /run or the runtime socket into the sandbox",
                                 "run the workload in a sandbox that does not see /run"});
  const json* summary = PrivFact(in, v, "priv.runtime_sockets", true);
  if (summary == nullptr) {
    Inconclusive(v, "the probe reported no socket scan");
    return v;
  }
  // Each socket judged as net.unix judges it (runtime_socket_judgement.h); the most exposed
  // one decides. A listed path, a socket mounted by itself and the /run/user sockets count
  // whatever they answer; a socket the probe found elsewhere (its walk of the host's
  // filesystems, /proc/net/unix) counts when it answered as a runtime's API.
  const SocketCaller caller = ReadSocketCaller(in.facts, "priv.runtime_sockets");
  std::vector<SocketReach> reaches;
  std::vector<std::string> seen;
  std::size_t other = 0, unseen = 0;
  for (int index : in.facts.OfFamily("priv.runtime_sockets")) {
    const json& f = in.facts.Fact(index);
    if (f.value("summary", false)) continue;
    if (!f.value("exists", false)) {
      // A runtime probe whose runtime refused the stat (and the connect): not seen, not absent.
      if (f.value("stat_denied_by", "") == "runtime-permission") ++unseen;
      continue;
    }
    const SocketAttempt attempt = ReadSocketAttempt(f);
    const SocketReach reach = ClassifySocket(attempt, caller);
    const bool found = attempt.source == "walk" || attempt.source == "proc_net_unix";
    if (found && !(reach == SocketReach::kReachable && IsRuntimeApi(ClassifyApi(attempt)))) {
      ++other;
      continue;
    }
    v.evidence.frame_indexes.push_back(index);
    reaches.push_back(reach);
    seen.push_back(attempt.path + (found ? " (found: " + attempt.source + ")" : "") + ": " +
                   DescribeSocket(attempt, reach, caller));
  }
  v.observed = seen.empty() ? (unseen > 0 ? "no runtime socket visible" : "no runtime socket present") : JoinLimited(seen);
  if (unseen > 0) {
    v.observed += fmt::format("; {} listed path(s) the runtime's permission model would not let the probe stat", unseen);
  }
  if (other > 0) v.observed += fmt::format("; {} other socket(s) found, none answering as a runtime", other);
  if (in.check.expect == Expectation::kAllowed) {
    JudgeFinding(v, false);
  } else {
    JudgeHiddenSocket(v, WorstReach(reaches));
    // A runtime probe whose runtime refused reads of the scan: a partial look, a pass only
    // where the runtime also refused every connect (runtime_socket_judgement.h).
    JudgeRefusedScan(in, "priv.runtime_sockets", *summary, v);
  }
  return v;
}

// ---- priv.fds ----

Status ExpandInheritedFds(const ExpandInput& in, BatchBuilder& batch) {
  batch.Invocation("priv.fds");
  if (Status s = batch.AddCheck(PrivCheck(in, "priv.fds", "priv.fds.inherited", Severity::kMedium,
                                          Expectation::kDenied, "/host"));
      !s.ok()) {
    return s;
  }
  return batch.AddCheck(PrivCheck(in, "priv.fds", "priv.fds.directory", Severity::kHigh,
                                  Expectation::kDenied, "/host"));
}

Verdict JudgeInheritedFds(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const bool dirs_only = in.check.id == "priv.fds.directory";
  v.expected = dirs_only ? "no inherited directory descriptor" : "only fds 0-2 open";
  v.remediation = RemedyFor(in, {"close descriptors before docker run/exec (update runc: "
                                 "CVE-2024-21626 leaked a directory fd)",
                                 "close descriptors before starting bwrap (no --sync-fd/--info-fd "
                                 "left open into the sandbox)",
                                 "start the sandbox with only fds 0-2 open (close_range)"});
  const json* summary = PrivFact(in, v, "priv.fds", true);
  if (summary == nullptr || !summary->value("ok", false)) {
    Inconclusive(v, summary == nullptr ? "the probe reported no fd listing"
                                       : "/proc/self/fd: " + summary->value("errno", std::string("?")));
    return v;
  }
  std::vector<std::string> found;
  for (int index : in.facts.OfFamily("priv.fds")) {
    const json& f = in.facts.Fact(index);
    if (f.value("summary", false) || (dirs_only && f.value("kind", "") != "dir")) continue;
    v.evidence.frame_indexes.push_back(index);
    found.push_back(fmt::format("fd {} -> {} ({})", f.value("fd", -1), f.value("target", "?"),
                                f.value("kind", "?")));
  }
  v.observed = found.empty() ? (dirs_only ? "no directory fd" : "no fd beyond 0-2")
                             : JoinLimited(found);
  JudgeFinding(v, !found.empty());
  return v;
}

// ---- priv.cwd ----

Status ExpandCwd(const ExpandInput& in, BatchBuilder& batch) {
  batch.Invocation("priv.cwd");
  return batch.AddCheck(PrivCheck(in, "priv.cwd", "priv.cwd", Severity::kHigh, Expectation::kDenied, "/host"));
}

Verdict JudgeCwd(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = "the working directory is inside the sandbox's root";
  v.remediation = RemedyFor(in, {"set -w/--workdir to a path inside the container; update runc "
                                 "(CVE-2024-21626)",
                                 "bwrap --chdir DIR inside the sandbox",
                                 "chdir into the sandbox's root before starting the workload"});
  const json* f = PrivFact(in, v, "priv.cwd", false);
  if (f == nullptr || !(*f)["reaches_root"].is_boolean()) {
    Inconclusive(v, f == nullptr ? "the probe reported no working directory"
                                 : "walking up from the working directory failed: " + f->value("walk_errno", std::string("?")));
    return v;
  }
  const bool inside = (*f)["reaches_root"].get<bool>() && f->value("getcwd_ok", false);
  v.observed = fmt::format("getcwd: {}; '..' from it {} the root", f->value("cwd", f->value("errno", std::string("?"))),
                           (*f)["reaches_root"].get<bool>() ? "reaches" : "never reaches");
  JudgeFinding(v, !inside);
  return v;
}

// ---- priv.tiocsti ----

constexpr const char* kSessionCheck = "priv.tiocsti.session";

Status ExpandTiocsti(const ExpandInput& in, BatchBuilder& batch) {
  batch.Invocation("priv.tiocsti");
  // The session check reads the probe's process from the host (run/probe_process_reading.h).
  batch.current().probe_process = true;
  if (Status s = batch.AddCheck(PrivCheck(in, "priv.tiocsti", "priv.tiocsti", Severity::kMedium, Expectation::kDenied, "/host"));
      !s.ok()) {
    return s;
  }
  return batch.AddCheck(PrivCheck(in, "priv.tiocsti", kSessionCheck, Severity::kMedium, Expectation::kDenied, "/host",
                                  "the harness's session"));
}

// A sandboxed process in its launcher's session can push input into that session's terminal
// whenever it holds a descriptor of it, and a terminal can reach it later (an interactive
// caller, a wrapper that passes its tty): CVE-2017-5226, why bwrap has --new-session. The
// harness gives the probe no terminal, so priv.tiocsti sees none either way; the session is
// what the sandbox decides, and the host reads it: the probe process's session id (found by
// identity, its exe and this launch's nonce) against the harness's own, in which the launcher
// keeps every child. Measured by the harness; the probe's word plays no part.
Verdict JudgeTiocstiSession(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = "the sandboxed process in a session of its own, not its launcher's";
  v.remediation = RemedyFor(in, {"do not docker run -t from a shell whose terminal matters (docker's processes "
                                 "start in a session of the runtime's own)",
                                 "bwrap --new-session", "start the workload in a new session (setsid)"});
  v.evidence.tier = EvidenceTier::kMeasured;
  const json* readings = resource_measure::LaunchReadings(in);
  const json* probe = readings != nullptr && readings->contains("probe_host_session") ? &(*readings)["probe_host_session"] : nullptr;
  const json* harness = readings != nullptr && readings->contains("harness_session") ? &(*readings)["harness_session"] : nullptr;
  if (probe == nullptr || harness == nullptr || !probe->is_number_integer() || !harness->is_number_integer()) {
    // gVisor's sentry or a VM's guest runs the probe: the host sees no process of it, and no
    // process of the host's sessions runs inside. Decided when the kernel identity signals
    // (more than one, families/kernel_identity.h) say another kernel answered the probe: its
    // sessions and terminals are that kernel's, none of them the launcher's.
    if (std::optional<std::string> other = AnotherKernelOf(in, v)) {
      v.evidence.tier = EvidenceTier::kReported;
      v.evidence.witness_facts.push_back("host: no process running this launch's probe was seen");
      v.observed = fmt::format("the host saw no process of the probe: it runs in {}, whose sessions are not the "
                               "harness's",
                               *other);
      JudgeFinding(v, false);
      return v;
    }
    v.outcome = Outcome::kSkip;
    v.evidence.tier = EvidenceTier::kNone;
    v.observed = "the host saw no process running the probe (a sentry or a VM runs it): no host session to compare";
    return v;
  }
  const long long probe_session = probe->get<long long>(), harness_session = harness->get<long long>();
  v.evidence.witness_facts.push_back(fmt::format("host: probe pid {} in session {}, harness session {}",
                                                 readings->value("probe_host_pid", 0L), probe_session, harness_session));
  const bool shared = probe_session == harness_session;
  v.observed = shared ? fmt::format("the probe runs in the harness's own session ({}): TIOCSTI into that session's terminal is "
                                    "one inherited descriptor away",
                                    harness_session)
                      : fmt::format("the probe's session is {}, the harness's {}", probe_session, harness_session);
  JudgeFinding(v, shared);
  return v;
}

// Whether an attempt got past every check: EFAULT (the bad pointer was the only obstacle) or
// success. `cmd64` is the same ioctl with bits above 32 set (CVE-2019-10063).
bool TiocstiReached(const json& f) {
  auto reached = [](const json& a) { return a.value("errno", "") == "EFAULT" || a.value("returned", false); };
  return reached(f) || (f.contains("cmd64") && reached(f["cmd64"]));
}

// On fd -1: EBADF means the request got past the filter; EPERM/ENOSYS or SIGSYS, it did not.
std::string FilterAnswer(const json& a) {
  if (a.contains("signal")) return "filtered (" + a.value("signal", std::string("?")) + ")";
  const std::string err = a.value("errno", "?");
  return (err == "EBADF" ? "passes the filter (" : "filtered (") + err + ")";
}

// The harness's own terminals ("dev rdev" of its fds 0-2, its controlling terminal's rdev), from
// the witness; nullopt when the witness did not record them.
struct HarnessTerminals {
  std::vector<std::pair<std::string, std::string>> fds;  // (st_dev, st_rdev)
  std::vector<std::string> rdevs;                         // every rdev, the ctty's too
};
std::optional<HarnessTerminals> ReadHarnessTerminals(const JudgeInput& in) {
  const json& w = PrivWitnessFacts(in);
  if (!w.is_object() || !w.contains("host_ttys") || !w["host_ttys"].is_array()) return std::nullopt;
  HarnessTerminals t;
  for (const json& tty : w["host_ttys"]) {
    t.fds.emplace_back(tty.value("dev", ""), tty.value("rdev", ""));
    t.rdevs.push_back(tty.value("rdev", ""));
  }
  if (w.contains("harness_ctty_rdev") && w["harness_ctty_rdev"].is_string()) {
    t.rdevs.push_back(w["harness_ctty_rdev"].get<std::string>());
  }
  return t;
}

Verdict JudgeTiocsti(const JudgeInput& in) {
  if (in.check.id == kSessionCheck) return JudgeTiocstiSession(in);
  Verdict v = StartVerdict(in);
  v.expected = "no terminal from outside the sandbox the probe can push input into";
  v.remediation = RemedyFor(in, {"do not give the container a terminal (-t) shared with a shell",
                                 "bwrap --new-session",
                                 "start the workload in a new session (setsid) without the "
                                 "caller's terminal; sysctl dev.tty.legacy_tiocsti=0"});
  const json* summary = PrivFact(in, v, "priv.tiocsti", true);
  if (summary == nullptr) {
    Inconclusive(v, "the probe reported no terminal scan");
    return v;
  }
  const std::optional<HarnessTerminals> harness = ReadHarnessTerminals(in);
  auto has = [](const std::vector<std::string>& list, const std::string& x) {
    return std::find(list.begin(), list.end(), x) != list.end();
  };
  // A terminal is the harness's when its devpts instance and pty match one of the harness's
  // fds. /dev/tty shows only the controlling terminal's rdev (TIOCGDEV), which another devpts
  // instance can repeat: it counts unless one of the sandbox's own fds is that terminal. With no
  // record of the harness's terminals every terminal counts (the cautious reading).
  std::vector<std::string> own_rdevs;
  for (int index : in.facts.OfFamily("priv.tiocsti")) {
    const json& f = in.facts.Fact(index);
    if (!f.value("isatty", false) || f.value("path", "") == "/dev/tty") continue;
    const bool outside = harness && std::find(harness->fds.begin(), harness->fds.end(),
                                              std::pair(f.value("dev", ""), f.value("rdev", ""))) !=
                                        harness->fds.end();
    if (harness && !outside) own_rdevs.push_back(f.value("rdev", ""));
  }
  std::vector<std::string> reachable, own, refused, filter;
  bool bypass = false;
  for (int index : in.facts.OfFamily("priv.tiocsti")) {
    const json& f = in.facts.Fact(index);
    if (f.value("variant", "") == "filter") {
      v.evidence.frame_indexes.push_back(index);
      const std::string plain = FilterAnswer(f);
      const std::string wide = f.contains("cmd64") ? FilterAnswer(f["cmd64"]) : "not tried";
      filter.push_back("TIOCSTI " + plain + ", TIOCSTI | 1 << 32 " + wide);
      // A filter that stops TIOCSTI but not its 64-bit spelling is bypassable (CVE-2019-10063).
      bypass = plain.rfind("filtered", 0) == 0 && wide.rfind("passes", 0) == 0;
      continue;
    }
    if (!f.value("isatty", false)) continue;
    v.evidence.frame_indexes.push_back(index);
    const std::string path = f.value("path", "?");
    const std::string rdev = path == "/dev/tty" ? f.value("ctty_rdev", "") : f.value("rdev", "");
    bool outside = !harness;
    if (harness && path == "/dev/tty") {
      outside = (rdev.empty() ? !harness->rdevs.empty() : has(harness->rdevs, rdev)) && !has(own_rdevs, rdev);
    } else if (harness) {
      outside = std::find(harness->fds.begin(), harness->fds.end(), std::pair(f.value("dev", ""), rdev)) !=
                harness->fds.end();
    }
    const std::string item = fmt::format("{} ({}{}): {}{}", path, outside ? "the harness's terminal " : "its own terminal ",
                                         rdev.empty() ? "?" : rdev, f.value("errno", f.value("returned", false) ? "ok" : "?"),
                                         f.contains("cmd64") ? ", 64-bit: " + f["cmd64"].value("errno", std::string("?")) : "");
    if (!TiocstiReached(f)) {
      refused.push_back(item);
    } else {
      (outside ? reachable : own).push_back(item);
    }
  }
  v.observed = fmt::format("{} terminal fd(s); TIOCSTI into a terminal from outside: {}", summary->value("ttys", 0),
                           JoinLimited(reachable));
  if (!own.empty()) v.observed += "; reachable but the sandbox's own (not an injection path): " + JoinLimited(own);
  if (!refused.empty()) v.observed += "; refused: " + JoinLimited(refused);
  if (!filter.empty()) v.observed += "; with no terminal (fd -1): " + JoinLimited(filter);
  if (bypass) v.observed += "; the filter stops TIOCSTI but not TIOCSTI | 1 << 32 (CVE-2019-10063)";
  JudgeFinding(v, !reachable.empty() || bypass);
  return v;
}

}  // namespace

std::vector<FamilyRow> PrivilegeHostFamilies() {
  return {
      {"priv.namespaces", ExpandNamespaces, JudgeNamespaces},
      {"priv.host_pid", ExpandHostPid, JudgeHostPid},
      {"priv.runtime_sockets", ExpandRuntimeSockets, JudgeRuntimeSockets},
      {"priv.fds", ExpandInheritedFds, JudgeInheritedFds},
      {"priv.cwd", ExpandCwd, JudgeCwd},
      {"priv.tiocsti", ExpandTiocsti, JudgeTiocsti},
  };
}

}  // namespace sandprobe
