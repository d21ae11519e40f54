// The pieces every resource judge shares (family_resource_measure.h): facts out of the frames,
// host readings, and a measurement turned into one of the three outcomes.
#include "families/family_resource_measure.h"

#include <cmath>

#include <fmt/format.h>

namespace sandprobe {
namespace resource_measure {

using nlohmann::json;

const json* LastFact(const JudgeInput& in, const char* kind, Verdict* v) {
  const std::vector<int>& indexes = in.facts.OfFamily(in.check.family);
  for (auto it = indexes.rbegin(); it != indexes.rend(); ++it) {
    const json& fact = in.facts.Fact(*it);
    if (fact.value("kind", "") != kind) continue;
    if (v) v->evidence.frame_indexes.push_back(*it);
    return &fact;
  }
  return nullptr;
}

double Number(const json& fact, const char* key, double fallback) {
  auto it = fact.find(key);
  return it != fact.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string Num(double value) {
  // Whole numbers in full (cfs_quota_us=100000, not 1e+05); fractions to four digits.
  if (std::floor(value) == value && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{:.4g}", value);
}

std::string StoppedBy(const json& fact) {
  auto it = fact.find("stopped_by");
  return it != fact.end() && it->is_string() ? it->get<std::string>() : "?";
}

Measurement MeasuredAgainstCeiling(const json& fact, const char* measured_key,
                                   const char* ceiling_key, std::string unit) {
  Measurement m;
  m.unit = std::move(unit);
  m.measured = Number(fact, measured_key);
  m.ceiling = Number(fact, ceiling_key);
  m.reached_ceiling = StoppedBy(fact) == "ceiling";
  return m;
}

std::optional<LimitBand> StartLimit(const JudgeInput& in, Verdict& v) {
  v = StartVerdict(in);
  if (in.check.tolerance) {
    const Tolerance& t = *in.check.tolerance;
    return LimitBand{t.declared, t.Low(), t.High()};
  }
  v.outcome = Outcome::kError;
  v.observed = "the plan gave this limit check no declared value and tolerance";
  return std::nullopt;
}

const json* LaunchReadings(const JudgeInput& in) {
  auto all = in.witnesses.observed.find("host_readings");
  if (all == in.witnesses.observed.end() || !all->second.is_object()) return nullptr;
  auto mine = all->second.find(in.result.launch_id);
  return mine == all->second.end() || !mine->is_object() ? nullptr : &*mine;
}

const json* HostReading(const JudgeInput& in, const char* key) {
  const json* mine = LaunchReadings(in);
  if (mine == nullptr) return nullptr;
  auto it = mine->find(key);
  return it == mine->end() ? nullptr : &*it;
}

std::string HostReadings(const JudgeInput& in, Verdict& v) {
  auto all = in.witnesses.observed.find("host_readings");
  if (all == in.witnesses.observed.end() || !all->second.is_object()) return "";
  auto mine = all->second.find(in.result.launch_id);
  if (mine == all->second.end() || !mine->is_object() || mine->empty()) return "";
  std::string text;
  for (const auto& [key, value] : mine->items()) {
    if (!text.empty()) text += ", ";
    text += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  v.evidence.witness_facts.push_back("host readings: " + text);
  return text;
}

void Conclude(const JudgeInput& in, Verdict& v, const LimitBand& band, const Measurement& m,
              const std::string& remediation) {
  v.expected = fmt::format("enforced at {} {} (band {}..{})", Num(band.declared), m.unit,
                           Num(band.low), Num(band.high));
  v.remediation = remediation;
  switch (ClassifyLimit(band, m.measured, m.reached_ceiling, m.ceiling)) {
    case LimitOutcome::kAtDeclared:
      v.observed = fmt::format("measured {} {}: enforced at the declared value; stopped by {}",
                               Num(m.measured), m.unit, m.mechanism);
      Judge(v, true, Direction::kNone);
      break;
    case LimitOutcome::kAtOtherValue: {
      bool higher = m.measured > band.high;
      v.observed = fmt::format("measured {} {} vs declared {}: enforced {}; stopped by {}",
                               Num(m.measured), m.unit, Num(band.declared),
                               higher ? "above the declared value" : "below the declared value",
                               m.mechanism);
      Judge(v, false, higher ? Direction::kTooPermissive : Direction::kTooRestrictive);
      v.check.severity = Severity::kMedium;
      v.evidence.enforced_instead = m.measured;
      break;
    }
    case LimitOutcome::kNotEnforced:
      v.observed = fmt::format("measured {} {}: not enforced up to {} {} (the probe's ceiling; "
                               "declared {})", Num(m.measured), m.unit, Num(m.ceiling), m.unit,
                               Num(band.declared));
      Judge(v, false, Direction::kTooPermissive);
      break;
    case LimitOutcome::kBeyondCeiling:
      v.outcome = Outcome::kInconclusive;
      v.observed = fmt::format("measured {} {}: cannot measure above {} {} (the probe's ceiling; "
                               "declared {})", Num(m.measured), m.unit, Num(m.ceiling), m.unit,
                               Num(band.declared));
      break;
  }
  std::string host = HostReadings(in, v);
  if (!host.empty()) v.observed += "; host: " + host;
}

Verdict MissingResult(const JudgeInput& in, Verdict v, const char* progress_key,
                      const LimitBand& band, const std::string& unit) {
  const json* progress = LastFact(in, "progress", &v);
  double reached = progress ? Number(*progress, progress_key) : 0;
  v.expected = fmt::format("enforced at {} {}", Num(band.declared), unit);
  if (progress && reached > band.high) {
    v.observed = fmt::format("reached at least {} {} (declared {}) before the launch ended "
                             "without a result", Num(reached), unit, Num(band.declared));
    Judge(v, false, Direction::kTooPermissive);
  } else {
    v.outcome = Outcome::kInconclusive;
    v.observed = progress ? fmt::format("no result frame; last progress {} {}", Num(reached), unit)
                          : std::string("the probe reported no result for this limit");
  }
  HostReadings(in, v);
  return v;
}

bool ProgressClimbs(const JudgeInput& in, const char* key) {
  double last = -1;
  int seen = 0;
  for (int index : in.facts.OfFamily(in.check.family)) {
    const json& fact = in.facts.Fact(index);
    if (fact.value("kind", "") != "progress") continue;
    double value = Number(fact, key, -1);
    if (value <= last) return false;
    last = value;
    ++seen;
  }
  return seen > 0;
}

std::optional<std::string> SandboxKill(const BatchResult& result, bool kill_only) {
  const BatchResult::End& end = result.end;
  if (end.timed_out || !end.error.empty() || result.frames.done ||
      !result.frames.protocol_errors.empty()) {
    return std::nullopt;
  }
  // SIGHUP, SIGINT, SIGKILL, SIGALRM, SIGTERM: what supervisors and timeout(1) send.
  auto killing = [&](int sig) {
    return kill_only ? sig == 9 : sig == 1 || sig == 2 || sig == 9 || sig == 14 || sig == 15;
  };
  if (end.signal && killing(*end.signal)) return fmt::format("signal {}", *end.signal);
  if (!end.exit_code) return std::nullopt;
  int code = *end.exit_code;
  if ((code == 124 && !kill_only) || (code > 128 && killing(code - 128))) {
    return fmt::format("exit {}{}", code, code == 124 ? ", as timeout(1) reports a kill" : "");
  }
  return std::nullopt;
}

std::string ExpectedEnd(const std::string& kill) {
  return "killed by the sandbox (" + kill + "), not by the harness's timeout";
}

}  // namespace resource_measure

}  // namespace sandprobe
