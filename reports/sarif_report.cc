#include "reports/sarif_report.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "io/atomic_file.h"
#include "model/check_catalogue.h"
#include "reports/json_report.h"
#include "reports/sanitize.h"
#include "load/data_dir.h"
#include "load/json_document.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr std::size_t kMessageCap = 2048;  // one result's message
constexpr std::size_t kSarifFieldCap = 1024;    // one property value
constexpr const char* kSourceRoot = "%SRCROOT%";  // the directory sandprobe ran in

// How a severity shows in SARIF: the result level, and GitHub's security-severity score
// (critical >= 9.0, high 7.0-8.9, medium 4.0-6.9, low 0.1-3.9).
struct SeverityStyle {
  const char* level;
  const char* security_severity;
};

SeverityStyle StyleOf(Severity severity) {
  switch (severity) {
    case Severity::kCritical: return {"error", "9.5"};
    case Severity::kHigh: return {"error", "8.0"};
    case Severity::kMedium: return {"warning", "5.5"};
    case Severity::kLow: return {"note", "3.0"};
    case Severity::kInfo: return {"note", "0.1"};
  }
  return {"warning", "5.5"};
}

std::string Clean(const std::string& raw, std::size_t cap = kSarifFieldCap) {
  return SanitizeForXml(raw, cap);
}

// SARIF wants messages as sentences.
std::string Sentence(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (!text.empty() && text.back() != '.') text += '.';
  return text;
}

// A name part of a run: the name, else its file's stem (a harness failure has no loaded names),
// else "unknown".
// A run's profile, policy, suite or id as a part of an automation id: cleaned.
std::string IdPart(const std::string& name, const std::string& path = "") {
  return Clean(NameOrStem(name, path, "unknown"));
}

// A rule's friendly name: "fs.read.denied" -> "FsReadDenied", "fs.mounts.host-root-bind" ->
// "FsMountsHostRootBind".
std::string PascalCase(const std::string& id) {
  std::string name;
  bool upper = true;
  for (char ch : id) {
    const bool word = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (!word) {
      upper = true;
      continue;
    }
    name += upper && ch >= 'a' && ch <= 'z' ? static_cast<char>(ch - 'a' + 'A') : ch;
    upper = false;
  }
  return name;
}

// The rules of one run, one per check template, in order of first appearance. A rule's text
// is the template's own (the check catalogue): every result of the rule shares it, so it never
// carries one check's advice to another (priv.syscall's help is not io_uring's). A result's
// own fix is in its message.
class Rules {
 public:
  explicit Rules(std::string checks_doc) : checks_doc_(std::move(checks_doc)) {}

  std::size_t IndexOf(const Verdict& v) {
    const std::string id = CheckTemplate(v.check.id);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) {
      it = by_id_.emplace(id, rules_.size()).first;
      rules_.push_back(NewRule(id, v, checks_doc_));
    }
    return it->second;
  }
  json ToJson() const { return rules_; }

 private:
  static json NewRule(const std::string& id, const Verdict& v, const std::string& checks_doc) {
    const SeverityStyle style = StyleOf(v.check.severity);
    const CatalogueRow* row = FindCatalogueRow(id);
    const std::string expected = v.expected.empty() ? id : Clean(v.expected);
    json rule = {
        {"id", id},
        {"name", PascalCase(id)},
        {"shortDescription", {{"text", Sentence(row != nullptr ? id + ": " + std::string(row->proves) : id + ": " + expected)}}},
        {"fullDescription",
         {{"text", row != nullptr ? Sentence(std::string(row->proves))
                                  : Sentence(fmt::format("Checks of probe family {} that the sandbox keeps the "
                                                         "policy's promise ({}) for each target the policy names",
                                                         Clean(v.check.family), expected))}}},
        {"defaultConfiguration", {{"level", style.level}}},
        {"properties",
         {{"tags", {"security", "sandbox", Clean(v.check.family)}},
          {"precision", "high"},
          {"security-severity", style.security_severity}}},
    };
    if (row != nullptr) {
      rule["help"] = {{"text", Sentence(std::string(row->help))},
                      {"markdown", fmt::format("{}\n\n**Fix:** {}", Sentence(std::string(row->proves)),
                                               Sentence(std::string(row->help)))}};
      if (!checks_doc.empty()) rule["helpUri"] = fmt::format("{}#{}", checks_doc, CatalogueAnchor(id));
    }
    return rule;
  }

  std::string checks_doc_;
  std::vector<json> rules_;
  std::map<std::string, std::size_t> by_id_;
};

// The artifact location of `file`: relative to %SRCROOT% (the directory sandprobe ran in) when
// the file is inside it, so code scanning can place it in the repository; else file:///...
json ArtifactLocation(const std::string& file, const std::string& base_dir) {
  namespace fs = std::filesystem;
  if (!base_dir.empty()) {
    const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : fs::path(base_dir) / file;
    const fs::path relative = path.lexically_normal().lexically_relative(fs::path(base_dir).lexically_normal());
    if (!relative.empty() && *relative.begin() != ".." && relative.is_relative()) {
      return {{"uri", PathToUri(relative.generic_string())}, {"uriBaseId", kSourceRoot}};
    }
  }
  return {{"uri", PathToUri(file)}};
}

json Location(const RunReport& r, const Check& check, const SourceLocator& locate, const std::string& base_dir) {
  const PolicyRef& ref = check.reference;
  const bool in_file = !ref.file.empty();
  std::string file = in_file ? ref.file : (!r.policy_path.empty() ? r.policy_path : r.profile_path);
  if (file.empty()) return nullptr;
  json physical = {{"artifactLocation", ArtifactLocation(file, base_dir)}};
  std::optional<SourcePosition> pos;
  if (in_file) pos = ref.position.known() ? ref.position : locate(ref.file, ref.pointer);
  // Without a position (a reference in words, a file that cannot be read now) the promise is
  // the file's as a whole: its first line (code scanning wants a region to show).
  if (!pos || !pos->known()) pos = SourcePosition{1, 0};
  physical["region"] = {{"startLine", pos->line}};
  if (pos->column > 0) physical["region"]["startColumn"] = pos->column;
  json location = {{"physicalLocation", std::move(physical)}};
  if (in_file && !ref.pointer.empty()) {
    location["logicalLocations"] = json::array(
        {{{"fullyQualifiedName", Clean(ref.pointer)}, {"kind", "member"}}});
  }
  return location;
}

json Result(const RunReport& r, const Verdict& v, std::size_t rule_index,
            const SourceLocator& locate, const std::string& base_dir) {
  const Check& c = v.check;
  const SeverityStyle style = StyleOf(c.severity);
  std::string text = fmt::format("[{}] {} in sandbox {}: expected {}; observed {}",
                                 SeverityName(c.severity), c.id,
                                 IdPart(r.profile_name, r.profile_path), v.expected,
                                 v.observed);
  text = Sentence(Clean(text, kMessageCap));
  if (!v.remediation.empty()) text += " Fix: " + Sentence(Clean(v.remediation));
  json result = {
      {"ruleId", CheckTemplate(c.id)},
      {"ruleIndex", rule_index},
      {"kind", "fail"},
      {"level", style.level},
      {"message", {{"text", text}}},
      {"partialFingerprints",
       {{"sandprobeCheck/v1", Clean(r.profile_name + "/" + r.policy_name + "/" + c.id)}}},
      {"properties",
       {{"check", Clean(c.id)},
        {"evidence", EvidenceTierName(v.tier())},
        {"severity", SeverityName(c.severity)},
        {"direction", DirectionName(v.direction)},
        {"security-severity", style.security_severity},
        {"expected", Clean(v.expected)},
        {"observed", Clean(v.observed)},
        {"target", Clean(c.target)},
        {"reference", Clean(c.reference.Text())}}},
  };
  if (json location = Location(r, c, locate, base_dir); !location.is_null()) {
    result["locations"] = json::array({std::move(location)});
  }
  // A waived fail (--waivers) is a result suppressed outside the source, with the waiver's
  // reason: code scanning then shows it as dismissed, not as an open alert. An expired waiver
  // suppresses nothing.
  if (v.waived()) {
    result["suppressions"] = json::array(
        {{{"kind", "external"},
          {"status", "accepted"},
          {"justification", Clean(fmt::format("{} (waiver {}, until {})", v.waiver->reason,
                                               v.waiver->where, v.waiver->expires))}}});
  }
  return result;
}

// An error or inconclusive check: the tool could not judge, so a notification, not a result.
json Notification(const RunReport& r, const Verdict& v, std::size_t rule_index) {
  std::string text = fmt::format("{} {} in sandbox {}: {}", OutcomeName(v.outcome), v.check.id,
                                 IdPart(r.profile_name, r.profile_path),
                                 v.observed.empty() ? "no reason given" : v.observed);
  return {
      {"level", v.outcome == Outcome::kError ? "error" : "warning"},
      {"message", {{"text", Sentence(Clean(text, kMessageCap))}}},
      {"associatedRule", {{"id", CheckTemplate(v.check.id)}, {"index", rule_index}}},
  };
}

json Run(const RunReport& r, const SourceLocator& locate, const SarifPlaces& places) {
  const std::string& base_dir = places.base_dir;
  Rules rules(places.checks_doc);
  json results = json::array();
  json notifications = json::array();
  bool harness_failed = r.interrupted;
  for (const Verdict& v : r.verdicts) {
    const std::size_t index = rules.IndexOf(v);
    switch (v.outcome) {
      case Outcome::kFail: results.push_back(Result(r, v, index, locate, base_dir)); break;
      case Outcome::kError:
        harness_failed = true;
        notifications.push_back(Notification(r, v, index));
        break;
      case Outcome::kInconclusive: notifications.push_back(Notification(r, v, index)); break;
      case Outcome::kPass:
      case Outcome::kSkip: break;
    }
  }
  json invocation = {{"executionSuccessful", !harness_failed}};
  if (r.started_at) invocation["startTimeUtc"] = Rfc3339(*r.started_at);
  if (r.finished_at) invocation["endTimeUtc"] = Rfc3339(*r.finished_at);
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
  json driver = {{"name", "sandprobe"}, {"rules", rules.ToJson()}};
  if (!r.tool_version.empty()) {
    driver["version"] = Clean(r.tool_version);
    driver["semanticVersion"] = Clean(r.tool_version);
  }
  json run = {
      {"tool", {{"driver", std::move(driver)}}},
      {"automationDetails",
       {{"id", fmt::format("sandprobe/{}/{}/{}/{}", IdPart(r.profile_name, r.profile_path),
                           IdPart(r.policy_name, r.policy_path), IdPart(r.suite_name),
                           IdPart(r.run_id))}}},
      {"columnKind", "unicodeCodePoints"},
      {"invocations", json::array({std::move(invocation)})},
      {"results", std::move(results)},
      {"properties",
       {{"run_id", Clean(r.run_id)},
        {"profile", Clean(r.profile_name)},
        {"profile_path", Clean(r.profile_path)},
        {"policy", Clean(r.policy_name)},
        {"policy_path", Clean(r.policy_path)},
        {"suite", Clean(r.suite_name)},
        {"interrupted", r.interrupted},
        {"summary", SummaryCounts(r.verdicts)},
        {"passes_by_evidence", PassesByEvidence(r.verdicts)}}},
  };
  if (!base_dir.empty()) {
    const std::string root = base_dir.ends_with('/') ? base_dir : base_dir + "/";
    run["originalUriBaseIds"] = {{kSourceRoot, {{"uri", PathToUri(root)}}}};
  }
  return run;
}

}  // namespace

std::string CheckTemplate(const std::string& check_id) {
  return check_id.substr(0, check_id.find(':'));
}

std::string PathToUri(const std::string& path) {
  std::string uri = path.starts_with('/') ? "file://" : "";
  for (unsigned char ch : path) {
    const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                       (ch >= '0' && ch <= '9') || std::string_view("-._~/").find(ch) != std::string_view::npos;
    uri += plain ? std::string(1, static_cast<char>(ch)) : fmt::format("%{:02X}", ch);
  }
  return uri;
}

SourceLocator FileSourceLocator() {
  auto cache = std::make_shared<std::map<std::string, std::optional<JsonDocument>>>();
  return [cache](const std::string& file, const std::string& pointer) -> std::optional<SourcePosition> {
    auto it = cache->find(file);
    if (it == cache->end()) {
      StatusOr<JsonDocument> doc = JsonDocument::Load(file);
      it = cache->emplace(file, doc.ok() ? std::optional<JsonDocument>(std::move(*doc))
                                         : std::nullopt).first;
    }
    if (!it->second) return std::nullopt;
    try {
      return it->second->PositionOf(JsonPointer(pointer));
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;  // not a JSON pointer after all
    }
  };
}

SarifPlaces SarifPlacesHere() {
  SarifPlaces places;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (!ec) places.base_dir = cwd.string();
  if (std::string_view(SANDPROBE_CHECKS_DOC_URL).empty()) {
    const DataPaths data = DiscoverDataPaths(SelfExecutable());
    if (!data.data_dir.empty()) places.checks_doc = PathToUri(data.data_dir + "/docs/checks.md");
  } else {
    places.checks_doc = SANDPROBE_CHECKS_DOC_URL;
  }
  return places;
}

json SarifDocument(const std::vector<RunReport>& reports, const SourceLocator& locate, const SarifPlaces& places) {
  json runs = json::array();
  for (const RunReport& r : reports) runs.push_back(Run(r, locate, places));
  return {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs", std::move(runs)},
  };
}

std::string RenderSarif(const std::vector<RunReport>& reports, const SourceLocator& locate, const SarifPlaces& places) {
  return SarifDocument(reports, locate, places).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Status WriteSarifReport(const std::vector<RunReport>& reports, const std::string& path) {
  return WriteReportOutput(path, RenderSarif(reports, FileSourceLocator(), SarifPlacesHere()))
      .WithContext("write SARIF report");
}

}  // namespace sandprobe
