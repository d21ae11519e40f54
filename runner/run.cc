#include "runner/run.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "runner/batch_result.h"
#include "runner/evaluate.h"
#include "runner/family_resource.h"
#include "runner/frames.h"
#include "runner/placeholders.h"
#include "runner/plan.h"
#include "runner/policy.h"
#include "runner/preflight_gate.h"
#include "runner/probe_dir.h"
#include "runner/profile.h"
#include "runner/run_registry.h"
#include "runner/run_watchdog.h"
#include "runner/sandbox.h"
#include "runner/scheduler.h"
#include "runner/suite.h"
#include "runner/witness.h"
#include "runner/witness_host_paths.h"
#include "runner/witnesses.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

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

// The directory a run owns: its workspace (shared with the sandbox) and the host canary.
// Under RunDirParent() (/var/tmp unless SANDPROBE_RUN_ROOT says otherwise; why not /tmp: see
// run_registry.h).
class RunDir {
 public:
  static StatusOr<RunDir> Create(const std::string& run_id, bool keep) {
    std::string root = fmt::format("{}/{}{}", RunDirParent(), kRunDirPrefix, run_id);
    std::error_code ec;
    fs::create_directories(root + "/workspace", ec);
    if (ec) return Status::HarnessError(fmt::format("mkdir({}/workspace): {}", root, ec.message()));
    // Sandboxes run the probe as any uid (docker --user 1000): the workspace must let it write.
    ::chmod((root + "/workspace").c_str(), 0777);
    ::chmod(root.c_str(), 0755);
    return RunDir(root, keep);
  }
  RunDir(RunDir&& other) noexcept : root_(std::move(other.root_)), keep_(other.keep_) {
    other.root_.clear();
  }
  ~RunDir() {
    std::error_code ec;
    if (!root_.empty() && !keep_) fs::remove_all(root_, ec);
    if (!root_.empty() && keep_) MarkRunDirKept(root_);  // so no sweep removes it
  }
  const std::string& root() const { return root_; }
  std::string workspace() const { return root_ + "/workspace"; }

 private:
  RunDir(std::string root, bool keep) : root_(std::move(root)), keep_(keep) {}
  std::string root_;
  bool keep_;
};

struct Loaded {
  Profile profile;
  Policy policy;
  Suite suite;
};

StatusOr<Loaded> LoadInputs(const RunOptions& options) {
  StatusOr<Profile> profile = LoadProfile(options.profile_path);
  if (!profile.ok()) return profile.status();
  std::string policy_path = options.policy_path.empty() ? profile->policy_path : options.policy_path;
  if (policy_path.empty()) {
    return Status::Error(fmt::format("{}: the profile names no policy; pass --policy",
                                     options.profile_path));
  }
  StatusOr<Policy> policy = LoadPolicy(policy_path);
  if (!policy.ok()) return policy.status();
  StatusOr<Suite> suite = LoadSuite(options.suite_path, KnownFamilies());
  if (!suite.ok()) return suite.status();
  return Loaded{std::move(*profile), std::move(*policy), std::move(*suite)};
}

// Starts the witnesses the suite's families need.
StatusOr<std::vector<std::unique_ptr<RunWitness>>> StartWitnesses(const Suite& suite,
                                                                  const WitnessSetup& setup) {
  std::vector<std::unique_ptr<RunWitness>> started;
  for (const WitnessRow& row : WitnessTable()) {
    bool needed = false;
    for (const SuiteEntry& entry : suite.entries) needed = needed || row.families.count(entry.family);
    if (!needed) continue;
    StatusOr<std::unique_ptr<RunWitness>> witness = row.start(setup);
    if (!witness.ok()) {
      return witness.status().WithContext(std::string("witness ") + row.name).AsHarnessError();
    }
    started.push_back(std::move(*witness));
  }
  return started;
}

// The longest a healthy launch can take: its timeout, plus the housekeeping around it (a
// session's start, inspect, cleanup: each bounded at 60 s) and the launcher's kill grace.
std::chrono::seconds DefaultStallLimit(const Plan& plan, const Profile& profile) {
  int longest = profile.timeout_seconds;
  for (const LaunchBatch& batch : plan.batches) longest = std::max(longest, batch.timeout_seconds);
  return std::chrono::seconds(longest + 180);
}

}  // namespace

StatusOr<RunReport> RunProfile(const RunOptions& options, Launcher& launcher) {
  auto started = std::chrono::steady_clock::now();
  StatusOr<Loaded> loaded = LoadInputs(options);
  if (!loaded.ok()) return loaded.status();
  const auto& [profile, policy, suite] = *loaded;
  if (::access((options.probe_dir + "/sandprobe-probe").c_str(), X_OK) != 0) {
    return Status::HarnessError(fmt::format("probe binary {}/sandprobe-probe is missing (build it, or "
                                     "pass --probe-dir)", options.probe_dir));
  }

  RunReport report;
  report.tool_version = options.tool_version;
  report.run_id = RandomHex(6);
  report.started_at = UtcNow();
  report.host = HostFacts();
  report.profile_name = profile.name;
  report.profile_path = profile.source_path;
  report.profile = profile.raw;
  report.policy_name = policy.name;
  report.policy_path = policy.source_path;
  report.policy = policy.raw;
  report.suite_name = suite.name;

  // Witnesses up.
  StatusOr<RunDir> run_dir = RunDir::Create(report.run_id, options.keep_run_dir);
  if (!run_dir.ok()) return run_dir.status();
  // Before anything is launched, so a sweep can always find what this run leaves behind.
  if (Status claimed = ClaimRunDir(run_dir->root(), profile.source_path); !claimed.ok()) {
    return claimed.AsHarnessError();
  }
  StatusOr<std::string> probe_dir = ProbeDirForSandboxes(options.probe_dir, run_dir->root());
  if (!probe_dir.ok()) return probe_dir.status().AsHarnessError();
  StatusOr<CanaryFile> canary = CanaryFile::Plant(run_dir->root());
  if (!canary.ok()) return canary.status().AsHarnessError();
  CanaryEnvSecret env_secret = CanaryEnvSecret::Make();
  WitnessFacts witnesses{canary->path(), canary->sha256(), env_secret.sha256};

  StatusOr<std::string> workspace_inside =
      ExpandString(profile.workspace_path, {{"workspace", run_dir->workspace()}});
  if (!workspace_inside.ok()) return workspace_inside.status().WithContext(profile.source_path);
  StatusOr<std::vector<std::unique_ptr<RunWitness>>> run_witnesses = StartWitnesses(
      suite, WitnessSetup{report.run_id, run_dir->root(), profile, launcher, RandomHex(16)});
  if (!run_witnesses.ok()) return run_witnesses.status().AsHarnessError();
  PlanContext plan_context{canary->path(), *workspace_inside, {},
                           profile.lifecycle == Lifecycle::kSession};
  for (const auto& witness : *run_witnesses) {
    for (const auto& [key, value] : witness->PlanValues()) {
      plan_context.values[witness->name() + "." + key] = value;
    }
  }
  StatusOr<Plan> plan = ExpandChecks(policy, suite, plan_context);
  if (!plan.ok()) return plan.status();
  ApplyResourceTimeouts(*plan);
  // The host's own copy of every denied path, before any launch (decoys vs the host's data).
  witnesses.observed["host_paths"] = HostPathWitness(*plan);

  SplitSharedLaunch(*plan, options.jobs);
  RunWatchdog watchdog({.interrupt = options.cancel,
                        .run_timeout = options.run_timeout,
                        .stall_after = options.stall_after.count() > 0 ? options.stall_after
                                                                       : DefaultStallLimit(*plan, profile),
                        .stall_grace = options.stall_grace,
                        .on_stalled = options.on_stalled});
  Sandbox sandbox(profile, launcher,
                  SandboxContext{report.run_id, *probe_dir, run_dir->workspace(),
                                 {{env_secret.name, env_secret.token}}, watchdog.stop_flag()});
  std::vector<BatchResult> results(plan->batches.size());
  nlohmann::json leftovers = nlohmann::json::array();
  PreflightGate preflight(profile.preflight, [&sandbox] { return sandbox.Preflight(); });
  // Between launches (witnesses, leftovers, progress): one thread at a time.
  std::mutex between;
  std::size_t checks_done = 0;
  std::map<std::string, std::string> running;  // batch id -> its first family
  auto progress = [&] {
    if (!options.on_progress) return;
    std::string now;
    for (const auto& [id, family] : running) now += (now.empty() ? "" : ", ") + id + " " + family;
    options.on_progress(checks_done, plan->checks.size(), now);
  };
  std::vector<ScheduleItem> items;
  for (const LaunchBatch& batch : plan->batches) items.push_back({batch.exclusive});
  auto run_one = [&](std::size_t b) {
    const LaunchBatch& batch = plan->batches[b];
    BatchResult& result = results[b];
    auto backend_unavailable = [&](const std::string& why) {
      result = BatchResult{};
      result.state = options.require_backend ? BatchResult::State::kLaunchFailed
                                             : BatchResult::State::kSkipped;
      result.reason = why;
    };
    if (std::optional<std::string> why = preflight.BeforeLaunch()) return backend_unavailable(*why);
    std::string nonce = RandomHex(8);
    std::vector<std::string> probe_args = ProbeCommandArgs(batch, nonce);
    if (std::optional<std::string> why = ProbeArgvTooLong(probe_args)) {
      result.state = BatchResult::State::kLaunchFailed;
      result.reason = *why;
      return;
    }
    {
      std::lock_guard lock(between);
      running[batch.id] = batch.invocations.empty() ? "" : batch.invocations.front().family;
      watchdog.Progress();
      progress();
    }
    LaunchRecord record = sandbox.RunProbe(
        probe_args, nonce,
        {.timeout = std::chrono::seconds(batch.timeout_seconds),
         .fresh_instance = batch.fresh_instance,
         .host_readings = batch.host_readings});
    result = ToBatchResult(record, nonce);
    if (record.error == "interrupted" && !watchdog.why().empty()) result.reason = watchdog.why();
    bool incomplete = result.state == BatchResult::State::kLaunchFailed ||
                      (result.state == BatchResult::State::kRan && !result.complete);
    if (incomplete) {
      if (std::optional<std::string> why = preflight.AfterIncompleteLaunch()) {
        // What the launch proved before the backend went missing stays evidence.
        if (result.state == BatchResult::State::kRan) {
          result.backend_unavailable = *why;
          result.backend_required = options.require_backend;
        } else {
          backend_unavailable(*why);
        }
      }
    }
    std::lock_guard lock(between);
    for (const auto& witness : *run_witnesses) witness->AfterLaunch(record.id);
    // Witness: fs.write removes what it creates, so a nonce file on the host side means the
    // probe was stopped half-way (or the sandbox kept it).
    for (const std::string& path : FindProbeLeftovers(run_dir->workspace(), nonce)) {
      leftovers.push_back(path);
    }
    running.erase(batch.id);
    checks_done += batch.check_indexes.size();
    watchdog.Progress();
    progress();
  };
  auto not_started = [&](std::size_t b) {
    results[b].state = BatchResult::State::kInterrupted;
    results[b].reason = watchdog.why();
  };
  RunScheduled(items, options.jobs, run_one, [&] { return watchdog.stopped(); }, not_started);
  sandbox.Close();
  sandbox.Teardown();
  sandbox.Sweep();

  // Witnesses down, then judgement.
  report.witnesses = {{"canary_file", {{"path", canary->path()}, {"sha256", canary->sha256()}}},
                      {"canary_env", {{"name", env_secret.name}, {"sha256", env_secret.sha256}}},
                      {"workspace", run_dir->workspace()},
                      {"probe_leftovers_on_host", leftovers},
                      {"preflight", preflight.Summary()},
                      {"sweep", sandbox.sweep_summary()},
                      {"host_paths", witnesses.observed["host_paths"]}};
  for (const auto& witness : *run_witnesses) {
    nlohmann::json seen = witness->Collect();
    report.witnesses[witness->name()] = seen;
    witnesses.observed[witness->name()] = std::move(seen);
  }
  run_witnesses->clear();  // listeners closed, canary processes ended
  AddWitnessHostFacts(report.host, witnesses);
  // Host readings (profile `inspect`): next to the probe's measurements in the report.
  if (!sandbox.host_readings().empty()) {
    report.witnesses["host_readings"] = sandbox.host_readings();
    witnesses.observed["host_readings"] = sandbox.host_readings();
  }
  report.verdicts = Evaluate(*plan, results, witnesses);
  report.launches = sandbox.records();
  // A launch's time is shared among the checks it decided (JUnit wants a time per case).
  for (std::size_t b = 0; b < plan->batches.size(); ++b) {
    const std::vector<std::size_t>& indexes = plan->batches[b].check_indexes;
    for (const LaunchRecord& launch : report.launches) {
      if (launch.id != results[b].launch_id || indexes.empty()) continue;
      for (std::size_t i : indexes) {
        report.verdicts[i].duration_seconds = launch.wall_ms / 1000.0 / indexes.size();
      }
    }
  }
  report.interrupted = watchdog.stopped();
  report.finished_at = UtcNow();
  report.duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace sandprobe
