#include "runner/plan.h"

#include <fmt/format.h>

#include "runner/family.h"

namespace sandprobe {

const std::set<std::string>& KnownFamilies() {
  static const std::set<std::string> kFamilies = [] {
    std::set<std::string> names;
    for (const FamilyRow& row : FamilyTable()) names.insert(row.name);
    return names;
  }();
  return kFamilies;
}

StatusOr<Plan> ExpandChecks(const Policy& policy, const Suite& suite, const PlanContext& context) {
  Plan plan;
  std::unordered_set<std::string> check_ids;
  const std::map<std::string, std::string> path_values = {
      {"host_canary", context.host_canary}, {"workspace", context.workspace}};
  // Cheap, side-effect-free families share one launch; each exclusive family gets its own.
  plan.batches.push_back(LaunchBatch{.id = "B1"});
  BatchBuilder shared(plan, 0, check_ids);
  for (const SuiteEntry& entry : suite.entries) {
    const FamilyRow* row = FindFamily(entry.family);
    if (row == nullptr) {
      return Status::Error(fmt::format("{}: {}: family {} has no check expansion",
                                       suite.source_path, entry.pointer, entry.family));
    }
    ExpandInput in{policy, entry, context, path_values};
    if (!row->exclusive) {
      if (Status s = row->expand(in, shared); !s.ok()) return s;
      continue;
    }
    plan.batches.push_back(LaunchBatch{.id = fmt::format("B{}", plan.batches.size() + 1),
                                       .exclusive = true});
    BatchBuilder own(plan, plan.batches.size() - 1, check_ids, /*may_start_launches=*/true);
    if (Status s = row->expand(in, own); !s.ok()) return s;
  }
  std::erase_if(plan.batches, [](const LaunchBatch& b) { return b.check_indexes.empty(); });
  return plan;
}

std::vector<std::string> ProbeCommandArgs(const LaunchBatch& batch, std::string_view nonce) {
  std::vector<std::string> args = {"--nonce", std::string(nonce)};
  bool first = true;
  for (const ProbeInvocation& inv : batch.invocations) {
    if (!first) args.push_back("--next");
    first = false;
    args.push_back(inv.family);
    args.insert(args.end(), inv.args.begin(), inv.args.end());
  }
  return args;
}

}  // namespace sandprobe
