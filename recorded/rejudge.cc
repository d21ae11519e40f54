#include "recorded/rejudge.h"

#include <optional>

#include <fmt/format.h>

#include "reports/json_report_read.h"
#include "families/evaluate.h"
#include "load/json_document.h"
#include "families/plan.h"

namespace sandprobe {
namespace {

// Every argument `batch` gave the probe's `family`, in order.
std::vector<std::string> ArgsOf(const LaunchBatch& batch, const std::string& family) {
  std::vector<std::string> args;
  for (const ProbeInvocation& inv : batch.invocations) {
    if (inv.family == family) args.insert(args.end(), inv.args.begin(), inv.args.end());
  }
  return args;
}

bool SameTolerance(const std::optional<Tolerance>& a, const std::optional<Tolerance>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->declared == b->declared && a->plus_minus == b->plus_minus && a->percent == b->percent);
}

// The same promise about the same target, asked the same way.
bool SameCheck(const Check& a, const Check& b) {
  return a.id == b.id && a.family == b.family && a.expect == b.expect && a.target == b.target &&
         a.resolved_target == b.resolved_target && a.variant == b.variant &&
         SameTolerance(a.tolerance, b.tolerance);
}

// The recorded batch whose facts decide `check` (planned in `planned` by the new policy), or
// nullopt when the run never asked the probe for it:
//  - the run planned the same check, and the probe's family got the same arguments then as
//    the new plan would give it now (a changed limit changes a resource probe's ceiling, so a
//    fact from the old ceiling decides nothing about the new one);
//  - or, in the shared launch, the run asked the check's family for the check's own target
//    (a path-list family: one fact per path, whatever else the list held). Exclusive
//    families (resources, persistence) are sequences of launches: only the first rule.
std::optional<std::size_t> RecordedBatchFor(const RecordedRun& run, const LaunchBatch& planned,
                                            const Check& check) {
  const std::vector<std::string> wanted = ArgsOf(planned, check.family);
  for (std::size_t b = 0; b < run.plan.batches.size(); ++b) {
    const LaunchBatch& recorded = run.plan.batches[b];
    for (std::size_t i : recorded.check_indexes) {
      if (SameCheck(run.plan.checks[i], check) && ArgsOf(recorded, check.family) == wanted) return b;
    }
  }
  if (planned.exclusive || check.resolved_target.empty()) return std::nullopt;
  for (std::size_t b = 0; b < run.plan.batches.size(); ++b) {
    const LaunchBatch& recorded = run.plan.batches[b];
    if (recorded.exclusive) continue;
    const std::vector<std::string> args = ArgsOf(recorded, check.family);
    for (std::size_t k = 0; k < args.size(); ++k) {
      // An option's value ("--scratch /tmp") is not a target the probe was asked about.
      bool option_value = k > 0 && args[k - 1].rfind("--", 0) == 0;
      if (args[k] == check.resolved_target && !option_value) return b;
    }
  }
  return std::nullopt;
}

Verdict NotProbed(const Check& check, const std::string& run_id) {
  Verdict v;
  v.check = check;
  v.outcome = Outcome::kSkip;
  v.expected = std::string(ExpectationName(check.expect));
  v.observed = fmt::format("not probed in run {}: its launches never asked {} for {}", run_id,
                           check.family, check.resolved_target.empty() ? check.id : check.resolved_target);
  v.remediation = "run the sandbox again with this policy to probe it";
  return v;
}

// A document the report holds (the suite, the policy as loaded), parsed by its own loader;
// messages name it as "RUN.json#/plan/suite".
StatusOr<JsonDocument> Embedded(const nlohmann::json& value, const std::string& where) {
  return JsonDocument::Parse(value.dump(), where);
}

StatusOr<Policy> PolicyFor(const RunReport& recorded, const std::string& file, const std::string& policy_path) {
  if (!policy_path.empty()) return LoadPolicy(policy_path);
  StatusOr<JsonDocument> doc = Embedded(recorded.policy, file + "#/policy/config");
  if (!doc.ok()) return doc.status();
  StatusOr<Policy> policy = ParsePolicy(*doc);
  if (policy.ok()) policy->source_path = recorded.policy_path;
  return policy;
}

// A launch's time shared among the checks it decided, as a live run does.
void ShareLaunchTimes(const Rejudged& judged, RunReport& report) {
  for (std::size_t b = 0; b < judged.plan.batches.size(); ++b) {
    const std::vector<std::size_t>& indexes = judged.plan.batches[b].check_indexes;
    for (const LaunchRecord& launch : report.launches) {
      if (launch.id != judged.results[b].launch_id || indexes.empty()) continue;
      for (std::size_t i : indexes) report.verdicts[i].duration_seconds = launch.wall_ms / 1000.0 / indexes.size();
    }
  }
}

}  // namespace

StatusOr<RunReport> RejudgeReport(const nlohmann::json& report, const std::string& file,
                                  const std::string& policy_path) {
  StatusOr<RunReport> out = ReadJsonReportFacts(report, file);
  if (!out.ok()) return out.status();
  StatusOr<RecordedRun> run = ReadRecordedRun(report, file);
  if (!run.ok()) return run.status();
  StatusOr<JsonDocument> suite_doc = Embedded(run->suite, file + "#/plan/suite");
  if (!suite_doc.ok()) return suite_doc.status();
  StatusOr<Suite> suite = ParseSuite(*suite_doc, KnownFamilies());
  if (!suite.ok()) return suite.status();
  StatusOr<Policy> policy = PolicyFor(*out, file, policy_path);
  if (!policy.ok()) return policy.status();
  StatusOr<Rejudged> judged = Rejudge(*run, *policy, *suite);
  if (!judged.ok()) return judged.status();
  out->policy_name = policy->name;
  out->policy_path = policy->source_path;
  out->policy = policy->raw;
  out->verdicts = judged->verdicts;
  ShareLaunchTimes(*judged, *out);
  out->plan = RecordPlan(*suite, run->context, judged->plan, judged->results, run->witnesses);
  out->rejudged_from = RejudgedFrom{run->run_id, policy->name, policy->source_path};
  return out;
}

StatusOr<Rejudged> Rejudge(const RecordedRun& run, const Policy& policy, const Suite& suite) {
  StatusOr<Plan> planned = ExpandChecks(policy, suite, run.context);
  if (!planned.ok()) return planned.status();
  Rejudged out;
  out.plan.checks = planned->checks;
  out.plan.batches = run.plan.batches;
  for (LaunchBatch& batch : out.plan.batches) batch.check_indexes.clear();
  std::vector<BatchResult>& results = out.results;
  results = run.results;
  std::vector<std::size_t> not_probed;
  for (const LaunchBatch& batch : planned->batches) {
    if (batch.invocations.empty()) {  // decided from the policy alone: nothing to look up
      out.plan.batches.push_back(batch);
      results.push_back(BatchResult{.state = BatchResult::State::kRan, .complete = true});
      continue;
    }
    for (std::size_t i : batch.check_indexes) {
      std::optional<std::size_t> recorded = RecordedBatchFor(run, batch, planned->checks[i]);
      if (recorded) out.plan.batches[*recorded].check_indexes.push_back(i);
      else not_probed.push_back(i);
    }
  }
  out.verdicts = Evaluate(out.plan, results, run.witnesses);
  for (std::size_t i : not_probed) out.verdicts[i] = NotProbed(out.plan.checks[i], run.run_id);
  return out;
}

}  // namespace sandprobe
