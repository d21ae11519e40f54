// The fresh positive control of one launch, host side (contract/launch_control.h): a file of
// fresh random content planted in the run's workspace before the launch, watched by inotify
// while it runs, removed after. The probe must answer SHA-256(nonce || content) in its hello,
// and the host's watch must have seen the file opened: then the frames came from a probe that
// ran now, in a sandbox that reached this host's file. A launcher that replays an earlier
// output (or a cached result) has neither.
//
// The file is created before its watch starts (the harness's own open is not counted) and is
// mode 0444: any uid the sandbox runs as can read it, none but root can change it in place.
// Each launch has its own watch, on one inotify descriptor the process shares (launches overlap
// with --jobs > 1; events are told apart by watch descriptor): closing an inotify descriptor
// waits for an RCU grace period (~10 ms here), which one per launch would add to every launch.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "contract/frame_reader.h"
#include "model/status.h"

namespace sandprobe {

// Where a run's controls go: the workspace, as the host and as the sandbox see it.
struct ChallengeSite {
  std::string host_dir;    // the run's workspace on the host
  std::string inside_dir;  // the same directory inside the sandbox (PlanContext::workspace)
  // The policy promises that reading the workspace works (filesystem.readable names
  // {workspace}): then "I could not read the control" is no excuse, only a sandbox breaking
  // that promise or a launcher hiding the control, and the launch fails its control.
  bool readable_by_policy = false;
};

class LaunchChallenge {
 public:
  // Plants `content` as `name` in the site's host directory and starts its watch. An error
  // (the file or the watch) means the control is not available for this launch.
  static StatusOr<LaunchChallenge> Plant(const ChallengeSite& site, const std::string& name,
                                         std::string content);
  LaunchChallenge(LaunchChallenge&& other) noexcept;
  LaunchChallenge& operator=(LaunchChallenge&&) = delete;
  LaunchChallenge(const LaunchChallenge&) = delete;
  ~LaunchChallenge();  // closes the watch, removes the file

  // What the probe is handed: --control inside_path().
  const std::string& inside_path() const { return inside_path_; }
  const std::string& host_path() const { return host_path_; }

  // After the launch: reads the watch, then judges the launch's hello against it.
  // {"answered": bool, "opened": bool, "failed"?: why, "unavailable"?: why} — neither when it
  // passed; `unavailable` when the probe said it could not read the file (the sandbox refuses
  // the workspace): then the launch has no control, and its passes are only `reported`. That
  // claim fails instead when the host saw the file opened although the probe says its open
  // failed, or when the policy promises the workspace readable (ChallengeSite).
  nlohmann::json Judge(const ProbeFrames& frames, const std::string& nonce);

 private:
  LaunchChallenge() = default;
  bool SawOpen();

  std::string host_path_, inside_path_, content_;
  bool readable_by_policy_ = false;
  int watch_ = -1;  // on the shared inotify descriptor
};

// Why a launch failed its control, or nullopt: `hello` is the launch's first fact (nullptr when
// it had none), `expected` the answer the harness computed, `opened` whether its watch saw the
// file opened during the launch. Pure: unit-tested without a sandbox.
std::optional<std::string> ChallengeFailure(const nlohmann::json* hello, const std::string& expected,
                                            bool opened, const std::string& inside_path);

}  // namespace sandprobe
