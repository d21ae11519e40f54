#include "load/suite.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "load/policy.h"
#include "load/profile.h"

namespace sandprobe {
namespace {


std::string FamilyNames(const FamilyCatalog& families) {
  std::vector<std::string> names;
  for (const auto& [name, rule] : families) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// A variant the family's rule does not allow would find no fact at run time (an inconclusive
// check) or fail the run with no position: refused here, where it is written.
void CheckVariant(ObjectReader& r, const JsonPointer& ptr, const std::string& family,
                  const VariantRule& rule, const std::string& variant) {
  switch (rule.kind) {
    case VariantKind::kNone:
      r.FailAt(ptr.parent_pointer(), fmt::format("family \"{}\" takes no variants", family));
      break;
    case VariantKind::kOneOf:
      if (std::find(rule.names.begin(), rule.names.end(), variant) == rule.names.end()) {
        r.FailAt(ptr, fmt::format("unknown variant \"{}\" of {} (known: {})", variant, family,
                                  fmt::join(rule.names, ", ")));
      }
      break;
    case VariantKind::kAbsolutePaths:
      if (variant.empty() || variant.front() != '/') {
        r.FailAt(ptr, fmt::format("a {} variant must be an absolute path, got \"{}\"", family,
                                  variant));
      }
      break;
  }
}

std::optional<SuiteEntry> ReadEntry(const JsonDocument& doc, const JsonPointer& ptr,
                                    const FamilyCatalog& known_families, ObjectReader& parent) {
  ObjectReader r(doc, ptr, {"family", "variants"});
  SuiteEntry entry;
  entry.pointer = ptr.to_string();
  entry.family = r.String("family", Presence::kRequired).value_or("");
  auto known = known_families.find(entry.family);
  if (r.ok() && known == known_families.end()) {
    r.FailAt(ptr / "family", fmt::format("unknown family \"{}\" (known: {})", entry.family,
                                         FamilyNames(known_families)));
  }
  entry.variants = r.StringList("variants", Presence::kOptional).value_or(entry.variants);
  for (std::size_t i = 0; i < entry.variants.size() && r.ok(); ++i) {
    JsonPointer variant = ptr / "variants" / i;
    if (entry.variants[i].empty()) r.FailAt(variant, "must not be empty");
    for (std::size_t j = 0; j < i; ++j) {
      if (entry.variants[j] == entry.variants[i]) {
        r.FailAt(variant, fmt::format("duplicate of {}", (ptr / "variants" / j).to_string()));
      }
    }
    if (r.ok() && known != known_families.end()) {
      CheckVariant(r, variant, entry.family, known->second, entry.variants[i]);
    }
  }
  parent.Fail(r.status());
  if (!r.ok()) return std::nullopt;
  return entry;
}

// `into` becomes the union of two entries' variants of one family.
void UniteVariants(VariantKind kind, std::vector<std::string>& into, std::vector<std::string> more) {
  switch (kind) {
    case VariantKind::kNone:
      return;
    case VariantKind::kOneOf:
      // No variants = every variant: a union with it is every variant too.
      if (into.empty() || more.empty()) {
        into.clear();
        return;
      }
      break;
    case VariantKind::kAbsolutePaths:  // extra paths to try: both lists
      break;
  }
  for (std::string& variant : more) {
    if (std::find(into.begin(), into.end(), variant) == into.end()) into.push_back(std::move(variant));
  }
}

}  // namespace

StatusOr<Suite> ParseSuite(const JsonDocument& doc, const FamilyCatalog& known_families) {
  ObjectReader r(doc, JsonPointer(), {"name", "description", "families"});
  Suite suite;
  suite.source_path = doc.file_name();
  suite.raw = doc.root();
  suite.name = r.Name("name", Presence::kRequired).value_or("");
  suite.description = r.String("description", Presence::kRequired).value_or("");
  if (r.ok() && suite.description.empty()) {
    r.FailAt(r.PointerTo("description"), "must not be empty");
  }
  const nlohmann::json* families = nullptr;
  if (r.ok() && !r.Has("families")) r.FailAt(r.PointerTo("families"), "missing required field");
  if (r.ok()) {
    families = &doc.root().at("families");
    if (!families->is_array()) {
      r.FailAt(r.PointerTo("families"),
               fmt::format("expected array of objects, got {}", JsonTypeName(*families)));
    } else if (families->empty()) {
      r.FailAt(r.PointerTo("families"), "must list at least one family");
    }
  }
  for (std::size_t i = 0; r.ok() && i < families->size(); ++i) {
    std::optional<SuiteEntry> entry =
        ReadEntry(doc, r.PointerTo("families") / i, known_families, r);
    if (!entry) break;
    for (const SuiteEntry& earlier : suite.entries) {
      if (earlier.family == entry->family) {
        r.FailAt(r.PointerTo("families") / i / "family",
                 fmt::format("duplicate family \"{}\" (first at {})", entry->family,
                             earlier.pointer));
      }
    }
    suite.entries.push_back(std::move(*entry));
  }
  if (!r.ok()) return r.status();
  suite.names = {suite.name};
  return suite;
}

StatusOr<Suite> MergeSuites(std::vector<Suite> suites, const FamilyCatalog& known_families) {
  if (suites.empty()) return Status::Error("merge suites: no suite given");
  if (suites.size() == 1) return std::move(suites.front());
  Suite merged;
  std::vector<std::string> paths;
  for (Suite& suite : suites) {
    merged.names.insert(merged.names.end(), suite.names.begin(), suite.names.end());
    paths.push_back(suite.source_path);
    for (SuiteEntry& entry : suite.entries) {
      auto same = std::find_if(merged.entries.begin(), merged.entries.end(),
                               [&entry](const SuiteEntry& e) { return e.family == entry.family; });
      if (same == merged.entries.end()) {
        entry.pointer = suite.source_path + ":" + entry.pointer;
        merged.entries.push_back(std::move(entry));
        continue;
      }
      auto rule = known_families.find(entry.family);
      UniteVariants(rule == known_families.end() ? VariantKind::kNone : rule->second.kind, same->variants,
                    std::move(entry.variants));
    }
  }
  merged.name = fmt::format("{}", fmt::join(merged.names, "+"));
  merged.description = fmt::format("The suites {} together.", fmt::join(merged.names, ", "));
  merged.source_path = fmt::format("{}", fmt::join(paths, ", "));
  // As a suite file of its own would say it (a recorded run's plan keeps it, and `sandprobe
  // report` loads it back with ParseSuite): '+' is no name character, so the file name joins
  // the names with '.'.
  merged.raw = {{"name", fmt::format("{}", fmt::join(merged.names, "."))},
                {"description", merged.description},
                {"families", nlohmann::json::array()}};
  for (const SuiteEntry& entry : merged.entries) {
    nlohmann::json row = {{"family", entry.family}};
    if (!entry.variants.empty()) row["variants"] = entry.variants;
    merged.raw["families"].push_back(std::move(row));
  }
  return merged;
}

StatusOr<Suite> LoadSuite(const std::string& path, const FamilyCatalog& known_families) {
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  if (!doc.ok()) return doc.status();
  return ParseSuite(*doc, known_families);
}

StatusOr<std::string> ValidateFile(const std::string& path, const FamilyCatalog& known_families,
                                   std::vector<std::string>* contradictions) {
  auto note = [contradictions](const Policy& policy) {
    if (contradictions == nullptr) return;
    for (const PolicyContradiction& c : policy.contradictions) contradictions->push_back(DescribeContradiction(c));
  };
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  if (!doc.ok()) return doc.status();
  const nlohmann::json& root = doc->root();
  if (root.is_object() && root.contains("lifecycle")) {
    StatusOr<Profile> profile = ParseProfile(*doc);
    if (!profile.ok()) return profile.status();
    if (profile->policy_path.empty()) return "profile " + profile->name;
    StatusOr<Policy> policy = LoadPolicy(profile->policy_path);
    if (!policy.ok()) {
      return policy.status().WithContext(
          fmt::format("{}: /policy", doc->Where(JsonPointer("/policy"))));
    }
    note(*policy);
    return fmt::format("profile {} (policy {})", profile->name, policy->name);
  }
  if (root.is_object() && root.contains("families")) {
    StatusOr<Suite> suite = ParseSuite(*doc, known_families);
    if (!suite.ok()) return suite.status();
    return "suite " + suite->name;
  }
  StatusOr<Policy> policy = ParsePolicy(*doc);
  if (!policy.ok()) return policy.status();
  note(*policy);
  return "policy " + policy->name;
}

}  // namespace sandprobe
