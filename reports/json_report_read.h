// Reads a JSON report (reports/json_report.h) back into a RunReport: the run's own facts
// (header, profile and policy as loaded, launches, witnesses), so a re-judged run renders
// through the same writers as a live one. The verdicts are not read: a re-judge makes its own.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "model/run_report.h"
#include "model/status.h"

namespace sandprobe {

// Reports bigger than this are refused before parsing. A report keeps every launch's frames,
// each launch's stdout capped at 16 MiB: a full audit of a policy with thousands of paths makes
// tens of MiB. nlohmann's tree takes several times the text's size in memory.
inline constexpr std::size_t kMaxReportBytes = 256u << 20;

// Reads a JSON report the way every command that reads one does (`report`, `infer`, `diff`):
// a regular file ("-" is stdin) of at most kMaxReportBytes, JSON (a syntax error names
// file:line:col), an object whose "schema" is kReportSchema. Invalid input names the file and
// what is wrong.
StatusOr<nlohmann::json> LoadJsonReport(const std::string& path);

// The same over text already read (named `file` in messages).
StatusOr<nlohmann::json> ParseJsonReport(const std::string& text, const std::string& file);

// Invalid input (names `file`) unless `report` is an object with "schema": kReportSchema.
Status CheckReportSchema(const nlohmann::json& report, const std::string& file);

// Invalid input (names `file` and what is wrong) when `report` is not a sandprobe report of
// this schema version.
StatusOr<RunReport> ReadJsonReportFacts(const nlohmann::json& report, const std::string& file);

}  // namespace sandprobe
