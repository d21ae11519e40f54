// Family: one probe family on the host side — how it expands a policy into Checks and probe
// arguments, and how its facts are judged. One row per family in family_table.cc; each family
// group lives in its own file (family_fs.cc, family_env.cc, ...).
//
// Adding a family: a probe file in probes/ + a family_*.cc here with Expand and Judge + a row
// in FamilyTable() + a suite entry. Nothing else changes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/check.h"
#include "model/evaluate_types.h"
#include "model/plan_types.h"
#include "load/policy.h"
#include "model/status.h"
#include "load/suite.h"
#include "model/verdict.h"

namespace sandprobe {

// What a family's Expand gets.
struct ExpandInput {
  const Policy& policy;
  const SuiteEntry& entry;
  const PlanContext& context;
  // Values for policy path placeholders: {host_canary}, {workspace}.
  const std::map<std::string, std::string>& path_values;
};

// Collects checks and the probe arguments they need into a LaunchBatch of the plan. An
// exclusive family's builder may start further launches of its own (StartLaunch), run in
// order after the first: e.g. plant, then check in the next turn, then in a fresh instance.
class BatchBuilder {
 public:
  // Builds into plan.batches[batch_index]; it holds the index, not a reference, because
  // StartLaunch grows plan.batches.
  BatchBuilder(Plan& plan, std::size_t batch_index, std::unordered_set<std::string>& check_ids,
               bool may_start_launches = false)
      : plan_(plan), batch_index_(batch_index), check_ids_(check_ids),
        may_start_launches_(may_start_launches) {}

  // Adds the check to the current launch; an id that exists already in the plan is an error
  // naming it.
  Status AddCheck(Check check);
  // The invocation of `family` in the current launch (created on first use).
  ProbeInvocation& Invocation(const std::string& family);
  // Appends a probe argument unless that family already has it (one fact per path).
  void AddArg(const std::string& family, const std::string& arg);
  // Makes a new launch, after the current one, the current one. Only for exclusive families
  // (the shared launch stays one launch); an error otherwise.
  Status StartLaunch(bool fresh_instance);
  LaunchBatch& current() { return plan_.batches[batch_index_]; }

 private:
  Plan& plan_;
  std::size_t batch_index_;
  std::unordered_set<std::string>& check_ids_;
  bool may_start_launches_;
  std::unordered_set<std::string> args_seen_;
};

// The facts of one launch, indexed by (family, path, variant) — the key most checks use.
class FactIndex {
 public:
  explicit FactIndex(const ProbeFrames& frames);
  std::optional<int> Find(const std::string& family, const std::string& path,
                          const std::string& variant = "") const;
  // Indexes of every fact of `family`, in order.
  const std::vector<int>& OfFamily(const std::string& family) const;
  const nlohmann::json& Fact(int index) const { return frames_.facts[static_cast<std::size_t>(index)]; }

 private:
  const ProbeFrames& frames_;
  std::map<std::string, int> by_key_;
  std::map<std::string, std::vector<int>> by_family_;
};

// Whether the probe showed it could do the allowed counterpart of a denial at all.
enum class Control { kPassed, kFailed, kAbsent };

struct Controls {
  Control read = Control::kAbsent;   // some policy-readable path was read
  Control write = Control::kAbsent;  // some policy-writable path was written
};

// One launch of the plan with its result and facts, for judges that read across launches.
struct LaunchFacts {
  const LaunchBatch& batch;
  const BatchResult& result;
  const FactIndex& facts;
};

// What a family's Judge gets: one check, the launch that ran it, and the host's own facts.
struct JudgeInput {
  const Check& check;
  const BatchResult& result;
  const FactIndex& facts;
  const Controls& controls;
  const WitnessFacts& witnesses;
  // Every launch of the plan, in order (Evaluate sets it; null in tests that need only one):
  // a family spread over several launches (persistence) reads its earlier launches here.
  const std::vector<LaunchFacts>* launches = nullptr;
};

struct FamilyRow {
  const char* name;
  Status (*expand)(const ExpandInput& in, BatchBuilder& batch);
  Verdict (*judge)(const JudgeInput& in);
  // Resource probes: their own launch, never beside another launch.
  bool exclusive = false;
  // Exclusive families of one named group that follow each other in a suite share one launch,
  // run one after the other in it: their measurements cannot disturb each other (res.disk and
  // res.fds). Null: a launch of its own.
  const char* exclusive_group = nullptr;
  // The family's expected end may be a kill by the sandbox (res.wall: the wall limit;
  // res.memory: the OOM killer taking the whole sandbox), so its judge reads how an incomplete
  // launch ended (BatchResult::end). Evaluate then keeps a non-fail verdict of an incomplete
  // launch only when the judge named that end as evidence (Evidence::expected_end); without
  // it, the usual rule holds: an incomplete launch is never a pass.
  bool judges_incomplete_launch = false;
  // What a suite entry may list as "variants" (checked when the suite loads); none by default.
  VariantRule variants = {};
  // The launch timeout this family's invocation needs (its probe's worst case), in seconds;
  // null or 0: the profile's timeout_seconds. A launch takes the longest of its invocations'.
  int (*launch_timeout_seconds)(const ProbeInvocation& invocation) = nullptr;
  // What this family's verdicts rest on unless its judge says otherwise (Evidence::tier):
  // the probe's word, unless the host witnesses or the harness measures what decides.
  EvidenceTier evidence = EvidenceTier::kReported;
};

// Sets LaunchBatch::timeout_seconds from the family table (launch_timeout_seconds) where the
// planner left it 0.
void ApplyLaunchTimeouts(Plan& plan);

// Every family the host side knows, in the order `list` shows them.
const std::vector<FamilyRow>& FamilyTable();
const FamilyRow* FindFamily(const std::string& name);
// The family's FamilyRow::evidence; kReported for a family the table does not know.
EvidenceTier DefaultEvidenceTier(const std::string& family);

// --- Helpers for Expand and Judge functions ---

// Expands placeholders in a policy path; errors name the policy position.
StatusOr<std::string> ResolvePolicyPath(const PolicyPath& path, const ExpandInput& in);
// Where a probe may write scratch files (fs.alias's symlinks, res.disk's fill): /tmp when the
// policy lets the sandbox write there, else its first writable path, else /tmp anyway (the
// probe then reports that it cannot).
StatusOr<std::string> WritableScratchDir(const ExpandInput& in);
// A verdict for `check` with the launch as evidence and its family's evidence tier
// (FamilyRow::evidence); outcome still to be set.
Verdict StartVerdict(const JudgeInput& in);
// pass when `as_promised`, else fail in direction `if_not`.
void Judge(Verdict& v, bool as_promised, Direction if_not);
// A deny that passed proves nothing when the allowed counterpart failed too: inconclusive.
void ApplyControl(Verdict& v, Control control, const char* what);
bool FactOk(const nlohmann::json& fact);
// "open: EACCES"
std::string DescribeFailure(const nlohmann::json& fact);

}  // namespace sandprobe
