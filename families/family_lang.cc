// lang.escape: a language-runtime sandbox (RestrictedPython, ...) must not let its program out
// into the host interpreter. The probe tries each known escape class read-only and, where one
// reaches the host's file API, reads the host canary through it and reports the bytes' SHA-256.
// An escape is proven only when that hash equals the harness's own hash of the canary it
// planted (WitnessFacts::canary_sha256): the sandboxed side's "ok" alone proves nothing.
#include <fmt/format.h>

#include "families/family.h"

namespace sandprobe {
namespace {

constexpr const char* kEscapeCheck = "lang.escape.denied:host-canary";

Status ExpandLangEscape(const ExpandInput& in, BatchBuilder& batch) {
  auto canary_file = in.path_values.find("host_canary");
  if (canary_file == in.path_values.end() || canary_file->second.empty()) return Status::Ok();
  // A policy that lets the sandbox read the canary promises nothing an escape could break.
  for (const PolicyPath& path : in.policy.filesystem.readable) {
    if (path.path == "{host_canary}") return Status::Ok();
  }
  Check check;
  check.family = "lang.escape";
  check.id = kEscapeCheck;
  check.severity = Severity::kCritical;
  check.expect = Expectation::kDenied;
  check.target = "{host_canary}";
  check.resolved_target = canary_file->second;
  check.reference = in.policy.Ref("/filesystem/unreadable");
  std::vector<std::string>& args = batch.Invocation("lang.escape").args;
  if (args.empty()) args.insert(args.end(), {"--canary", canary_file->second});
  return batch.AddCheck(std::move(check));
}

// Whether the fact, or one of its attempts, reported the canary's own hash.
bool ReadTheCanary(const nlohmann::json& fact, const std::string& canary_sha256) {
  auto same = [&](const nlohmann::json& j) {
    return j.is_object() && j.contains("sha256") && j["sha256"].is_string() &&
           j["sha256"].get<std::string>() == canary_sha256;
  };
  if (same(fact)) return true;
  const auto attempts = fact.find("attempts");
  if (attempts == fact.end() || !attempts->is_array()) return false;
  for (const nlohmann::json& attempt : *attempts) {
    if (same(attempt)) return true;
  }
  return false;
}

std::string VariantOf(const nlohmann::json& fact) {
  const auto variant = fact.find("variant");
  return variant != fact.end() && variant->is_string() ? variant->get<std::string>() : "?";
}

Verdict JudgeLangEscape(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = "no escape route out of the language sandbox reads the host canary";
  v.remediation = "guard every attribute access (RestrictedPython: safer_getattr as getattr and "
                  "_getattr_, never Eval.default_guarded_getattr, the plain getattr), run a "
                  "release with the known escapes fixed, and put an OS sandbox around the "
                  "interpreter: a language sandbox alone is one bug away from the host";
  v.evidence.witness_facts.push_back("host canary sha256 " + in.witnesses.canary_sha256);
  if (in.witnesses.canary_sha256.empty()) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the harness holds no hash of the host canary to compare with";
    return v;
  }
  std::vector<std::string> escaped, unproven, tried;
  for (int index : in.facts.OfFamily("lang.escape")) {
    const nlohmann::json& fact = in.facts.Fact(index);
    const std::string variant = VariantOf(fact);
    tried.push_back(variant);
    if (ReadTheCanary(fact, in.witnesses.canary_sha256)) {
      escaped.push_back(variant);
      v.evidence.frame_indexes.push_back(index);
    } else if (FactOk(fact)) {
      // The probe says it read something, but not the canary's bytes: not an escape the
      // harness can confirm, and not a pass either.
      unproven.push_back(variant);
      v.evidence.frame_indexes.push_back(index);
    }
  }
  if (tried.empty()) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no escape attempt";
    return v;
  }
  if (!escaped.empty()) {
    v.observed = fmt::format("the host canary was read (its SHA-256 equals the harness's) through "
                             "{} of {} escape routes: {}", escaped.size(), tried.size(),
                             fmt::join(escaped, ", "));
    Judge(v, false, Direction::kTooPermissive);
    return v;
  }
  if (!unproven.empty()) {
    v.outcome = Outcome::kInconclusive;
    v.observed = fmt::format("the probe claims reads through {} whose SHA-256 is not the canary's",
                             fmt::join(unproven, ", "));
    return v;
  }
  v.observed = fmt::format("all {} escape routes were refused: {}", tried.size(), fmt::join(tried, ", "));
  Judge(v, true, Direction::kTooPermissive);
  return v;
}

}  // namespace

std::vector<FamilyRow> LanguageFamilies() { return {{"lang.escape", ExpandLangEscape, JudgeLangEscape}}; }

}  // namespace sandprobe
