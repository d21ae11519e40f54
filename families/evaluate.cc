#include "families/evaluate.h"

#include <optional>

#include "contract/exit_code.h"

#include "families/family.h"
#include "families/list_counts.h"

namespace sandprobe {
namespace {

// Whether the launch asked `family` for `target` (a launch split by argument budget carries
// the allowed paths in every part, while their checks live in the first).
bool AskedFor(const LaunchBatch& batch, const std::string& family, const std::string& target) {
  for (const ProbeInvocation& invocation : batch.invocations) {
    if (invocation.family != family) continue;
    for (const std::string& arg : invocation.args) {
      if (arg == target) return true;
    }
  }
  return false;
}

// The read (write) control of a batch: did any path the policy allows, which this launch was
// asked for, get read (written)?
Control ComputeControl(const Plan& plan, const LaunchBatch& batch, const FactIndex& facts,
                       const std::string& family) {
  Control control = Control::kAbsent;
  for (const Check& check : plan.checks) {
    if (check.family != family || check.expect != Expectation::kAllowed) continue;
    if (!AskedFor(batch, family, check.resolved_target)) continue;
    control = Control::kFailed;
    std::optional<int> index = facts.Find(family, check.resolved_target);
    if (index && FactOk(facts.Fact(*index))) return Control::kPassed;
  }
  return control;
}

// The family's judge; a judge that left the evidence tier unset gets its family's default.
Verdict JudgeCheck(const JudgeInput& in) {
  const FamilyRow* row = FindFamily(in.check.family);
  if (row == nullptr) {
    Verdict v = StartVerdict(in);
    v.outcome = Outcome::kError;
    v.observed = "no judge for family " + in.check.family;
    v.evidence.tier = EvidenceTier::kNone;
    return v;
  }
  Verdict v = row->judge(in);
  DistrustMiscountedList(in.facts, v);
  if (!v.evidence.tier) v.evidence.tier = row->evidence;
  if (v.outcome == Outcome::kSkip) v.evidence.tier = EvidenceTier::kNone;  // not judged: nothing observed
  return v;
}

// The judge of an incomplete launch's family showed that the launch ended as the check
// expects (a kill by the sandbox), so its verdict stands as judged.
bool ExpectedEnd(const Check& check, const Verdict& v) {
  const FamilyRow* row = FindFamily(check.family);
  return row != nullptr && row->judges_incomplete_launch && !v.evidence.expected_end.empty();
}

// The verdict rests on something the launch itself said (a fact it cites). A witness's fact
// that proves a leak makes a fail, which DistrustIncomplete keeps anyway.
bool CitesAFact(const Verdict& v) { return !v.evidence.frame_indexes.empty(); }

// Garbage is never a pass: a pass needs a launch that finished cleanly (done frame, no
// protocol error, exit 0, no signal), or a family judge that proved the sandbox ended it as
// expected (ExpectedEnd). What the launch did prove stays: a leak (a too-permissive fail) is a
// fail whatever happened after it. A too-restrictive fail is not proof from a broken launch (a
// probe killed or contradicted half-way "could not read /tmp" too), so it is an error like a
// pass. Only a check with no evidence at all becomes a skip when the backend then went missing.
void DistrustIncomplete(const Check& check, const BatchResult& result, Verdict& v) {
  if (v.outcome == Outcome::kFail && v.direction == Direction::kTooPermissive) return;
  if (ExpectedEnd(check, v)) return;
  v.direction = Direction::kNone;
  if (!result.backend_unavailable.empty() && !CitesAFact(v)) {
    v.outcome = result.backend_required ? Outcome::kError : Outcome::kSkip;
    v.observed = result.backend_unavailable;
    v.evidence.tier = EvidenceTier::kNone;
    return;
  }
  v.outcome = Outcome::kError;
  v.observed = "probe launch incomplete (" + result.reason + "); partial: " + v.observed;
  if (!result.backend_unavailable.empty()) v.observed += "; then " + result.backend_unavailable;
}

// A launch without a fresh positive control (BatchResult::challenge_unavailable) may be a
// replay or a cached result: its passes rest on the probe's word alone, whatever the judge's
// tier, and say why.
void CapUncontrolled(const BatchResult& result, Verdict& v) {
  if (result.challenge_unavailable.empty() || v.outcome != Outcome::kPass) return;
  v.evidence.tier = EvidenceTier::kReported;
  v.evidence.witness_facts.push_back("no fresh positive control for this launch: " + result.challenge_unavailable);
}

Verdict NotRun(const Check& check, const BatchResult& result) {
  Verdict v;
  v.check = check;
  v.evidence.launch_id = result.launch_id;
  v.evidence.tier = EvidenceTier::kNone;  // nothing ran: nothing observed
  switch (result.state) {
    case BatchResult::State::kSkipped:
      v.outcome = Outcome::kSkip;
      v.observed = result.reason;
      break;
    case BatchResult::State::kLaunchFailed:
      v.outcome = Outcome::kError;
      v.observed = result.reason;
      break;
    case BatchResult::State::kInterrupted:
      v.outcome = Outcome::kError;
      v.observed = "interrupted" + (result.reason.empty() ? "" : ": " + result.reason);
      break;
    case BatchResult::State::kRan:
      break;
  }
  return v;
}

}  // namespace

std::vector<Verdict> Evaluate(const Plan& plan, const std::vector<BatchResult>& results,
                              const WitnessFacts& witnesses) {
  std::vector<Verdict> verdicts(plan.checks.size());
  std::vector<bool> judged(plan.checks.size(), false);
  static const BatchResult kMissing{.state = BatchResult::State::kLaunchFailed,
                                    .reason = "the harness recorded no result for this launch"};
  // Every launch's facts first: a family spread over several launches judges across them.
  std::vector<FactIndex> fact_indexes;
  fact_indexes.reserve(plan.batches.size());
  std::vector<LaunchFacts> launches;
  launches.reserve(plan.batches.size());
  for (std::size_t b = 0; b < plan.batches.size(); ++b) {
    const BatchResult& result = b < results.size() ? results[b] : kMissing;
    fact_indexes.emplace_back(result.frames);
    launches.push_back({plan.batches[b], result, fact_indexes.back()});
  }
  for (std::size_t b = 0; b < plan.batches.size(); ++b) {
    const LaunchBatch& batch = plan.batches[b];
    const BatchResult& result = launches[b].result;
    const FactIndex& facts = fact_indexes[b];
    Controls controls{ComputeControl(plan, batch, facts, "fs.read"),
                      ComputeControl(plan, batch, facts, "fs.write")};
    for (std::size_t i : batch.check_indexes) {
      const Check& check = plan.checks[i];
      judged[i] = true;
      if (result.state != BatchResult::State::kRan) {
        verdicts[i] = NotRun(check, result);
        continue;
      }
      const JudgeInput in{check, result, facts, controls, witnesses, &launches};
      Verdict v = JudgeCheck(in);
      if (!result.complete) DistrustIncomplete(check, result, v);
      CapUncontrolled(result, v);
      verdicts[i] = std::move(v);
    }
  }
  for (std::size_t i = 0; i < plan.checks.size(); ++i) {
    if (judged[i]) continue;
    verdicts[i].check = plan.checks[i];
    verdicts[i].outcome = Outcome::kError;
    verdicts[i].observed = "the plan put this check in no launch";
    verdicts[i].evidence.tier = EvidenceTier::kNone;
  }
  return verdicts;
}

int ExitCodeFor(const std::vector<Verdict>& verdicts, Severity fail_on) {
  bool unsure = false;
  for (const Verdict& v : verdicts) {
    switch (v.outcome) {
      case Outcome::kFail:
        if (AtLeast(v.check.severity, fail_on)) return kExitFail;
        break;
      case Outcome::kError:
      case Outcome::kInconclusive:
        unsure = true;
        break;
      case Outcome::kPass:
      case Outcome::kSkip:
        break;
    }
  }
  return unsure ? kExitHarness : kExitPass;
}

}  // namespace sandprobe
