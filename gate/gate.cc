#include "gate/gate.h"

#include <map>

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

// A reason in the gate's one line: long preflight messages are cut, the console has them whole.
constexpr std::size_t kReasonCap = 1000;

struct Counts {
  int gating_fails = 0;  // at or above the threshold, not waived
  int below = 0;         // fails below the threshold (or any fail with --fail-on none)
  int waived = 0;        // fails an active waiver covers
  int passes = 0;
  int unsure = 0;        // error + inconclusive
  int skips = 0;
  std::map<std::string, int> unsure_reasons;  // observed -> how many errors/inconclusives
  std::string first_skip_reason;
  int judged() const { return gating_fails + below + waived + passes; }
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
        ++n.unsure_reasons[v.observed];
        break;
      case Outcome::kPass:
        ++n.passes;
        break;
      case Outcome::kSkip:
        if (n.skips++ == 0) n.first_skip_reason = v.observed.empty() ? "no reason given" : v.observed;
        break;
    }
  }
  return n;
}

std::string Capped(const std::string& text) {
  return text.size() <= kReasonCap ? text : text.substr(0, kReasonCap) + "...";
}

// "; 25 because: backend bwrap unavailable ..." when one reason explains most errors (a backend
// gone explains all of them), so the last line names the cause and not only a count.
std::string CommonReason(const Counts& n) {
  const std::pair<const std::string, int>* top = nullptr;
  for (const auto& entry : n.unsure_reasons) {
    if (top == nullptr || entry.second > top->second) top = &entry;
  }
  if (top == nullptr || top->first.empty() || top->second * 2 < n.unsure) return "";
  return fmt::format("; {} of them: {}", top->second, Capped(top->first));
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
  if (n.skips > 0) {
    also += report.backend_skipped.empty()
                ? fmt::format("; {} skipped (see the SKIP lines)", n.skips)
                : fmt::format("; {} skipped: the backend is unavailable and --allow-missing-backend "
                              "lets that through",
                              n.skips);
  }
  GateResult result{.judged = n.judged()};
  if (fail_on.threshold && (n.gating_fails > 0 || expired > 0)) {
    std::string what = n.gating_fails > 0 ? fmt::format("{} fail(s) at or above {}", n.gating_fails, threshold) : "";
    if (expired > 0) {
      what += fmt::format("{}{} expired waiver(s) (renew or remove them)", what.empty() ? "" : " and ", expired);
    }
    result.exit_code = kExitFail;
    result.why = fmt::format("exit 1: {}{}", what, also);
    return result;
  }
  if (n.unsure > 0) {
    result.exit_code = kExitHarness;
    result.why = fmt::format("exit 3: {} check(s) error or inconclusive{}{}", n.unsure, CommonReason(n), also);
    return result;
  }
  if (n.judged() == 0) {
    // Every check a skip (or no check at all): nothing was verified, whatever the reason.
    result.exit_code = kExitHarness;
    result.backend_skipped = !report.backend_skipped.empty();
    std::string cause = !report.backend_skipped.empty() ? Capped(report.backend_skipped)
                        : n.skips > 0                   ? Capped(n.first_skip_reason)
                                                        : std::string("the run has no checks");
    result.why = fmt::format("exit 3: nothing was judged: {} of {} check(s) skipped: {}", n.skips,
                             report.verdicts.size(), cause);
    return result;
  }
  if (expired > 0) also += fmt::format("; {} expired waiver(s) not gated (--fail-on none)", expired);
  std::string head = fail_on.threshold ? fmt::format("no fail at or above {}", threshold) : "--fail-on none";
  result.exit_code = kExitPass;
  result.why = fmt::format("exit 0: {} ({} judged){}", head, n.judged(), also);
  return result;
}

}  // namespace sandprobe
