#include "mutate/audit_phases.h"

#include <algorithm>

#include "families/family.h"

namespace sandprobe {
namespace {

bool HasExclusiveFamily(const Suite& suite) {
  return std::any_of(suite.entries.begin(), suite.entries.end(), [](const SuiteEntry& entry) {
    const FamilyRow* row = FindFamily(entry.family);
    return row != nullptr && row->exclusive;
  });
}

}  // namespace

StatusOr<std::vector<AuditPhase>> PlanAuditPhases(const std::vector<std::string>& suite_paths,
                                                  const FamilyCatalog& families) {
  std::vector<Suite> shared;
  std::vector<AuditPhase> exclusive;
  for (const std::string& path : suite_paths) {
    StatusOr<Suite> suite = LoadSuite(path, families);
    if (!suite.ok()) return suite.status();
    if (HasExclusiveFamily(*suite)) {
      exclusive.push_back({.suite = std::move(*suite), .exclusive = true});
    } else {
      shared.push_back(std::move(*suite));
    }
  }
  std::vector<AuditPhase> phases;
  if (!shared.empty()) {
    StatusOr<Suite> merged = MergeSuites(std::move(shared), families);
    if (!merged.ok()) return merged.status();
    phases.push_back({.suite = std::move(*merged)});
  }
  for (AuditPhase& phase : exclusive) phases.push_back(std::move(phase));
  return phases;
}

bool MeasuresLimits(const std::vector<Verdict>& verdicts) {
  return std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.check.tolerance.has_value(); });
}

}  // namespace sandprobe
