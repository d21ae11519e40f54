#include "families/plan.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "families/family.h"

namespace sandprobe {

const FamilyCatalog& KnownFamilies() {
  static const FamilyCatalog kFamilies = [] {
    FamilyCatalog families;
    for (const FamilyRow& row : FamilyTable()) families.emplace(row.name, row.variants);
    return families;
  }();
  return kFamilies;
}

namespace {

// The policy section each family group expands its checks from (family.h: the groups' Expand
// functions), for the error of a suite that expands to no check at all.
struct SectionRow {
  const char* group;    // the family name up to its first '.'
  const char* section;  // the policy's top-level key
};
constexpr SectionRow kPolicySections[] = {
    {"fs", "filesystem"}, {"env", "host"},      {"net", "network"},
    {"priv", "privileges"}, {"res", "limits"}, {"persist", "persistence"},
    {"lang", "filesystem"},  // lang.escape: an escape is judged by the unreadable {host_canary}
};

// Invalid input naming the sections the suite's families read and whether the policy has them:
// a gate over zero checks is green whatever the sandbox does.
Status EmptyPlanError(const Policy& policy, const Suite& suite) {
  std::vector<std::string> sections;
  for (const SuiteEntry& entry : suite.entries) {
    std::string group = entry.family.substr(0, entry.family.find('.'));
    for (const SectionRow& row : kPolicySections) {
      if (group != row.group) continue;
      std::string named = policy.raw.contains(row.section)
                              ? fmt::format("\"{}\" (present, but declares nothing these families check)", row.section)
                              : fmt::format("\"{}\" (missing)", row.section);
      if (std::find(sections.begin(), sections.end(), named) == sections.end()) sections.push_back(named);
    }
  }
  return Status::Error(fmt::format(
      "suite {} ({}) expands to no check against policy {} ({}): its families read the policy's "
      "section {}; declare what the sandbox should enforce there, or run another suite",
      suite.name, suite.source_path, policy.name, policy.source_path, fmt::join(sections, ", ")));
}

}  // namespace

StatusOr<Plan> ExpandChecks(const Policy& policy, const Suite& suite, const PlanContext& context) {
  Plan plan;
  std::unordered_set<std::string> check_ids;
  const std::map<std::string, std::string> path_values = {
      {"host_canary", context.host_canary}, {"workspace", context.workspace}};
  // Cheap, side-effect-free families share one launch; each exclusive family gets its own, or
  // its group's when the one before is of the same group (FamilyRow::exclusive_group).
  plan.batches.push_back(LaunchBatch{.id = "B1"});
  BatchBuilder shared(plan, 0, check_ids);
  const char* open_group = nullptr;  // the exclusive group of the last launch, while it may grow
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
    bool joins = open_group != nullptr && row->exclusive_group != nullptr &&
                 std::string_view(open_group) == row->exclusive_group;
    if (!joins) {
      plan.batches.push_back(LaunchBatch{.id = fmt::format("B{}", plan.batches.size() + 1),
                                         .exclusive = true});
    }
    open_group = row->exclusive_group;
    BatchBuilder own(plan, plan.batches.size() - 1, check_ids, /*may_start_launches=*/true);
    if (Status s = row->expand(in, own); !s.ok()) return s;
  }
  std::erase_if(plan.batches, [](const LaunchBatch& b) { return b.check_indexes.empty(); });
  if (plan.checks.empty()) return EmptyPlanError(policy, suite);
  ApplyLaunchTimeouts(plan);
  return plan;
}

namespace {
std::string GroupOf(const std::string& family) { return family.substr(0, family.find('.')); }

// A check of family `check` needs an invocation of `invocation`: "res.memory" needs
// "res.memory"; "persist" needs "persist.plant" and "persist.check".
bool Needs(const std::string& check, const std::string& invocation) {
  return invocation == check || invocation.rfind(check + ".", 0) == 0;
}
}  // namespace

void SetAsideInexpressible(Plan& plan, const ProbeAbilities& probe) {
  const std::set<std::string> can(probe.families.begin(), probe.families.end());
  // Every probe family the plan would send, and the first one of them `probe` lacks per check family.
  std::set<std::string> sent;
  for (const LaunchBatch& batch : plan.batches) {
    for (const ProbeInvocation& inv : batch.invocations) sent.insert(inv.family);
  }
  auto missing_for = [&](const std::string& check_family) -> std::string {
    if (sent.count(check_family) && !can.count(check_family)) return check_family;
    for (const std::string& family : sent) {
      if (Needs(check_family, family) && !can.count(family)) return family;
    }
    return "";
  };
  std::map<std::string, LaunchBatch> aside;  // missing probe family -> its unlaunched batch
  std::vector<bool> emptied(plan.batches.size(), false);
  for (std::size_t b = 0; b < plan.batches.size(); ++b) {
    LaunchBatch& batch = plan.batches[b];
    const bool had_checks = !batch.check_indexes.empty();
    std::erase_if(batch.check_indexes, [&](std::size_t i) {
      std::string missing = missing_for(plan.checks[i].family);
      if (missing.empty()) return false;
      aside[missing].check_indexes.push_back(i);
      return true;
    });
    const std::size_t sent_before = batch.invocations.size();
    std::erase_if(batch.invocations, [&](const ProbeInvocation& inv) { return !can.count(inv.family); });
    // Nothing left to ask, or every check gone: a launch with nothing to say (a persistence
    // plant launch without checks of its own stays while it still plants).
    emptied[b] = batch.check_indexes.empty() &&
                 (had_checks || (sent_before > 0 && batch.invocations.empty()));
  }
  for (std::size_t b = plan.batches.size(); b-- > 0;) {
    if (emptied[b]) plan.batches.erase(plan.batches.begin() + static_cast<long>(b));
  }
  for (auto& [family, batch] : aside) {
    batch.id = "B-" + family;  // unlike any planned id (B1, B2.3)
    batch.exclusive = true;  // never split with the shared launch, never beside another
    batch.not_expressible = fmt::format("not expressible in {}: the {} probe does not implement {}",
                                        probe.runtime, probe.runtime, family);
    plan.batches.push_back(std::move(batch));
  }
}

void SplitSharedLaunch(Plan& plan, int parts) {
  auto shared = std::find_if(plan.batches.begin(), plan.batches.end(),
                             [](const LaunchBatch& b) { return !b.exclusive; });
  if (parts < 2 || shared == plan.batches.end()) return;
  // Groups in first-seen order, with their checks and invocations.
  std::vector<std::string> groups;
  std::map<std::string, LaunchBatch> by_group;
  for (const ProbeInvocation& inv : shared->invocations) {
    std::string group = GroupOf(inv.family);
    if (!by_group.count(group)) groups.push_back(group);
    by_group[group].invocations.push_back(inv);
  }
  for (std::size_t i : shared->check_indexes) {
    std::string group = GroupOf(plan.checks[i].family);
    if (!by_group.count(group)) groups.push_back(group);
    by_group[group].check_indexes.push_back(i);
  }
  if (groups.size() < 2) return;
  // Largest groups first, each into the launch with the fewest checks so far.
  std::stable_sort(groups.begin(), groups.end(), [&](const std::string& a, const std::string& b) {
    return by_group[a].check_indexes.size() > by_group[b].check_indexes.size();
  });
  std::vector<LaunchBatch> launches(std::min<std::size_t>(static_cast<std::size_t>(parts), groups.size()));
  for (const std::string& group : groups) {
    LaunchBatch& target = *std::min_element(launches.begin(), launches.end(),
        [](const LaunchBatch& a, const LaunchBatch& b) { return a.check_indexes.size() < b.check_indexes.size(); });
    const LaunchBatch& from = by_group[group];
    target.invocations.insert(target.invocations.end(), from.invocations.begin(), from.invocations.end());
    target.check_indexes.insert(target.check_indexes.end(), from.check_indexes.begin(), from.check_indexes.end());
  }
  for (std::size_t k = 0; k < launches.size(); ++k) {
    launches[k].id = k == 0 ? shared->id : fmt::format("{}.{}", shared->id, k + 1);
    launches[k].timeout_seconds = shared->timeout_seconds;
  }
  std::size_t at = static_cast<std::size_t>(shared - plan.batches.begin());
  plan.batches.erase(shared);
  plan.batches.insert(plan.batches.begin() + static_cast<long>(at), launches.begin(), launches.end());
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

std::optional<std::string> ProbeArgvTooLong(const std::vector<std::string>& args) {
  std::size_t bytes = 0;
  // What execve counts against ARG_MAX: each string with its NUL, and its pointer in argv.
  for (const std::string& arg : args) bytes += arg.size() + 1 + sizeof(char*);
  if (bytes <= kMaxProbeArgvBytes) return std::nullopt;
  return fmt::format(
      "the probe's command line for this launch is {} bytes ({} arguments), over the {} a launch "
      "may carry (the kernel's ARG_MAX, shared with the sandbox's own argv and environment); "
      "split the policy's path lists or the suite",
      bytes, args.size(), kMaxProbeArgvBytes);
}

}  // namespace sandprobe
