#include "reports/diff.h"

#include <map>
#include <regex>

#include <fmt/format.h>

namespace sandprobe {
namespace {

using nlohmann::json;

std::string Str(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// "measured 510 MiB: ..." -> "510 MiB" (resource checks write their measurement this way).
std::string Measured(const std::string& observed) {
  static const std::regex kMeasured(R"(measured ([0-9][0-9.e+]*) ([A-Za-z]+))");
  std::smatch m;
  return std::regex_search(observed, m, kMeasured) ? m[1].str() + " " + m[2].str() : "";
}

// Higher is worse; pass and skip are both fine.
int Badness(const std::string& verdict) {
  if (verdict == "fail") return 2;
  if (verdict == "error" || verdict == "inconclusive") return 1;
  return 0;
}

StatusOr<std::vector<std::pair<std::string, CheckState>>> States(const json& report,
                                                                 const char* which) {
  if (!report.is_object() || !report.contains("checks") || !report["checks"].is_array()) {
    return Status::Error(fmt::format("{}: not a sandprobe report (no checks[])", which));
  }
  std::vector<std::pair<std::string, CheckState>> out;
  for (const json& check : report["checks"]) {
    if (!check.is_object() || Str(check, "id").empty()) {
      return Status::Error(fmt::format("{}: a check without an id", which));
    }
    out.push_back({Str(check, "id"),
                   {true, Str(check, "verdict"), Str(check, "direction"),
                    Measured(Str(check, "observed"))}});
  }
  return out;
}

std::string Label(const json& report) {
  std::string profile = "?";
  if (report.contains("profile") && report["profile"].is_object()) profile = Str(report["profile"], "name");
  return fmt::format("{} (run {})", profile, Str(report, "run_id"));
}

std::string Describe(const CheckState& s) {
  if (!s.present) return "absent";
  return s.direction.empty() ? s.verdict : fmt::format("{} ({})", s.verdict, s.direction);
}

json StateJson(const CheckState& s) {
  if (!s.present) return nullptr;
  return {{"verdict", s.verdict},
          {"direction", s.direction.empty() ? json(nullptr) : json(s.direction)},
          {"measured", s.measured.empty() ? json(nullptr) : json(s.measured)}};
}

}  // namespace

StatusOr<ReportDiff> DiffReports(const json& before, const json& after) {
  auto old_states = States(before, "OLD");
  if (!old_states.ok()) return old_states.status();
  auto new_states = States(after, "NEW");
  if (!new_states.ok()) return new_states.status();
  ReportDiff diff{Label(before), Label(after), {}, 0};
  std::map<std::string, CheckState> old_by_id(old_states->begin(), old_states->end());
  auto add = [&](const std::string& id, const CheckState& a, const CheckState& b) {
    bool same = a.present == b.present && a.verdict == b.verdict && a.direction == b.direction &&
                a.measured == b.measured;
    if (same) return;
    CheckChange change{id, a, b, false};
    change.regressed = b.present && Badness(b.verdict) > (a.present ? Badness(a.verdict) : 0);
    diff.regressions += change.regressed ? 1 : 0;
    diff.changes.push_back(std::move(change));
  };
  for (const auto& [id, state] : *new_states) {
    auto it = old_by_id.find(id);
    add(id, it == old_by_id.end() ? CheckState{} : it->second, state);
    if (it != old_by_id.end()) old_by_id.erase(it);
  }
  for (const auto& [id, state] : *old_states) {
    if (old_by_id.count(id)) add(id, state, CheckState{});
  }
  return diff;
}

std::string RenderDiffText(const ReportDiff& diff) {
  std::string out = fmt::format("sandprobe diff: {} -> {}\n", diff.old_label, diff.new_label);
  for (const CheckChange& c : diff.changes) {
    std::string line = fmt::format("{}: {} -> {}", c.id, Describe(c.before), Describe(c.after));
    if (c.before.measured != c.after.measured) {
      line += fmt::format("; measured {} -> {}", c.before.measured.empty() ? "-" : c.before.measured,
                          c.after.measured.empty() ? "-" : c.after.measured);
    }
    if (c.regressed) line += "  [regressed]";
    out += line + "\n";
  }
  out += fmt::format("{} changed, {} regressed\n", diff.changes.size(), diff.regressions);
  return out;
}

json DiffToJson(const ReportDiff& diff) {
  json changes = json::array();
  for (const CheckChange& c : diff.changes) {
    changes.push_back({{"id", c.id},
                       {"old", StateJson(c.before)},
                       {"new", StateJson(c.after)},
                       {"regressed", c.regressed}});
  }
  return {{"schema", "sandprobe-diff/1"}, {"old", diff.old_label}, {"new", diff.new_label},
          {"changes", changes}, {"regressions", diff.regressions}};
}

}  // namespace sandprobe
