#include "gate/gate.h"

#include <fmt/format.h>

#include "contract/exit_code.h"

namespace sandprobe {

std::optional<FailOn> ParseFailOn(std::string_view text) {
  if (text == "none") return FailOn{std::nullopt};
  std::optional<Severity> severity = ParseSeverity(text);
  if (!severity) return std::nullopt;
  return FailOn{severity};
}

namespace {

struct Counts {
  int gating_fails = 0;  // at or above the threshold, not waived
  int below = 0;         // fails below the threshold (or any fail with --fail-on none)
  int waived = 0;        // fails an active waiver covers
  int unsure = 0;        // error + inconclusive
};

Counts CountVerdicts(const RunReport& report, FailOn fail_on) {
  Counts n;
  for (const Verdict& v : report.verdicts) {
    switch (v.outcome) {
      case Outcome::kFail:
        if (v.waived()) ++n.waived;
        else if (fail_on.threshold && AtLeast(v.check.severity, *fail_on.threshold)) ++n.gating_fails;
        else ++n.below;
        break;
      case Outcome::kError:
      case Outcome::kInconclusive:
        ++n.unsure;
        break;
      case Outcome::kPass:
      case Outcome::kSkip:
        break;
    }
  }
  return n;
}

}  // namespace

GateResult Gate(const RunReport& report, FailOn fail_on) {
  Counts n = CountVerdicts(report, fail_on);
  std::size_t expired = report.waivers ? report.waivers->expired.size() : 0;
  std::string threshold = fail_on.threshold ? std::string(SeverityName(*fail_on.threshold)) : "none";
  std::string also;
  if (n.waived > 0) also += fmt::format("; {} waived", n.waived);
  if (n.below > 0) {
    also += fail_on.threshold ? fmt::format("; {} below --fail-on {}", n.below, threshold)
                              : fmt::format("; {} not gated (--fail-on none)", n.below);
  }
  if (fail_on.threshold && (n.gating_fails > 0 || expired > 0)) {
    std::string what = n.gating_fails > 0 ? fmt::format("{} fail(s) at or above {}", n.gating_fails, threshold) : "";
    if (expired > 0) {
      what += fmt::format("{}{} expired waiver(s) (renew or remove them)", what.empty() ? "" : " and ", expired);
    }
    return {kExitFail, fmt::format("exit 1: {}{}", what, also)};
  }
  if (n.unsure > 0) {
    return {kExitHarness, fmt::format("exit 3: {} check(s) error or inconclusive{}", n.unsure, also)};
  }
  if (expired > 0) also += fmt::format("; {} expired waiver(s) not gated (--fail-on none)", expired);
  std::string head = fail_on.threshold ? fmt::format("no fail at or above {}", threshold) : "--fail-on none";
  return {kExitPass, fmt::format("exit 0: {}{}", head, also)};
}

}  // namespace sandprobe
