#include "families/family.h"

#include <algorithm>

#include <fmt/format.h>

#include "contract/frame_reader.h"
#include "load/placeholders.h"

namespace sandprobe {

Status BatchBuilder::AddCheck(Check check) {
  if (!check_ids_.insert(check.id).second) {
    return Status::Error(fmt::format("{}: duplicate check {}", check.reference.Text(), check.id));
  }
  current().check_indexes.push_back(plan_.checks.size());
  plan_.checks.push_back(std::move(check));
  return Status::Ok();
}

ProbeInvocation& BatchBuilder::Invocation(const std::string& family) {
  for (ProbeInvocation& inv : current().invocations) {
    if (inv.family == family) return inv;
  }
  current().invocations.push_back({family, {}});
  return current().invocations.back();
}

Status BatchBuilder::StartLaunch(bool fresh_instance) {
  if (!may_start_launches_) {
    return Status::Error("only an exclusive family may start launches of its own");
  }
  LaunchBatch next{.id = fmt::format("B{}", plan_.batches.size() + 1), .exclusive = true,
                   .timeout_seconds = current().timeout_seconds,
                   .fresh_instance = fresh_instance};
  next.overlap_chain = current().overlap_chain;  // the family's launches stay one chain
  plan_.batches.push_back(std::move(next));
  batch_index_ = plan_.batches.size() - 1;
  args_seen_.clear();
  return Status::Ok();
}

void BatchBuilder::AddArg(const std::string& family, const std::string& arg) {
  if (args_seen_.insert(family + '\0' + arg).second) Invocation(family).args.push_back(arg);
}

FactIndex::FactIndex(const ProbeFrames& frames) : frames_(frames) {
  for (std::size_t i = 0; i < frames.facts.size(); ++i) {
    const nlohmann::json& fact = frames.facts[i];
    if (!fact.is_object()) continue;
    auto family = fact.find("family");
    by_family_[family != fact.end() && family->is_string() ? family->get<std::string>() : ""]
        .push_back(static_cast<int>(i));
    // ParseFrames refuses a second fact with one identity (a protocol error that makes the
    // launch incomplete), so each identity names at most one fact of a complete launch.
    if (std::optional<std::string> identity = FactIdentity(fact)) {
      by_key_.emplace(std::move(*identity), static_cast<int>(i));
    }
  }
}

std::optional<int> FactIndex::Find(const std::string& family, const std::string& path,
                                   const std::string& variant) const {
  auto it = by_key_.find(KeyedFactIdentity(family, path, variant));
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

const std::vector<int>& FactIndex::OfFamily(const std::string& family) const {
  static const std::vector<int> kNone;
  auto it = by_family_.find(family);
  return it == by_family_.end() ? kNone : it->second;
}

const FamilyRow* FindFamily(const std::string& name) {
  for (const FamilyRow& row : FamilyTable()) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

EvidenceTier DefaultEvidenceTier(const std::string& family) {
  const FamilyRow* row = FindFamily(family);
  return row == nullptr ? EvidenceTier::kReported : row->evidence;
}

void ApplyLaunchTimeouts(Plan& plan) {
  for (LaunchBatch& batch : plan.batches) {
    if (batch.timeout_seconds != 0) continue;
    for (const ProbeInvocation& invocation : batch.invocations) {
      const FamilyRow* row = FindFamily(invocation.family);
      if (row == nullptr || row->launch_timeout_seconds == nullptr) continue;
      batch.timeout_seconds = std::max(batch.timeout_seconds, row->launch_timeout_seconds(invocation));
    }
  }
}

StatusOr<std::string> ResolvePolicyPath(const PolicyPath& path, const ExpandInput& in) {
  StatusOr<std::string> resolved = ExpandString(path.path, in.path_values);
  if (!resolved.ok()) return resolved.status().WithContext(path.ref.Text());
  return resolved;
}

StatusOr<std::string> WritableScratchDir(const ExpandInput& in) {
  const auto& writable = in.policy.filesystem.writable;
  for (const PolicyPath& path : writable) {
    if (path.path == "/tmp") return std::string("/tmp");
  }
  if (!writable.empty()) return ResolvePolicyPath(writable.front(), in);
  return std::string("/tmp");
}

Verdict StartVerdict(const JudgeInput& in) {
  Verdict v;
  v.check = in.check;
  v.evidence.launch_id = in.result.launch_id;
  v.evidence.tier = DefaultEvidenceTier(in.check.family);
  return v;
}

void Judge(Verdict& v, bool as_promised, Direction if_not) {
  v.outcome = as_promised ? Outcome::kPass : Outcome::kFail;
  v.direction = as_promised ? Direction::kNone : if_not;
}

void ApplyControl(Verdict& v, Control control, const char* what) {
  if (v.outcome != Outcome::kPass || v.check.expect != Expectation::kDenied) return;
  if (control == Control::kPassed) return;
  v.outcome = Outcome::kInconclusive;
  v.observed += control == Control::kFailed
                    ? fmt::format("; but no path the policy declares {} could be {} either, so "
                                  "the denial proves nothing", what, what)
                    : fmt::format("; but the policy declares no {} path, so nothing shows the "
                                  "probe could have succeeded", what);
}

bool FactOk(const nlohmann::json& fact) { return fact.value("ok", false) == true; }

std::string DescribeFailure(const nlohmann::json& fact) {
  return fmt::format("{}: {}", fact.value("step", "open"), fact.value("errno", "unknown error"));
}

}  // namespace sandprobe
