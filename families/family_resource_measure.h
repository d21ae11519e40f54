// Shared pieces of the resource families' judges (family_resource_judge.cc: pids, cpu, disk,
// fds; family_resource_end.cc: wall and memory, whose expected end may be a kill by the
// sandbox): facts out of the frames, host readings, a measurement turned into a verdict.
// Internal to the resource family group.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "families/family.h"
#include "families/family_resource.h"

namespace sandprobe::resource_measure {

// The last fact of the check's family with kind == `kind`, recorded as evidence in `v`;
// nullptr when there is none.
const nlohmann::json* LastFact(const JudgeInput& in, const char* kind, Verdict* v);
// fact[key] when it is a number, else `fallback`.
double Number(const nlohmann::json& fact, const char* key, double fallback = 0);
// "510", "100000", "0.998": whole numbers in full, fractions to four significant digits.
std::string Num(double value);
// The fact's "stopped_by" ("EAGAIN", "ceiling", "SIGKILL"), "?" when absent.
std::string StoppedBy(const nlohmann::json& fact);

// StartVerdict plus the check's band (Check::tolerance); nullopt, with `v` an error naming the
// missing band, when the planner gave the check none.
std::optional<LimitBand> StartLimit(const JudgeInput& in, Verdict& v);

// "oom_killed=true, memory_bytes=536870912": what the profile's `inspect` read for this launch,
// added to the evidence; "" when nothing was read.
std::string HostReadings(const JudgeInput& in, Verdict& v);
// Every reading of this launch (an object); nullptr when none was read.
const nlohmann::json* LaunchReadings(const JudgeInput& in);
// One reading of this launch (profile `inspect`, e.g. "oom_killed"); nullptr when absent.
const nlohmann::json* HostReading(const JudgeInput& in, const char* key);

struct Measurement {
  double measured = 0;
  bool reached_ceiling = false;  // the probe stopped at its own ceiling, not at a limit
  double ceiling = 0;
  std::string unit;       // "tasks", "MiB", "cores", "s", "fds"
  std::string mechanism;  // what stopped the probe: "the pids cgroup (EAGAIN, pids.max=50)"
};

// A probe's result fact as a Measurement: fact[measured_key] in `unit` against
// fact[ceiling_key], at the ceiling when the probe says it stopped there. The caller names the
// mechanism from StoppedBy(fact).
Measurement MeasuredAgainstCeiling(const nlohmann::json& fact, const char* measured_key,
                                   const char* ceiling_key, std::string unit);

// Turns a measurement into the verdict: pass, fail at another value (too permissive above the
// band, too restrictive below it), fail "not enforced up to N", or inconclusive "cannot
// measure above N" when the ceiling is not above the band; adds the host readings.
// `remediation` says how to set the declared value.
void Conclude(const JudgeInput& in, Verdict& v, const LimitBand& band, const Measurement& m,
              const std::string& remediation);

// No result frame: a fail when the progress frames alone go beyond `band.high` (a streamed
// frame is a real fact), else inconclusive.
Verdict MissingResult(const JudgeInput& in, Verdict v, const char* progress_key,
                      const LimitBand& band, const std::string& unit);

// True when the family has progress facts and fact[key] grows strictly from one to the next:
// a stream that went backwards or repeated itself is not a measurement.
bool ProgressClimbs(const JudgeInput& in, const char* key);

// Positive evidence that the sandbox ended an incomplete launch by a kill: the harness did not
// time it out and reported no error of its own, the frames carry no protocol error and no
// done frame, and the sandbox's process ended by a signal or with an exit status that reports
// one (124 from timeout(1); 128 + N for signal N, as shells and docker report a killed child).
// Returns how it ended ("signal 9", "exit 137"), or nullopt. ExpectedEnd() words it for the
// evidence. `kill_only`: accept only SIGKILL
// (signal 9 or exit 137), as the OOM killer sends.
std::optional<std::string> SandboxKill(const BatchResult& result, bool kill_only);
// "killed by the sandbox (exit 124, ...), not by the harness's timeout": Evidence::expected_end.
std::string ExpectedEnd(const std::string& kill);

}  // namespace sandprobe::resource_measure
