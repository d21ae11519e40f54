#include "model/check.h"

namespace sandprobe {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kCritical: return "critical";
    case Severity::kHigh: return "high";
    case Severity::kMedium: return "medium";
    case Severity::kLow: return "low";
    case Severity::kInfo: return "info";
  }
  return "?";
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  for (Severity s : kAllSeverities) {
    if (SeverityName(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view ExpectationName(Expectation expectation) {
  switch (expectation) {
    case Expectation::kAllowed: return "allowed";
    case Expectation::kDenied: return "denied";
  }
  return "?";
}

}  // namespace sandprobe
