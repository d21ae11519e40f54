#include "reports/json_report_read.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

namespace sandprobe {
namespace {

using nlohmann::json;

std::optional<int> OptionalInt(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<int>();
}

std::vector<LeftoverProcess> Processes(const json& launch, const char* key) {
  std::vector<LeftoverProcess> out;
  if (!launch.contains(key)) return out;
  for (const json& p : launch.at(key)) out.push_back({p.at("pid").get<int>(), p.at("argv").get<std::string>()});
  return out;
}

LaunchRecord ReadLaunch(const json& l) {
  LaunchRecord r;
  r.id = l.at("id").get<std::string>();
  r.instance = l.at("instance").get<std::string>();
  r.purpose = l.at("purpose").get<std::string>();
  r.argv = l.at("argv").get<std::vector<std::string>>();
  r.exit_code = OptionalInt(l.at("exit_code"));
  r.signal = OptionalInt(l.at("signal"));
  r.timed_out = l.at("timed_out").get<bool>();
  r.wall_ms = l.at("wall_ms").get<std::int64_t>();
  r.error = l.at("error").get<std::string>();
  r.executable = l.at("executable").get<std::string>();
  r.executable_sha256 = l.at("executable_sha256").get<std::string>();
  r.executable_warning = l.at("executable_warning").get<std::string>();
  r.stdout_tail = l.at("stdout_tail").get<std::string>();
  r.stderr_tail = l.at("stderr_tail").get<std::string>();
  r.frames.done = l.at("done").get<bool>();
  r.frames.protocol_errors = l.at("protocol_errors").get<std::vector<std::string>>();
  r.frames.noise_lines = l.at("noise_lines").get<int>();
  r.frames.facts = l.at("frames").get<std::vector<json>>();
  r.leftover_processes = Processes(l, "leftover_processes");
  r.alive_at_timeout = Processes(l, "alive_at_timeout");
  r.cut_short = l.value("cut_short", "");
  return r;
}

RunReport ReadFacts(const json& in) {
  RunReport r;
  r.tool_version = in.at("tool_version").get<std::string>();
  r.run_id = in.at("run_id").get<std::string>();
  r.started_at = ParseRfc3339(in.at("started_at").get<std::string>());
  r.finished_at = ParseRfc3339(in.at("finished_at").get<std::string>());
  r.duration_seconds = in.at("duration_seconds").get<double>();
  r.interrupted = in.at("interrupted").get<bool>();
  r.host = in.at("host");
  r.profile_name = in.at("profile").at("name").get<std::string>();
  r.profile_path = in.at("profile").at("path").get<std::string>();
  r.profile = in.at("profile").at("config");
  r.policy_name = in.at("policy").at("name").get<std::string>();
  r.policy_path = in.at("policy").at("path").get<std::string>();
  r.policy = in.at("policy").at("config");
  r.suite_name = in.at("suite").get<std::string>();
  for (const json& l : in.at("launches")) r.launches.push_back(ReadLaunch(l));
  r.witnesses = in.at("witnesses");
  r.cut_short = in.value("cut_short", std::vector<std::string>{});
  r.left_for_sweep = in.value("left_for_sweep", "");
  if (in.contains("plan")) r.plan = in.at("plan");
  return r;
}

}  // namespace

StatusOr<json> LoadJsonReport(const std::string& path) {
  std::error_code ec;
  if (path != "-" && !std::filesystem::is_regular_file(path, ec)) {
    return Status::Error(fmt::format("{}: not a regular file{}", path, ec ? ": " + ec.message() : ""));
  }
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return Status::Error(fmt::format("open({}): cannot read", path));
  }
  std::istream& in = path == "-" ? std::cin : file;
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    return Status::Error(fmt::format("{}: not JSON: {}", path, e.what()));
  }
}

StatusOr<RunReport> ReadJsonReportFacts(const json& report, const std::string& file) {
  if (!report.is_object() || !report.contains("schema") || !report["schema"].is_string()) {
    return Status::Error(fmt::format("{}: not a sandprobe JSON report (no \"schema\")", file));
  }
  if (report["schema"] != kReportSchema) {
    return Status::Error(fmt::format("{}: report schema {} is not {}, the one this sandprobe reads",
                                     file, report["schema"].get<std::string>(), kReportSchema));
  }
  try {
    return ReadFacts(report);
  } catch (const json::exception& e) {
    return Status::Error(fmt::format("{}: read the report: {}", file, e.what()));
  }
}

}  // namespace sandprobe
