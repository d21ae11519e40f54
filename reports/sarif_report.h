// The SARIF 2.1.0 report: what code-scanning tools (GitHub code scanning, Azure DevOps, the
// SARIF viewers) read. Validated in reports_test by Microsoft's SARIF Multitool.
//
// One SARIF run per sandprobe run (profile x policy x suite), told apart by
// automationDetails.id "sandprobe/<profile>/<policy>/<suite>/<run_id>" (GitHub's category is the
// part before the last '/', so a matrix job's uploads do not replace each other).
//   - rules: one per check template (the check id before its first ':', "fs.read.denied"),
//     defaultConfiguration.level from the severity of its first check; description, help and
//     helpUri (docs/checks.md#anchor) from the check catalogue (model/check_catalogue.h): the
//     rule's own text, never one result's fix, which is in that result's message.
//   - results: one per failed check, kind "fail", level from the check's severity (critical and
//     high: error, medium: warning, low and info: note), properties.security-severity for
//     GitHub; located at the policy line:col that made the promise (Check::reference), with a
//     partialFingerprint from profile, policy and check id so an alert survives line moves. A
//     file inside the directory sandprobe ran in is located relative to %SRCROOT%
//     (originalUriBaseIds), so code scanning can place it in the repository.
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

// Where a SARIF file's references point.
struct SarifPlaces {
  std::string base_dir;    // files inside it are located relative to %SRCROOT%; "": none
  std::string checks_doc;  // the check catalogue; rules' helpUri is it + "#anchor"; "": none
};

// The working directory, and the catalogue: SANDPROBE_CHECKS_DOC_URL when the build was
// configured with one (a project's web copy), else docs/checks.md in the data directory this
// binary runs from (file:///usr/share/sandprobe/docs/checks.md when installed).
SarifPlaces SarifPlacesHere();

nlohmann::json SarifDocument(const std::vector<RunReport>& reports, const SourceLocator& locate,
                             const SarifPlaces& places = {});

// SarifDocument dumped with 2-space indent and a trailing newline.
std::string RenderSarif(const std::vector<RunReport>& reports, const SourceLocator& locate,
                        const SarifPlaces& places = {});

// Writes RenderSarif (with FileSourceLocator, relative to the working directory) to `path`
// atomically, or to stdout for "-".
Status WriteSarifReport(const std::vector<RunReport>& reports, const std::string& path);

}  // namespace sandprobe
