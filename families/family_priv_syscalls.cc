// priv.syscalls, host side: which dangerous kernel entry points the sandbox leaves usable. The
// probe calls each syscall with an argument the kernel rejects (reaching the kernel is the
// finding) and, where filters commonly look at argument values (clone and unshare with
// namespace flags, socket per address family, the terminal ioctls), with the real arguments
// too: those decide, because a filter may pass the invalid value and refuse every real one
// (docker's clone rule), or the reverse.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "families/family_priv.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// Refusing a socket family takes a filter rule on socket()'s first argument; no backend here
// has a flag for it.
const Remedy kSocketFamilyRemedy = {
    "pass --security-opt seccomp=PROFILE.json: docker's default profile with a rule that refuses "
    "socket() for this family (which families docker's default refuses differs between releases; "
    "this one lets it through)",
    "pass a seccomp filter with bwrap --seccomp FD that refuses socket() for this family",
    "a seccomp filter that refuses socket() for this family"};
// AF_PACKET needs CAP_NET_RAW, which docker grants a root container by default.
const Remedy kPacketRemedy = {
    "docker run --cap-drop NET_RAW (or --cap-drop ALL), and a non-root --user",
    "bwrap --cap-drop ALL (the default for an unprivileged bwrap), and a seccomp filter refusing "
    "socket(AF_PACKET)",
    "drop CAP_NET_RAW, and a seccomp filter that refuses socket(AF_PACKET)"};

struct SyscallSpec {
  const char* name;  // the probe's row name, and the check's "priv.syscall:<name>"
  // Expected filtered under a required seccomp policy; else reported only (informational).
  bool dangerous;
  const Remedy* remedy = &kSeccompRemedy;
};
// Reported only: ptrace (every debugger), clone3 (glibc's pthread_create tries it first and
// falls back on ENOSYS), personality (a query), ioctl (every program; TIOCSTI into a terminal
// from outside is judged by priv.tiocsti, the probe's own pty is no exposure), AF_NETLINK
// (NETLINK_ROUTE is how ordinary tools read addresses; no common profile refuses it).
const std::vector<SyscallSpec>& SyscallSpecs() {
  static const std::vector<SyscallSpec> kSpecs = {
      {"chroot", true},
      {"mount", true},
      {"unshare", true},
      {"clone", true},
      {"setns", true},
      {"bpf", true},
      {"keyctl", true},
      {"add_key", true},
      {"ptrace", false},
      {"perf_event_open", true},
      {"userfaultfd", true},
      {"io_uring_setup", true},
      {"open_by_handle_at", true},
      {"init_module", true},
      {"kexec_load", true},
      // Reading, writing and comparing another process's memory and descriptors: docker's
      // default profile refuses them unless CAP_SYS_PTRACE is added (--cap-add SYS_PTRACE
      // widens the filter, whatever the uid).
      {"process_vm_readv", true},
      {"process_vm_writev", true},
      {"kcmp", true},
      {"pidfd_getfd", true},
      {"clone3", false},
      {"personality", false},
      {"ioctl", false},
      {"socket(AF_PACKET)", true, &kPacketRemedy},
      {"socket(AF_VSOCK)", true, &kSocketFamilyRemedy},  // talks to the hypervisor's host
      {"socket(AF_BLUETOOTH)", true, &kSocketFamilyRemedy},
      {"socket(AF_NETLINK)", false, &kSocketFamilyRemedy},
  };
  return kSpecs;
}

const SyscallSpec* SpecOf(const std::string& name) {
  for (const SyscallSpec& s : SyscallSpecs()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// A suite may narrow priv.syscalls to some of these names.
VariantRule SyscallVariants() {
  VariantRule rule{VariantKind::kOneOf, {}};
  for (const SyscallSpec& s : SyscallSpecs()) rule.names.push_back(s.name);
  return rule;
}

Status ExpandSyscalls(const ExpandInput& in, BatchBuilder& batch) {
  const bool required = in.policy.privileges.seccomp == SeccompRequirement::kRequired;
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

// How one attempt of the probe ended.
enum class AttemptEnd {
  kDone,           // returned, or still running when killed: the call worked
  kRefused,        // EPERM/EACCES/ENOSYS or SIGSYS: a filter, or a privilege the kernel wants
  kKernelRefused,  // any other errno: past every filter, the kernel said no (EINVAL, ENOSPC...)
  kNotTried,       // the attempt's own setup failed (no /dev/ptmx to open a pty on)
};
struct AttemptReading {
  AttemptEnd end;
  std::string text;  // "EPERM", "killed by SIGSYS", "returned"
};
AttemptReading ReadAttempt(const json& a) {
  if (a.contains("not_tried")) {
    return {AttemptEnd::kNotTried, "not tried (" + (a["not_tried"].is_string() ? a["not_tried"].get<std::string>() : "?") + ")"};
  }
  if (a.contains("signal")) return {AttemptEnd::kRefused, "killed by " + a.value("signal", std::string("?"))};
  if (a.value("returned", false)) return {AttemptEnd::kDone, "returned"};
  if (a.value("timed_out", false)) return {AttemptEnd::kDone, "still running after 5 s (killed)"};
  const std::string err = a.value("errno", "");
  if (err == "EPERM" || err == "ENOSYS" || err == "EACCES") return {AttemptEnd::kRefused, err};
  return {AttemptEnd::kKernelRefused, err.empty() ? "?" : err};
}

// With an invalid argument, reaching the kernel (any answer but a refusal) is the finding.
bool ReachedTheKernel(AttemptEnd end) {
  switch (end) {
    case AttemptEnd::kDone:
    case AttemptEnd::kKernelRefused:
      return true;
    case AttemptEnd::kRefused:
    case AttemptEnd::kNotTried:
      return false;
  }
  return false;
}

// io_uring: docker's default seccomp profile blocks it only from moby 25.0 on.
std::string SyscallRemedy(const JudgeInput& in, const SyscallSpec& spec) {
  std::optional<VersionNumber> version = BackendVersion(in);
  if (in.check.target == "io_uring_setup" && WitnessedBackend(in) == Backend::kDocker && version && !version->AtLeast(25, 0)) {
    return fmt::format("docker {}.{} lets io_uring through its default seccomp profile (blocked from "
                       "docker 25.0 on): pass --security-opt seccomp=PROFILE.json (docker's default "
                       "without io_uring_setup, io_uring_enter, io_uring_register), or upgrade docker",
                       version->major, version->minor);
  }
  return RemedyFor(in, *spec.remedy);
}

// The real-argument attempts, read together. `usable` decides: a call that worked with its
// real argument is the exposure, whatever the invalid one showed.
struct RealReading {
  bool tried = false;  // at least one attempt was made
  bool usable = false;
  bool past_filter = false;  // some attempt reached the kernel, which refused it
  std::string text;    // "real arguments: A -> returned; refused: B -> EPERM; ..."
};
RealReading ReadRealAttempts(const json& real) {
  std::vector<std::string> done, refused, kernel, not_tried;
  for (const json& a : real) {
    const AttemptReading r = ReadAttempt(a);
    const std::string item = a.value("call", std::string("?")) + " -> " + r.text;
    switch (r.end) {
      case AttemptEnd::kDone: done.push_back(item); break;
      case AttemptEnd::kRefused: refused.push_back(item); break;
      case AttemptEnd::kKernelRefused: kernel.push_back(item); break;
      case AttemptEnd::kNotTried: not_tried.push_back(item); break;
    }
  }
  RealReading out;
  out.tried = !(done.empty() && refused.empty() && kernel.empty());
  out.usable = !done.empty();
  out.past_filter = !kernel.empty();
  std::vector<std::string> parts;
  if (!done.empty()) parts.push_back("worked: " + JoinLimited(done));
  if (!refused.empty()) parts.push_back("refused (filter or missing privilege): " + JoinLimited(refused));
  if (!kernel.empty()) parts.push_back("past the filter, refused by the kernel: " + JoinLimited(kernel));
  if (!not_tried.empty()) parts.push_back(JoinLimited(not_tried));
  out.text = "real arguments: " + fmt::format("{}", fmt::join(parts, "; "));
  return out;
}

Verdict JudgeSyscalls(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const bool judged = in.check.expect == Expectation::kDenied;
  const SyscallSpec* spec = SpecOf(in.check.target);
  v.expected = judged ? "filtered (EPERM/ENOSYS or SIGSYS), or refused for every real argument"
                      : "reachable or filtered (reported only)";
  v.remediation = SyscallRemedy(in, spec ? *spec : SyscallSpec{"?", true});
  const json* f = PrivFactAt(in, v, "priv.syscalls", in.check.target);
  if (f == nullptr || f->contains("fork_errno")) {
    Inconclusive(v, f == nullptr ? "the probe reported no attempt"
                                 : "fork: " + f->value("fork_errno", std::string("?")));
    return v;
  }
  const std::string call = f->value("call", in.check.target);
  const AttemptReading invalid = ReadAttempt(*f);
  bool reachable = ReachedTheKernel(invalid.end);
  v.observed = reachable ? fmt::format("reachable: {} -> {} (the kernel read the bad arguments)", call, invalid.text)
                         : fmt::format("filtered: {} -> {} (a seccomp filter, or the kernel refused before "
                                       "reading the arguments)", call, invalid.text);
  // Where the probe also made the call with real arguments, those decide.
  if (f->contains("real") && (*f)["real"].is_array() && !(*f)["real"].empty()) {
    const RealReading real = ReadRealAttempts((*f)["real"]);
    if (real.tried) {
      const char* head = real.usable        ? "reachable"
                         : real.past_filter ? "not usable (the kernel refused every real argument that got past the filter)"
                                            : "filtered";
      v.observed = fmt::format("{}: {}; invalid argument: {} -> {}", head, real.text, call, invalid.text);
      reachable = real.usable;
    } else {
      v.observed += "; " + real.text;
    }
  }
  if (std::optional<std::string> other = AnotherKernelOf(in, v)) {
    // That kernel implements (or refuses) the call itself; the host's never sees it (see JudgeSeccomp).
    v.observed = fmt::format("{}; answered by {}, the host's kernel never saw the call", v.observed, *other);
    reachable = false;
  }
  JudgeFinding(v, reachable);
  return v;
}

}  // namespace

std::vector<FamilyRow> PrivilegeSyscallFamilies() {
  return {
      {.name = "priv.syscalls", .expand = ExpandSyscalls, .judge = JudgeSyscalls, .variants = SyscallVariants()},
  };
}

}  // namespace sandprobe
