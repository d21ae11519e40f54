#include "reports/matrix_report.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "io/atomic_file.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/json_report_read.h"
#include "reports/markdown_report.h"
#include "reports/sanitize.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// The name, else its file's stem (a harness failure has no loaded names), else "?".
// Why a column is not a measurement of its sandbox, from what its report holds.
std::string ColumnNote(const RunReport& r) {
  if (r.interrupted) return "interrupted";
  for (const Verdict& v : r.verdicts) {
    if (v.check.family == "harness") return "harness error: " + SanitizeOneLine(v.observed, 200);
  }
  bool all_skipped = !r.verdicts.empty() && std::all_of(r.verdicts.begin(), r.verdicts.end(), [](const Verdict& v) {
    return v.outcome == Outcome::kSkip;
  });
  if (all_skipped) return "skipped: " + SanitizeOneLine(r.verdicts.front().observed, 200);
  return "";
}

// A check id in a code span: a backtick inside would end the span early.
std::size_t Width(const std::string& text) {
  // Code points, not bytes: the names and verdicts are ASCII, ids may not be.
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string Pad(const std::string& text, std::size_t width) {
  std::size_t w = Width(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

}  // namespace

bool MatrixRow::Agrees() const {
  const MatrixCell* first = nullptr;
  for (const std::optional<MatrixCell>& cell : cells) {
    if (!cell) continue;
    if (first == nullptr) first = &*cell;
    else if (cell->outcome != first->outcome || cell->direction != first->direction) return false;
  }
  return true;
}

Matrix BuildMatrix(const std::vector<RunReport>& reports) {
  Matrix matrix;
  std::map<std::string, std::size_t> row_of;
  for (std::size_t c = 0; c < reports.size(); ++c) {
    const RunReport& r = reports[c];
    matrix.columns.push_back({NameOrStem(r.profile_name, r.profile_path, "?"), NameOrStem(r.policy_name, r.policy_path, "?"),
                              NameOrStem(r.suite_name, "", "?"), r.run_id, SummaryCounts(r.verdicts), ColumnNote(r)});
    for (const Verdict& v : r.verdicts) {
      auto [it, added] = row_of.try_emplace(v.check.id, matrix.rows.size());
      if (added) {
        matrix.rows.push_back({v.check.id, v.check.family, v.check.severity,
                               std::vector<std::optional<MatrixCell>>(reports.size())});
      }
      MatrixRow& row = matrix.rows[it->second];
      row.severity = std::min(row.severity, v.check.severity);  // kCritical is 0
      row.cells[c] = MatrixCell{v.outcome, v.direction, v.waived(), SanitizeOneLine(v.observed, 300)};
    }
  }
  return matrix;
}

void PutDisagreementsFirst(Matrix& matrix) {
  std::stable_partition(matrix.rows.begin(), matrix.rows.end(), [](const MatrixRow& row) { return !row.Agrees(); });
}

std::string CellText(const std::optional<MatrixCell>& cell) {
  if (!cell) return "";
  std::string text(OutcomeName(cell->outcome));
  if (cell->direction != Direction::kNone) text += fmt::format(" ({})", DirectionName(cell->direction));
  if (cell->waived) text += " (waived)";
  return text;
}

std::string RenderMatrixMarkdown(const Matrix& matrix) {
  std::string out = "## sandprobe matrix\n\n| sandbox | policy | suite | pass | fail | inconclusive | error | skip | note |\n"
                    "|---|---|---|---|---|---|---|---|---|\n";
  for (const MatrixColumn& col : matrix.columns) {
    out += fmt::format("| **{}** | {} | {} | {} | {} | {} | {} | {} | {} |\n", MarkdownCell(col.sandbox, 80),
                       MarkdownCell(col.policy, 80), MarkdownCell(col.suite, 120), col.summary.value("pass", 0),
                       col.summary.value("fail", 0), col.summary.value("inconclusive", 0),
                       col.summary.value("error", 0), col.summary.value("skip", 0), MarkdownCell(col.note));
  }
  out += "\n| check | severity |";
  std::string rule = "|---|---|";
  for (const MatrixColumn& col : matrix.columns) {
    out += " " + MarkdownCell(col.sandbox, 80) + " |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const MatrixRow& row : matrix.rows) {
    out += fmt::format("| {}{} | {} |", MarkdownCode(row.id), row.Agrees() ? "" : " ≠", SeverityName(row.severity));
    for (const std::optional<MatrixCell>& cell : row.cells) out += " " + (cell ? CellText(cell) : "–") + " |";
    out += "\n";
  }
  if (matrix.rows.empty()) out += "\n(no checks)\n";
  return out;
}

json MatrixToJson(const Matrix& matrix) {
  json sandboxes = json::array();
  for (const MatrixColumn& col : matrix.columns) {
    sandboxes.push_back({{"name", col.sandbox}, {"policy", col.policy}, {"suite", col.suite},
                         {"run_id", col.run_id}, {"summary", col.summary},
                         {"note", col.note.empty() ? json(nullptr) : json(col.note)}});
  }
  json checks = json::array();
  for (const MatrixRow& row : matrix.rows) {
    json verdicts = json::array();
    for (const std::optional<MatrixCell>& cell : row.cells) {
      verdicts.push_back(cell ? json(CellText(cell)) : json(nullptr));
    }
    checks.push_back({{"id", row.id}, {"family", row.family}, {"severity", SeverityName(row.severity)},
                      {"verdicts", verdicts}, {"agree", row.Agrees()}});
  }
  return {{"schema", "sandprobe-matrix/1"}, {"sandboxes", sandboxes}, {"checks", checks}};
}

std::string RenderMatrixConsole(const Matrix& matrix) {
  std::string out = fmt::format("matrix: {} sandboxes x {} checks\n", matrix.columns.size(), matrix.rows.size());
  for (const MatrixColumn& col : matrix.columns) {
    out += fmt::format("  {}: policy {}, {} pass, {} fail, {} inconclusive, {} error, {} skip{}\n",
                       SanitizeOneLine(col.sandbox, 80), SanitizeOneLine(col.policy, 80), col.summary.value("pass", 0),
                       col.summary.value("fail", 0), col.summary.value("inconclusive", 0),
                       col.summary.value("error", 0), col.summary.value("skip", 0),
                       col.note.empty() ? "" : "  [" + col.note + "]");
  }
  std::vector<const MatrixRow*> differing;
  for (const MatrixRow& row : matrix.rows) {
    if (!row.Agrees()) differing.push_back(&row);
  }
  if (differing.empty()) {
    out += "  every check has the same verdict on every sandbox that ran it\n";
    return out;
  }
  std::size_t id_width = 5;
  for (const MatrixRow* row : differing) id_width = std::max(id_width, Width(SanitizeOneLine(row->id, 120)));
  std::vector<std::size_t> widths;
  std::string header = "  " + Pad("check", id_width);
  for (const MatrixColumn& col : matrix.columns) {
    std::size_t w = Width(SanitizeOneLine(col.sandbox, 80));
    for (const MatrixRow* row : differing) w = std::max(w, Width(CellText(row->cells[widths.size()])));
    widths.push_back(w);
    header += "  " + Pad(SanitizeOneLine(col.sandbox, 80), w);
  }
  out += fmt::format("  {} checks differ ({} agree):\n", differing.size(), matrix.rows.size() - differing.size());
  while (!header.empty() && header.back() == ' ') header.pop_back();
  out += header + "\n";
  for (const MatrixRow* row : differing) {
    std::string line = "  " + Pad(SanitizeOneLine(row->id, 120), id_width);
    for (std::size_t c = 0; c < row->cells.size(); ++c) {
      line += "  " + Pad(row->cells[c] ? CellText(row->cells[c]) : "-", widths[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string RenderMatrixFile(const Matrix& matrix, const std::vector<RunReport>& reports, const std::string& path) {
  if (path.ends_with(".json")) return MatrixToJson(matrix).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  if (path.ends_with(".html") || path.ends_with(".htm")) return RenderMatrixHtml(matrix, reports);
  return RenderMatrixMarkdown(matrix);
}

Status WriteMatrixReport(const std::vector<RunReport>& reports, const std::string& path) {
  return WriteReportOutput(path, RenderMatrixFile(BuildMatrix(reports), reports, path)).WithContext("write matrix report");
}

}  // namespace sandprobe
