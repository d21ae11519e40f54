// The fresh positive control of a launch (issue 25): proof that the frames came from the probe
// running now, not from a replay of an earlier launch's output or a cached result.
//
// Before each launch the harness plants a file of fresh random content where the probe can
// read it (the run's workspace) and passes its in-sandbox path as `--control PATH`. The probe
// reads it as fs.read reads a path (contract/path_content.h: the first 4096 bytes) and answers
// in its hello: "control_sha256" = SHA-256(nonce || content), or, when it could not read it,
// "control_step" and "control_errno". The nonce is in argv (a launcher sees it); the content
// is not, and it did not exist before the launch, so no earlier output can carry the answer.
// The host's inotify watch on the file must also have seen an open while the launch ran
// (witnesses/witness_launch_challenge.h).
#pragma once

#include <string>
#include <string_view>

#include "contract/probe_runtime.h"
#include "contract/sha256.h"

namespace sandprobe {

inline constexpr std::string_view kControlArg = "--control";
// The hello's keys for the answer (docs/facts.schema.json, fact.hello).
inline constexpr std::string_view kControlAnswerKey = "control_sha256";
inline constexpr std::string_view kControlErrnoKey = "control_errno";
inline constexpr std::string_view kControlStepKey = "control_step";

// What the probe answers for the control whose content is `content`, under `nonce`.
inline std::string ControlAnswer(std::string_view nonce, std::string_view content) {
  std::string keyed;
  keyed.reserve(nonce.size() + content.size());
  keyed.append(nonce).append(content);
  return Sha256Hex(keyed);
}

// Whether this runtime's probe answers `--control` (a probe that does not would refuse the
// argument as a usage error, so the harness passes it only to those that do).
inline bool RuntimeAnswersControl(ProbeRuntime runtime) {
  switch (runtime) {
    case ProbeRuntime::kNative: return true;
    case ProbeRuntime::kJs: return true;
    case ProbeRuntime::kPython: return true;
    case ProbeRuntime::kWasi: return false;  // probes/wasi does not implement it yet
  }
  return false;
}

}  // namespace sandprobe
