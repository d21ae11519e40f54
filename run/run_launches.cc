#include "run/run_launches.h"

#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "contract/launch_control.h"
#include "run/scheduler.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

// One run of the phase: the state its launch threads share (guarded by `between_`).
class Launches {
 public:
  explicit Launches(const LaunchPhase& phase)
      : phase_(phase), out_{std::vector<BatchResult>(phase.plan.batches.size())} {}

  LaunchPhaseResult Run() && {
    std::vector<ScheduleItem> items;
    for (const LaunchBatch& batch : phase_.plan.batches) {
      items.push_back({batch.exclusive, batch.exclusive ? batch.overlap_chain : ""});
    }
    RunScheduled(
        items, phase_.jobs, [this](std::size_t b) { RunBatch(b); },
        [this] { return phase_.watchdog.stopped(); },
        [this](std::size_t b) {
          out_.results[b].state = BatchResult::State::kInterrupted;
          out_.results[b].reason = phase_.watchdog.why();
        });
    // Every instance is removed before the phase ends: the sweep decides by the cleanups' exits.
    for (std::jthread& cleanup : cleanups_) cleanup.join();
    return std::move(out_);
  }

 private:
  // The backend is unavailable: the batch is an error (the default: nothing was checked), or
  // skipped under --allow-missing-backend, unless the backend went away mid-run.
  void MarkUnavailable(BatchResult& result, const BackendUnavailable& why) {
    result = BatchResult{};
    result.state = Skippable(why) ? BatchResult::State::kSkipped : BatchResult::State::kLaunchFailed;
    result.reason = why.why;
  }

  bool Skippable(const BackendUnavailable& why) {
    if (!phase_.allow_missing_backend || why.went_away) return false;
    std::lock_guard lock(between_);
    out_.backend_skipped = why.why;
    return true;
  }

  void RunBatch(std::size_t b) {
    const LaunchBatch& batch = phase_.plan.batches[b];
    BatchResult& result = out_.results[b];
    if (!batch.not_expressible.empty()) {  // families the run's probe lacks: never sent to it
      result.state = BatchResult::State::kSkipped;
      result.reason = batch.not_expressible;
      std::lock_guard lock(between_);
      checks_done_ += batch.check_indexes.size();
      Progress();
      return;
    }
    if (batch.invocations.empty()) {  // decided at plan time (PlanContext::launchless_checks)
      result.state = BatchResult::State::kRan;
      result.complete = true;
      std::lock_guard lock(between_);
      checks_done_ += batch.check_indexes.size();
      Progress();
      return;
    }
    if (std::optional<BackendUnavailable> why = phase_.preflight.BeforeLaunch()) {
      return MarkUnavailable(result, *why);
    }
    std::string nonce = phase_.random_hex(8);
    std::vector<std::string> probe_args = ProbeCommandArgs(batch, nonce);
    std::optional<LaunchChallenge> challenge;
    if (phase_.challenge_site) {
      // The harness could not plant it: its own failure, and nothing launches without it.
      StatusOr<LaunchChallenge> planted =
          LaunchChallenge::Plant(*phase_.challenge_site, ".sandprobe-control-" + phase_.random_hex(8),
                                 phase_.random_hex(32));
      if (!planted.ok()) {
        result.state = BatchResult::State::kLaunchFailed;
        result.reason = planted.status().message();
        return;
      }
      challenge.emplace(std::move(*planted));
      probe_args.insert(probe_args.begin() + 2, {std::string(kControlArg), challenge->inside_path()});
    }
    if (std::optional<std::string> why = ProbeArgvTooLong(probe_args)) {
      result.state = BatchResult::State::kLaunchFailed;
      result.reason = *why;
      return;
    }
    Started(batch);
    const bool one_shot = phase_.sandbox.profile().lifecycle == Lifecycle::kOneShot;
    LaunchRecord record = phase_.sandbox.RunProbe(
        probe_args, nonce,
        {.timeout = std::chrono::seconds(batch.timeout_seconds),
         .fresh_instance = batch.fresh_instance,
         .host_readings = batch.host_readings,
         .probe_process = batch.probe_process,
         .spare_processes_with_arg = batch.spare_processes_with_arg,
         // Every launch of a run with a lab joins it (run/run_lab.h says why).
         .join_lab = true,
         .defer_cleanup = one_shot});
    if (one_shot) RemoveInstance(record);
    result = ToBatchResult(record, nonce, phase_.sandbox.profile().probe_exit);
    if (challenge) {
      JudgeChallenge(*challenge, record, nonce, result);
      challenge.reset();  // the file goes before the next launch's look at the workspace
    } else {
      result.challenge_unavailable = phase_.challenge_unavailable;
    }
    // A frame with this launch's nonce came through the backend: it was up.
    if (!record.frames.facts.empty() || record.frames.done) phase_.preflight.BackendAnswered();
    if (record.error == "interrupted" && !phase_.watchdog.why().empty()) {
      result.reason = phase_.watchdog.why();
    }
    if (!record.cut_short.empty()) {  // the run's deadline, not the launch, ended it
      if (result.state == BatchResult::State::kLaunchFailed) result.state = BatchResult::State::kInterrupted;
      result.reason = phase_.deadline_why;
    }
    // When the run itself ended the launch, the cause is known: no preflight is asked.
    bool ended_by_run = record.error == "interrupted" || !record.cut_short.empty();
    if (!ended_by_run) AskPreflightIfIncomplete(result);
    Ended(batch, record.id, nonce);
  }

  // A one-shot instance's `cleanup` (docker rm -f). When the sandbox's process ended by itself
  // (an exit status; no timeout, no harness error, no cut by the deadline), the instance holds
  // nothing that runs (docker run returns once the container's init has exited, and its
  // processes with it), so its removal runs beside the next launches: the exclusive launch
  // that follows a group of launches (res.cpu) starts its container instead of waiting for a
  // round trip per earlier container, and persistence's check does not wait for its plant's.
  // Any other end: the removal is what stops the instance, so it runs first, as it always did.
  void RemoveInstance(const LaunchRecord& record) {
    if (phase_.sandbox.profile().cleanup.empty()) return;
    const bool ended_by_itself = record.error.empty() && !record.timed_out &&
                                 record.cut_short.empty() && record.exit_code.has_value();
    if (!ended_by_itself) return phase_.sandbox.CleanupInstance(record.instance);
    std::lock_guard lock(cleanups_mutex_);
    cleanups_.emplace_back([&sandbox = phase_.sandbox, instance = record.instance] {
      sandbox.CleanupInstance(instance);
    });
  }

  // A launch whose frames did not answer its fresh control, or whose control the host never saw
  // opened, is incomplete: nothing it says is a pass (families/evaluate.cc DistrustIncomplete).
  void JudgeChallenge(LaunchChallenge& challenge, const LaunchRecord& record, const std::string& nonce,
                      BatchResult& result) {
    nlohmann::json row = challenge.Judge(record.frames, nonce);
    if (row.contains("unavailable")) result.challenge_unavailable = row["unavailable"].get<std::string>();
    if (result.state == BatchResult::State::kRan && row.contains("failed")) {
      result.complete = false;
      const std::string why = "fresh positive control failed: " + row["failed"].get<std::string>();
      result.reason = result.reason.empty() ? why : result.reason + "; " + why;
    }
    row["launch_id"] = record.id;
    std::lock_guard lock(between_);
    out_.controls.push_back(std::move(row));
  }

  // An incomplete launch may mean the backend went away: the preflight says. What the launch
  // proved before that stays evidence (Evaluate skips only checks that cite no fact).
  void AskPreflightIfIncomplete(BatchResult& result) {
    bool incomplete = result.state == BatchResult::State::kLaunchFailed ||
                      (result.state == BatchResult::State::kRan && !result.complete);
    if (!incomplete) return;
    std::optional<BackendUnavailable> why = phase_.preflight.AfterIncompleteLaunch();
    if (!why) return;
    if (result.state != BatchResult::State::kRan) return MarkUnavailable(result, *why);
    result.backend_unavailable = why->why;
    result.backend_required = !Skippable(*why);
  }

  void Started(const LaunchBatch& batch) {
    std::lock_guard lock(between_);
    running_[batch.id] = batch.invocations.empty() ? "" : batch.invocations.front().family;
    phase_.watchdog.Progress();
    Progress();
  }

  void Ended(const LaunchBatch& batch, const std::string& launch_id, const std::string& nonce) {
    std::lock_guard lock(between_);
    // The witnesses look when no launch runs: a launch beside this one may still hold what they
    // look for (persistence's background process lives until its plant launch ends), which is
    // not this launch's leftover. Holding between_ keeps the next launch from starting (Started)
    // while they look; each launch is still looked after in its own name.
    ended_unlooked_.push_back(launch_id);
    running_.erase(batch.id);
    if (running_.empty()) {
      for (const std::string& ended : ended_unlooked_) {
        for (const auto& witness : phase_.witnesses) witness->AfterLaunch(ended);
      }
      ended_unlooked_.clear();
    }
    // fs.write removes what it creates, so a nonce file on the host side means the probe was
    // stopped half-way (or the sandbox kept it).
    for (const std::string& path : FindProbeLeftovers(phase_.workspace, nonce)) {
      out_.probe_leftovers_on_host.push_back(path);
    }
    checks_done_ += batch.check_indexes.size();
    phase_.watchdog.Progress();
    Progress();
  }

  void Progress() const {  // the caller holds between_
    if (!phase_.on_progress) return;
    std::string now;
    for (const auto& [id, family] : running_) now += (now.empty() ? "" : ", ") + id + " " + family;
    phase_.on_progress(checks_done_, phase_.plan.checks.size(), now);
  }

  const LaunchPhase& phase_;
  LaunchPhaseResult out_;
  std::mutex between_;  // between launches: witnesses, leftovers, progress
  std::size_t checks_done_ = 0;
  std::map<std::string, std::string> running_;  // batch id -> its first family
  std::vector<std::string> ended_unlooked_;  // launches ended beside others: Ended() says why
  std::mutex cleanups_mutex_;
  std::vector<std::jthread> cleanups_;  // RemoveInstance's, joined before the phase ends
};

}  // namespace

LaunchPhaseResult RunLaunches(const LaunchPhase& phase) { return Launches(phase).Run(); }

}  // namespace sandprobe
