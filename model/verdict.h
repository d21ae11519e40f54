// Verdict: Evaluate()'s judgement of one Check against the observed facts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/check.h"

namespace sandprobe {

enum class Outcome {
  kPass,          // observed, and what the policy promised
  kFail,          // observed, and not what the policy promised (see Direction)
  kInconclusive,  // a positive control failed or the fact is missing: nothing proven
  kError,         // the launch or the harness failed
  kSkip,          // not applicable or the backend is missing; `observed` says why
};
std::string_view OutcomeName(Outcome outcome);  // "pass", "fail", ...

enum class Direction { kNone, kTooPermissive, kTooRestrictive };
std::string_view DirectionName(Direction direction);  // "", "too-permissive", "too-restrictive"

// What a verdict rests on, strongest first. A pass is only as good as its evidence: the console
// and every report say how many passes rest on each tier, so a green run whose passes are all
// `reported` is seen for what it is.
enum class EvidenceTier {
  kWitnessed,  // seen by the host itself: a canary watch, a listener's receipt, a host-side
               // file or process the harness looked at
  kMeasured,   // measured by the harness: its own clock (LaunchRecord::wall_ms), host cgroup
               // files, the daemon's inspect
  kReported,   // the probe's word alone (its facts, checked for consistency, not witnessed)
  kNone,       // nothing was observed: a skip, a launch that never ran, a harness error
};
std::string_view EvidenceTierName(EvidenceTier tier);  // "witnessed", "measured", "reported", "none"
std::optional<EvidenceTier> ParseEvidenceTier(std::string_view name);
// Every tier, strongest first (the order reports list them in).
inline constexpr EvidenceTier kEvidenceTiers[] = {EvidenceTier::kWitnessed, EvidenceTier::kMeasured,
                                                  EvidenceTier::kReported, EvidenceTier::kNone};

// Where the facts behind a verdict are in the report.
struct Evidence {
  std::string launch_id;            // LaunchRecord::id, empty when no launch was involved
  std::vector<int> frame_indexes;   // indexes into that launch's facts
  std::vector<std::string> witness_facts;  // "canary sha256 matched", ...
  // Set only by a judge of a family that judges incomplete launches (FamilyRow::
  // judges_incomplete_launch) when it has positive evidence that the sandbox, not the harness
  // or a crash, ended the launch: "killed by the sandbox (signal 9), not by the harness's
  // timeout". Empty otherwise.
  std::string expected_end;
  // Set only by a limit judge that measured the sandbox enforcing the limit at another value
  // than the declared one: that value, in the policy field's unit (100 for pids.max=100 against
  // a declared 50). `sandprobe infer` writes it into the policy it infers; a number the judge
  // measured, so no reader has to take it back out of `observed`'s words.
  std::optional<double> enforced_instead;
  // What decided the verdict. Judges start from their family's default (FamilyRow::evidence,
  // through StartVerdict) and raise or lower it where a witness or a harness measurement
  // decided; Evaluate sets it for verdicts no judge made (kNone) and for judges that left it
  // unset (std::nullopt until then: a verdict out of Evaluate always has one).
  std::optional<EvidenceTier> tier;
};

// A waiver (--waivers FILE) that matched this check's fail. An active one keeps the fail out of
// the gate: the check stays `fail` in every report, marked waived with the reason. An expired one
// waives nothing (the fail counts) and fails the gate on its own (gate/waivers.h).
struct AppliedWaiver {
  std::string pattern;  // the waiver's "check": an id or a glob
  std::string reason;
  std::string expires;  // YYYY-MM-DD: waives through that day (UTC)
  std::string where;    // "waivers.json:3:5", the waiver in its file
  bool expired = false;
};

struct Verdict {
  Check check;
  Outcome outcome = Outcome::kError;
  Direction direction = Direction::kNone;  // set only when outcome == kFail
  std::string expected;     // "read denied"
  std::string observed;     // "read ok: 33 bytes, sha256 = canary token"
  std::string remediation;  // one line
  Evidence evidence;
  double duration_seconds = 0;
  std::optional<AppliedWaiver> waiver;  // only on a fail a waiver matched
  // The fail is waived (a waiver matched and has not expired): it does not fail the gate.
  bool waived() const { return waiver.has_value() && !waiver->expired; }
  // The evidence tier (kNone when unset: only a verdict that never went through Evaluate).
  EvidenceTier tier() const { return evidence.tier.value_or(EvidenceTier::kNone); }
};

}  // namespace sandprobe
