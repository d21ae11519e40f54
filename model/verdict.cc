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

}  // namespace sandprobe
