// Privilege families, host side: who the sandboxed process is (priv.identity), what it may do
// (priv.caps, priv.seccomp + no_new_privs, priv.userns). priv.syscalls lives in
// family_priv_syscalls.cc, the host-exposure and kernel-interface families in
// family_priv_host.cc and family_priv_kernel.cc.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "families/family_priv.h"

namespace sandprobe {

std::vector<FamilyRow> PrivilegeSyscallFamilies();  // family_priv_syscalls.cc
std::vector<FamilyRow> PrivilegeHostFamilies();     // family_priv_host.cc
std::vector<FamilyRow> PrivilegeKernelFamilies();   // family_priv_kernel.cc

const Remedy kSeccompRemedy = {
    "keep docker's default seccomp profile (drop --security-opt seccomp=unconfined and "
    "--privileged) or pass a stricter --security-opt seccomp=PROFILE.json",
    "pass a seccomp filter with bwrap --seccomp FD (e.g. one generated from docker's default "
    "profile)",
    "run the workload inside a sandbox that installs a seccomp filter"};

namespace {

using nlohmann::json;

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

// NoNewPrivs as the launch's priv.seccomp fact reports it (status, else prctl).
bool NoNewPrivsSet(const JudgeInput& in) {
  for (int index : in.facts.OfFamily("priv.seccomp")) {
    const json& f = in.facts.Fact(index);
    for (const char* key : {"no_new_privs", "no_new_privs_prctl"}) {
      if (f.contains(key) && f[key].is_number()) return f[key].get<long>() == 1;
    }
  }
  return false;
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
  // Still the policy's promise, but say whose capabilities they are: that kernel's, not the host's.
  if (std::optional<std::string> other = AnotherKernelOf(in, v)) {
    v.observed = fmt::format("{} (capabilities in {}, not in the host's kernel)", v.observed, *other);
  }
  // The bounding set only matters to an exec that raises capabilities (a setuid or
  // file-capability binary). Under no_new_privs no exec raises the permitted set beyond what the
  // process holds, so with nothing permitted the bounding set is out of reach.
  if (spec->keys == std::vector<const char*>{"bounding"} && !extra.empty() && NoNewPrivsSet(in) &&
      Names(*f, "permitted").empty()) {
    v.observed += "; but NoNewPrivs is 1 and nothing is permitted: no exec can raise capabilities into it";
    Judge(v, true, Direction::kTooPermissive);
    return v;
  }
  Judge(v, extra.empty(), Direction::kTooPermissive);
  return v;
}

// ---- priv.seccomp (+ no_new_privs) ----

Status ExpandSeccomp(const ExpandInput& in, BatchBuilder& batch) {
  const PrivilegesPolicy& p = in.policy.privileges;
  batch.Invocation("priv.seccomp");
  const bool required = p.seccomp == SeccompRequirement::kRequired;
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
  const std::optional<std::string> other = AnotherKernelOf(in, v);
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
    if (other) v.observed = fmt::format("{} (in {})", v.observed, *other);
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
  if (other && value == 0) {
    // Decision: a pass with the reason. In another kernel (gVisor's sentry, a VM's guest) the
    // workload's syscalls never reach the host's kernel: that kernel implements them, and it is
    // what stands between them and the host (the sentry under its own seccomp filter, set by
    // runsc; a guest under its hypervisor). "Seccomp: 0" is that kernel's view of its own
    // workload, not a missing filter in front of the host's kernel.
    v.observed = fmt::format("{}, as {} reports it; the workload's syscalls reach that kernel, never the "
                             "host's", v.observed, *other);
    Judge(v, true, Direction::kTooPermissive);
    return v;
  }
  if (!required && value == 0) {
    // Recommended, not required: its absence is reported, never failed (a policy that says
    // "optional" -- as `infer` writes one after a missing filter -- promises nothing here).
    v.observed += "; not required by the policy";
    Judge(v, true, Direction::kTooPermissive);
    return v;
  }
  Judge(v, value != 0, Direction::kTooPermissive);
  return v;
}

// ---- priv.userns ----

Status ExpandUserns(const ExpandInput& in, BatchBuilder& batch) {
  const bool allowed = in.policy.privileges.user_namespaces == Permission::kAllow;
  batch.Invocation("priv.userns");
  return batch.AddCheck(PrivCheck(in, "priv.userns", "priv.userns",
                                  allowed ? Severity::kInfo : Severity::kHigh,
                                  allowed ? Expectation::kAllowed : Expectation::kDenied,
                                  "/privileges/user_namespaces"));
}

Verdict JudgeUserns(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = in.check.expect == Expectation::kDenied ? "unshare(CLONE_NEWUSER) and clone(CLONE_NEWUSER) refused"
                                                       : "user namespaces allowed";
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
  const bool by_unshare = (*f)["newuser_ok"].get<bool>();
  v.observed = by_unshare ? fmt::format("unshare(CLONE_NEWUSER) succeeded; then CLONE_NEWNS: {}",
                                        f->value("newns_ok", false) ? "succeeded" : f->value("newns_errno", std::string("?")))
                          : "unshare(CLONE_NEWUSER): " + f->value("newuser_errno", std::string("?"));
  // clone(CLONE_NEWUSER) makes a user namespace as well as unshare does, and a filter may stop
  // one spelling only. An older probe did not try it: then unshare alone decides.
  bool by_clone = false;
  if (f->contains("clone_newuser_ok") && (*f)["clone_newuser_ok"].is_boolean()) {
    by_clone = (*f)["clone_newuser_ok"].get<bool>();
    v.observed += "; clone(CLONE_NEWUSER): " +
                  (by_clone ? std::string("succeeded") : f->value("clone_newuser_errno", std::string("?")));
  }
  // Still the policy's promise (the workload can make one), but say whose namespace it is.
  if (std::optional<std::string> other = AnotherKernelOf(in, v)) {
    v.observed = fmt::format("{} (a user namespace of {}, not of the host's kernel)", v.observed, *other);
  }
  JudgeFinding(v, by_unshare || by_clone);
  return v;
}

}  // namespace

std::vector<FamilyRow> PrivilegeFamilies() {
  std::vector<FamilyRow> rows = {
      {"priv.identity", ExpandIdentity, JudgeIdentity},
      {"priv.caps", ExpandCaps, JudgeCaps},
      {"priv.seccomp", ExpandSeccomp, JudgeSeccomp},
      {"priv.userns", ExpandUserns, JudgeUserns},
  };
  for (auto group : {PrivilegeSyscallFamilies, PrivilegeHostFamilies, PrivilegeKernelFamilies}) {
    for (const FamilyRow& row : group()) rows.push_back(row);
  }
  return rows;
}

}  // namespace sandprobe
