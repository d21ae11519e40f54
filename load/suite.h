// Suite: which check families a run includes (data: suites/default.json, quick, escape, ...).
//
// A suite names families only; the policy decides what each family checks, so the same suite
// runs against any policy. Also home of ValidateFile, the `sandprobe validate` entry point,
// because it needs all three loaders and suite.cc is the last of them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/json_source.h"
#include "model/status.h"

namespace sandprobe {

// What a family accepts as a suite entry's "variants".
enum class VariantKind {
  kNone,           // the family takes no variants: listing any is an error
  kOneOf,          // each variant is one of VariantRule::names (fs.alias, priv.syscalls)
  kAbsolutePaths,  // each variant is an absolute path (net.unix: more socket paths to try)
};

struct VariantRule {
  VariantKind kind = VariantKind::kNone;
  std::vector<std::string> names;  // kOneOf only: the allowed variants
};

// The families a suite may name, each with the variants it takes. KnownFamilies() (plan.h)
// builds it from the family table, so this loader checks variants without linking family code.
using FamilyCatalog = std::map<std::string, VariantRule>;

struct SuiteEntry {
  std::string family;                 // a probe family the runner knows: "fs.read", "fs.alias"
  std::vector<std::string> variants;  // sub-kinds to try ("symlink", "dotdot"); empty = all;
                                      // each allowed by the family's VariantRule
  std::string pointer;                // "/families/1", for check references
};

struct Suite {
  std::string name;         // [a-z0-9][a-z0-9._-]*, required; merged: "default+network"
  std::string description;  // required, non-empty
  std::string source_path;  // the file it was loaded from
  std::vector<SuiteEntry> entries;  // JSON "families": non-empty, each family at most once
  nlohmann::json raw;               // as loaded (merged: an array of the suites' raw JSON)
  // The suites this one is made of, in the order given: {name} for a suite loaded alone.
  std::vector<std::string> names;
};

// Loads and validates a suite; a family outside `known_families` is an error that lists them,
// and so is a variant its VariantRule does not allow.
StatusOr<Suite> LoadSuite(const std::string& path, const FamilyCatalog& known_families);
StatusOr<Suite> ParseSuite(const JsonDocument& doc, const FamilyCatalog& known_families);

// Several suites as one (`--suite default,network`, `--suite all`): the families of all of
// them in first-seen order, a family named by several once with their variants united by the
// family's VariantRule: for kOneOf an entry without variants asks for every variant, so then
// the union is every variant; kAbsolutePaths variants are extra paths, so the union is both
// lists. One plan from the union lets the scheduler share the launch across suites, and a
// check is never planned twice. The name is the names joined by '+'. One suite comes back
// unchanged; none is invalid input.
StatusOr<Suite> MergeSuites(std::vector<Suite> suites, const FamilyCatalog& known_families);

// Validates a profile, policy or suite file, telling them apart by content ("lifecycle" ->
// profile, "families" -> suite, otherwise policy). A profile's policy file is validated too.
// Returns what was found: "profile docker-hardened (policy tier-low)", "policy tier-low",
// "suite default".
// `contradictions`, when given, receives the policy's contradictions (DescribeContradiction):
// the file is valid, and says two opposite things the run resolves by one of them.
StatusOr<std::string> ValidateFile(const std::string& path, const FamilyCatalog& known_families,
                                   std::vector<std::string>* contradictions = nullptr);

}  // namespace sandprobe
