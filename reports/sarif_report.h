// The SARIF 2.1.0 report: what code-scanning tools (GitHub code scanning, Azure DevOps, the
// SARIF viewers) read. Validated in reports_test by Microsoft's SARIF Multitool.
//
// One SARIF run per sandprobe run (profile x policy x suite), told apart by
// automationDetails.id "sandprobe/<profile>/<policy>/<suite>/<run_id>" (GitHub's category is the
// part before the last '/', so a matrix job's uploads do not replace each other).
//   - rules: one per check template (the check id before its first ':', "fs.read.denied"),
//     defaultConfiguration.level from the severity of its first check, help = a fix.
//   - results: one per failed check, kind "fail", level from the check's severity (critical and
//     high: error, medium: warning, low and info: note), properties.security-severity for
//     GitHub; located at the policy line:col that made the promise (Check::reference), with a
//     partialFingerprint from profile, policy and check id so an alert survives line moves.
//   - error and inconclusive checks prove nothing about the sandbox: they are tool execution
//     notifications of the run's invocation (which is then not "executionSuccessful"), not
//     results. Passes and skips are not results; run.properties.summary counts every outcome.
// Text passes through SanitizeForXml (no controls, no escapes, capped), like JUnit.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/run_report.h"
#include "model/status.h"

namespace sandprobe {

// Where the value at JSON `pointer` starts in `file`, or nullopt when unknown.
using SourceLocator =
    std::function<std::optional<SourcePosition>(const std::string& file, const std::string& pointer)>;

// Reads each file named once (load/json_source.h, comments allowed) and looks the pointer up;
// an unreadable file or a missing pointer gives nullopt (the result is then located at the
// file's first line).
SourceLocator FileSourceLocator();

// "fs.read.denied" for "fs.read.denied:/etc/shadow"; the id itself when it has no ':'.
std::string CheckTemplate(const std::string& check_id);

// A file path as a SARIF artifactLocation.uri: a relative path stays a relative reference, an
// absolute one becomes file:///...; bytes outside RFC 3986's unreserved set and '/' are
// percent-encoded.
std::string PathToUri(const std::string& path);

nlohmann::json SarifDocument(const std::vector<RunReport>& reports, const SourceLocator& locate);

// SarifDocument dumped with 2-space indent and a trailing newline.
std::string RenderSarif(const std::vector<RunReport>& reports, const SourceLocator& locate);

// Writes RenderSarif (with FileSourceLocator) to `path` atomically, or to stdout for "-".
Status WriteSarifReport(const std::vector<RunReport>& reports, const std::string& path);

}  // namespace sandprobe
