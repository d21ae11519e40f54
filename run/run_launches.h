// The launch phase of a run: every batch of the plan through the sandbox, on `jobs` threads,
// under the watchdog, with the preflight gate, the witnesses' between-launch look, and the
// live progress. What it returns is facts (a BatchResult per batch, files a probe left on the
// host side of the workspace); judging them is Evaluate's.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "families/batch_result.h"
#include "families/plan.h"
#include "run/preflight_gate.h"
#include "run/run_watchdog.h"
#include "run/sandbox.h"
#include "witnesses/witness.h"
#include "witnesses/witness_launch_challenge.h"

namespace sandprobe {

struct LaunchPhase {
  const Plan& plan;
  Sandbox& sandbox;
  PreflightGate& preflight;
  RunWatchdog& watchdog;
  const std::vector<std::unique_ptr<RunWitness>>& witnesses;
  std::string workspace;  // host side of the workspace, scanned for probe leftovers
  bool allow_missing_backend = false;  // RunOptions::allow_missing_backend
  int jobs = 1;
  std::function<std::string(std::size_t bytes)> random_hex;  // launch nonces, control files
  // Where each launch's fresh positive control is planted (witnesses/witness_launch_challenge.h);
  // unset when the run cannot ask one, and then `challenge_unavailable` says why (every launch
  // carries it: no pass of its rests on more than the probe's word).
  std::optional<ChallengeSite> challenge_site;
  std::string challenge_unavailable;
  // Why a launch the run's deadline cut short did not finish, in the watchdog's words for the
  // same event ("run timeout after 30 s"): the launcher's own cut timeout and the watchdog's
  // stop flag race at the deadline, and the checks should read the same either way.
  std::string deadline_why;
  // Checks decided, all checks, the launches running now (RunOptions::on_progress).
  std::function<void(std::size_t, std::size_t, const std::string&)> on_progress;
};

struct LaunchPhaseResult {
  std::vector<BatchResult> results;  // one per plan batch
  // The preflight's failure when --allow-missing-backend made checks skips; "" otherwise.
  std::string backend_skipped;
  nlohmann::json probe_leftovers_on_host = nlohmann::json::array();
  // Each launch's control: {"launch_id", "path", "answered", "opened", "failed"?}.
  nlohmann::json controls = nlohmann::json::array();
};

LaunchPhaseResult RunLaunches(const LaunchPhase& phase);

}  // namespace sandprobe
