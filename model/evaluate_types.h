// Judgement's plain data: what happened to each launch (BatchResult) and what the host's own
// witnesses saw (WitnessFacts). Shared by Evaluate (evaluate.h) and the families' judges
// (family.h), with no functions, so a family can name them without reaching Evaluate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/launch_record.h"

namespace sandprobe {

// What happened to one LaunchBatch, as far as judgement needs to know.
struct BatchResult {
  enum class State {
    kRan,             // the launch started; `frames` holds what the probe said (maybe nothing)
    kSkipped,         // the backend's preflight failed; `reason` says why
    kLaunchFailed,    // the harness could not start it; `reason` says why
    kInterrupted,     // the run was interrupted before it started
  };
  State state = State::kLaunchFailed;
  std::string launch_id;
  std::string reason;
  // The nonce the harness generated for this launch: receipts and frames are matched against
  // this, never against a nonce a fact names.
  std::string nonce;
  ProbeFrames frames;
  // The frames are complete AND the launch ended by itself. Only a complete launch can
  // produce a pass; a fact proving a leak counts even from an incomplete one. (Families whose
  // expected end is a kill by the sandbox judge that end themselves, from `end`: see
  // FamilyRow::judges_incomplete_launch.)
  bool complete = false;
  // Processes the harness found still running after the launch ended and killed (their argv,
  // as recorded before the kill): something the launch started outlived it.
  std::vector<std::string> leftover_processes;
  // The launch's processes still running when the harness's timeout ended it (their argv).
  std::vector<std::string> alive_at_timeout;
  // How the launch ended, as the launcher recorded it (LaunchRecord).
  struct End {
    std::optional<int> exit_code;  // the sandbox's process exited with this status
    std::optional<int> signal;     // a signal ended the sandbox's process
    bool timed_out = false;        // the harness's own timeout killed it
    std::string error;             // a harness-level failure ("interrupted", ...), else empty
  };
  End end;
  // The launch's length by the harness's own clock (LaunchRecord::wall_ms: the sandbox's spawn
  // to its exit); 0 when unknown. The probe runs inside that span, so no time it reports can
  // be longer.
  std::int64_t wall_ms = 0;
  // Set when the backend's preflight failed right after this (incomplete) launch: the backend
  // went missing. What the launch proved stays (a fail is a fail); a check with no evidence at
  // all is skip with this reason, or error when the backend is required (--require-backend).
  std::string backend_unavailable;
  bool backend_required = false;
  // Why this launch had no fresh positive control (contract/launch_control.h); "" when it had
  // one (and passed it: a failed control makes the launch incomplete). Without one, nothing
  // shows the frames came from a probe that ran now, so no pass of it rests on more than the
  // probe's word (EvidenceTier::kReported).
  std::string challenge_unavailable;
};

// Host-side facts that decide leaks the probe cannot fake.
struct WitnessFacts {
  std::string canary_path;        // the planted canary file
  std::string canary_sha256;      // sha256 of its content
  std::string env_secret_sha256;  // sha256 of the canary env secret's value
  // What each RunWitness reported, by RunWitness::name() (see witness.h).
  std::map<std::string, nlohmann::json> observed;
};

}  // namespace sandprobe
