#include "mutate/mutate.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "contract/exit_code.h"
#include "families/plan.h"
#include "load/run_inputs.h"
#include "mutate/audit_phases.h"
#include "mutate/mutant_setup.h"
#include "mutate/mutation_operators.h"
#include "run/run.h"
#include "run/scheduler.h"

namespace sandprobe {
namespace {

using Clock = std::chrono::steady_clock;

bool Selected(const std::vector<std::string>& globs, const std::string& name) {
  return globs.empty() || std::any_of(globs.begin(), globs.end(), [&](const std::string& glob) {
           return ::fnmatch(glob.c_str(), name.c_str(), 0) == 0;
         });
}

// A mutant on its way through the phases.
struct Mutant {
  MutantResult result;
  std::optional<Profile> profile;  // set when it is to be audited
  // Decided without the comparison: not applicable, invalid (refused, unlaunchable),
  // unfinished. A kill found before still wins (MutateSession::Finish).
  std::optional<MutantStatus> decided;
  MutantDistinction seen;  // over the phases run so far
  std::optional<std::string> equivalent_because;  // MutantSetup's
  std::string claim_lapsed;
  bool interrupted = false;  // a run of its audit was cut short

  void Decide(MutantStatus status, std::string why) {
    decided = status;
    result.why = std::move(why);
  }
};

// What one run of a phase left for comparison.
struct PhaseRun {
  std::optional<RunReport> report;
  std::string error;  // RunProfile's Status, when it returned no report
  StatusCode error_code = StatusCode::kHarness;
  double seconds = 0;
};

std::size_t Decided(const std::vector<Verdict>& verdicts) {
  return static_cast<std::size_t>(
      std::count_if(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return IsDecided(v.outcome); }));
}

class MutateSession {
 public:
  MutateSession(const MutateOptions& options, Launcher& launcher)
      : options_(options), launcher_(launcher), started_(Clock::now()) {}

  StatusOr<MutateReport> Execute() && {
    if (Status s = Load(); !s.ok()) return s;
    PrepareMutants();
    // Nothing to audit (every operator not applicable or refused): no run proves anything.
    const bool any_live = std::any_of(mutants_.begin(), mutants_.end(), [](const Mutant& m) { return !m.decided; });
    if (any_live) {
      if (Status s = RunPhases(); !s.ok()) return s;
    }
    Finish();
    return std::move(report_);
  }

 private:
  Status Load() {
    StatusOr<RunInputs> inputs =
        LoadRunInputs(options_.profile_path, options_.policy_path, options_.suite_paths, KnownFamilies());
    if (!inputs.ok()) return inputs.status();
    inputs_.emplace(std::move(*inputs));
    StatusOr<std::vector<AuditPhase>> phases = PlanAuditPhases(options_.suite_paths, KnownFamilies());
    if (!phases.ok()) return phases.status();
    phases_ = std::move(*phases);
    StatusOr<MutationOperatorFile> operators = options_.operators_path.empty()
                                                   ? FindMutationOperators(options_.mutations_dir, inputs_->profile.backend)
                                                   : LoadMutationOperators(options_.operators_path);
    if (!operators.ok()) return operators.status();
    operators_.emplace(std::move(*operators));
    report_.tool_version = options_.tool_version;
    report_.profile_name = inputs_->profile.name;
    report_.profile_path = inputs_->profile.source_path;
    report_.policy_name = inputs_->policy.name;
    report_.operators_path = operators_->source_path;
    report_.suites = inputs_->suite.names;
    report_.jobs = options_.jobs;
    report_.full_matrix = options_.full_matrix;
    return Status::Ok();
  }

  // Each selected operator's mutant, or why there is none.
  void PrepareMutants() {
    HostCommands host(launcher_);
    for (const MutationOperator& op : operators_->operators) {
      if (!Selected(options_.only, op.name)) continue;
      MutantSetup setup = SetUpMutant(inputs_->profile, *operators_, op, host);
      mutants_.push_back(Mutant{.result = std::move(setup.result), .profile = std::move(setup.profile),
                                .decided = setup.decided, .equivalent_because = setup.equivalent_because,
                                .claim_lapsed = setup.claim_lapsed});
    }
  }

  bool ShouldStop() const {
    if (options_.cancel != nullptr && options_.cancel->load()) return true;
    return options_.timeout.count() > 0 && Clock::now() - started_ >= options_.timeout;
  }

  PhaseRun RunOnce(const Profile& profile, const AuditPhase& phase) {
    RunOptions run{.profile_path = profile.source_path,
                   .inputs = RunInputs{profile, inputs_->policy, phase.suite},
                   .probe_dir = options_.probe_dir,
                   .layout_probe_dir = options_.layout_probe_dir,
                   .probe_builds = options_.probe_builds,
                   .tool_version = options_.tool_version,
                   .cancel = options_.cancel,
                   .jobs = options_.run_jobs};
    if (options_.timeout.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::seconds>(options_.timeout - (Clock::now() - started_));
      run.run_timeout = std::max(left, std::chrono::seconds(1));
    }
    Clock::time_point start = Clock::now();
    StatusOr<RunReport> report = RunProfile(run, launcher_);
    PhaseRun out;
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (report.ok()) out.report = std::move(*report);
    else out.error = report.status().message(), out.error_code = report.status().code();
    return out;
  }

  // The shared phase (the profile's run beside the mutants'); then the profile's run of each
  // exclusive suite, alone; then the mutants' runs of the exclusive suites, those that measure
  // nothing first (their runs may share the machine: persistence) and those that measure limits
  // last, one run at a time: a mutant killed on the way skips the costly ones.
  Status RunPhases() {
    for (AuditPhase& phase : phases_) {
      if (phase.exclusive || ShouldStop()) continue;
      if (Status s = RunPhase(phase); !s.ok()) return s;
    }
    for (AuditPhase& phase : phases_) {
      if (!phase.exclusive || ShouldStop()) continue;
      Clock::time_point start = Clock::now();
      PhaseRun run = RunOnce(inputs_->profile, phase);
      report_.phases.push_back({phase.suite.name + " (the profile's own)", true, 1, SecondsSince(start)});
      if (Status s = TakeBaseline(phase, run); !s.ok()) return s;
    }
    std::vector<AuditPhase*> order;
    for (AuditPhase& phase : phases_) {
      if (phase.exclusive && phase.baseline) order.push_back(&phase);
    }
    std::stable_partition(order.begin(), order.end(), [](const AuditPhase* phase) { return !phase->measures; });
    for (AuditPhase* phase : order) {
      if (ShouldStop()) break;
      if (Status s = RunPhase(*phase); !s.ok()) return s;
    }
    if (ShouldStop()) StopOpenMutants("the session was stopped first");
    return Status::Ok();
  }

  // The phases with a baseline: every survivor ran all of them.
  std::size_t PhasesRun() const {
    return static_cast<std::size_t>(
        std::count_if(phases_.begin(), phases_.end(), [](const AuditPhase& phase) { return phase.baseline.has_value(); }));
  }

  static double SecondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  // The profile's run of `phase`: its verdicts become the phase's baseline. A profile whose own
  // audit did not run, or decided nothing, is no baseline: the session ends there (exit 3).
  Status TakeBaseline(AuditPhase& phase, const PhaseRun& run) {
    if (!run.report) {
      if (ShouldStop()) return Status::Ok();
      // The inputs loaded before the session; what a run still refuses as input is its plan: a
      // suite with no check for this policy (resources without `limits`), as `run --suite all`
      // plans such a suite to nothing. The phase goes, and says why.
      if (run.error_code == StatusCode::kInvalidInput) {
        phase.skipped = run.error;
        report_.phases.push_back({.suite = phase.suite.name, .skipped = run.error});
        return Status::Ok();
      }
      return Status::HarnessError(fmt::format("the audit of {} itself ({}) did not run: {}", inputs_->profile.name,
                                              phase.suite.name, run.error));
    }
    const RunReport& baseline = *run.report;
    if (Decided(baseline.verdicts) == 0) {
      return Status::HarnessError(fmt::format(
          "the audit of {} itself ({}) decided no check: {}", inputs_->profile.name, phase.suite.name,
          baseline.verdicts.empty() ? std::string("nothing planned") : baseline.verdicts.front().observed));
    }
    report_.baseline_run_ids.push_back(baseline.run_id);
    report_.interrupted = report_.interrupted || baseline.interrupted;
    phase.measures = MeasuresLimits(baseline.verdicts);
    phase.baseline.emplace();
    AddVerdicts(*phase.baseline, baseline.verdicts);
    for (const auto& [id, verdict] : *phase.baseline) baseline_.emplace(id, verdict);
    return Status::Ok();
  }

  // Every live mutant's run of `phase` (with the profile's own first when the phase has no
  // baseline yet), then each compared with the baseline.
  Status RunPhase(AuditPhase& phase) {
    std::vector<std::size_t> live;  // indexes into mutants_
    for (std::size_t i = 0; i < mutants_.size(); ++i) {
      const Mutant& m = mutants_[i];
      if (!m.decided && (options_.full_matrix || m.seen.flipped.empty())) live.push_back(i);
    }
    const std::size_t first = phase.baseline ? 0 : 1;  // runs[0] is the profile's when it has none yet
    if (live.empty() && first == 0) return Status::Ok();
    std::vector<PhaseRun> runs(live.size() + first);
    std::vector<ScheduleItem> items(runs.size(), ScheduleItem{phase.measures});
    const Clock::time_point start = Clock::now();
    RunScheduled(
        items, options_.jobs,
        [&](std::size_t i) { runs[i] = RunOnce(i < first ? inputs_->profile : *mutants_[live[i - first]].profile, phase); },
        [this] { return ShouldStop(); }, [](std::size_t) {});
    report_.phases.push_back({phase.suite.name, phase.measures, runs.size(), SecondsSince(start)});
    if (first == 1) {
      if (Status s = TakeBaseline(phase, runs[0]); !s.ok()) return s;
      if (!phase.baseline) return Status::Ok();  // skipped, or stopped before the profile's run ended
    }
    for (std::size_t k = 0; k < live.size(); ++k) Judge(mutants_[live[k]], runs[k + first], *phase.baseline, phase);
    return Status::Ok();
  }

  // Stopped (interrupted, out of time): what is decided so far stays, every mutant still open
  // and not killed is unfinished.
  void StopOpenMutants(const std::string& why) {
    report_.interrupted = true;
    for (Mutant& m : mutants_) {
      if (!m.decided && m.seen.flipped.empty() && m.result.suites.size() < PhasesRun()) {
        m.Decide(MutantStatus::kUnfinished, why);
      }
    }
  }

  void Judge(Mutant& m, const PhaseRun& run, const std::map<std::string, VerdictOutcome>& before,
             const AuditPhase& phase) {
    m.result.seconds += run.seconds;
    if (!run.report) {
      // Never started (stopped first), or refused by the run before its first launch.
      if (run.error.empty()) return m.Decide(MutantStatus::kUnfinished, "stopped before its audit of " + phase.suite.name);
      return m.Decide(MutantStatus::kInvalid, run.error);
    }
    m.result.suites.push_back(phase.suite.name);
    m.result.run_ids.push_back(run.report->run_id);
    m.interrupted = m.interrupted || run.report->interrupted;
    MutantDistinction seen = CompareWithBaseline(before, run.report->verdicts);
    for (std::string& id : seen.flipped) m.seen.flipped.push_back(std::move(id));
    for (CheckMove& move : seen.kills) m.seen.kills.push_back(std::move(move));
    for (CheckMove& move : seen.changed) m.seen.changed.push_back(std::move(move));
    for (CheckMove& move : seen.new_errors) m.seen.new_errors.push_back(std::move(move));
    // A mutant that decided nothing could not be launched: the later phases would not either.
    if (m.seen.flipped.empty() && Decided(run.report->verdicts) == 0 && !run.report->interrupted) {
      const std::vector<Verdict>& v = run.report->verdicts;
      m.Decide(MutantStatus::kInvalid, "unlaunchable: " + (v.empty() ? std::string("nothing planned") : v.front().observed));
    }
    if (options_.on_event) {
      options_.on_event(fmt::format("{} {}: {} ({:.1f} s)", phase.suite.name, m.result.name,
                                    m.seen.flipped.empty() ? "no check moved the permissive way"
                                                           : fmt::format("killed by {}", fmt::join(m.seen.flipped, ", ")),
                                    run.seconds));
    }
  }

  // The final status of each mutant: a kill wins over everything; then what was decided on the
  // way; a new error leaves it invalid; a cut run unfinished; else it survived.
  void Finish() {
    for (const auto& [id, v] : baseline_) {
      if (!IsDecided(v.outcome)) report_.baseline_undecided.push_back(id);
    }
    report_.baseline_checks = baseline_.size();
    for (Mutant& m : mutants_) {
      MutantResult& r = m.result;
      r.flipped = m.seen.flipped;
      r.kills = m.seen.kills;
      r.changed = m.seen.changed;
      if (!r.flipped.empty()) {
        r.status = MutantStatus::kKilled;
        r.why.clear();
      } else if (m.decided) {
        r.status = *m.decided;
      } else if (!m.seen.new_errors.empty()) {
        const CheckMove& first = m.seen.new_errors.front();
        r.status = MutantStatus::kInvalid;
        r.why = fmt::format("{} check(s) errored where the profile's did not, e.g. {}: {}", m.seen.new_errors.size(),
                            first.id, first.to.observed);
      } else if (m.interrupted || r.suites.size() < PhasesRun()) {
        r.status = MutantStatus::kUnfinished;
        r.why = "interrupted or out of time before its audit ended";
      } else if (m.equivalent_because) {
        r.status = MutantStatus::kEquivalent;
        r.why = *m.equivalent_because;
      } else {
        r.status = MutantStatus::kSurvived;
        r.why = fmt::format("no check moved the permissive way in {}", fmt::join(r.suites, ", "));
        if (!m.claim_lapsed.empty()) r.why += "; " + m.claim_lapsed;
      }
      report_.mutants.push_back(std::move(r));
    }
    report_.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  }

  const MutateOptions& options_;
  Launcher& launcher_;
  const Clock::time_point started_;
  std::optional<RunInputs> inputs_;
  std::optional<MutationOperatorFile> operators_;
  std::vector<AuditPhase> phases_;
  std::vector<Mutant> mutants_;
  std::map<std::string, VerdictOutcome> baseline_;  // the profile's verdicts, every phase
  MutateReport report_;
};

}  // namespace

std::string_view MutantStatusName(MutantStatus status) {
  switch (status) {
    case MutantStatus::kKilled: return "killed";
    case MutantStatus::kSurvived: return "survived";
    case MutantStatus::kInvalid: return "invalid";
    case MutantStatus::kNotApplicable: return "not_applicable";
    case MutantStatus::kUnfinished: return "unfinished";
    case MutantStatus::kEquivalent: return "equivalent";
  }
  return "?";
}

std::size_t MutateReport::Count(MutantStatus status) const {
  return static_cast<std::size_t>(
      std::count_if(mutants.begin(), mutants.end(), [&](const MutantResult& m) { return m.status == status; }));
}

StatusOr<MutateReport> RunMutate(const MutateOptions& options, Launcher& launcher) {
  return MutateSession(options, launcher).Execute();
}

int MutateExitCode(const MutateReport& report) {
  if (report.Count(MutantStatus::kSurvived) > 0) return kExitFail;
  if (report.interrupted || report.total() == 0 || report.Count(MutantStatus::kUnfinished) > 0) return kExitHarness;
  return kExitPass;
}

}  // namespace sandprobe
