// `sandprobe mutate`: the generalisation guard. Runs the audit of a profile and of each
// one-variable mutant of it (mutate/mutation_operators.h), and says which mutants no verdict
// told apart from the profile (mutate/mutant_verdicts.h): the surviving mutants are the
// harness's blind spots, the mutation score is killed / (killed + survived).
//
// The audits run in this process, through RunProfile (run/run.h) with the mutant's Profile as
// the run's input: a mutant is judged by exactly the code that judges `sandprobe run`, launches
// go through the one launcher, orphans come back to this process (the child subreaper), one
// SIGINT stops everything, and no report is written and parsed back. Each audit is split by
// suite into phases:
//   1. the suites none of whose families is exclusive, merged into one plan: the profile's and
//      every mutant's run at once, up to `jobs` at a time;
//   2. the profile's own run of each suite with an exclusive family (persistence, resources),
//      alone: its verdicts are the baseline, and they say whether the suite measures limits
//      (checks with a tolerance band: the resource probes measure the machine);
//   3. the mutants' runs of those suites: the ones that measure nothing (persistence: its
//      launches are exclusive within a run only to follow each other) up to `jobs` at a time,
//      then the ones that measure limits, one run at a time with nothing beside it, as a run's
//      own resource launches are.
// A mutant killed in a phase is not run in the later ones (a mutation tester's usual shortcut:
// PIT stops at the first test that kills), unless `full_matrix`, which runs every mutant in
// every phase so `flipped` lists every check that sees it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/launcher.h"
#include "model/status.h"
#include "mutate/mutant_verdicts.h"
#include "run/probe_builds.h"

namespace sandprobe {

enum class MutantStatus {
  kKilled,         // a check moved the permissive way
  kSurvived,       // every check the profile decided, the mutant decided alike: a blind spot
  kInvalid,        // the mutant could not be audited (the backend refused it, a check errored)
  kNotApplicable,  // the edit does not apply to this profile, or its `requires` failed here
  kUnfinished,     // interrupted or out of time before its audit ended
  // Survived, and the operator's data proves for this profile that no process in the sandbox
  // could use what the edit adds (EquivalenceClaim, mutation_operators.h): not a blind spot,
  // and out of the score's denominator.
  kEquivalent,
};
std::string_view MutantStatusName(MutantStatus status);  // "killed", "survived", ...

struct MutantResult {
  std::string name;
  std::string description;
  nlohmann::json edit;  // the operator's edit, as written
  MutantStatus status = MutantStatus::kUnfinished;
  std::vector<std::string> applied;  // what the edit did to this profile
  std::vector<std::string> flipped;  // the checks that killed it
  std::vector<CheckMove> kills;      // their moves, with what the mutant's audit observed
  std::vector<CheckMove> changed;    // every other check that moved
  // Not applicable, invalid, unfinished: why. Survived: the phases it got through.
  std::string why;
  std::vector<std::string> suites;   // the suites its audit ran (fewer once killed)
  std::vector<std::string> run_ids;
  double seconds = 0;  // its audit's runs, summed
};

// One phase of the session: its suite(s), whether its runs were alone, how many ran, how long.
struct MutatePhase {
  std::string suite;
  bool exclusive = false;
  std::size_t runs = 0;  // the profile's and the live mutants'
  double seconds = 0;
  // Why no mutant ran it: the suite plans no check for this policy ("" when it ran).
  std::string skipped;
};

struct MutateReport {
  std::string tool_version;
  std::string profile_name, profile_path, policy_name, operators_path;
  std::vector<std::string> suites;
  std::vector<std::string> baseline_run_ids;
  std::size_t baseline_checks = 0;
  // Checks the profile's own audit could not decide (error, skip): no mutant is judged by them.
  std::vector<std::string> baseline_undecided;
  std::vector<MutantResult> mutants;  // in the operator file's order
  std::vector<MutatePhase> phases;
  int jobs = 1;
  bool full_matrix = false;
  bool interrupted = false;
  double seconds = 0;

  std::size_t Count(MutantStatus status) const;
  std::size_t total() const { return Count(MutantStatus::kKilled) + Count(MutantStatus::kSurvived); }
};

struct MutateOptions {
  std::string profile_path;
  std::string policy_path;               // empty: the profile's own
  std::vector<std::string> suite_paths;  // in order; non-empty
  std::string operators_path;            // empty: the file in `mutations_dir` for the backend
  std::string mutations_dir;             // <data-dir>/sandboxes/mutations
  std::vector<std::string> only;         // operator name globs (--operator); empty: all
  std::string probe_dir;         // RunOptions::probe_dir
  std::string layout_probe_dir;  // RunOptions::layout_probe_dir
  // RunOptions::probe_builds: what this build made (the sandprobe binary's BuiltProbes()).
  std::span<const ProbeBuild> probe_builds;
  std::string tool_version;
  int jobs = 1;
  // Each audit's own -j (RunOptions::jobs): its shared launch split by family group, up to this
  // many at once. 1 keeps one launch per audit (the fewest sandbox starts); more splits the
  // probe's arguments too (firejail refuses more than 128).
  int run_jobs = 1;
  bool full_matrix = false;
  std::chrono::seconds timeout{0};  // the whole session; 0: none
  const std::atomic<bool>* cancel = nullptr;
  // One line per finished mutant and phase, for a console (called from worker threads, one
  // call at a time).
  std::function<void(const std::string&)> on_event;
};

// A non-ok Status: invalid input (a profile, policy, suite or operator file; exit 2) or a
// harness failure (the profile's own audit decided nothing; exit 3).
StatusOr<MutateReport> RunMutate(const MutateOptions& options, Launcher& launcher);

// 1 a mutant survived; else 3 when nothing was judged (no applicable mutant) or a mutant is
// unfinished (interrupted, out of time); else 0. An invalid mutant (one the backend refuses:
// bwrap without a user namespace for an unprivileged caller) is listed, with why, and leaves
// the code alone: it is a configuration the sandbox cannot have, not a blind spot.
int MutateExitCode(const MutateReport& report);

}  // namespace sandprobe
