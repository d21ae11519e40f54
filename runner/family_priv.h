// Shared pieces of the privilege families (family_priv.cc, family_priv_host.cc,
// family_priv_kernel.cc): check construction, fact lookup and backend-specific remediation.
//
// Severity rule: a promise the policy makes is judged at the severity of its exposure
// (critical for host namespaces, runtime sockets, writable core_pattern, CAP_SYS_ADMIN); a
// hardening the policy does not require is still reported, at info, never failing at high.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/family.h"

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

// The first fact of `family` with "summary": true (or, with summary=false, the first without),
// recording its index as evidence; nullptr when absent.
const nlohmann::json* PrivFact(const JudgeInput& in, Verdict& v, const std::string& family,
                               bool summary);
// The fact for (family, path[, variant]), recorded as evidence; nullptr when absent.
const nlohmann::json* PrivFactAt(const JudgeInput& in, Verdict& v, const std::string& family,
                                 const std::string& path, const std::string& variant = "");
// The "priv" witness's observation (null json when the witness did not run).
const nlohmann::json& PrivWitnessFacts(const JudgeInput& in);

// Sets an inconclusive outcome with `why` as observed.
void Inconclusive(Verdict& v, const std::string& why);
// Judges a finding: `found` is what the check looks for (a capability, a reachable syscall...).
// Expected kDenied: found -> fail too-permissive. Expected kAllowed (the policy allows it):
// always pass — allowing is not demanding, so its absence is not too restrictive.
void JudgeFinding(Verdict& v, bool found);

// "a, b, c" with at most `max` items, then "and N more".
std::string JoinLimited(const std::vector<std::string>& items, std::size_t max = 8);

}  // namespace sandprobe
