#include "model/verdict.h"

namespace sandprobe {

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "pass";
    case Outcome::kFail: return "fail";
    case Outcome::kInconclusive: return "inconclusive";
    case Outcome::kError: return "error";
    case Outcome::kSkip: return "skip";
  }
  return "?";
}

std::string_view DirectionName(Direction direction) {
  switch (direction) {
    case Direction::kNone: return "";
    case Direction::kTooPermissive: return "too-permissive";
    case Direction::kTooRestrictive: return "too-restrictive";
  }
  return "?";
}

std::string_view EvidenceTierName(EvidenceTier tier) {
  switch (tier) {
    case EvidenceTier::kWitnessed: return "witnessed";
    case EvidenceTier::kMeasured: return "measured";
    case EvidenceTier::kReported: return "reported";
    case EvidenceTier::kNone: return "none";
  }
  return "?";
}

std::optional<EvidenceTier> ParseEvidenceTier(std::string_view name) {
  for (EvidenceTier tier : kEvidenceTiers) {
    if (EvidenceTierName(tier) == name) return tier;
  }
  return std::nullopt;
}

}  // namespace sandprobe
