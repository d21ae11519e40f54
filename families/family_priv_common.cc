// Helpers shared by the privilege families (see family_priv.h).
#include <fmt/format.h>

#include "families/family_priv.h"

namespace sandprobe {

Check PrivCheck(const ExpandInput& in, const std::string& family, const std::string& id,
                Severity severity, Expectation expect, const std::string& pointer,
                const std::string& target) {
  Check check;
  check.family = family;
  check.id = id;
  check.severity = severity;
  check.expect = expect;
  check.target = target;
  check.resolved_target = target;
  check.reference = in.policy.Ref(pointer);
  return check;
}

const nlohmann::json& PrivWitnessFacts(const JudgeInput& in) {
  static const nlohmann::json kNull;
  auto it = in.witnesses.observed.find("priv");
  return it == in.witnesses.observed.end() ? kNull : it->second;
}

Backend WitnessedBackend(const JudgeInput& in) {
  const nlohmann::json& w = PrivWitnessFacts(in);
  return ValueOf<Backend>(w.is_object() ? w.value("backend", "") : "").value_or(Backend::kOther);
}

std::string RemedyFor(const JudgeInput& in, const Remedy& remedy) {
  switch (WitnessedBackend(in)) {
    case Backend::kDocker:
    case Backend::kPodman:
      return remedy.docker;
    case Backend::kBwrap:
      return remedy.bwrap;
    case Backend::kHost:
    case Backend::kFirejail:
    case Backend::kGvisor:
    case Backend::kOther:
      return remedy.other;
  }
  return remedy.other;
}

const nlohmann::json* PrivFact(const JudgeInput& in, Verdict& v, const std::string& family, bool summary) {
  for (int index : in.facts.OfFamily(family)) {
    const nlohmann::json& fact = in.facts.Fact(index);
    if ((fact.value("summary", false) == true) != summary) continue;
    v.evidence.frame_indexes.push_back(index);
    return &fact;
  }
  return nullptr;
}

const nlohmann::json* PrivFactAt(const JudgeInput& in, Verdict& v, const std::string& family,
                                 const std::string& path, const std::string& variant) {
  std::optional<int> index = in.facts.Find(family, path, variant);
  if (!index) return nullptr;
  v.evidence.frame_indexes.push_back(*index);
  return &in.facts.Fact(*index);
}

void Inconclusive(Verdict& v, const std::string& why) {
  v.outcome = Outcome::kInconclusive;
  v.direction = Direction::kNone;
  v.observed = why;
}

void JudgeFinding(Verdict& v, bool found) {
  if (v.check.expect == Expectation::kAllowed) {
    Judge(v, true, Direction::kTooRestrictive);
    return;
  }
  Judge(v, !found, Direction::kTooPermissive);
}

std::string JoinLimited(const std::vector<std::string>& items, std::size_t max) {
  if (items.empty()) return "none";
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > max) out += fmt::format(" and {} more", items.size() - max);
  return out;
}

}  // namespace sandprobe
