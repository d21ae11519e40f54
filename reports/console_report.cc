#include "reports/console_report.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <utf8cpp/utf8.h>

#include "reports/fail_groups.h"
#include "reports/json_report.h"
#include "reports/sanitize.h"

namespace sandprobe {
namespace {

constexpr std::size_t kFieldCap = 400;  // bytes per field: one check stays about one line

// Sanitized for a terminal line: no escapes, no C0/C1 controls (U+009B is a CSI to some
// terminals), tabs and newlines folded to spaces.
std::string ForTerminal(std::string_view raw) {
  const std::string clean = SanitizeForXml(raw, kFieldCap);
  std::string out;
  out.reserve(clean.size());
  auto it = clean.begin();
  while (it != clean.end()) {
    auto start = it;
    const std::uint32_t cp = utf8::unchecked::next(it);
    if (cp == '\t' || cp == '\n' || cp == '\r') {
      out.push_back(' ');
    } else if (cp < 0x7F || cp > 0x9F) {
      out.append(start, it);
    }
  }
  return out;
}

// The SGR colour of an outcome's label; "" for none.
std::string_view Color(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "\x1b[32m";
    case Outcome::kFail: return "\x1b[1;31m";
    case Outcome::kInconclusive: return "\x1b[35m";
    case Outcome::kError: return "\x1b[33m";
    case Outcome::kSkip: return "\x1b[2m";
  }
  return "";
}

std::string Label(Outcome outcome, bool color, int width) {
  std::string name(OutcomeName(outcome));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string padded = fmt::format("{:<{}}", name, width);
  return color ? fmt::format("{}{}\x1b[0m", Color(outcome), padded) : padded;
}

std::string CheckLine(const Verdict& v, bool color) {
  std::string line = fmt::format("{} {:<8} {}", Label(v.outcome, color, 12),
                                 SeverityName(v.check.severity), ForTerminal(v.check.id));
  if (v.outcome == Outcome::kFail && v.direction != Direction::kNone) {
    line += fmt::format(" ({}) [{}]", DirectionName(v.direction), EvidenceTierName(v.tier()));
  }
  line += fmt::format(": expected {}, observed {}", ForTerminal(v.expected),
                      ForTerminal(v.observed));
  if (!v.remediation.empty()) line += fmt::format("; fix: {}", ForTerminal(v.remediation));
  if (v.waiver) {
    line += v.waiver->expired
                ? fmt::format(" [waiver EXPIRED on {}: {}]", ForTerminal(v.waiver->expires), ForTerminal(v.waiver->reason))
                : fmt::format(" [WAIVED until {}: {}]", ForTerminal(v.waiver->expires), ForTerminal(v.waiver->reason));
  }
  return line + "\n";
}

// A fail with the others of its group (fail_groups.h): one line per leaked file.
std::string GroupLine(const FailGroup& group, bool color) {
  std::string line = CheckLine(*group.lead, color);
  if (group.others.empty()) return line;
  line.pop_back();
  return line + fmt::format(" [also through {}: {}]\n",
                            group.others.size() == 1 ? "1 more way" : fmt::format("{} more ways", group.others.size()),
                            ForTerminal(AliasList(group)));
}

// One line per skip reason, with the first checks it skipped: a whole family skipped for a
// missing backend reads as one cause, not as a bare count.
std::string SkipLines(const RunReport& report, bool color) {
  constexpr std::size_t kNamesShown = 3;
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const Verdict& v : report.verdicts) {
    if (v.outcome != Outcome::kSkip) continue;
    const std::string reason = v.observed.empty() ? "no reason given" : ForTerminal(v.observed);
    if (!by_reason.contains(reason)) order.push_back(reason);
    by_reason[reason].push_back(ForTerminal(v.check.id));
  }
  std::string out;
  for (const std::string& reason : order) {
    const std::vector<std::string>& ids = by_reason[reason];
    std::string names;
    for (std::size_t i = 0; i < ids.size() && i < kNamesShown; ++i) names += (i ? ", " : "") + ids[i];
    if (ids.size() > kNamesShown) names += fmt::format(" and {} more", ids.size() - kNamesShown);
    out += fmt::format("{} {:>3} check{}: {} ({})\n", Label(Outcome::kSkip, color, 12), ids.size(),
                       ids.size() == 1 ? "" : "s", reason, names);
  }
  return out;
}

// One line per distinct program (path and hash) that launches ran from where it is easy to
// forge: a profile naming `env` proves nothing if a writable PATH entry supplied the `env`.
std::string ExecutableWarnings(const RunReport& report, bool color) {
  std::string out;
  std::set<std::pair<std::string, std::string>> shown;
  for (const LaunchRecord& l : report.launches) {
    if (l.executable_warning.empty()) continue;
    if (!shown.emplace(l.executable, l.executable_sha256).second) continue;
    const std::string hash = l.executable_sha256.empty()
                                 ? std::string("no sha256")
                                 : fmt::format("sha256 {}\u2026", l.executable_sha256.substr(0, 12));
    out += fmt::format("{}: launches ran {} ({}): {}\n",
                       color ? "\x1b[33mwarning\x1b[0m" : "warning", ForTerminal(l.executable),
                       hash, ForTerminal(l.executable_warning));
  }
  return out;
}

// Of the passes, how many rest on each evidence tier (counted in PASS too): a green run whose
// passes are all "reported" rests on the probe's word alone.
std::string PassTiers(const RunReport& report) {
  const nlohmann::json tiers = PassesByEvidence(report.verdicts);
  std::string out;
  for (EvidenceTier tier : kEvidenceTiers) {
    const int n = tiers.at(std::string(EvidenceTierName(tier))).get<int>();
    if (tier == EvidenceTier::kNone && n == 0) continue;
    out += fmt::format("{:<12}{:>6}\n", fmt::format("  {}", EvidenceTierName(tier)), n);
  }
  return out;
}

}  // namespace

std::string RenderConsole(const RunReport& report, bool color) {
  std::string out = fmt::format("sandprobe run {}: profile {}, policy {}, suite {}\n",
                                ForTerminal(report.run_id), ForTerminal(report.profile_name),
                                ForTerminal(report.policy_name), ForTerminal(report.suite_name));
  if (report.interrupted) {
    out += "interrupted: checks that did not finish are reported as errors\n";
  }
  for (const std::string& cut : report.cut_short) {
    out += fmt::format("cut short by the run's deadline: {}\n", ForTerminal(cut));
  }
  if (!report.left_for_sweep.empty()) {
    out += fmt::format("left for a sweep: {} (cleanup and sweep did not finish; something this run "
                       "made may still exist: run `sandprobe sweep`)\n",
                       ForTerminal(report.left_for_sweep));
  }
  out += ExecutableWarnings(report, color);
  for (const FailGroup& group : GroupFails(report.verdicts)) out += GroupLine(group, color);
  for (Outcome shown : {Outcome::kError, Outcome::kInconclusive}) {
    for (const Verdict& v : report.verdicts) {
      if (v.outcome == shown) out += CheckLine(v, color);
    }
  }
  out += SkipLines(report, color);
  const nlohmann::json counts = SummaryCounts(report.verdicts);
  out += fmt::format("\n{:<12}{:>6}\n", "OUTCOME", "COUNT");
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kInconclusive, Outcome::kError,
                    Outcome::kSkip}) {
    const int n = counts.at(std::string(OutcomeName(o))).get<int>();
    // Colour only rows that have something in them, so the eye goes to those.
    out += fmt::format("{}{:>6}\n", Label(o, color && n > 0, 12), n);
    if (o == Outcome::kPass && n > 0) out += PassTiers(report);
    if (o == Outcome::kFail) {
      // Of the fails, those a waiver lets through the gate (counted in FAIL too); shown when
      // the run had waivers, so "0 waived" says the file matched nothing.
      const auto waived = std::count_if(report.verdicts.begin(), report.verdicts.end(),
                                        [](const Verdict& v) { return v.waived(); });
      if (report.waivers || waived > 0) out += fmt::format("{:<12}{:>6}\n", "  waived", waived);
    }
  }
  out += fmt::format("{:<12}{:>6}\n", "TOTAL", counts.at("total").get<int>());
  if (report.waivers) {
    for (const std::string& expired : report.waivers->expired) out += "waiver expired: " + ForTerminal(expired) + "\n";
    for (const std::string& unused : report.waivers->unused) out += "waiver unused: " + ForTerminal(unused) + "\n";
  }
  return out;
}

}  // namespace sandprobe
