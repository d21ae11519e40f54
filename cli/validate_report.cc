#include "cli/validate_report.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/json_report_read.h"

namespace sandprobe {
namespace {

constexpr std::string_view kReportSchemaPrefix = "sandprobe-report/";

// The "schema" of `file` when it is a JSON object that has one, else "". Only a regular file
// of a report's size is read (a FIFO or device would block or never end).
std::string DeclaredSchema(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return "";
  const auto size = std::filesystem::file_size(file, ec);
  if (ec || size > kMaxReportBytes) return "";
  std::ifstream in(file, std::ios::binary);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (!doc.is_object()) return "";
  auto schema = doc.find("schema");
  return schema != doc.end() && schema->is_string() ? schema->get<std::string>() : "";
}

}  // namespace

std::optional<StatusOr<std::string>> ValidateReportFile(const std::string& file) {
  const std::string schema = DeclaredSchema(file);
  if (schema.rfind(kReportSchemaPrefix, 0) != 0) return std::nullopt;
  const std::string what = fmt::format("{} is a sandprobe report ({}), not a policy or profile", file, schema);
  // As `report`, `infer` and `diff` read it: the same size limit, schema version and fields.
  StatusOr<nlohmann::json> json = LoadJsonReport(file);
  if (!json.ok()) return Status::Error(fmt::format("{}, and it does not read as one: {}", what, json.status().message()));
  StatusOr<RunReport> report = ReadJsonReportFacts(*json, file);
  if (!report.ok()) return Status::Error(fmt::format("{}, and it does not read as one: {}", what, report.status().message()));
  return fmt::format("{}: it reads as one (sandbox {}, policy {}, {} launches)", what, report->profile_name,
                     report->policy_name, report->launches.size());
}

}  // namespace sandprobe
