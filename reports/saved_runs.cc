// See saved_runs.h.
#include "reports/saved_runs.h"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "reports/json_report_read.h"
#include "reports/sanitize.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// The enum whose name is `name` among `values` (a report's "verdict", "direction").
template <typename Enum, std::size_t N>
std::optional<Enum> ByName(const Enum (&values)[N], std::string_view (*name_of)(Enum), std::string_view name) {
  for (Enum value : values) {
    if (name_of(value) == name) return value;
  }
  return std::nullopt;
}

constexpr Outcome kOutcomesByName[] = {Outcome::kPass, Outcome::kFail, Outcome::kInconclusive, Outcome::kError,
                                 Outcome::kSkip};
constexpr Direction kDirectionsByName[] = {Direction::kNone, Direction::kTooPermissive, Direction::kTooRestrictive};

// One checks[] entry as the run recorded it; an error says which field is wrong.
StatusOr<Verdict> ReadSavedVerdict(const json& c) {
  Verdict v;
  v.check.id = c.at("id").get<std::string>();
  v.check.family = c.at("family").get<std::string>();
  std::optional<Severity> severity = ParseSeverity(c.at("severity").get<std::string>());
  if (!severity) return Status::Error(fmt::format("check {}: unknown severity {}", v.check.id, c.at("severity").dump()));
  v.check.severity = *severity;
  std::optional<Outcome> outcome = ByName(kOutcomesByName, OutcomeName, c.at("verdict").get<std::string>());
  if (!outcome) return Status::Error(fmt::format("check {}: unknown verdict {}", v.check.id, c.at("verdict").dump()));
  v.outcome = *outcome;
  const json& direction = c.at("direction");
  std::optional<Direction> dir = ByName(kDirectionsByName, DirectionName, direction.is_null() ? "" : direction.get<std::string>());
  if (!dir) return Status::Error(fmt::format("check {}: unknown direction {}", v.check.id, direction.dump()));
  v.direction = *dir;
  v.expected = c.value("expected", "");
  v.observed = c.value("observed", "");
  v.remediation = c.value("remediation", "");
  v.duration_seconds = c.value("duration_seconds", 0.0);
  if (const json& e = c.value("evidence", json::object()); e.is_object()) {
    if (e.contains("tier")) v.evidence.tier = ParseEvidenceTier(e.at("tier").get<std::string>());
    if (e.value("launch_id", json()).is_string()) v.evidence.launch_id = e.at("launch_id").get<std::string>();
    v.evidence.frame_indexes = e.value("frame_indexes", std::vector<int>{});
    v.evidence.witness_facts = e.value("witness_facts", std::vector<std::string>{});
    if (e.value("expected_end", json()).is_string()) v.evidence.expected_end = e.at("expected_end").get<std::string>();
  }
  if (c.contains("waiver")) {
    const json& w = c.at("waiver");
    v.waiver = AppliedWaiver{w.at("check").get<std::string>(), w.at("reason").get<std::string>(),
                             w.at("expires").get<std::string>(), w.at("source").get<std::string>(),
                             w.at("expired").get<bool>()};
  }
  return v;
}

std::string HostOf(const RunReport& r) {
  return r.host.is_object() && r.host.value("hostname", json()).is_string() ? r.host["hostname"].get<std::string>() : "";
}

// Renames the columns whose name `name_of` gives more than once; the others keep theirs.
void RenameClashes(Matrix& matrix, const std::function<std::string(std::size_t)>& name_of) {
  std::map<std::string, int> uses;
  for (const MatrixColumn& col : matrix.columns) ++uses[col.sandbox];
  for (std::size_t c = 0; c < matrix.columns.size(); ++c) {
    if (uses[matrix.columns[c].sandbox] < 2) continue;
    if (std::string name = name_of(c); !name.empty()) matrix.columns[c].sandbox = name;
  }
}

}  // namespace

StatusOr<RunReport> ReadSavedRun(const json& report, const std::string& file) {
  StatusOr<RunReport> run = ReadJsonReportFacts(report, file);
  if (!run.ok()) return run.status();
  try {
    const json& checks = report.at("checks");
    if (!checks.is_array()) return Status::Error(fmt::format("{}: checks: not an array", file));
    for (std::size_t i = 0; i < checks.size(); ++i) {
      StatusOr<Verdict> v = ReadSavedVerdict(checks[i]);
      if (!v.ok()) return Status::Error(fmt::format("{}: checks[{}]: {}", file, i, v.status().message()));
      run->verdicts.push_back(std::move(*v));
    }
  } catch (const json::exception& e) {
    return Status::Error(fmt::format("{}: read the report's checks: {}", file, e.what()));
  }
  return run;
}

Matrix MergeSavedRuns(const std::vector<SavedRun>& runs) {
  std::vector<RunReport> reports;
  for (const SavedRun& run : runs) reports.push_back(run.report);
  Matrix matrix = BuildMatrix(reports);
  const std::vector<MatrixColumn> loaded = matrix.columns;
  // By host first (a node's report says which node), then by file; a name still shared (the
  // same file name in two directories) by the path as given, then by the column's place.
  RenameClashes(matrix, [&](std::size_t c) {
    const std::string host = HostOf(runs[c].report);
    return host.empty() ? "" : loaded[c].sandbox + "@" + SanitizeOneLine(host, 80);
  });
  RenameClashes(matrix, [&](std::size_t c) {
    return fmt::format("{} ({})", matrix.columns[c].sandbox, std::filesystem::path(runs[c].file).filename().string());
  });
  RenameClashes(matrix, [&](std::size_t c) { return fmt::format("{} ({})", loaded[c].sandbox, runs[c].file); });
  // The same file given twice: its columns by their place.
  RenameClashes(matrix, [&](std::size_t c) { return fmt::format("{} #{}", matrix.columns[c].sandbox, c + 1); });
  PutDisagreementsFirst(matrix);
  return matrix;
}

StatusOr<std::vector<SavedRun>> LoadSavedRuns(const std::vector<std::string>& files) {
  std::vector<SavedRun> runs;
  for (const std::string& file : files) {
    StatusOr<json> text = LoadJsonReport(file);
    if (!text.ok()) return text.status();
    StatusOr<RunReport> run = ReadSavedRun(*text, file);
    if (!run.ok()) return run.status();
    runs.push_back({file, std::move(*run)});
  }
  return runs;
}

}  // namespace sandprobe
