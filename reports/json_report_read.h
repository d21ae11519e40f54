// Reads a JSON report (reports/json_report.h) back into a RunReport: the run's own facts
// (header, profile and policy as loaded, launches, witnesses), so a re-judged run renders
// through the same writers as a live one. The verdicts are not read: a re-judge makes its own.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/run_report.h"
#include "model/status.h"

namespace sandprobe {

// Reads and parses a JSON report file. Only a regular file is read ("-" is stdin); invalid
// input names the file and what is wrong.
StatusOr<nlohmann::json> LoadJsonReport(const std::string& path);

// Invalid input (names `file` and what is wrong) when `report` is not a sandprobe report of
// this schema version.
StatusOr<RunReport> ReadJsonReportFacts(const nlohmann::json& report, const std::string& file);

}  // namespace sandprobe
