// Suite: which check families a run includes (data: suites/default.json, quick, escape, ...).
//
// A suite names families only; the policy decides what each family checks, so the same suite
// runs against any policy. Also home of ValidateFile, the `sandprobe validate` entry point,
// because it needs all three loaders and suite.cc is the last of them.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/json_source.h"
#include "runner/status.h"

namespace sandprobe {

struct SuiteEntry {
  std::string family;                 // a probe family the runner knows: "fs.read", "fs.alias"
  std::vector<std::string> variants;  // sub-kinds to try ("symlink", "dotdot"); empty = all
  std::string pointer;                // "/families/1", for check references
};

struct Suite {
  std::string name;         // [a-z0-9][a-z0-9._-]*, required
  std::string description;  // required, non-empty
  std::string source_path;  // the file it was loaded from
  std::vector<SuiteEntry> entries;  // JSON "families": non-empty, each family at most once
  nlohmann::json raw;               // as loaded
};

// Loads and validates a suite; a family outside `known_families` is an error that lists them.
StatusOr<Suite> LoadSuite(const std::string& path, const std::set<std::string>& known_families);
StatusOr<Suite> ParseSuite(const JsonDocument& doc, const std::set<std::string>& known_families);

// Validates a profile, policy or suite file, telling them apart by content ("lifecycle" ->
// profile, "families" -> suite, otherwise policy). A profile's policy file is validated too.
// Returns what was found: "profile docker-hardened (policy tier-low)", "policy tier-low",
// "suite default".
StatusOr<std::string> ValidateFile(const std::string& path,
                                   const std::set<std::string>& known_families);

}  // namespace sandprobe
