// Shared pieces of the privilege families (family_priv.cc, family_priv_host.cc,
// family_priv_kernel.cc): check construction, fact lookup and backend-specific remediation.
//
// Severity rule: a promise the policy makes is judged at the severity of its exposure
// (critical for host namespaces, runtime sockets, writable core_pattern, CAP_SYS_ADMIN); a
// hardening the policy does not require is still reported, at info, never failing at high.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "families/family.h"
#include "model/policy_enums.h"

namespace sandprobe {

// A check of a privilege family; `pointer` is the policy field it comes from ("/privileges/root").
Check PrivCheck(const ExpandInput& in, const std::string& family, const std::string& id,
                Severity severity, Expectation expect, const std::string& pointer,
                const std::string& target = "");

// The fix per backend. The backend comes from the "priv" witness (the profile's `backend`).
struct Remedy {
  const char* docker;
  const char* bwrap;
  const char* other;  // host, unknown backends
};
std::string RemedyFor(const JudgeInput& in, const Remedy& remedy);
// Install (or keep) a seccomp filter; family_priv.cc.
extern const Remedy kSeccompRemedy;

// The first fact of `family` with "summary": true (or, with summary=false, the first without),
// recording its index as evidence; nullptr when absent.
const nlohmann::json* PrivFact(const JudgeInput& in, Verdict& v, const std::string& family,
                               bool summary);
// The fact for (family, path[, variant]), recorded as evidence; nullptr when absent.
const nlohmann::json* PrivFactAt(const JudgeInput& in, Verdict& v, const std::string& family,
                                 const std::string& path, const std::string& variant = "");
// The "priv" witness's observation (null json when the witness did not run).
const nlohmann::json& PrivWitnessFacts(const JudgeInput& in);
// The profile's backend as the priv witness recorded it (kOther when it recorded none).
Backend WitnessedBackend(const JudgeInput& in);

// Sets an inconclusive outcome with `why` as observed.
void Inconclusive(Verdict& v, const std::string& why);
// Judges a finding: `found` is what the check looks for (a capability, a reachable syscall...).
// Expected kDenied: found -> fail too-permissive. Expected kAllowed (the policy allows it):
// always pass — allowing is not demanding, so its absence is not too restrictive.
void JudgeFinding(Verdict& v, bool found);

// ---- The context a fact was observed in (family_priv_context.cc) ----

// Where the probe's user namespace sits, from the fact's "userns" context and the harness's own
// user namespace (the witness's host_namespaces.user and harness_userns_initial).
enum class UsernsPlace {
  kInitial,  // the initial user namespace: permission there is permission on the host
  kChild,    // a user namespace below it: permission there is the sandbox's own
  kUnknown,  // no context reported (an older probe) or nothing to compare it with
};
struct UsernsView {
  UsernsPlace place = UsernsPlace::kUnknown;
  long euid = -1;
  bool cap_sys_admin = false;
  // kChild: the uid the euid maps to in the parent namespace (uid_map), taken as the host's:
  // every backend here makes one user namespace. A deeper nesting maps to an intermediate
  // namespace, and a 0 there is judged as the host's root (the cautious reading).
  std::optional<long> host_euid;
  std::string text;  // "a child user namespace (user:[4026532]), euid 1000 -> host uid 0"
};
UsernsView ReadUserns(const JudgeInput& in, const nlohmann::json& fact);
// The parent-namespace uid of `uid` under a /proc/self/uid_map text, or nullopt.
std::optional<long> MapToParent(const std::string& uid_map, long uid);

// What access(W_OK) == 0 on a host kernel interface means, read with the namespace context.
enum class HostWrite {
  kHostRoot,      // writable as the host's root (or the host's uid with that permission)
  kOwnNamespace,  // only appears writable inside the sandbox's user namespace: inconclusive
};
struct WriteReading {
  HostWrite kind;
  std::string why;
};
// A sysctl (/proc/sys/*, and /proc/sysrq-trigger by the same owner check): the kernel checks
// the global euid against the host's root, so in a child namespace only an euid that maps to
// host uid 0 writes.
WriteReading SysctlWrite(const UsernsView& u);
// A cgroup v1 release_agent: since Linux 5.17 a write needs CAP_SYS_ADMIN in the initial user
// namespace, whatever access(W_OK) said; `host_kernel` is the harness's uname release.
WriteReading ReleaseAgentWrite(const UsernsView& u, const std::string& host_kernel);

// "another kernel: build '4.4.0 ...' (the harness's '6.18.44 ...'), booted ..." when the launch's
// kernel context shows, by independent signals (families/kernel_identity.h), that the probe ran
// on another kernel than the harness's (a user-space kernel such as gVisor's sentry, a VM's
// guest): what it saw there is that kernel's, not the host's. nullopt: the harness's kernel, or
// not decided. The comparison is recorded as evidence.
std::optional<std::string> AnotherKernelOf(const JudgeInput& in, Verdict& v);

// "20.10.24+dfsg1" -> {20, 10, 24}; "6.18.44-fc" -> {6, 18, 44}; nullopt without a leading number.
struct VersionNumber {
  int major = 0, minor = 0, patch = 0;
  bool AtLeast(int ma, int mi) const { return major > ma || (major == ma && minor >= mi); }
};
std::optional<VersionNumber> ParseVersion(const std::string& text);
// The witness's backend version ("backend_version") and host kernel ("host_kernel"), parsed.
std::optional<VersionNumber> BackendVersion(const JudgeInput& in);
std::string HostKernel(const JudgeInput& in);

// "a, b, c" with at most `max` items, then "and N more".
std::string JoinLimited(const std::vector<std::string>& items, std::size_t max = 8);

}  // namespace sandprobe
