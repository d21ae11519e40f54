#include "recorded/rejudge_record.h"

#include <map>
#include <optional>

#include <fmt/format.h>

#include "model/run_report.h"
#include "model/check_id.h"

namespace sandprobe {
namespace {

using nlohmann::json;

struct StateRow {
  BatchResult::State state;
  const char* name;
};
constexpr StateRow kStates[] = {
    {BatchResult::State::kRan, "ran"},
    {BatchResult::State::kSkipped, "skipped"},
    {BatchResult::State::kLaunchFailed, "launch_failed"},
    {BatchResult::State::kInterrupted, "interrupted"},
};

const char* StateName(BatchResult::State state) {
  for (const StateRow& row : kStates) {
    if (row.state == state) return row.name;
  }
  return "launch_failed";
}

std::optional<BatchResult::State> ParseState(const std::string& name) {
  for (const StateRow& row : kStates) {
    if (name == row.name) return row.state;
  }
  return std::nullopt;
}

json OptionalInt(const std::optional<int>& value) { return value ? json(*value) : json(nullptr); }

std::optional<int> ReadOptionalInt(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<int>();
}

json BatchRecord(const Plan& plan, const LaunchBatch& batch, const BatchResult& result) {
  json invocations = json::array();
  for (const ProbeInvocation& inv : batch.invocations) {
    invocations.push_back({{"family", inv.family}, {"args", inv.args}});
  }
  json checks = json::array();
  for (std::size_t i : batch.check_indexes) checks.push_back(plan.checks[i].id);
  return {
      {"id", batch.id},
      {"invocations", std::move(invocations)},
      {"checks", std::move(checks)},
      {"exclusive", batch.exclusive},
      {"timeout_seconds", batch.timeout_seconds},
      {"fresh_instance", batch.fresh_instance},
      {"host_readings", batch.host_readings},
      {"result",
       {{"state", StateName(result.state)},
        {"launch_id", result.launch_id},
        {"reason", result.reason},
        {"nonce", result.nonce},
        {"complete", result.complete},
        {"leftover_processes", result.leftover_processes},
        {"alive_at_timeout", result.alive_at_timeout},
        {"end",
         {{"exit_code", OptionalInt(result.end.exit_code)},
          {"signal", OptionalInt(result.end.signal)},
          {"timed_out", result.end.timed_out},
          {"error", result.end.error}}},
        {"backend_unavailable", result.backend_unavailable},
        {"backend_required", result.backend_required}}},
  };
}

// A check as the report's checks[] keeps it.
Check ReadCheck(const json& row) {
  Check c;
  c.id = PlaceholderFreeId(row.at("id").get<std::string>());  // an older report's "{host_canary}" ids
  c.family = row.at("family").get<std::string>();
  c.severity = ParseSeverity(row.at("severity").get<std::string>()).value_or(Severity::kMedium);
  c.expect = row.at("expect").get<std::string>() == "allowed" ? Expectation::kAllowed : Expectation::kDenied;
  c.target = row.at("target").get<std::string>();
  c.resolved_target = row.at("resolved_target").get<std::string>();
  c.variant = row.at("variant").get<std::string>();
  const std::string reference = row.at("reference").get<std::string>();
  c.reference = ParsePolicyRef(reference).value_or(PolicyRef::InWords(reference));
  if (const json& t = row.at("tolerance"); !t.is_null()) {
    c.tolerance = Tolerance{t.at("declared").get<double>(), t.at("plus_minus").get<double>(),
                            t.at("percent").get<bool>()};
  }
  return c;
}

ProbeFrames ReadFrames(const json& launch) {
  ProbeFrames frames;
  frames.facts = launch.at("frames").get<std::vector<json>>();
  frames.done = launch.at("done").get<bool>();
  frames.protocol_errors = launch.at("protocol_errors").get<std::vector<std::string>>();
  frames.noise_lines = launch.at("noise_lines").get<int>();
  return frames;
}

// Why a launch had no fresh positive control (BatchResult::challenge_unavailable, which caps
// its passes at "reported"), from the report's launch_control witness: the run's reason, or the
// launch's own row. A report from before the control has no such witness: nothing to restore.
void RestoreControlUnavailable(const json& witnesses, std::vector<BatchResult>& results) {
  auto control = witnesses.find("launch_control");
  if (control == witnesses.end() || !control->is_object()) return;
  const std::string for_the_run = control->value("unavailable", "");
  std::map<std::string, std::string> per_launch;
  for (const json& row : control->value("launches", json::array())) {
    if (row.is_object() && row.contains("unavailable") && row["unavailable"].is_string()) {
      per_launch[row.value("launch_id", "")] = row["unavailable"].get<std::string>();
    }
  }
  for (BatchResult& r : results) {
    if (r.launch_id.empty()) continue;
    auto it = per_launch.find(r.launch_id);
    r.challenge_unavailable = it != per_launch.end() ? it->second : for_the_run;
  }
}

BatchResult ReadResult(const json& row, const std::map<std::string, const json*>& launches) {
  BatchResult r;
  std::string state = row.at("state").get<std::string>();
  std::optional<BatchResult::State> parsed = ParseState(state);
  if (!parsed) throw std::invalid_argument("unknown batch state " + state);
  r.state = *parsed;
  r.launch_id = row.at("launch_id").get<std::string>();
  r.reason = row.at("reason").get<std::string>();
  r.nonce = row.at("nonce").get<std::string>();
  r.complete = row.at("complete").get<bool>();
  r.leftover_processes = row.at("leftover_processes").get<std::vector<std::string>>();
  r.alive_at_timeout = row.at("alive_at_timeout").get<std::vector<std::string>>();
  const json& end = row.at("end");
  r.end = {ReadOptionalInt(end.at("exit_code")), ReadOptionalInt(end.at("signal")),
           end.at("timed_out").get<bool>(), end.at("error").get<std::string>()};
  r.backend_unavailable = row.at("backend_unavailable").get<std::string>();
  r.backend_required = row.at("backend_required").get<bool>();
  if (!r.launch_id.empty()) {
    auto launch = launches.find(r.launch_id);
    if (launch == launches.end()) throw std::invalid_argument("no launch " + r.launch_id);
    r.frames = ReadFrames(*launch->second);
    r.wall_ms = launch->second->value("wall_ms", std::int64_t{0});
  }
  return r;
}

StatusOr<RecordedRun> ReadRecord(const json& report) {
  RecordedRun run;
  run.run_id = report.at("run_id").get<std::string>();
  const json& record = report.at("plan");
  run.suite = record.at("suite");
  const json& context = record.at("context");
  run.context.host_canary = context.at("host_canary").get<std::string>();
  run.context.workspace = context.at("workspace").get<std::string>();
  run.context.values = context.at("values").get<std::map<std::string, std::string>>();
  run.context.session = context.at("session").get<bool>();
  run.context.launchless_checks = context.at("launchless_checks").get<bool>();
  std::map<std::string, std::size_t> check_index;
  for (const json& row : report.at("checks")) {
    check_index.emplace(PlaceholderFreeId(row.at("id").get<std::string>()), run.plan.checks.size());
    run.plan.checks.push_back(ReadCheck(row));
  }
  std::map<std::string, const json*> launches;
  for (const json& launch : report.at("launches")) launches[launch.at("id").get<std::string>()] = &launch;
  for (const json& row : record.at("batches")) {
    LaunchBatch batch;
    batch.id = row.at("id").get<std::string>();
    for (const json& inv : row.at("invocations")) {
      batch.invocations.push_back({inv.at("family").get<std::string>(), inv.at("args").get<std::vector<std::string>>()});
    }
    for (const json& id : row.at("checks")) {
      auto found = check_index.find(PlaceholderFreeId(id.get<std::string>()));
      if (found == check_index.end()) throw std::invalid_argument("batch " + batch.id + " names no check " + id.dump());
      batch.check_indexes.push_back(found->second);
    }
    batch.exclusive = row.at("exclusive").get<bool>();
    batch.timeout_seconds = row.at("timeout_seconds").get<int>();
    batch.fresh_instance = row.at("fresh_instance").get<bool>();
    batch.host_readings = row.at("host_readings").get<bool>();
    run.plan.batches.push_back(std::move(batch));
    run.results.push_back(ReadResult(row.at("result"), launches));
  }
  const json& witnesses = report.at("witnesses");
  RestoreControlUnavailable(witnesses, run.results);
  run.witnesses.canary_path = witnesses.at("canary_file").at("path").get<std::string>();
  run.witnesses.canary_sha256 = witnesses.at("canary_file").at("sha256").get<std::string>();
  run.witnesses.env_secret_sha256 = witnesses.at("canary_env").at("sha256").get<std::string>();
  for (const json& key : record.at("witness_keys")) {
    run.witnesses.observed[key.get<std::string>()] = witnesses.at(key.get<std::string>());
  }
  return run;
}

}  // namespace

json RecordPlan(const Suite& suite, const PlanContext& context, const Plan& plan,
                const std::vector<BatchResult>& results, const WitnessFacts& witnesses) {
  json batches = json::array();
  static const BatchResult kMissing{.state = BatchResult::State::kLaunchFailed,
                                    .reason = "the harness recorded no result for this launch"};
  for (std::size_t b = 0; b < plan.batches.size(); ++b) {
    batches.push_back(BatchRecord(plan, plan.batches[b], b < results.size() ? results[b] : kMissing));
  }
  json witness_keys = json::array();
  for (const auto& [key, value] : witnesses.observed) witness_keys.push_back(key);
  return {{"suite", suite.raw},
          {"context",
           {{"host_canary", context.host_canary},
            {"workspace", context.workspace},
            {"values", context.values},
            {"session", context.session},
            {"launchless_checks", context.launchless_checks}}},
          {"batches", std::move(batches)},
          {"witness_keys", std::move(witness_keys)}};
}

StatusOr<RecordedRun> ReadRecordedRun(const json& report, const std::string& file) {
  if (!report.is_object() || !report.contains("schema") || !report["schema"].is_string()) {
    return Status::Error(fmt::format("{}: not a sandprobe JSON report (no \"schema\")", file));
  }
  if (report["schema"] != kReportSchema) {
    return Status::Error(fmt::format("{}: report schema {} is not {}, the one this sandprobe reads",
                                     file, report["schema"].get<std::string>(), kReportSchema));
  }
  if (!report.contains("plan")) {
    return Status::Error(fmt::format(
        "{}: the report has no plan record (written by an older sandprobe, or by a run that "
        "failed before it planned): run it again to re-judge it",
        file));
  }
  try {
    return ReadRecord(report);
  } catch (const std::exception& e) {  // nlohmann's type and key errors, and ours
    return Status::Error(fmt::format("{}: read the recorded run: {}", file, e.what()));
  }
}

}  // namespace sandprobe
