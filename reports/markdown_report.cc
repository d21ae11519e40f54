#include "reports/markdown_report.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "io/atomic_file.h"
#include "reports/fail_groups.h"
#include "reports/sanitize.h"

namespace sandprobe {
namespace {


// A check id in a code span: a backtick inside would end the span early.
struct Counts {
  std::map<Outcome, int> by_outcome;
  std::map<EvidenceTier, int> passes_by_tier;
  int total = 0;
  int waived = 0;             // of the fails
  bool with_waivers = false;  // the run had --waivers: the table shows a waived column
};

Counts Count(const RunReport& r) {
  Counts c;
  for (const Verdict& v : r.verdicts) {
    ++c.by_outcome[v.outcome];
    if (v.outcome == Outcome::kPass) ++c.passes_by_tier[v.tier()];
    ++c.total;
    if (v.waived()) ++c.waived;
  }
  c.with_waivers = r.waivers.has_value() || c.waived > 0;
  return c;
}

std::string Headline(const RunReport& r, const Counts& c) {
  auto n = [&c](Outcome o) { return c.by_outcome.contains(o) ? c.by_outcome.at(o) : 0; };
  auto checks = [](int count) { return fmt::format("{} check{}", count, count == 1 ? "" : "s"); };
  std::string verdict;
  if (r.interrupted) verdict = "INTERRUPTED";
  else if (n(Outcome::kFail) > 0) {
    verdict = fmt::format("FAIL: {} of {} failed", n(Outcome::kFail), checks(c.total));
    if (c.waived > 0) verdict += fmt::format(" ({} waived)", c.waived);
  }
  else if (n(Outcome::kError) > 0) verdict = fmt::format("ERROR: {} could not run", checks(n(Outcome::kError)));
  else if (n(Outcome::kInconclusive) > 0) verdict = fmt::format("INCONCLUSIVE: {} proved nothing", checks(n(Outcome::kInconclusive)));
  else if (n(Outcome::kPass) == 0) verdict = "NOTHING CHECKED";
  else verdict = fmt::format("PASS: {} passed", checks(n(Outcome::kPass)));
  // A harness failure has no loaded names: its profile file's stem, else "?".
  auto name = [](const std::string& s, const std::string& path) {
    const std::string stem = std::filesystem::path(path).stem().string();
    return MarkdownCell(!s.empty() ? s : !stem.empty() ? stem : "?", 80);
  };
  const std::string profile = name(r.profile_name, r.profile_path);
  return fmt::format("## sandprobe {}: {}\n\nsandbox **{}** · policy **{}** · suite **{}**\n\n",
                     profile, verdict, profile, name(r.policy_name, r.policy_path),
                     name(r.suite_name, ""));
}

// "Passes by evidence: 3 witnessed by the host · 1 measured by the harness · 20 reported by
// the probe alone": what the green rests on. Nothing when nothing passed.
std::string PassTiers(const Counts& c) {
  static constexpr std::pair<EvidenceTier, const char*> kWords[] = {
      {EvidenceTier::kWitnessed, "witnessed by the host"},
      {EvidenceTier::kMeasured, "measured by the harness"},
      {EvidenceTier::kReported, "reported by the probe alone"},
      {EvidenceTier::kNone, "with no evidence"}};
  auto n = [&c](EvidenceTier t) { return c.passes_by_tier.contains(t) ? c.passes_by_tier.at(t) : 0; };
  std::string parts;
  for (const auto& [tier, words] : kWords) {
    if (tier == EvidenceTier::kNone && n(tier) == 0) continue;
    parts += fmt::format("{}**{}** {}", parts.empty() ? "" : " · ", n(tier), words);
  }
  if (c.by_outcome.contains(Outcome::kPass) && c.by_outcome.at(Outcome::kPass) > 0) {
    return "Passes by evidence: " + parts + "\n\n";
  }
  return "";
}

std::string CountTable(const Counts& c) {
  std::string head = "|", rule = "|", row = "|";
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kError, Outcome::kInconclusive,
                    Outcome::kSkip}) {
    head += fmt::format(" {} |", OutcomeName(o));
    rule += " ---: |";
    row += fmt::format(" {} |", c.by_outcome.contains(o) ? c.by_outcome.at(o) : 0);
    if (o == Outcome::kFail && c.with_waivers) {  // of the fails: let through the gate
      head += " waived |";
      rule += " ---: |";
      row += fmt::format(" {} |", c.waived);
    }
  }
  return fmt::format("{} total |\n{} ---: |\n{} {} |\n\n", head, rule, row, c.total) + PassTiers(c);
}

// " (also `fs.alias.denied:X[symlink]`, ...)" for a group of fails about one file.
std::string AlsoFailed(const FailGroup& group) {
  if (group.others.empty()) return "";
  std::string ids;
  for (const Verdict* other : group.others) ids += (ids.empty() ? "" : ", ") + MarkdownCode(other->check.id);
  return fmt::format("<br>also through {} ({})", MarkdownCell(AliasList(group), 200), ids);
}

std::string Failures(const RunReport& r) {
  const std::vector<FailGroup> groups = GroupFails(r.verdicts);
  std::string out;
  for (Severity severity : kAllSeverities) {
    std::string rows;
    std::size_t count = 0;
    // A group sits under its lead's severity, one row per leaked file.
    for (const FailGroup& group : groups) {
      const Verdict& v = *group.lead;
      if (v.check.severity != severity) continue;
      count += group.size();
      // A waived fail stays a fail, marked with its waiver: it is why the gate did not fail.
      const std::string waived =
          v.waived() ? fmt::format(" (waived until {}: {})", MarkdownCell(v.waiver->expires, 40),
                                   MarkdownCell(v.waiver->reason, 200))
                     : "";
      rows += fmt::format("| {}{}{} | {} | {} | {} | {} |\n", MarkdownCode(v.check.id), waived, AlsoFailed(group),
                          EvidenceTierName(v.tier()), MarkdownCell(v.expected), MarkdownCell(v.observed),
                          v.remediation.empty() ? "(none recorded)" : MarkdownCell(v.remediation));
    }
    if (count == 0) continue;
    out += fmt::format("#### {} ({})\n\n| check | evidence | expected | observed | fix |\n| --- | --- | --- | --- | --- |\n{}\n",
                       SeverityName(severity), count, rows);
  }
  return out.empty() ? "" : "### Failures\n\n" + out;
}

std::string Unproven(const RunReport& r) {
  std::string rows;
  for (const Verdict& v : r.verdicts) {
    if (v.outcome != Outcome::kError && v.outcome != Outcome::kInconclusive) continue;
    rows += fmt::format("| {} | {} | {} | {} |\n", MarkdownCode(v.check.id), OutcomeName(v.outcome),
                        MarkdownCell(v.observed.empty() ? "no reason given" : v.observed),
                        v.remediation.empty() ? "" : MarkdownCell(v.remediation));
  }
  if (rows.empty()) return "";
  return "### Errors and inconclusive checks (nothing proven)\n\n"
         "| check | outcome | why | fix |\n| --- | --- | --- | --- |\n" + rows + "\n";
}

// Skips share reasons (a missing backend skips a whole family): one row per reason.
std::string Skips(const RunReport& r) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const Verdict& v : r.verdicts) {
    if (v.outcome != Outcome::kSkip) continue;
    const std::string reason = v.observed.empty() ? "no reason given" : v.observed;
    if (!by_reason.contains(reason)) order.push_back(reason);
    by_reason[reason].push_back(v.check.id);
  }
  if (order.empty()) return "";
  std::string out = "### Skipped\n\n| reason | checks |\n| --- | --- |\n";
  for (const std::string& reason : order) {
    const std::vector<std::string>& ids = by_reason[reason];
    std::string names;
    for (std::size_t i = 0; i < ids.size() && i < kMarkdownSkipNames; ++i) {
      names += (i ? ", " : "") + MarkdownCode(ids[i]);
    }
    if (ids.size() > kMarkdownSkipNames) {
      names += fmt::format(" and {} more", ids.size() - kMarkdownSkipNames);
    }
    out += fmt::format("| {} | {} ({}) |\n", MarkdownCell(reason), names, ids.size());
  }
  return out + "\n";
}

// What the run's deadline cut, and a run dir left for `sandprobe sweep`: a CI reader should
// know the sandbox may not have been cleaned up.
std::string Housekeeping(const RunReport& r) {
  if (r.cut_short.empty() && r.left_for_sweep.empty()) return "";
  std::string out = "### Housekeeping\n\n";
  for (const std::string& cut : r.cut_short) out += "- cut short by the run's deadline: " + MarkdownCell(cut) + "\n";
  if (!r.left_for_sweep.empty()) {
    out += "- left for a sweep: " + MarkdownCode(r.left_for_sweep) +
           " (cleanup and sweep did not finish; run `sandprobe sweep`)\n";
  }
  return out + "\n";
}

std::string Footer(const RunReport& r) {
  return fmt::format("<sub>sandprobe {} · run {} · started {} · policy file {}</sub>\n\n",
                     MarkdownCell(r.tool_version, 40), MarkdownCell(r.run_id, 80),
                     MarkdownCell(r.started_at ? Rfc3339(*r.started_at) : "", 40), MarkdownCell(r.policy_path, 200));
}

}  // namespace

std::string MarkdownCode(std::string_view text) {
  std::string cell = MarkdownCell(text);
  std::replace(cell.begin(), cell.end(), '`', '\'');
  return "`" + cell + "`";
}

std::string MarkdownCell(std::string_view text, std::size_t cap) {
  const std::string clean = SanitizeForXml(text, cap);
  std::string cell;
  cell.reserve(clean.size());
  for (char ch : clean) {
    switch (ch) {
      case '|': cell += "\\|"; break;
      case '<': cell += "&lt;"; break;
      case '>': cell += "&gt;"; break;
      case '&': cell += "&amp;"; break;
      case '\n':
      case '\t': cell += ' '; break;
      default: cell += ch;
    }
  }
  while (!cell.empty() && cell.back() == ' ') cell.pop_back();
  return cell;
}

std::string RenderMarkdownSummary(const std::vector<RunReport>& reports) {
  std::string out;
  for (const RunReport& r : reports) {
    const Counts counts = Count(r);
    out += Headline(r, counts) + CountTable(counts) + Failures(r) + Unproven(r) + Skips(r) +
           Housekeeping(r) + Footer(r);
  }
  if (reports.empty()) out = "## sandprobe: no run\n";
  return out;
}

Status WriteMarkdownSummary(const std::vector<RunReport>& reports, const std::string& path) {
  return WriteReportOutput(path, RenderMarkdownSummary(reports)).WithContext("write Markdown summary");
}

}  // namespace sandprobe
