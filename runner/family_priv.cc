// Privilege families, host side: who the sandboxed process is (priv.identity), what it may do
// (priv.caps, priv.seccomp + no_new_privs, priv.syscalls, priv.userns). The host-exposure and
// kernel-interface families live in family_priv_host.cc and family_priv_kernel.cc.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "runner/family_priv.h"

namespace sandprobe {

std::vector<FamilyRow> PrivilegeHostFamilies();    // family_priv_host.cc
std::vector<FamilyRow> PrivilegeKernelFamilies();  // family_priv_kernel.cc

namespace {

using nlohmann::json;

const Remedy kSeccompRemedy = {
    "keep docker's default seccomp profile (drop --security-opt seccomp=unconfined and "
    "--privileged) or pass a stricter --security-opt seccomp=PROFILE.json",
    "pass a seccomp filter with bwrap --seccomp FD (e.g. one generated from docker's default "
    "profile)",
    "run the workload inside a sandbox that installs a seccomp filter"};

// ---- priv.identity ----

Status ExpandIdentity(const ExpandInput& in, BatchBuilder& batch) {
  const bool allowed = in.policy.privileges.root;
  batch.Invocation("priv.identity");
  return batch.AddCheck(PrivCheck(in, "priv.identity", "priv.identity.root",
                                  allowed ? Severity::kInfo : Severity::kHigh,
                                  allowed ? Expectation::kAllowed : Expectation::kDenied,
                                  "/privileges/root"));
}

Verdict JudgeIdentity(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = in.check.expect == Expectation::kDenied ? "not uid 0" : "uid 0 allowed";
  v.remediation = RemedyFor(in, {"run as an unprivileged user: docker run --user 1000:1000 (or "
                                 "USER in the image), or enable userns-remap",
                                 "bwrap --unshare-user --uid 1000 --gid 1000",
                                 "run the workload as an unprivileged user"});
  const json* f = PrivFact(in, v, "priv.identity", false);
  if (f == nullptr || !(*f)["euid"].is_number()) {
    Inconclusive(v, "the probe reported no identity");
    return v;
  }
  const long uid = (*f)["uid"].get<long>(), euid = (*f)["euid"].get<long>();
  const std::string raw_map = f->value("uid_map", "");
  std::optional<long> outside = MapToParent(raw_map, euid);
  std::string map = raw_map;
  map.erase(std::remove(map.begin(), map.end(), '\n'), map.end());
  map.erase(std::unique(map.begin(), map.end(), [](char a, char b) { return a == ' ' && b == ' '; }), map.end());
  // uid 1000 inside a user namespace whose map sends it to 0 is root to every file outside it
  // (bwrap --uid 1000 started by root does exactly that).
  const bool host_root = outside && *outside == 0;
  v.observed = fmt::format("uid {}, euid {}, gid {}; uid_map '{}'{}", uid, euid, f->value("gid", -1L), map,
                           host_root && euid != 0 ? fmt::format("; euid {} is uid 0 in the parent user namespace", euid) : "");
  JudgeFinding(v, uid == 0 || euid == 0 || host_root);
  return v;
}

// ---- priv.caps ----

std::vector<std::string> Names(const json& fact, const char* key) {
  std::vector<std::string> names;
  auto it = fact.find(key);
  if (it == fact.end() || !it->is_array()) return names;
  for (const json& n : *it) {
    if (n.is_string()) names.push_back(n.get<std::string>());
  }
  return names;
}

// Capability sets, each a check: the caps in `keys` beyond the policy's allowed list.
struct CapCheck {
  const char* id;
  Severity severity;
  std::vector<const char*> keys;  // fact keys unioned
  const char* what;
};
const std::vector<CapCheck>& CapChecks() {
  static const std::vector<CapCheck> kChecks = {
      {"priv.caps.effective", Severity::kHigh, {"effective", "permitted"}, "effective or permitted"},
      {"priv.caps.sys_admin", Severity::kCritical, {"effective", "permitted"}, "CAP_SYS_ADMIN"},
      {"priv.caps.inheritable", Severity::kMedium, {"inheritable", "ambient"}, "inheritable or ambient"},
      // Without no_new_privs a setuid or file-capability binary can raise caps up to this set.
      {"priv.caps.bounding", Severity::kLow, {"bounding"}, "bounding"},
  };
  return kChecks;
}

bool Allowed(const ExpandInput& in, const std::string& cap) {
  const auto& allowed = in.policy.privileges.capabilities;
  return std::find(allowed.begin(), allowed.end(), cap) != allowed.end();
}

Status ExpandCaps(const ExpandInput& in, BatchBuilder& batch) {
  batch.Invocation("priv.caps");
  for (const CapCheck& c : CapChecks()) {
    if (std::string(c.id) == "priv.caps.sys_admin" && Allowed(in, "CAP_SYS_ADMIN")) continue;
    Check check = PrivCheck(in, "priv.caps", c.id, c.severity, Expectation::kDenied,
                            "/privileges/capabilities",
                            fmt::format("{}", fmt::join(in.policy.privileges.capabilities, ",")));
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  return Status::Ok();
}

Verdict JudgeCaps(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const CapCheck* spec = nullptr;
  for (const CapCheck& c : CapChecks()) {
    if (in.check.id == c.id) spec = &c;
  }
  const bool sys_admin = in.check.id == "priv.caps.sys_admin";
  v.remediation = RemedyFor(in, {"docker run --cap-drop ALL (add back only the policy's "
                                 "capabilities with --cap-add), never --privileged",
                                 "bwrap --cap-drop ALL, and no --cap-add beyond the policy",
                                 "run the workload unprivileged in a sandbox that drops all "
                                 "capabilities"});
  const json* f = PrivFact(in, v, "priv.caps", false);
  if (spec == nullptr || f == nullptr || !f->value("ok", false)) {
    Inconclusive(v, f == nullptr ? "the probe reported no capability sets"
                                 : "/proc/self/status: " + f->value("errno", std::string("unreadable")));
    return v;
  }
  std::vector<std::string> present;
  for (const char* key : spec->keys) {
    if (!f->contains(key)) continue;
    for (const std::string& n : Names(*f, key)) {
      if (std::find(present.begin(), present.end(), n) == present.end()) present.push_back(n);
    }
  }
  // The check's target is the policy's allowed list, comma-separated.
  const std::string& allowed = in.check.target;
  auto is_allowed = [&allowed](const std::string& cap) {
    return ("," + allowed + ",").find("," + cap + ",") != std::string::npos;
  };
  std::vector<std::string> extra;
  for (const std::string& n : present) {
    if (sys_admin ? n == "CAP_SYS_ADMIN" : !is_allowed(n)) extra.push_back(n);
  }
  v.expected = sys_admin ? "CAP_SYS_ADMIN not held" : fmt::format("no {} capability beyond the policy's list ({})", spec->what,
                                                  allowed.empty() ? "empty" : allowed);
  v.observed = sys_admin ? (extra.empty() ? "CAP_SYS_ADMIN not held" : "CAP_SYS_ADMIN held (effective or permitted)")
                         : fmt::format("{} capabilities: {}", spec->what, JoinLimited(extra, 41));
  // Still the policy's promise, but say whose capabilities they are: the sentry's, not Linux's.
  if (std::optional<std::string> sentry = UserSpaceKernelOf(in, v)) {
    v.observed = fmt::format("inside a user-space kernel ({}): {} (capabilities of {}'s own kernel, not "
                             "of Linux)", *sentry, v.observed, *sentry);
  }
  Judge(v, extra.empty(), Direction::kTooPermissive);
  return v;
}

// ---- priv.seccomp (+ no_new_privs) ----

Status ExpandSeccomp(const ExpandInput& in, BatchBuilder& batch) {
  const PrivilegesPolicy& p = in.policy.privileges;
  batch.Invocation("priv.seccomp");
  const bool required = p.seccomp == "required";
  if (Status s = batch.AddCheck(PrivCheck(in, "priv.seccomp", "priv.seccomp",
                                          required ? Severity::kHigh : Severity::kInfo,
                                          Expectation::kDenied, "/privileges/seccomp"));
      !s.ok()) {
    return s;
  }
  return batch.AddCheck(PrivCheck(in, "priv.seccomp", "priv.no_new_privs",
                                  p.no_new_privs ? Severity::kHigh : Severity::kInfo,
                                  Expectation::kDenied, "/privileges/no_new_privs"));
}

Verdict JudgeSeccomp(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const bool nnp = in.check.id == "priv.no_new_privs";
  const bool required = in.check.severity != Severity::kInfo;
  v.expected = nnp ? (required ? "NoNewPrivs: 1" : "NoNewPrivs: 1 (recommended, not required)")
                   : (required ? "a seccomp filter (Seccomp: 2)" : "a seccomp filter (recommended, not required)");
  v.remediation = nnp ? RemedyFor(in, {"docker run --security-opt no-new-privileges",
                                       "bwrap sets no_new_privs itself; check for a setuid bwrap "
                                       "or a wrapper that clears it",
                                       "set PR_SET_NO_NEW_PRIVS (setpriv --no-new-privs) before "
                                       "starting the workload"})
                      : RemedyFor(in, kSeccompRemedy);
  const json* f = PrivFact(in, v, "priv.seccomp", false);
  if (f == nullptr) {
    Inconclusive(v, "the probe reported no /proc/self/status");
    return v;
  }
  const std::optional<std::string> sentry = UserSpaceKernelOf(in, v);
  if (nnp) {
    // /proc/self/status first; prctl(PR_GET_NO_NEW_PRIVS) where the field is missing (gVisor).
    const bool in_status = f->contains("no_new_privs") && (*f)["no_new_privs"].is_number();
    const bool by_prctl = f->contains("no_new_privs_prctl") && (*f)["no_new_privs_prctl"].is_number();
    if (!in_status && !by_prctl) {
      Inconclusive(v, "/proc/self/status has no NoNewPrivs field and prctl(PR_GET_NO_NEW_PRIVS) failed: " +
                          f->value("no_new_privs_prctl_errno", std::string("not reported")));
      return v;
    }
    const long value = (*f)[in_status ? "no_new_privs" : "no_new_privs_prctl"].get<long>();
    v.observed = in_status ? fmt::format("NoNewPrivs: {}", value)
                           : fmt::format("prctl(PR_GET_NO_NEW_PRIVS) = {} (/proc/self/status has no NoNewPrivs)", value);
    if (sentry) v.observed = fmt::format("inside a user-space kernel ({}): {}", *sentry, v.observed);
    Judge(v, value == 1, Direction::kTooPermissive);
    return v;
  }
  if (!f->contains("seccomp") || !(*f)["seccomp"].is_number()) {
    Inconclusive(v, "/proc/self/status has no Seccomp field");
    return v;
  }
  const long value = (*f)["seccomp"].get<long>();
  v.observed = fmt::format("Seccomp: {} ({}), {} filter(s)", value,
                           value == 0 ? "disabled" : value == 1 ? "strict" : "filter",
                           f->value("seccomp_filters", -1L));
  if (sentry && value == 0) {
    // Decision: a pass with the reason. Under a user-space kernel the workload's syscalls never
    // reach Linux: the sentry implements them, and it is the sentry (confined by its own seccomp
    // filter, set by runsc) that calls the host kernel. "Seccomp: 0" is the sentry's view of a
    // workload it filters by construction, not a missing filter in front of Linux.
    v.observed = fmt::format("inside a user-space kernel ({}): {}, as {} reports it; the workload's "
                             "syscalls reach {}'s sentry, not Linux, and the sentry is the filter",
                             *sentry, v.observed, *sentry, *sentry);
    Judge(v, true, Direction::kTooPermissive);
    return v;
  }
  Judge(v, value != 0, Direction::kTooPermissive);
  return v;
}

// ---- priv.syscalls ----

struct SyscallSpec {
  const char* name;
  bool dangerous;  // expected filtered under a required seccomp policy; else informational
};
const std::vector<SyscallSpec>& SyscallSpecs() {
  static const std::vector<SyscallSpec> kSpecs = {
      {"chroot", true},          {"mount", true},          {"unshare", true},
      {"setns", true},           {"bpf", true},            {"keyctl", true},
      {"add_key", true},         {"ptrace", false},        {"perf_event_open", true},
      {"userfaultfd", true},     {"io_uring_setup", true}, {"open_by_handle_at", true},
      {"init_module", true},     {"kexec_load", true},     {"clone3", false},
      {"personality", false},
  };
  return kSpecs;
}

// A suite may narrow priv.syscalls to some of these names.
VariantRule SyscallVariants() {
  VariantRule rule{VariantKind::kOneOf, {}};
  for (const SyscallSpec& s : SyscallSpecs()) rule.names.push_back(s.name);
  return rule;
}

Status ExpandSyscalls(const ExpandInput& in, BatchBuilder& batch) {
  const bool required = in.policy.privileges.seccomp == "required";
  for (const SyscallSpec& s : SyscallSpecs()) {
    const auto& wanted = in.entry.variants;
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), s.name) == wanted.end()) continue;
    const bool judged = required && s.dangerous;
    Check check = PrivCheck(in, "priv.syscalls", std::string("priv.syscall:") + s.name,
                            judged ? Severity::kMedium : Severity::kInfo,
                            judged ? Expectation::kDenied : Expectation::kAllowed,
                            "/privileges/seccomp", s.name);
    batch.AddArg("priv.syscalls", s.name);
    if (Status st = batch.AddCheck(std::move(check)); !st.ok()) return st;
  }
  return Status::Ok();
}

// How one attempt of the probe ended, and whether it got past the filter to the kernel.
struct AttemptReading {
  bool reachable;
  std::string text;  // "EPERM", "SIGSYS", "returned"
};
AttemptReading ReadAttempt(const json& a) {
  if (a.contains("signal")) return {false, "killed by " + a.value("signal", std::string("?"))};
  if (a.value("returned", false)) return {true, "returned"};
  if (a.value("timed_out", false)) return {true, "still running after 5 s (killed)"};
  const std::string err = a.value("errno", "");
  // EPERM/EACCES/ENOSYS: a filter's answer, or the kernel's refusal before acting.
  return {!(err == "EPERM" || err == "ENOSYS" || err == "EACCES"), err.empty() ? "?" : err};
}

// io_uring: docker's default seccomp profile blocks it only from moby 25.0 on.
std::string SyscallRemedy(const JudgeInput& in) {
  const json& w = PrivWitnessFacts(in);
  const std::string backend = w.is_object() ? w.value("backend", "") : "";
  std::optional<VersionNumber> version = BackendVersion(in);
  if (in.check.target == "io_uring_setup" && backend == "docker" && version && !version->AtLeast(25, 0)) {
    return fmt::format("docker {}.{} lets io_uring through its default seccomp profile (blocked from "
                       "docker 25.0 on): pass --security-opt seccomp=PROFILE.json (docker's default "
                       "without io_uring_setup, io_uring_enter, io_uring_register), or upgrade docker",
                       version->major, version->minor);
  }
  return RemedyFor(in, kSeccompRemedy);
}

Verdict JudgeSyscalls(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const bool judged = in.check.expect == Expectation::kDenied;
  v.expected = judged ? "filtered (EPERM/ENOSYS or SIGSYS)" : "reachable or filtered (reported only)";
  v.remediation = SyscallRemedy(in);
  const json* f = PrivFactAt(in, v, "priv.syscalls", in.check.target);
  if (f == nullptr || f->contains("fork_errno")) {
    Inconclusive(v, f == nullptr ? "the probe reported no attempt"
                                 : "fork: " + f->value("fork_errno", std::string("?")));
    return v;
  }
  const std::string call = f->value("call", in.check.target);
  const AttemptReading invalid = ReadAttempt(*f);
  bool reachable = invalid.reachable;
  if (!invalid.reachable) {
    v.observed = fmt::format("filtered: {} -> {} (a seccomp filter, or the kernel refused before "
                             "reading the arguments)", call, invalid.text);
  } else {
    v.observed = fmt::format("reachable: {} -> {} (the kernel read the bad arguments)", call, invalid.text);
  }
  // Where the probe also made the call with real arguments, that decides: a filter that looks
  // at arguments may pass the invalid one and refuse every real one.
  if (f->contains("real") && (*f)["real"].is_array() && !(*f)["real"].empty()) {
    std::vector<std::string> passed, refused;
    for (const json& a : (*f)["real"]) {
      const AttemptReading r = ReadAttempt(a);
      (r.reachable ? passed : refused).push_back(a.value("call", std::string("?")) + " -> " + r.text);
    }
    reachable = !passed.empty();
    v.observed = fmt::format("{}: real arguments: {}{}; invalid argument: {} -> {}",
                             reachable ? "reachable" : "filtered", JoinLimited(passed.empty() ? refused : passed),
                             passed.empty() || refused.empty() ? "" : "; refused: " + JoinLimited(refused),
                             call, invalid.text);
  }
  if (std::optional<std::string> sentry = UserSpaceKernelOf(in, v)) {
    // The sentry implements (or refuses) the call itself; Linux never sees it (see JudgeSeccomp).
    v.observed = fmt::format("inside a user-space kernel ({}): {}; {}'s sentry answered, Linux never "
                             "saw the call", *sentry, v.observed, *sentry);
    reachable = false;
  }
  JudgeFinding(v, reachable);
  return v;
}

// ---- priv.userns ----

Status ExpandUserns(const ExpandInput& in, BatchBuilder& batch) {
  const bool allowed = in.policy.privileges.user_namespaces == "allow";
  batch.Invocation("priv.userns");
  return batch.AddCheck(PrivCheck(in, "priv.userns", "priv.userns",
                                  allowed ? Severity::kInfo : Severity::kHigh,
                                  allowed ? Expectation::kAllowed : Expectation::kDenied,
                                  "/privileges/user_namespaces"));
}

Verdict JudgeUserns(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = in.check.expect == Expectation::kDenied ? "unshare(CLONE_NEWUSER) refused" : "user namespaces allowed";
  v.remediation = RemedyFor(in, {"keep docker's default seccomp profile (it refuses unshare "
                                 "without CAP_SYS_ADMIN) and --cap-drop ALL",
                                 "bwrap --unshare-user --disable-userns (bwrap >= 0.8), or "
                                 "sysctl user.max_user_namespaces=0 on the host",
                                 "sysctl user.max_user_namespaces=0, or a seccomp filter on "
                                 "unshare/clone with CLONE_NEWUSER"});
  const json* f = PrivFact(in, v, "priv.userns", false);
  if (f == nullptr || !(*f)["newuser_ok"].is_boolean()) {
    Inconclusive(v, f == nullptr ? "the probe reported no attempt"
                                 : "the attempt reported nothing (" + f->dump() + ")");
    return v;
  }
  const bool created = (*f)["newuser_ok"].get<bool>();
  v.observed = created ? fmt::format("unshare(CLONE_NEWUSER) succeeded; then CLONE_NEWNS: {}",
                                     f->value("newns_ok", false) ? "succeeded" : f->value("newns_errno", std::string("?")))
                       : "unshare(CLONE_NEWUSER): " + f->value("newuser_errno", std::string("?"));
  JudgeFinding(v, created);
  return v;
}

}  // namespace

std::vector<FamilyRow> PrivilegeFamilies() {
  std::vector<FamilyRow> rows = {
      {"priv.identity", ExpandIdentity, JudgeIdentity},
      {"priv.caps", ExpandCaps, JudgeCaps},
      {"priv.seccomp", ExpandSeccomp, JudgeSeccomp},
      {.name = "priv.syscalls", .expand = ExpandSyscalls, .judge = JudgeSyscalls,
       .variants = SyscallVariants()},
      {"priv.userns", ExpandUserns, JudgeUserns},
  };
  for (auto group : {PrivilegeHostFamilies, PrivilegeKernelFamilies}) {
    for (const FamilyRow& row : group()) rows.push_back(row);
  }
  return rows;
}

}  // namespace sandprobe
