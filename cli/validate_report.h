// `sandprobe validate` of a sandprobe JSON report: said to be one (not read as a policy, which
// gave 24 unrelated errors), and read the way `report` reads it.
#pragma once

#include <optional>
#include <string>

#include "model/status.h"

namespace sandprobe {

// nullopt when `file` does not say it is a sandprobe report (no "schema" naming
// sandprobe-report/N): a profile, policy or suite, for the other validators. Otherwise the line
// `validate` prints ("F is a sandprobe report (sandprobe-report/1), not a policy or profile: it
// reads as one: ..."), or the error saying why it does not read as a report.
std::optional<StatusOr<std::string>> ValidateReportFile(const std::string& file);

}  // namespace sandprobe
