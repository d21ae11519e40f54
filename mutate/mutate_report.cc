#include "mutate/mutate_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/markdown_report.h"
#include "reports/sanitize.h"

namespace sandprobe {
namespace {

// The order a reader wants: what needs attention first.
constexpr MutantStatus kStatusOrder[] = {MutantStatus::kSurvived, MutantStatus::kInvalid, MutantStatus::kUnfinished,
                                         MutantStatus::kKilled, MutantStatus::kEquivalent,
                                         MutantStatus::kNotApplicable};

nlohmann::json MoveToJson(const CheckMove& move) {
  return {{"id", move.id},
          {"from", DescribeOutcome(move.from)},
          {"to", DescribeOutcome(move.to)},
          {"observed", RepairUtf8(move.to.observed)}};
}

nlohmann::json MutantToJson(const MutantResult& m) {
  nlohmann::json changed = nlohmann::json::array(), kills = nlohmann::json::array();
  for (const CheckMove& move : m.changed) changed.push_back(MoveToJson(move));
  for (const CheckMove& move : m.kills) kills.push_back(MoveToJson(move));
  return {{"name", m.name},
          {"description", m.description},
          {"edit", m.edit},
          {"status", MutantStatusName(m.status)},
          {"killed", m.status == MutantStatus::kKilled},
          {"applied", m.applied},
          {"flipped", m.flipped},
          {"kills", kills},
          {"changed", changed},
          {"why", RepairUtf8(m.why)},
          {"suites", m.suites},
          {"run_ids", m.run_ids},
          {"seconds", m.seconds}};
}

// What the status column explains: the killing checks, or why not.
std::string Explanation(const MutantResult& m) {
  if (m.status == MutantStatus::kKilled) {
    std::vector<std::string> ids;
    for (const std::string& id : m.flipped) ids.push_back(MarkdownCode(id));
    return fmt::format("{}", fmt::join(ids, ", "));
  }
  return MarkdownCell(m.why);
}

}  // namespace

std::string DescribeScore(const MutateReport& report) {
  std::size_t total = report.total(), killed = report.Count(MutantStatus::kKilled);
  if (total == 0) return "0/0 (no applicable mutant)";
  return fmt::format("{}/{} ({:.0f} %)", killed, total, 100.0 * static_cast<double>(killed) / static_cast<double>(total));
}

nlohmann::json MutateReportToJson(const MutateReport& report) {
  nlohmann::json mutants = nlohmann::json::array();
  for (const MutantResult& m : report.mutants) mutants.push_back(MutantToJson(m));
  nlohmann::json phases = nlohmann::json::array();
  for (const MutatePhase& phase : report.phases) {
    phases.push_back({{"suite", phase.suite}, {"exclusive", phase.exclusive}, {"runs", phase.runs},
                      {"seconds", phase.seconds}, {"skipped", phase.skipped}});
  }
  std::size_t total = report.total(), killed = report.Count(MutantStatus::kKilled);
  return {{"schema", kMutateSchema},
          {"tool_version", report.tool_version},
          {"profile", {{"name", report.profile_name}, {"path", report.profile_path}}},
          {"policy", report.policy_name},
          {"operators", report.operators_path},
          {"suites", report.suites},
          {"jobs", report.jobs},
          {"full_matrix", report.full_matrix},
          {"interrupted", report.interrupted},
          {"seconds", report.seconds},
          {"phases", phases},
          {"baseline",
           {{"run_ids", report.baseline_run_ids},
            {"checks", report.baseline_checks},
            {"undecided", report.baseline_undecided}}},
          {"total", total},
          {"killed", killed},
          {"survived", report.Count(MutantStatus::kSurvived)},
          {"invalid", report.Count(MutantStatus::kInvalid)},
          {"not_applicable", report.Count(MutantStatus::kNotApplicable)},
          {"equivalent", report.Count(MutantStatus::kEquivalent)},
          {"unfinished", report.Count(MutantStatus::kUnfinished)},
          {"score", total == 0 ? nlohmann::json(nullptr)
                               : nlohmann::json(static_cast<double>(killed) / static_cast<double>(total))},
          {"mutants", mutants}};
}

std::string RenderMutateMarkdown(const MutateReport& report) {
  std::string out = fmt::format("## sandprobe mutate: {}\n\n", MarkdownCell(report.profile_name));
  out += fmt::format("Mutation score **{}** against policy `{}`, suites {}, in {:.1f} s (-j {}{}).\n\n",
                     DescribeScore(report), MarkdownCell(report.policy_name), MarkdownCell(fmt::format("{}", fmt::join(report.suites, "+"))),
                     report.seconds, report.jobs, report.full_matrix ? ", full matrix" : "");
  out += fmt::format("{} killed · {} survived · {} invalid · {} unfinished · {} equivalent (not in the score) · {} "
                     "not applicable\n\n",
                     report.Count(MutantStatus::kKilled), report.Count(MutantStatus::kSurvived),
                     report.Count(MutantStatus::kInvalid), report.Count(MutantStatus::kUnfinished),
                     report.Count(MutantStatus::kEquivalent), report.Count(MutantStatus::kNotApplicable));
  out += "| mutant | status | killed by / why not |\n|---|---|---|\n";
  for (MutantStatus status : kStatusOrder) {
    for (const MutantResult& m : report.mutants) {
      if (m.status != status) continue;
      out += fmt::format("| {} | {} | {} |\n", MarkdownCode(m.name), MutantStatusName(m.status), Explanation(m));
    }
  }
  return out;
}

std::string RenderMutateConsole(const MutateReport& report) {
  std::string out = fmt::format("{}: mutation score {} ({} killed, {} survived, {} invalid, {} unfinished, "
                                "{} equivalent, {} not applicable) in {:.1f} s\n",
                                report.profile_name, DescribeScore(report), report.Count(MutantStatus::kKilled),
                                report.Count(MutantStatus::kSurvived), report.Count(MutantStatus::kInvalid),
                                report.Count(MutantStatus::kUnfinished), report.Count(MutantStatus::kEquivalent),
                                report.Count(MutantStatus::kNotApplicable),
                                report.seconds);
  for (MutantStatus status : kStatusOrder) {
    for (const MutantResult& m : report.mutants) {
      if (m.status != status) continue;
      std::string detail = m.status == MutantStatus::kKilled ? fmt::format("{}", fmt::join(m.flipped, ", ")) : m.why;
      out += fmt::format("  {:<14} {:<28} {}\n", MutantStatusName(m.status), m.name, RepairUtf8(detail));
      if (m.status == MutantStatus::kSurvived) {
        for (const std::string& applied : m.applied) out += fmt::format("  {:<14} {:<28}   edit: {}\n", "", "", applied);
      }
    }
  }
  for (const MutatePhase& phase : report.phases) {
    if (!phase.skipped.empty()) {
      out += fmt::format("  phase {}: skipped: {}\n", phase.suite, phase.skipped);
      continue;
    }
    out += fmt::format("  phase {}: {} run(s) {} in {:.1f} s\n", phase.suite, phase.runs,
                       phase.exclusive ? "one at a time" : fmt::format("up to {} at once", report.jobs), phase.seconds);
  }
  if (!report.baseline_undecided.empty()) {
    out += fmt::format("  {} check(s) the profile's own audit did not decide (error or skip) judge no mutant "
                       "(listed in the JSON's baseline.undecided)\n",
                       report.baseline_undecided.size());
  }
  return out;
}

}  // namespace sandprobe
