// LintDataFile: every schema violation in a profile, policy or suite, not only the first.
//
// The loaders stop at their first error (validate once, keep the first error), which makes
// fixing a hand-written file one round trip per mistake. `sandprobe validate` adds what this
// finds: unknown keys with "did you mean" the nearest known one, wrong types, values outside
// an enum (with the nearest allowed one), missing required keys, numbers out of range. It
// walks the document beside docs/<kind>.schema.json (the subset of JSON Schema those files
// use); the loader stays the authority on what loads.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/json_source.h"

namespace sandprobe {

// "file:line:col: /pointer: what" for every violation of `schema` in `doc`, in document order.
std::vector<std::string> LintDocument(const JsonDocument& doc, const nlohmann::json& schema);

// Lints `path` against <data_dir>/docs/{profile,policy,suite}.schema.json (the kind told apart
// as ValidateFile does). Empty when the file is fine, or cannot be read or has no schema: the
// loader's own error covers those.
std::vector<std::string> LintDataFile(const std::string& path, const std::string& data_dir);

// For a file the loader refused with `first_error`: the lint errors beyond it (those at the
// same file:line:col are the loader's own, unless they add a "did you mean").
std::vector<std::string> MoreErrors(const std::string& first_error, const std::string& path,
                                    const std::string& data_dir);

}  // namespace sandprobe
