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

// The columns a line of plain text takes: one per code point (wide CJK glyphs are rare in
// check ids and probe text; a line cut one column early is harmless).
std::size_t Columns(std::string_view text) {
  return utf8::unchecked::distance(text.begin(), text.end());
}

// The lines being written, cut to the layout's width; remembers whether any was cut, so the
// end can say where the whole text is.
struct Page {
  ConsoleLayout layout;
  bool cut = false;

  // `text` cut (with an ellipsis) to the columns left after `used` columns of its line;
  // unchanged when it fits or the width is 0. A narrow terminal still gets a little text.
  std::string Fit(std::string text, std::size_t used) {
    constexpr std::size_t kLeast = 20;
    if (layout.width == 0) return text;
    const std::size_t width = layout.width > used + kLeast ? layout.width - used : kLeast;
    if (Columns(text) <= width) return text;
    cut = true;
    auto it = text.begin();
    for (std::size_t i = 0; i + 1 < width && it != text.end(); ++i) utf8::unchecked::next(it);
    text.erase(it, text.end());
    return text + "\u2026";
  }
};

// A finding's detail line, indented under its headline and cut to the width.
std::string Detail(std::string_view label, const std::string& text, Page& page) {
  return page.Fit(fmt::format("    {}{}", label, text), 0) + "\n";
}

// The headline of a finding: outcome, severity, id and what kind of finding; the colour codes
// wrap only the label, so the cut counts visible columns.
std::string Headline(const Verdict& v, std::string_view tail, Page& page) {
  const std::string plain = fmt::format(" {:<8} {}{}", SeverityName(v.check.severity),
                                        ForTerminal(v.check.id), tail);
  return Label(v.outcome, page.layout.color, 12) + page.Fit(plain, 12) + "\n";
}

std::string WaiverText(const AppliedWaiver& waiver) {
  return waiver.expired
             ? fmt::format("[waiver EXPIRED on {}: {}]", ForTerminal(waiver.expires), ForTerminal(waiver.reason))
             : fmt::format("[WAIVED until {}: {}]", ForTerminal(waiver.expires), ForTerminal(waiver.reason));
}

// "observed read 55 bytes; expected read denied": what was seen first, so a cut line keeps the
// evidence; the expectation only where the check has one.
std::string ObservedExpected(const Verdict& v) {
  const std::string observed = "observed " + ForTerminal(v.observed);
  return v.expected.empty() ? observed : fmt::format("{}; expected {}", observed, ForTerminal(v.expected));
}

// A fail (with the others of its group, fail_groups.h) or an inconclusive check: headline, what
// was expected and seen, the fix, a waiver.
std::string FindingLines(const FailGroup& group, Page& page) {
  const Verdict& v = *group.lead;
  std::string tail;
  if (v.outcome == Outcome::kFail && v.direction != Direction::kNone) {
    tail = fmt::format("  {}, {}", DirectionName(v.direction), EvidenceTierName(v.tier()));
  }
  if (!group.others.empty()) {
    tail += fmt::format("  (also through {}: {})",
                        group.others.size() == 1 ? "1 more way" : fmt::format("{} more ways", group.others.size()),
                        ForTerminal(AliasList(group)));
  }
  std::string out = Headline(v, tail, page) + Detail("", ObservedExpected(v), page);
  if (!v.remediation.empty()) out += Detail("fix: ", ForTerminal(v.remediation), page);
  if (v.waiver) out += Detail("", WaiverText(*v.waiver), page);
  return out;
}

// What an error was (the launch's own failure, from its record) and what to do about it. An
// error judged nothing, so the check's remediation (how to close a leak) is not shown.
std::string LaunchFailure(const RunReport& report, const Verdict& v) {
  for (const LaunchRecord& l : report.launches) {
    if (l.id != v.evidence.launch_id) continue;
    std::string how = !l.error.empty() ? ForTerminal(l.error)
                      : l.timed_out    ? std::string("timed out")
                      : l.signal       ? fmt::format("killed by signal {}", *l.signal)
                      : l.exit_code    ? fmt::format("exited {}", *l.exit_code)
                                       : std::string("did not start");
    const std::string program = l.argv.empty() ? std::string() : " (" + ForTerminal(l.argv.front()) + ")";
    std::string last_line = l.stderr_tail;
    while (!last_line.empty() && (last_line.back() == '\n' || last_line.back() == '\r')) last_line.pop_back();
    if (const auto nl = last_line.rfind('\n'); nl != std::string::npos) last_line.erase(0, nl + 1);
    if (!last_line.empty()) how += "; stderr: " + ForTerminal(last_line);
    return fmt::format("launch {}{} {}", ForTerminal(l.id), program, how);
  }
  return "";
}

// Errors with the same cause read as one: a backend gone mid-run errs every check it had left.
std::string ErrorLines(const RunReport& report, Page& page) {
  constexpr std::size_t kNamesShown = 3;
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Verdict*>> by_cause;
  for (const Verdict& v : report.verdicts) {
    if (v.outcome != Outcome::kError) continue;
    const std::string cause = ForTerminal(v.observed);
    if (!by_cause.contains(cause)) order.push_back(cause);
    by_cause[cause].push_back(&v);
  }
  std::string out;
  for (const std::string& cause : order) {
    const std::vector<const Verdict*>& errs = by_cause[cause];
    const Verdict& first = *errs.front();
    std::string tail;
    if (errs.size() > 1) {
      std::string names;
      for (std::size_t i = 1; i < errs.size() && i <= kNamesShown; ++i) names += (i > 1 ? ", " : "") + ForTerminal(errs[i]->check.id);
      if (errs.size() - 1 > kNamesShown) names += fmt::format(" and {} more", errs.size() - 1 - kNamesShown);
      tail = fmt::format("  (and {} more with this cause: {})", errs.size() - 1, names);
    }
    out += Headline(first, tail, page) + Detail("could not judge: ", cause, page);
    if (const std::string launch = LaunchFailure(report, first); !launch.empty()) out += Detail("", launch, page);
    out += Detail("what to do: ",
                  first.evidence.launch_id.empty()
                      ? std::string("fix the cause above and run again; an error is neither a pass nor a fail")
                      : fmt::format("fix the cause above (the JSON report has launch {}'s argv, exit and "
                                    "stderr; --keep-run-dir keeps its files) and run again",
                                    ForTerminal(first.evidence.launch_id)),
                  page);
  }
  return out;
}

// One line per skip reason, with the first checks it skipped: a whole family skipped for a
// missing backend reads as one cause, not as a bare count.
std::string SkipLines(const RunReport& report, Page& page) {
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
    const std::string plain = fmt::format(" {:>3} check{}: {} ({})", ids.size(), ids.size() == 1 ? "" : "s", reason, names);
    out += Label(Outcome::kSkip, page.layout.color, 12) + page.Fit(plain, 12) + "\n";
  }
  return out;
}

// One line per distinct program (path and hash) that launches ran from where it is easy to
// forge: a profile naming `env` proves nothing if a writable PATH entry supplied the `env`.
std::string ExecutableWarnings(const RunReport& report, Page& page) {
  std::string out;
  std::set<std::pair<std::string, std::string>> shown;
  for (const LaunchRecord& l : report.launches) {
    if (l.executable_warning.empty()) continue;
    if (!shown.emplace(l.executable, l.executable_sha256).second) continue;
    const std::string hash = l.executable_sha256.empty()
                                 ? std::string("no sha256")
                                 : fmt::format("sha256 {}\u2026", l.executable_sha256.substr(0, 12));
    const std::string plain = fmt::format(": launches ran {} ({}): {}", ForTerminal(l.executable), hash,
                                          ForTerminal(l.executable_warning));
    out += (page.layout.color ? "\x1b[33mwarning\x1b[0m" : "warning") +
           page.Fit(plain, 7) + "\n";
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

// Of the fails, how many at each severity (counted in FAIL too), worst first; severities with
// none are left out.
std::string FailSeverities(const RunReport& report) {
  std::string out;
  for (Severity severity : kAllSeverities) {
    const auto n = std::count_if(report.verdicts.begin(), report.verdicts.end(), [&](const Verdict& v) {
      return v.outcome == Outcome::kFail && v.check.severity == severity;
    });
    if (n > 0) out += fmt::format("{:<12}{:>6}\n", fmt::format("  {}", SeverityName(severity)), n);
  }
  return out;
}

// Findings worst first: by severity, then in report order.
std::vector<FailGroup> WorstFirst(std::vector<FailGroup> groups) {
  std::stable_sort(groups.begin(), groups.end(), [](const FailGroup& a, const FailGroup& b) {
    return static_cast<int>(a.lead->check.severity) < static_cast<int>(b.lead->check.severity);
  });
  return groups;
}

}  // namespace

std::string RenderConsole(const RunReport& report, bool color) {
  return RenderConsole(report, ConsoleLayout{.color = color});
}

std::string RenderConsole(const RunReport& report, const ConsoleLayout& layout) {
  Page page{.layout = layout};
  std::string out = page.Fit(fmt::format("sandprobe run {}: profile {}, policy {}, suite {}",
                                         ForTerminal(report.run_id), ForTerminal(report.profile_name),
                                         ForTerminal(report.policy_name), ForTerminal(report.suite_name)),
                             0) + "\n";
  if (report.interrupted) {
    out += "interrupted: checks that did not finish are reported as errors\n";
  }
  for (const std::string& cut : report.cut_short) {
    out += page.Fit("cut short by the run's deadline: " + ForTerminal(cut), 0) + "\n";
  }
  if (!report.left_for_sweep.empty()) {
    out += fmt::format("left for a sweep: {} (cleanup and sweep did not finish; something this run "
                       "made may still exist: run `sandprobe sweep`)\n",
                       ForTerminal(report.left_for_sweep));
  }
  out += ExecutableWarnings(report, page);
  for (const FailGroup& group : WorstFirst(GroupFails(report.verdicts))) out += FindingLines(group, page);
  out += ErrorLines(report, page);
  std::vector<FailGroup> inconclusive;
  for (const Verdict& v : report.verdicts) {
    if (v.outcome == Outcome::kInconclusive) inconclusive.push_back(FailGroup{.lead = &v});
  }
  for (const FailGroup& group : WorstFirst(std::move(inconclusive))) out += FindingLines(group, page);
  out += SkipLines(report, page);
  const nlohmann::json counts = SummaryCounts(report.verdicts);
  out += fmt::format("\n{:<12}{:>6}\n", "OUTCOME", "COUNT");
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kInconclusive, Outcome::kError,
                    Outcome::kSkip}) {
    const int n = counts.at(std::string(OutcomeName(o))).get<int>();
    // Colour only rows that have something in them, so the eye goes to those.
    out += fmt::format("{}{:>6}\n", Label(o, page.layout.color && n > 0, 12), n);
    if (o == Outcome::kPass && n > 0) out += PassTiers(report);
    if (o == Outcome::kFail) {
      out += FailSeverities(report);
      // Of the fails, those a waiver lets through the gate (counted in FAIL too); shown when
      // the run had waivers, so "0 waived" says the file matched nothing.
      const auto waived = std::count_if(report.verdicts.begin(), report.verdicts.end(),
                                        [](const Verdict& v) { return v.waived(); });
      if (report.waivers || waived > 0) out += fmt::format("{:<12}{:>6}\n", "  waived", waived);
    }
  }
  out += fmt::format("{:<12}{:>6}\n", "TOTAL", counts.at("total").get<int>());
  if (report.waivers) {
    for (const std::string& expired : report.waivers->expired) out += page.Fit("waiver expired: " + ForTerminal(expired), 0) + "\n";
    for (const std::string& unused : report.waivers->unused) out += page.Fit("waiver unused: " + ForTerminal(unused), 0) + "\n";
  }
  if (page.cut) {
    out += fmt::format("(lines cut at {} columns: the reports hold the whole text; COLUMNS=0 prints it here)\n",
                       layout.width);
  }
  return out;
}

}  // namespace sandprobe
