// The JSON report: facts and verdicts of one profile's run, documented by
// docs/report.schema.json ("sandprobe-report/1").
//
// It keeps the raw facts (launch frames, witness observations) beside the verdicts so a later
// `sandprobe judge` / `diff` / `infer` can work from the file alone. Strings are kept as the
// probes produced them; invalid UTF-8 is replaced by U+FFFD only when the JSON is dumped.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/run_report.h"
#include "model/status.h"
#include "model/verdict.h"

namespace sandprobe {

// {"pass":n,"fail":n,"inconclusive":n,"error":n,"skip":n,"total":n}
nlohmann::json SummaryCounts(const std::vector<Verdict>& verdicts);

// How many passes rest on each evidence tier: {"witnessed":n,"measured":n,"reported":n,"none":n}
// (the report's summary.passes_by_evidence, the console's and SARIF's run summary).
nlohmann::json PassesByEvidence(const std::vector<Verdict>& verdicts);

// The whole report as a JSON value (see docs/report.schema.json).
nlohmann::json ReportToJson(const RunReport& report);

// ReportToJson dumped with 2-space indent and a trailing newline. Never throws: invalid UTF-8
// in any string or key becomes U+FFFD.
std::string RenderJsonReport(const RunReport& report);

// Writes RenderJsonReport to `path` atomically, or to stdout when `path` is "-".
Status WriteJsonReport(const RunReport& report, const std::string& path);

}  // namespace sandprobe
