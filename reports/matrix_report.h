// The cross-backend table of `sandprobe run --sandbox a,b,c`: checks x sandboxes, one column
// per run, one row per check id any run planned (`--matrix FILE`: Markdown, or JSON when FILE
// ends in .json; the console prints the rows where the sandboxes disagree).
//
// Each run keeps its own full report; the matrix only lines their verdicts up. A cell is
// empty when that run did not plan the check (another policy, or a selection), which is not
// the same as a skip. A column whose sandbox did not really run (its backend is missing, the
// harness failed) says why in its note, so the table never passes for a comparison it is not.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/run_report.h"
#include "model/status.h"
#include "model/verdict.h"

namespace sandprobe {

struct MatrixColumn {
  // The profile's name, else its file's stem; a merge of saved reports (MergeSavedRuns)
  // names two columns of one sandbox apart: "docker-hardened@node-2", else by their files.
  std::string sandbox;
  std::string policy;
  std::string suite;
  std::string run_id;
  nlohmann::json summary;  // SummaryCounts of the run
  // Why this column is not a real measurement: "skipped: docker info: Cannot connect ...",
  // "harness error: ...", "interrupted"; "" when the run judged its checks.
  std::string note;
};

struct MatrixCell {
  Outcome outcome = Outcome::kSkip;
  Direction direction = Direction::kNone;
  bool waived = false;
  std::string observed;  // the verdict's observation, one line, capped (a heatmap's tooltip)
};

struct MatrixRow {
  std::string id;
  std::string family;
  Severity severity = Severity::kInfo;  // the highest any run gives the check
  std::vector<std::optional<MatrixCell>> cells;  // one per column; nullopt: not planned there
  // Whether every column that planned the check has the same outcome and direction.
  bool Agrees() const;
};

struct Matrix {
  std::vector<MatrixColumn> columns;
  std::vector<MatrixRow> rows;  // in first-seen order over the runs
};

// One column per report, in the order given.
Matrix BuildMatrix(const std::vector<RunReport>& reports);

// Moves the rows where the columns disagree before those where they agree, each group in its
// own order: what a reader of a big matrix looks for first.
void PutDisagreementsFirst(Matrix& matrix);

// "pass", "fail (too-permissive)", "fail (waived)": what a cell shows; "" for no cell.
std::string CellText(const std::optional<MatrixCell>& cell);

// The whole table as Markdown: the columns with their notes and counts, then every row.
std::string RenderMatrixMarkdown(const Matrix& matrix);
// {"schema": "sandprobe-matrix/1", "sandboxes": [...], "checks": [{id, family, severity,
// verdicts: ["pass", null, ...], agree}]}.
nlohmann::json MatrixToJson(const Matrix& matrix);
// For the terminal: one line per column, then only the rows where the columns disagree (a
// matrix of like sandboxes is a thousand equal rows), aligned.
std::string RenderMatrixConsole(const Matrix& matrix);

// The --matrix writer (a ReportFormats() row): JSON when `path` ends in ".json", HTML (the
// heatmap, reports/html_report.h) for ".html", else Markdown.
Status WriteMatrixReport(const std::vector<RunReport>& reports, const std::string& path);

// What `path`'s extension picks: the matrix as JSON, HTML or Markdown text. `reports`: the
// runs behind the columns (the HTML lists their findings).
std::string RenderMatrixFile(const Matrix& matrix, const std::vector<RunReport>& reports, const std::string& path);

}  // namespace sandprobe
