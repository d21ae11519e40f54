#include "mutate/mutant_verdicts.h"

#include <fmt/format.h>

namespace sandprobe {

bool IsDecided(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
    case Outcome::kFail:
    case Outcome::kInconclusive:
      return true;
    case Outcome::kError:
    case Outcome::kSkip:
      return false;
  }
  return false;
}

namespace {

bool IsFail(const VerdictOutcome& v, Direction direction) {
  return v.outcome == Outcome::kFail && v.direction == direction;
}

// A profile verdict something can move from: one its audit decided (IsDecided).
bool IsBaseline(const VerdictOutcome& v) { return IsDecided(v.outcome); }

bool SameOutcome(const VerdictOutcome& a, const VerdictOutcome& b) {
  return a.outcome == b.outcome && a.direction == b.direction;
}

}  // namespace

std::string DescribeOutcome(const VerdictOutcome& v) {
  std::string_view direction = DirectionName(v.direction);
  return direction.empty() ? std::string(OutcomeName(v.outcome))
                           : fmt::format("{} {}", OutcomeName(v.outcome), direction);
}

bool MovesPermissive(const VerdictOutcome& from, const VerdictOutcome& to) {
  if (!IsBaseline(from) || SameOutcome(from, to)) return false;
  if (IsFail(to, Direction::kTooPermissive)) return true;
  return to.outcome == Outcome::kPass && IsFail(from, Direction::kTooRestrictive);
}

MutantDistinction CompareWithBaseline(const std::map<std::string, VerdictOutcome>& baseline,
                                      const std::vector<Verdict>& mutant) {
  MutantDistinction out;
  for (const Verdict& verdict : mutant) {
    auto before = baseline.find(verdict.check.id);
    if (before == baseline.end()) continue;
    VerdictOutcome after{verdict.outcome, verdict.direction, verdict.observed};
    if (SameOutcome(before->second, after)) continue;
    if (MovesPermissive(before->second, after)) {
      out.flipped.push_back(verdict.check.id);
      out.kills.push_back({verdict.check.id, before->second, after});
      continue;
    }
    CheckMove move{verdict.check.id, before->second, after};
    if (after.outcome == Outcome::kError && before->second.outcome != Outcome::kError) out.new_errors.push_back(move);
    out.changed.push_back(std::move(move));
  }
  return out;
}

void AddVerdicts(std::map<std::string, VerdictOutcome>& into, const std::vector<Verdict>& verdicts) {
  for (const Verdict& v : verdicts) into.emplace(v.check.id, VerdictOutcome{v.outcome, v.direction, v.observed});
}

}  // namespace sandprobe
