// env.secret: the harness's canary secret, put into the environment of every launch, must not
// be visible inside the sandbox — neither in the probe's environ nor in any /proc/*/environ.
#include <fmt/format.h>

#include "families/family.h"
#include "model/canary_env.h"

namespace sandprobe {
namespace {

Status ExpandEnvSecret(const ExpandInput& in, BatchBuilder& batch) {
  Check check;
  check.family = "env.secret";
  bool hidden = in.policy.host.env_secrets == Visibility::kHidden;
  check.expect = hidden ? Expectation::kDenied : Expectation::kAllowed;
  check.id = hidden ? "env.secret.hidden" : "env.secret.visible";
  check.severity = hidden ? Severity::kHigh : Severity::kLow;
  check.target = std::string(kCanaryEnvPrefix) + "*";
  check.resolved_target = check.target;
  check.reference = in.policy.Ref("/host/env_secrets");
  batch.AddArg("env.secret", std::string(kCanaryEnvPrefix));
  return batch.AddCheck(std::move(check));
}

Verdict JudgeEnvSecret(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  bool hidden = in.check.expect == Expectation::kDenied;
  v.expected = hidden ? "canary env secret not visible" : "canary env secret visible";
  v.remediation = hidden ? "do not pass the harness's environment into the sandbox: start the "
                           "sandbox itself under env -i (bwrap --clearenv alone leaves it in "
                           "/proc/1/environ, bwrap's own pid 1), no docker -e/--env-file of host "
                           "variables"
                         : "pass the environment into the sandbox, or declare env_secrets hidden";
  bool scanned = false;
  std::vector<std::string> seen_in;
  for (int index : in.facts.OfFamily("env.secret")) {
    const nlohmann::json& fact = in.facts.Fact(index);
    if (fact.value("summary", false) == true) {
      scanned = true;
      v.evidence.frame_indexes.push_back(index);
    } else if (fact.value("sha256", "") == in.witnesses.env_secret_sha256) {
      // Only the secret's hash counts: another variable with the prefix is not ours.
      seen_in.push_back(fact.value("source", "?"));
      v.evidence.frame_indexes.push_back(index);
    }
  }
  v.evidence.witness_facts.push_back("canary env secret sha256 " + in.witnesses.env_secret_sha256);
  if (seen_in.empty() && !scanned) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no environment scan";
    return v;
  }
  v.observed = seen_in.empty()
                   ? "the canary secret's value was in no readable environment"
                   : fmt::format("the canary secret's value was found in {}", fmt::join(seen_in, ", "));
  Judge(v, seen_in.empty() == hidden, hidden ? Direction::kTooPermissive : Direction::kTooRestrictive);
  return v;
}

}  // namespace

std::vector<FamilyRow> EnvFamilies() { return {{"env.secret", ExpandEnvSecret, JudgeEnvSecret}}; }

}  // namespace sandprobe
