// Check: one thing the policy promises, expanded from suite x policy by the planner.
//
// A Check is judgement-free data: what to look at and what the policy expects to see there.
// Evaluate() compares it with the facts the probes and witnesses produced.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/policy_ref.h"

namespace sandprobe {

// Ordered from most to least severe; `--fail-on` compares with this order.
enum class Severity { kCritical, kHigh, kMedium, kLow, kInfo };
// Every severity, worst first (the order of summaries and tables).
inline constexpr Severity kAllSeverities[] = {Severity::kCritical, Severity::kHigh, Severity::kMedium,
                                              Severity::kLow, Severity::kInfo};

std::string_view SeverityName(Severity severity);  // "critical", "high", ...
std::optional<Severity> ParseSeverity(std::string_view name);
// True when `severity` is at least as severe as `threshold`.
inline bool AtLeast(Severity severity, Severity threshold) {
  return static_cast<int>(severity) <= static_cast<int>(threshold);
}

// What the policy says the probe's attempt should result in.
enum class Expectation { kAllowed, kDenied };
std::string_view ExpectationName(Expectation expectation);  // "allowed" / "denied"

// A measured limit's band (resource checks): the declared value and how far a measurement may
// stray from it and still pass. Expand writes both from the policy's `limits` and
// `limits.tolerance`, so the judge and `sandprobe diff` need nothing else.
struct Tolerance {
  double declared = 0;    // the policy's limit, in the limit's unit (tasks, MiB, cores, s, fds)
  double plus_minus = 0;  // the allowed distance from `declared` ...
  bool percent = false;   // ... in percent of `declared` when true, else in the unit itself
  // plus_minus in the limit's unit: 25.6 for "512 MiB ±5%".
  double Absolute() const { return percent ? declared * plus_minus / 100 : plus_minus; }
  double Low() const { return declared - Absolute(); }
  double High() const { return declared + Absolute(); }
};

struct Check {
  // Stable and unique within one profile's run: "fs.read.denied:/etc/shadow",
  // "fs.alias.denied:host-canary[symlink]", "env.secret.hidden"; placeholder-free
  // (check_id.h).
  std::string id;
  // Probe family whose facts decide the check: "fs.read", "fs.write", "fs.alias", "env.secret".
  std::string family;
  Severity severity = Severity::kMedium;
  Expectation expect = Expectation::kDenied;
  // The policy's own text for the target, placeholders kept ("{host_canary}", "{workspace}").
  std::string target;
  // The path the probe is given inside the sandbox, placeholders expanded.
  std::string resolved_target;
  // Sub-kind where a family tries several ways (fs.alias: "symlink", "dotdot", "proc_root").
  std::string variant;
  // Where the promise comes from: tier-low.json:7:44 /filesystem/unreadable/2.
  PolicyRef reference;
  // Set only for measured limits (res.*): the band the measurement must fall in.
  std::optional<Tolerance> tolerance;
};

}  // namespace sandprobe
