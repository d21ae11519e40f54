// What `sandprobe mutate` writes: the JSON document (docs/mutate.schema.json), a Markdown
// summary for a CI job's page, and the console text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "mutate/mutate.h"

namespace sandprobe {

inline constexpr std::string_view kMutateSchema = "sandprobe-mutate/1";

nlohmann::json MutateReportToJson(const MutateReport& report);

// A table of every mutant (status, what killed it or why not), the score first.
std::string RenderMutateMarkdown(const MutateReport& report);

// The score, then the survivors, invalid and unfinished mutants with why, then one line per
// killed and not-applicable one.
std::string RenderMutateConsole(const MutateReport& report);

// "34/34 (100 %)", "31/34 (91 %)", "0/0 (no applicable mutant)".
std::string DescribeScore(const MutateReport& report);

}  // namespace sandprobe
