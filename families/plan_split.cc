#include "families/plan_split.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace sandprobe {
namespace {

// The denied paths of a launch, each with the families that carry it as an argument.
struct Slicing {
  std::vector<std::string> targets;                   // in first-seen order
  std::map<std::string, std::set<std::string>> families_of;  // target -> families
  std::set<std::pair<std::string, std::string>> sliced;      // (family, target)
};

bool HasArg(const ProbeInvocation& invocation, const std::string& arg) {
  for (const std::string& a : invocation.args) {
    if (a == arg) return true;
  }
  return false;
}

Slicing FindSlices(const Plan& plan, const LaunchBatch& batch) {
  Slicing s;
  for (std::size_t i : batch.check_indexes) {
    const Check& check = plan.checks[i];
    if (check.expect != Expectation::kDenied || check.resolved_target.empty()) continue;
    for (const ProbeInvocation& invocation : batch.invocations) {
      if (invocation.family != check.family || !HasArg(invocation, check.resolved_target)) continue;
      if (!s.families_of.count(check.resolved_target)) s.targets.push_back(check.resolved_target);
      s.families_of[check.resolved_target].insert(check.family);
      s.sliced.insert({check.family, check.resolved_target});
    }
  }
  return s;
}

// Arguments that stay in every part that runs the family: all but its sliced targets.
std::size_t FixedArgCount(const LaunchBatch& batch, const Slicing& s) {
  std::size_t count = 2 + (batch.invocations.empty() ? 0 : batch.invocations.size() - 1);
  for (const ProbeInvocation& invocation : batch.invocations) {
    count += 1;
    for (const std::string& arg : invocation.args) count += s.sliced.count({invocation.family, arg}) ? 0 : 1;
  }
  return count;
}

// Greedy: targets in order, a new part whenever the next would pass the budget.
std::vector<std::set<std::string>> Parts(const Slicing& s, std::size_t fixed, std::size_t max_args) {
  std::vector<std::set<std::string>> parts(1);
  std::size_t used = fixed;
  for (const std::string& target : s.targets) {
    std::size_t cost = s.families_of.at(target).size();
    if (used + cost > max_args && !parts.back().empty()) {
      parts.emplace_back();
      used = fixed;
    }
    parts.back().insert(target);
    used += cost;
  }
  return parts;
}

// Part `k` of `batch`: its families' fixed arguments and this part's targets; the first part
// also keeps every family and every check not about a sliced target.
LaunchBatch MakePart(const Plan& plan, const LaunchBatch& batch, const Slicing& s,
                     const std::set<std::string>& part, std::size_t k) {
  LaunchBatch out = batch;
  if (k > 0) out.id = fmt::format("{}-{}", batch.id, k + 1);
  out.invocations.clear();
  out.check_indexes.clear();
  for (const ProbeInvocation& invocation : batch.invocations) {
    ProbeInvocation kept{invocation.family, {}};
    bool has_target = false;
    for (const std::string& arg : invocation.args) {
      bool sliced = s.sliced.count({invocation.family, arg}) > 0;
      if (sliced && !part.count(arg)) continue;
      has_target = has_target || sliced;
      kept.args.push_back(arg);
    }
    if (k == 0 || has_target) out.invocations.push_back(std::move(kept));
  }
  for (std::size_t i : batch.check_indexes) {
    const Check& check = plan.checks[i];
    bool sliced = s.sliced.count({check.family, check.resolved_target}) > 0;
    if (sliced ? part.count(check.resolved_target) > 0 : k == 0) out.check_indexes.push_back(i);
  }
  return out;
}

}  // namespace

std::size_t ProbeArgCount(const LaunchBatch& batch) {
  std::size_t count = 2 + (batch.invocations.empty() ? 0 : batch.invocations.size() - 1);
  for (const ProbeInvocation& invocation : batch.invocations) count += 1 + invocation.args.size();
  return count;
}

void SplitByArgumentBudget(Plan& plan, std::size_t max_args) {
  std::vector<LaunchBatch> batches;
  for (const LaunchBatch& batch : plan.batches) {
    if (batch.exclusive || ProbeArgCount(batch) <= max_args) {
      batches.push_back(batch);
      continue;
    }
    Slicing s = FindSlices(plan, batch);
    std::size_t fixed = FixedArgCount(batch, s);
    if (fixed >= max_args || s.targets.empty()) {
      batches.push_back(batch);
      continue;
    }
    std::vector<std::set<std::string>> parts = Parts(s, fixed, max_args);
    for (std::size_t k = 0; k < parts.size(); ++k) batches.push_back(MakePart(plan, batch, s, parts[k], k));
  }
  plan.batches = std::move(batches);
}

}  // namespace sandprobe
