#include "reports/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/sanitize.h"
#include "gate/check_selection.h"
#include "model/check_id.h"

namespace sandprobe {
namespace {

using nlohmann::json;

std::string Str(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Resource checks write their measurement as "measured 510 MiB: ..."; fills measured, value
// and unit, or leaves them empty.
void ParseMeasured(const std::string& observed, CheckState& state) {
  static const std::regex kMeasured(R"(measured ([0-9][0-9.e+-]*) ([A-Za-z]+))");
  std::smatch m;
  if (!std::regex_search(observed, m, kMeasured)) return;
  state.measured = m[1].str() + " " + m[2].str();
  state.unit = m[2].str();
  try {
    state.value = std::stod(m[1].str());
  } catch (const std::exception&) {  // "1e+": not a number after all
    state.value.reset();
  }
}

// tolerance.high - tolerance.declared, when the check has a tolerance with both.
std::optional<double> AllowedDrift(const json& check) {
  auto t = check.find("tolerance");
  if (t == check.end() || !t->is_object()) return std::nullopt;
  auto high = t->find("high");
  auto declared = t->find("declared");
  if (high == t->end() || declared == t->end() || !high->is_number() || !declared->is_number()) {
    return std::nullopt;
  }
  double drift = high->get<double>() - declared->get<double>();
  return drift >= 0 ? std::optional<double>(drift) : std::nullopt;
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
  std::set<std::string> seen;
  for (const json& check : report["checks"]) {
    if (!check.is_object() || Str(check, "id").empty()) {
      return Status::Error(fmt::format("{}: a check without an id", which));
    }
    // Checks are matched by id: a report naming one twice (sandprobe never writes one) has no
    // single verdict for it to compare (fuzz_report_read: it "changed" against itself).
    // An older report's ids may hold placeholders ("{host_canary}"): the same checks.
    const std::string id = PlaceholderFreeId(Str(check, "id"));
    if (!seen.insert(id).second) return Status::Error(fmt::format("{}: check {} appears twice", which, id));
    CheckState state{true, Str(check, "verdict"), Str(check, "direction"), "", Str(check, "severity"),
                     Str(check, "observed"), {}, "", {}};
    state.family = Str(check, "family");
    ParseMeasured(Str(check, "observed"), state);
    state.allowed_drift = AllowedDrift(check);
    out.push_back({id, std::move(state)});
  }
  return out;
}

// Same verdict and direction, both measured in the same unit, and the value moved by no more
// than the tolerance (the new report's, else the old one's). 1e-9: printing rounds.
bool WithinTolerance(const CheckState& a, const CheckState& b) {
  if (!a.present || !b.present || a.verdict != b.verdict || a.direction != b.direction) {
    return false;
  }
  std::optional<double> drift = b.allowed_drift ? b.allowed_drift : a.allowed_drift;
  if (!drift || !a.value || !b.value || a.unit != b.unit) return false;
  return std::fabs(*a.value - *b.value) <= *drift + 1e-9;
}

// What a report says about one of its inputs: its name, and for a loaded file its content.
struct Input {
  std::string name;
  json config;
};

Input InputOf(const json& report, const char* key) {
  auto it = report.find(key);
  if (it == report.end()) return {};
  if (it->is_string()) return {it->get<std::string>(), nullptr};
  if (!it->is_object()) return {};
  auto config = it->find("config");
  return {Str(*it, "name"), config == it->end() ? json(nullptr) : *config};
}

// Warnings for runs whose suite or policy differ: most of such a diff is the inputs' doing.
std::vector<std::string> InputWarnings(const json& before, const json& after) {
  std::vector<std::string> warnings;
  for (auto [key, plural] : {std::pair{"suite", "suites"}, std::pair{"policy", "policies"}}) {
    Input a = InputOf(before, key), b = InputOf(after, key);
    if (a.name != b.name) {
      warnings.push_back(fmt::format("{} {} -> {}: the runs used different {}", key,
                                     a.name.empty() ? "?" : a.name, b.name.empty() ? "?" : b.name, plural));
    } else if (!a.config.is_null() && !b.config.is_null() && a.config != b.config) {
      warnings.push_back(fmt::format("{} {}: its content differs between the runs", key, a.name));
    }
  }
  return warnings;
}

std::vector<std::string> Strings(const json& object, const char* key) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const json& item : *it) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

// Why the run of `report` left out check `id` of `family` on purpose, by the selection it
// recorded; "" when it selected it (or recorded none: an older report).
std::string WhyNotSelected(const json& report, const std::string& id, const std::string& family) {
  auto selection = report.find("selection");
  if (selection == report.end() || !selection->is_object()) return "";
  std::vector<std::string> families = Strings(*selection, "families");
  if (!family.empty() && !families.empty() &&
      std::find(families.begin(), families.end(), family) == families.end()) {
    return fmt::format("family {} is in none of its suites ({})", family,
                       fmt::join(Strings(report, "suites"), ", "));
  }
  std::vector<std::string> only = Strings(*selection, "check");
  if (!only.empty() && std::none_of(only.begin(), only.end(),
                                    [&id](const std::string& p) { return CheckIdMatches(p, id); })) {
    return fmt::format("matched by no --check ({})", fmt::join(only, ", "));
  }
  for (const std::string& pattern : Strings(*selection, "skip")) {
    if (CheckIdMatches(pattern, id)) return fmt::format("left out by --skip {}", pattern);
  }
  return "";
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
          {"measured", s.measured.empty() ? json(nullptr) : json(s.measured)},
          {"severity", s.severity.empty() ? json(nullptr) : json(s.severity)},
          {"observed", s.observed}};
}

}  // namespace

StatusOr<ReportDiff> DiffReports(const json& before, const json& after) {
  auto old_states = States(before, "OLD");
  if (!old_states.ok()) return old_states.status();
  auto new_states = States(after, "NEW");
  if (!new_states.ok()) return new_states.status();
  ReportDiff diff{.old_label = Label(before), .new_label = Label(after), .warnings = InputWarnings(before, after)};
  std::map<std::string, CheckState> old_by_id(old_states->begin(), old_states->end());
  auto add = [&](const std::string& id, const CheckState& a, const CheckState& b) {
    bool same = a.present == b.present && a.verdict == b.verdict && a.direction == b.direction &&
                a.measured == b.measured;
    if (same) return;
    CheckChange change{id, a, b, false, WithinTolerance(a, b)};
    change.regressed = b.present ? Badness(b.verdict) > (a.present ? Badness(a.verdict) : 0)
                                 : a.present;
    diff.regressions += change.regressed ? 1 : 0;
    diff.within_tolerance += change.within_tolerance ? 1 : 0;
    diff.changes.push_back(std::move(change));
  };
  for (const auto& [id, state] : *new_states) {
    auto it = old_by_id.find(id);
    add(id, it == old_by_id.end() ? CheckState{} : it->second, state);
    if (it != old_by_id.end()) old_by_id.erase(it);
  }
  for (const auto& [id, state] : *old_states) {
    if (!old_by_id.count(id)) continue;
    if (std::string why = WhyNotSelected(after, id, state.family); !why.empty()) {
      diff.not_selected.push_back({id, std::move(why)});
      continue;
    }
    add(id, state, CheckState{});
  }
  return diff;
}

std::string RenderDiffText(const ReportDiff& diff) {
  std::string out = fmt::format("sandprobe diff: {} -> {}\n", diff.old_label, diff.new_label);
  for (const std::string& warning : diff.warnings) out += "warning: " + warning + "\n";
  for (const CheckChange& c : diff.changes) {
    const CheckState& known = c.after.present ? c.after : c.before;
    std::string severity = known.severity.empty() ? "" : fmt::format("[{}] ", known.severity);
    std::string line = c.within_tolerance
                           ? fmt::format("{}{}: {} (unchanged)", severity, c.id, Describe(c.after))
                           : fmt::format("{}{}: {} -> {}", severity, c.id, Describe(c.before), Describe(c.after));
    if (c.before.measured != c.after.measured) {
      line += fmt::format("; measured {} -> {}", c.before.measured.empty() ? "-" : c.before.measured,
                          c.after.measured.empty() ? "-" : c.after.measured);
    }
    if (c.within_tolerance) {
      double drift = c.after.allowed_drift ? *c.after.allowed_drift : *c.before.allowed_drift;
      line += fmt::format("  [within tolerance: ±{:.4g} {}]", drift, c.after.unit);
    }
    if (c.regressed) line += c.after.present ? "  [regressed]" : "  [regressed: no longer checked]";
    out += line + "\n";
    if (c.after.present && !c.after.observed.empty()) out += "    now: " + SanitizeOneLine(c.after.observed, 400) + "\n";
  }
  // One line, not one per check: a --check run against a full one leaves out hundreds.
  if (!diff.not_selected.empty()) {
    out += fmt::format("{} checks of OLD not selected by NEW, not compared (first: {}: {})\n",
                       diff.not_selected.size(), diff.not_selected.front().id,
                       diff.not_selected.front().why);
  }
  out += fmt::format("{} changed ({} within tolerance), {} regressed\n", diff.changes.size(),
                     diff.within_tolerance, diff.regressions);
  return out;
}

json DiffToJson(const ReportDiff& diff) {
  json changes = json::array();
  for (const CheckChange& c : diff.changes) {
    changes.push_back({{"id", c.id},
                       {"old", StateJson(c.before)},
                       {"new", StateJson(c.after)},
                       {"regressed", c.regressed},
                       {"within_tolerance", c.within_tolerance}});
  }
  json not_selected = json::array();
  for (const NotSelected& n : diff.not_selected) not_selected.push_back({{"id", n.id}, {"why", n.why}});
  return {{"schema", "sandprobe-diff/1"}, {"old", diff.old_label}, {"new", diff.new_label},
          {"changes", changes}, {"not_selected", not_selected}, {"warnings", diff.warnings}, {"regressions", diff.regressions},
          {"within_tolerance", diff.within_tolerance}};
}

int DiffExitCode(const ReportDiff& diff, bool fail_on_change) {
  if (diff.regressions > 0) return 1;
  return fail_on_change && diff.Significant() > 0 ? 1 : 0;
}

}  // namespace sandprobe
