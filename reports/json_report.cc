#include "reports/json_report.h"

#include <cmath>

#include "io/atomic_file.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// JSON has no NaN/inf (nlohmann would write null, which the schema rejects).
double Finite(double seconds) { return std::isfinite(seconds) ? seconds : 0.0; }

json OrNull(const std::string& value) { return value.empty() ? json(nullptr) : json(value); }

// A measured limit's band: {"declared": 512, "plus_minus": 5, "percent": true, "low": 486.4,
// "high": 537.6}; null for checks that measure nothing.
json ToleranceJson(const std::optional<Tolerance>& t) {
  if (!t) return nullptr;
  return {{"declared", t->declared}, {"plus_minus", t->plus_minus}, {"percent", t->percent},
          {"low", t->Low()}, {"high", t->High()}};
}

// Only on a fail a waiver matched (--waivers): the fail stays a fail, marked waived unless the
// waiver expired.
json WaiverJson(const AppliedWaiver& w) {
  return {{"check", w.pattern}, {"reason", w.reason}, {"expires", w.expires},
          {"source", w.where}, {"expired", w.expired}};
}

json CheckToJson(const Verdict& v) {
  const Check& c = v.check;
  json check = {
      {"id", c.id},
      {"family", c.family},
      {"severity", SeverityName(c.severity)},
      {"expect", ExpectationName(c.expect)},
      {"verdict", OutcomeName(v.outcome)},
      {"direction", OrNull(std::string(DirectionName(v.direction)))},
      {"expected", v.expected},
      {"observed", v.observed},
      {"target", c.target},
      {"resolved_target", c.resolved_target},
      {"variant", c.variant},
      {"reference", c.reference.Text()},
      {"tolerance", ToleranceJson(c.tolerance)},
      {"evidence",
       {{"tier", EvidenceTierName(v.tier())},
        {"launch_id", OrNull(v.evidence.launch_id)},
        {"frame_indexes", v.evidence.frame_indexes},
        {"witness_facts", v.evidence.witness_facts},
        {"expected_end", OrNull(v.evidence.expected_end)}}},
      {"remediation", v.remediation},
      {"duration_seconds", Finite(v.duration_seconds)},
  };
  // Only when a limit was enforced at another value (most checks have no such number).
  if (v.evidence.enforced_instead && std::isfinite(*v.evidence.enforced_instead)) {
    check["evidence"]["enforced_instead"] = *v.evidence.enforced_instead;
  }
  if (v.waiver) {
    check["waived"] = v.waived();
    check["waiver"] = WaiverJson(*v.waiver);
  }
  return check;
}

json LaunchToJson(const LaunchRecord& l) {
  json launch = {
      {"id", l.id},
      {"instance", l.instance},
      {"purpose", l.purpose},
      {"argv", l.argv},
      {"exit_code", l.exit_code ? json(*l.exit_code) : json(nullptr)},
      {"signal", l.signal ? json(*l.signal) : json(nullptr)},
      {"timed_out", l.timed_out},
      {"wall_ms", l.wall_ms},
      {"error", l.error},
      {"executable", l.executable},
      {"executable_sha256", l.executable_sha256},
      {"executable_warning", l.executable_warning},
      {"stdout_tail", l.stdout_tail},
      {"stderr_tail", l.stderr_tail},
      {"done", l.frames.done},
      {"protocol_errors", l.frames.protocol_errors},
      {"noise_lines", l.frames.noise_lines},
      {"frames", l.frames.facts},
  };
  // Only when there were some: most launches leave nothing, and older reports lack the keys.
  auto processes = [&launch](const char* key, const std::vector<LeftoverProcess>& list) {
    if (list.empty()) return;
    json out = json::array();
    for (const LeftoverProcess& p : list) out.push_back({{"pid", p.pid}, {"argv", p.argv}});
    launch[key] = std::move(out);
  };
  processes("leftover_processes", l.leftover_processes);
  processes("alive_at_timeout", l.alive_at_timeout);
  processes("spared_processes", l.spared_processes);
  if (!l.cut_short.empty()) launch["cut_short"] = l.cut_short;
  return launch;
}

}  // namespace

json SummaryCounts(const std::vector<Verdict>& verdicts) {
  json counts = json::object();
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kInconclusive, Outcome::kError,
                    Outcome::kSkip}) {
    counts[std::string(OutcomeName(o))] = 0;
  }
  for (const Verdict& v : verdicts) {
    counts[std::string(OutcomeName(v.outcome))] =
        counts[std::string(OutcomeName(v.outcome))].get<int>() + 1;
  }
  counts["total"] = verdicts.size();
  return counts;
}

json PassesByEvidence(const std::vector<Verdict>& verdicts) {
  json counts = json::object();
  for (EvidenceTier tier : kEvidenceTiers) counts[std::string(EvidenceTierName(tier))] = 0;
  for (const Verdict& v : verdicts) {
    if (v.outcome != Outcome::kPass) continue;
    json& n = counts[std::string(EvidenceTierName(v.tier()))];
    n = n.get<int>() + 1;
  }
  return counts;
}

json ReportToJson(const RunReport& report) {
  json checks = json::array();
  for (const Verdict& v : report.verdicts) checks.push_back(CheckToJson(v));
  json launches = json::array();
  for (const LaunchRecord& l : report.launches) launches.push_back(LaunchToJson(l));
  json out = {
      {"schema", kReportSchema},
      {"tool_version", report.tool_version},
      {"run_id", report.run_id},
      {"started_at", report.started_at ? Rfc3339(*report.started_at) : ""},
      {"finished_at", report.finished_at ? Rfc3339(*report.finished_at) : ""},
      {"duration_seconds", Finite(report.duration_seconds)},
      {"interrupted", report.interrupted},
      {"host", report.host},
      {"profile",
       {{"name", report.profile_name}, {"path", report.profile_path}, {"config", report.profile}}},
      {"policy",
       {{"name", report.policy_name}, {"path", report.policy_path}, {"config", report.policy}}},
      {"suite", report.suite_name},
      {"summary", SummaryCounts(report.verdicts)},
      {"checks", std::move(checks)},
      {"launches", std::move(launches)},
      {"witnesses", report.witnesses},
  };
  out["summary"]["passes_by_evidence"] = PassesByEvidence(report.verdicts);
  // Only when the deadline cut something, or the run left its dir for a sweep.
  if (!report.cut_short.empty()) out["cut_short"] = report.cut_short;
  if (!report.left_for_sweep.empty()) out["left_for_sweep"] = report.left_for_sweep;
  // The suites and --check/--skip, so `sandprobe diff` knows what a narrower run left out.
  if (report.selection) {
    out["suites"] = report.selection->suites;
    out["selection"] = {{"families", report.selection->families},
                        {"check", report.selection->check},
                        {"skip", report.selection->skip}};
  }
  if (report.waivers) {
    out["waivers"] = {{"source", report.waivers->source_path},
                      {"expired", report.waivers->expired},
                      {"unused", report.waivers->unused}};
  }
  // Only when recorded: a harness failure planned nothing; only a re-judge has rejudged_from.
  if (!report.plan.is_null()) out["plan"] = report.plan;
  if (report.rejudged_from) {
    out["rejudged_from"] = {{"run_id", report.rejudged_from->run_id},
                            {"policy", report.rejudged_from->policy_name},
                            {"policy_path", report.rejudged_from->policy_path}};
  }
  return out;
}

std::string RenderJsonReport(const RunReport& report) {
  return ReportToJson(report).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Status WriteJsonReport(const RunReport& report, const std::string& path) {
  // "-", devices, FIFOs and symlinks: see reports/atomic_file.h.
  return WriteReportOutput(path, RenderJsonReport(report)).WithContext("write JSON report");
}

}  // namespace sandprobe
