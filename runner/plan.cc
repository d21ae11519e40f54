#include "runner/plan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_set>

#include <fmt/format.h>

#include "runner/placeholders.h"
#include "runner/witnesses.h"

namespace sandprobe {
namespace {

// Collects checks and the probe arguments they need for one batch.
class BatchBuilder {
 public:
  BatchBuilder(Plan& plan, LaunchBatch& batch) : plan_(plan), batch_(batch) {}

  // Adds the check; an id that exists already (the same path listed twice) is an error.
  Status AddCheck(Check check) {
    if (!check_ids_.insert(check.id).second) {
      return Status::Error(fmt::format("{}: duplicate check {}", check.reference, check.id));
    }
    batch_.check_indexes.push_back(plan_.checks.size());
    plan_.checks.push_back(std::move(check));
    return Status::Ok();
  }

  // The invocation of `family` in this batch (created on first use).
  ProbeInvocation& Invocation(const std::string& family) {
    for (ProbeInvocation& inv : batch_.invocations) {
      if (inv.family == family) return inv;
    }
    batch_.invocations.push_back({family, {}});
    return batch_.invocations.back();
  }

  // Appends an argument unless already present (one fact per path is enough).
  void AddArg(const std::string& family, const std::string& arg) {
    if (args_seen_.insert(family + '\0' + arg).second) Invocation(family).args.push_back(arg);
  }

 private:
  Plan& plan_;
  LaunchBatch& batch_;
  std::unordered_set<std::string> check_ids_;
  std::unordered_set<std::string> args_seen_;
};

struct ExpandInput {
  const Policy& policy;
  const SuiteEntry& entry;
  const std::map<std::string, std::string>& path_values;
};

StatusOr<std::string> Resolve(const PolicyPath& path, const ExpandInput& in) {
  StatusOr<std::string> resolved = ExpandString(path.path, in.path_values);
  if (!resolved.ok()) return resolved.status().WithContext(path.where + ": " + path.pointer);
  return resolved;
}

std::string Reference(const Policy& policy, const PolicyPath& path) {
  return fmt::format("{} {}", path.where, path.pointer);
}

// fs.read and fs.write share their shape: allowed list + denied list, one fact per path.
Status ExpandAccess(const ExpandInput& in, BatchBuilder& batch, const std::string& family,
                    const std::vector<PolicyPath>& allowed, const std::vector<PolicyPath>& denied) {
  auto add = [&](const PolicyPath& path, Expectation expect) -> Status {
    StatusOr<std::string> resolved = Resolve(path, in);
    if (!resolved.ok()) return resolved.status();
    Check check;
    check.family = family;
    check.expect = expect;
    check.id = fmt::format("{}.{}:{}", family, ExpectationName(expect), path.path);
    check.severity = expect == Expectation::kDenied ? Severity::kHigh : Severity::kMedium;
    check.target = path.path;
    check.resolved_target = *resolved;
    check.reference = Reference(in.policy, path);
    batch.AddArg(family, *resolved);
    return batch.AddCheck(std::move(check));
  };
  for (const PolicyPath& path : allowed) {
    if (Status s = add(path, Expectation::kAllowed); !s.ok()) return s;
  }
  for (const PolicyPath& path : denied) {
    if (Status s = add(path, Expectation::kDenied); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ExpandFsRead(const ExpandInput& in, BatchBuilder& batch) {
  const FilesystemPolicy& fs = in.policy.filesystem;
  return ExpandAccess(in, batch, "fs.read", fs.readable, fs.unreadable);
}

Status ExpandFsWrite(const ExpandInput& in, BatchBuilder& batch) {
  const FilesystemPolicy& fs = in.policy.filesystem;
  return ExpandAccess(in, batch, "fs.write", fs.writable, fs.unwritable);
}

// The directory fs.alias creates its symlinks in: /tmp when the policy lets the sandbox write
// there, else the first writable path, else /tmp anyway (the probe reports if it cannot).
StatusOr<std::string> AliasScratchDir(const ExpandInput& in) {
  const auto& writable = in.policy.filesystem.writable;
  for (const PolicyPath& path : writable) {
    if (path.path == "/tmp") return std::string("/tmp");
  }
  if (!writable.empty()) return Resolve(writable.front(), in);
  return std::string("/tmp");
}

Status ExpandFsAlias(const ExpandInput& in, BatchBuilder& batch) {
  const std::vector<std::string>& variants =
      in.entry.variants.empty() ? DefaultAliasVariants() : in.entry.variants;
  StatusOr<std::string> scratch = AliasScratchDir(in);
  if (!scratch.ok()) return scratch.status();
  bool any = false;
  for (const PolicyPath& path : in.policy.filesystem.unreadable) {
    StatusOr<std::string> resolved = Resolve(path, in);
    if (!resolved.ok()) return resolved.status();
    for (const std::string& variant : variants) {
      Check check;
      check.family = "fs.alias";
      check.expect = Expectation::kDenied;
      check.id = fmt::format("fs.alias.denied:{}[{}]", path.path, variant);
      check.severity = Severity::kHigh;
      check.target = path.path;
      check.resolved_target = *resolved;
      check.variant = variant;
      check.reference = Reference(in.policy, path);
      if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
    }
    if (!any) {
      // Options first, outside the per-path de-duplication.
      std::vector<std::string>& args = batch.Invocation("fs.alias").args;
      args.insert(args.begin(), {"--scratch", *scratch});
    }
    any = true;
    batch.AddArg("fs.alias", *resolved);
  }
  return Status::Ok();
}

Status ExpandEnvSecret(const ExpandInput& in, BatchBuilder& batch) {
  Check check;
  check.family = "env.secret";
  bool hidden = in.policy.host.env_secrets == "hidden";
  check.expect = hidden ? Expectation::kDenied : Expectation::kAllowed;
  check.id = hidden ? "env.secret.hidden" : "env.secret.visible";
  check.severity = hidden ? Severity::kHigh : Severity::kLow;
  check.target = std::string(kCanaryEnvPrefix) + "*";
  check.resolved_target = check.target;
  check.reference = in.policy.source_path + " /host/env_secrets";
  batch.AddArg("env.secret", std::string(kCanaryEnvPrefix));
  return batch.AddCheck(std::move(check));
}

using ExpandFn = std::function<Status(const ExpandInput&, BatchBuilder&)>;

// The family table: a row per family the planner can expand.
const std::map<std::string, ExpandFn>& FamilyTable() {
  static const std::map<std::string, ExpandFn> kTable = {
      {"fs.read", ExpandFsRead},
      {"fs.write", ExpandFsWrite},
      {"fs.alias", ExpandFsAlias},
      {"env.secret", ExpandEnvSecret},
  };
  return kTable;
}

}  // namespace

const std::set<std::string>& KnownFamilies() {
  static const std::set<std::string> kFamilies = [] {
    std::set<std::string> names;
    for (const auto& [name, fn] : FamilyTable()) names.insert(name);
    return names;
  }();
  return kFamilies;
}

const std::vector<std::string>& DefaultAliasVariants() {
  static const std::vector<std::string> kVariants = {"symlink", "dotdot", "proc_root"};
  return kVariants;
}

StatusOr<Plan> ExpandChecks(const Policy& policy, const Suite& suite, const PlanContext& context) {
  Plan plan;
  // Every family here is cheap and side-effect free, so one launch runs them all.
  plan.batches.push_back(LaunchBatch{.id = "B1"});
  BatchBuilder batch(plan, plan.batches.back());
  const std::map<std::string, std::string> path_values = {
      {"host_canary", context.host_canary}, {"workspace", context.workspace}};
  for (const SuiteEntry& entry : suite.entries) {
    auto row = FamilyTable().find(entry.family);
    if (row == FamilyTable().end()) {
      return Status::Error(fmt::format("{}: {}: family {} has no check expansion",
                                       suite.source_path, entry.pointer, entry.family));
    }
    ExpandInput in{policy, entry, path_values};
    if (Status s = row->second(in, batch); !s.ok()) return s;
  }
  if (plan.batches.back().check_indexes.empty()) plan.batches.pop_back();
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
