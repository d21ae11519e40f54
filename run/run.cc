#include "run/run.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "families/evaluate.h"
#include "load/placeholders.h"
#include "families/plan.h"
#include "families/plan_split.h"
#include "load/policy.h"
#include "run/launch_control_site.h"
#include "run/preflight_gate.h"
#include "run/probe_dir.h"
#include "load/profile.h"
#include "recorded/rejudge_record.h"
#include "run/run_dir.h"
#include "run/run_lab.h"
#include "run/run_launches.h"
#include "run/run_watchdog.h"
#include "run/sandbox.h"
#include "load/suite.h"
#include "witnesses/witness.h"
#include "witnesses/witness_canary_watch.h"
#include "witnesses/witness_host_paths.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

nlohmann::json HostFacts() {
  nlohmann::json host = nlohmann::json::object();
  struct utsname uts {};
  if (uname(&uts) == 0) {
    host["kernel"] = std::string(uts.sysname) + " " + uts.release;
    host["machine"] = uts.machine;
    host["hostname"] = uts.nodename;
  }
  return host;
}

// What the privilege witness measured about the host's backend and kernel, where it ran: the
// profile's `version` command's answer, the kernel release, the cgroup version.
void AddWitnessHostFacts(nlohmann::json& host, const WitnessFacts& witnesses) {
  auto priv = witnesses.observed.find("priv");
  if (priv == witnesses.observed.end() || !priv->second.is_object()) return;
  for (const auto& [from, to] : {std::pair{"backend_version", "backend_version"},
                                 std::pair{"host_kernel", "kernel_release"}, std::pair{"host_cgroup", "cgroup"}}) {
    if (priv->second.contains(from)) host[to] = priv->second[from];
  }
}

// The longest a healthy launch can take: its timeout, plus the housekeeping around it (a
// session's start, inspect, cleanup: each bounded at 60 s) and the launcher's kill grace.
std::chrono::seconds DefaultStallLimit(const Plan& plan, const Profile& profile) {
  int longest = profile.timeout_seconds;
  for (const LaunchBatch& batch : plan.batches) longest = std::max(longest, batch.timeout_seconds);
  return std::chrono::seconds(longest + 180);
}

// One run, phase by phase:
//
//   Load -> Prepare -> WitnessesUp -> PlanChecks -> Launch -> Housekeeping -> WitnessesDown -> Judge
//
// The witnesses come up before the plan because the plan passes their addresses (a canary
// listener's port) to the probes. Until the first launch, a failure returns a Status (the CLI
// then writes a harness-failure report); from the first launch on, everything that goes wrong
// is in the report. Every step that can block takes its time from one Deadline.
class Run {
 public:
  Run(const RunOptions& options, const RunEnvironment& env)
      : options_(options), env_(env), started_(env.clock()),
        deadline_(std::chrono::duration_cast<std::chrono::milliseconds>(options.run_timeout), env.clock) {}

  StatusOr<RunReport> Execute() && {
    for (Status (Run::*phase)() : {&Run::Load, &Run::Prepare, &Run::WitnessesUp, &Run::PlanChecks}) {
      if (Status s = (this->*phase)(); !s.ok()) return s;
    }
    Launch();
    Housekeeping();
    WitnessesDown();
    // Facts from a program that is not the injected probe are nobody's: no verdict at all.
    if (Status s = VerifyProbesThatRan(); !s.ok()) return s;
    Judge();
    return std::move(report_);
  }

 private:
  // The profile, its policy (or --policy) and the suite, unless the caller loaded them; the
  // probe the profile names must exist, in this build (run/probe_dir.h).
  Status Load() {
    if (options_.inputs) {
      profile_ = options_.inputs->profile;
      policy_ = options_.inputs->policy;
      suite_ = options_.inputs->suite;
    } else {
      StatusOr<RunInputs> inputs =
          LoadRunInputs(options_.profile_path, options_.policy_path, options_.suite_paths, KnownFamilies());
      if (!inputs.ok()) return inputs.status();
      profile_ = std::move(inputs->profile);
      policy_ = std::move(inputs->policy);
      suite_ = std::move(inputs->suite);
    }
    StatusOr<InjectedProbe> probe =
        FindInjectedProbe(profile_->probe, options_.probe_dir, options_.layout_probe_dir, options_.probe_builds);
    // A runtime this build made no probe for (the wasi one needs its toolchain at build time):
    // the profile's install hint says how to get one, as a failed "requires" would.
    const bool not_built = profile_->probe.file.empty() &&
                           FindProbeBuild(options_.probe_builds, profile_->probe.runtime) == nullptr;
    if (!probe.ok() && not_built && !profile_->requires_hint.empty()) {
      return Status::HarnessError(fmt::format("{}; fix: install: {}", probe.status().message(), profile_->requires_hint));
    }
    if (!probe.ok()) return probe.status();
    probe_ = std::move(*probe);
    // The lab's namespaces are made beside the run dir, the witnesses and the plan (StartLab).
    lab_start_ = RunLabStart::Begin(*policy_, *profile_);
    return Status::Ok();
  }

  // The run dir (claimed in the registry), the probe dir the sandboxes can reach, the canaries.
  Status Prepare() {
    StartReport();
    StatusOr<RunDir> run_dir = RunDir::Create(env_.run_dir_parent, report_.run_id, *profile_);
    if (!run_dir.ok()) return run_dir.status();
    run_dir_.emplace(std::move(*run_dir));
    StatusOr<std::string> probe_dir = PlaceProbe(*probe_, run_dir_->root());
    if (!probe_dir.ok()) return probe_dir.status();
    probe_dir_ = *probe_dir;
    // What the harness hands a sandbox resolved: a runtime's allowlist (deno --allow-read=DIR)
    // compares resolved paths, and a run root under a symlinked /tmp would not match.
    workspace_ = ResolvedPath(run_dir_->workspace());
    // What a sweep runs if this run dies, fixed now, before any launch.
    if (Status recorded = run_dir_->RecordSweeps(*profile_, probe_dir_); !recorded.ok()) return recorded;
    StatusOr<CanaryFile> canary = CanaryFile::Plant(run_dir_->root());
    if (!canary.ok()) return canary.status().AsHarnessError();
    canary_.emplace(std::move(*canary));
    facts_ = WitnessFacts{canary_->path(), canary_->sha256(), env_secret_.sha256};
    return Status::Ok();
  }

  void StartReport() {
    report_.tool_version = options_.tool_version;
    report_.run_id = env_.random_hex(6);
    report_.started_at = env_.utc_now();
    report_.host = HostFacts();
    report_.profile_name = profile_->name;
    report_.profile_path = profile_->source_path;
    report_.profile = profile_->raw;
    report_.policy_name = policy_->name;
    report_.policy_path = policy_->source_path;
    report_.policy = policy_->raw;
    report_.suite_name = suite_->name;
    RunSelection selection{suite_->names, {}, options_.selection.only, options_.selection.skip};
    for (const SuiteEntry& entry : suite_->entries) selection.families.push_back(entry.family);
    report_.selection = std::move(selection);
  }

  // Starts the witnesses the suite's families need (a row of the witness table each).
  Status WitnessesUp() {
    WitnessSetup setup{report_.run_id, run_dir_->root(), *profile_, env_.launcher, env_.random_hex(16), &deadline_,
                       env_.docker_engine, probe_dir_, run_dir_->workspace(), options_.host};
    for (const WitnessRow& row : env_.witness_table) {
      bool needed = false;
      for (const SuiteEntry& entry : suite_->entries) needed = needed || row.families.count(entry.family);
      if (!needed) continue;
      StatusOr<std::unique_ptr<RunWitness>> witness = row.start(setup);
      if (!witness.ok()) return witness.status().WithContext(std::string("witness ") + row.name).AsHarnessError();
      witnesses_.push_back(std::move(*witness));
    }
    return StartLab();
  }

  // The egress lab, when this run has one (run/run_lab.h): a witness joined by the launches.
  Status StartLab() {
    StatusOr<std::unique_ptr<RunLab>> lab = RunLab::StartIfNeeded(std::move(lab_start_), *policy_, *profile_,
                                                                  run_dir_->root(), report_.run_id, env_.launcher,
                                                                  deadline_);
    if (!lab.ok()) return lab.status();
    if (*lab == nullptr) return Status::Ok();
    lab_join_ = (*lab)->join();
    lab_scalars_ = (*lab)->scalars();
    witnesses_.push_back(std::move(*lab));
    return Status::Ok();
  }

  Status PlanChecks() {
    StatusOr<std::string> workspace_inside =
        ExpandString(profile_->workspace_path, {{"workspace", workspace_}});
    if (!workspace_inside.ok()) return workspace_inside.status().WithContext(profile_->source_path);
    PlanContext& context = context_;
    context = PlanContext{canary_->path(), *workspace_inside, {}, profile_->lifecycle == Lifecycle::kSession};
    for (const auto& witness : witnesses_) {
      for (const auto& [key, value] : witness->PlanValues()) context.values[witness->name() + "." + key] = value;
    }
    context.launchless_checks = true;  // the launch phase judges a batch without invocations unlaunched
    StatusOr<Plan> plan = ExpandChecks(*policy_, *suite_, context);
    if (!plan.ok()) return plan.status();
    if (Status s = SelectChecks(*plan, options_.selection); !s.ok()) return s;
    // A family the probe lacks is skipped "not expressible in RUNTIME" and never sent to it. A
    // probe file's families are not known before it runs: all are planned.
    if (probe_->identity) SetAsideInexpressible(*plan, {probe_->runtime, probe_->identity->families});
    plan_ = std::move(*plan);
    // The host's own copy of every denied path, before any launch (decoys vs the host's data).
    facts_.observed["host_paths"] = HostPathWitness(plan_, options_.host);
    SplitByArgumentBudget(plan_);
    SplitSharedLaunch(plan_, options_.jobs);
    return Status::Ok();
  }

  void Launch() {
    watchdog_ = std::make_unique<RunWatchdog>(RunWatchdog::Options{
        .interrupt = options_.cancel,
        .run_timeout = options_.run_timeout,
        .stall_after = options_.stall_after.count() > 0 ? options_.stall_after : DefaultStallLimit(plan_, *profile_),
        .stall_grace = options_.stall_grace,
        .on_stalled = options_.on_stalled});
    sandbox_ = std::make_unique<Sandbox>(
        *profile_, env_.launcher,
        SandboxContext{report_.run_id, probe_dir_, workspace_,
                       {{env_secret_.name, env_secret_.token}}, watchdog_->stop_flag(), deadline_, lab_join_,
                       lab_scalars_});
    preflight_ = std::make_unique<PreflightGate>(profile_->preflight, [this] { return sandbox_->Preflight(); });
    // The host watches its canary for the launches' whole span (and only that: the host-path
    // witness read it before, the run dir's removal deletes it after).
    std::unique_ptr<CanaryWatch> canary_watch = CanaryWatch::Start(canary_->path(), canary_->sha256());
    CanaryWatch& watch = *canary_watch;
    witnesses_.push_back(std::move(canary_watch));
    // Each launch's fresh positive control, planted in the workspace (run/launch_control_site.h).
    ControlSiteChoice control = ChooseControlSite(*profile_, *probe_, workspace_, context_.workspace);
    control_unavailable_ = control.unavailable;
    if (control.site) control.site->readable_by_policy = PolicyPromisesWorkspaceRead(*policy_);
    launched_ = RunLaunches({.plan = plan_, .sandbox = *sandbox_, .preflight = *preflight_,
                             .watchdog = *watchdog_, .witnesses = witnesses_,
                             .workspace = workspace_,
                             .allow_missing_backend = options_.allow_missing_backend, .jobs = options_.jobs,
                             .random_hex = env_.random_hex,
                             .challenge_site = control.site,
                             .challenge_unavailable = control.unavailable,
                             .deadline_why = fmt::format("run timeout after {} s", options_.run_timeout.count()),
                             .on_progress = options_.on_progress});
    watch.Stop();
  }

  // Close, teardown, sweep: each bounded by the deadline. When they may have left something,
  // the run dir stays in the registry for `sandprobe sweep`.
  void Housekeeping() {
    sandbox_->Close();
    sandbox_->Teardown();
    sandbox_->Sweep(Interrupted());
    if (sandbox_->may_have_left_objects()) {
      run_dir_->Finish(RunDirFate::kLeaveForSweep);
      report_.left_for_sweep = run_dir_->root();
    } else {
      run_dir_->Finish(options_.keep_run_dir ? RunDirFate::kKeep : RunDirFate::kRemove);
    }
  }

  // Every launch's hello against the probe this run injected (contract/probe_identity.h): a
  // built probe's runtime, build id and families; a probe file's hellos must agree with each
  // other. The first launch that differs names the key, and the run ends as invalid input.
  Status VerifyProbesThatRan() {
    std::optional<ProbeIdentity> expected = probe_->identity;
    for (std::size_t b = 0; b < launched_.results.size(); ++b) {
      const BatchResult& result = launched_.results[b];
      if (result.frames.facts.empty()) continue;  // nothing ran that could be judged
      std::optional<std::string> why;
      if (!expected) {  // a probe file: its first hello says what every other must say
        expected = HelloIdentity(result.frames.facts.front());
        if (!expected) why = "its first fact is no hello naming a runtime, a build id and families";
      }
      if (!why) why = HelloMismatch(result.frames, *expected);
      if (why) {
        return Status::Error(fmt::format(
            "the probe that ran is not ours: launch {} ({}, {}): {}; its facts are not judged",
            result.launch_id.empty() ? plan_.batches[b].id : result.launch_id, probe_->path(),
            probe_->where, *why));
      }
    }
    return Status::Ok();
  }

  void WitnessesDown() {
    report_.witnesses = {{"canary_file", {{"path", canary_->path()}, {"sha256", canary_->sha256()}}},
                         {"canary_env", {{"name", env_secret_.name}, {"sha256", env_secret_.sha256}}},
                         {"workspace", workspace_},
                         {"probe", ProbeWitness()},
                         {"probe_leftovers_on_host", launched_.probe_leftovers_on_host},
                         {"preflight", preflight_->Summary()},
                         {"sweep", sandbox_->sweep_summary()},
                         {"host_paths", facts_.observed["host_paths"]},
                         {"launch_control", LaunchControlWitness()}};
    // The run root's space after the launches: a workspace write that failed for space while
    // it is full is the harness's disk, not the sandbox's policy (families/family_fs.cc).
    facts_.observed["run_root"] = run_dir_->DiskFacts();
    facts_.observed["run_root"]["workspace_inside"] = context_.workspace;
    report_.witnesses["run_root"] = facts_.observed["run_root"];
    for (const auto& witness : witnesses_) {
      nlohmann::json seen = witness->Collect();
      report_.witnesses[witness->name()] = seen;
      facts_.observed[witness->name()] = std::move(seen);
    }
    witnesses_.clear();  // listeners closed, canary processes ended
    AddWitnessHostFacts(report_.host, facts_);
    // Host readings (profile `inspect`): next to the probe's measurements in the report.
    if (!sandbox_->host_readings().empty()) {
      report_.witnesses["host_readings"] = sandbox_->host_readings();
      facts_.observed["host_readings"] = sandbox_->host_readings();
    }
  }

  void Judge() {
    report_.verdicts = Evaluate(plan_, launched_.results, facts_);
    report_.plan = RecordPlan(*suite_, context_, plan_, launched_.results, facts_);  // for re-judging
    report_.launches = sandbox_->records();
    ShareLaunchTimes();
    for (const LaunchRecord& launch : report_.launches) {
      if (!launch.cut_short.empty()) {
        report_.cut_short.push_back(fmt::format("{} {}: {}", launch.id, launch.purpose, launch.cut_short));
      }
    }
    report_.interrupted = Interrupted();
    report_.backend_skipped = launched_.backend_skipped;
    report_.finished_at = env_.utc_now();
    report_.duration_seconds = std::chrono::duration<double>(env_.clock() - started_).count();
  }

  // The watchdog turns an interrupt into its stop flag on its own thread; a SIGINT that came
  // after the last launch may not have reached it yet.
  bool Interrupted() const {
    return watchdog_->stopped() || (options_.cancel != nullptr && options_.cancel->load()) ||
           (deadline_.bounded() && deadline_.Remaining().count() == 0);
  }

  // A launch's time is shared among the checks it decided (JUnit wants a time per case).
  void ShareLaunchTimes() {
    for (std::size_t b = 0; b < plan_.batches.size(); ++b) {
      const std::vector<std::size_t>& indexes = plan_.batches[b].check_indexes;
      for (const LaunchRecord& launch : report_.launches) {
        if (launch.id != launched_.results[b].launch_id || indexes.empty()) continue;
        for (std::size_t i : indexes) report_.verdicts[i].duration_seconds = launch.wall_ms / 1000.0 / indexes.size();
      }
    }
  }

  // Each launch's fresh positive control, or why the run could not ask one.
  nlohmann::json LaunchControlWitness() const {
    nlohmann::json control = {{"available", control_unavailable_.empty()}, {"launches", launched_.controls}};
    if (!control_unavailable_.empty()) control["unavailable"] = control_unavailable_;
    return control;
  }

  // The probe the sandboxes got: where it came from, what it hashed to, what it must say.
  nlohmann::json ProbeWitness() const {
    nlohmann::json probe = {{"runtime", probe_->runtime.empty() ? nlohmann::json(nullptr) : nlohmann::json(probe_->runtime)},
                            {"file", probe_->path()},
                            {"injected_dir", probe_dir_},
                            {"sha256", probe_->sha256}};
    if (probe_->identity) probe["build_id"] = probe_->identity->build_id;
    return probe;
  }

  const RunOptions& options_;
  const RunEnvironment& env_;
  const std::chrono::steady_clock::time_point started_;
  const Deadline deadline_;
  // Declared in the order they come up; destroyed in reverse: the sandbox (whose destructor
  // may still close a session) before the run dir, the canary before its directory.
  std::optional<Profile> profile_;
  std::optional<Policy> policy_;
  std::optional<Suite> suite_;
  RunReport report_;
  std::optional<RunDir> run_dir_;
  std::optional<InjectedProbe> probe_;
  std::string probe_dir_;  // the directory the sandboxes get as {probe_dir}
  std::string workspace_;  // the run's host workspace, symlinks resolved
  std::optional<CanaryFile> canary_;
  CanaryEnvSecret env_secret_ = CanaryEnvSecret::Make();
  WitnessFacts facts_;
  RunLabStart lab_start_;  // the lab's namespaces, begun at Load; taken over by StartLab
  std::vector<std::unique_ptr<RunWitness>> witnesses_;
  PlanContext context_;
  Plan plan_;
  std::unique_ptr<RunWatchdog> watchdog_;
  std::unique_ptr<Sandbox> sandbox_;
  std::unique_ptr<PreflightGate> preflight_;
  LaunchPhaseResult launched_;
  std::string control_unavailable_;  // why the launches had no fresh control; "" when they had one
  std::optional<LabJoin> lab_join_;  // set while the run's egress lab (a witness) lives
  std::map<std::string, std::string> lab_scalars_;  // {lab_network}, {lab_dns} of a docker gateway
};

}  // namespace

StatusOr<RunReport> RunProfile(const RunOptions& options, const RunEnvironment& env) {
  return Run(options, env).Execute();
}

StatusOr<RunReport> RunProfile(const RunOptions& options, Launcher& launcher) {
  return RunProfile(options, RealRunEnvironment(launcher));
}

}  // namespace sandprobe
