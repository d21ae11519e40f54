#include "reports/junit_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "io/atomic_file.h"
#include "reports/json_report.h"
#include "reports/sanitize.h"

namespace sandprobe {
namespace {

struct Counts {
  int tests = 0;
  int failures = 0;
  int errors = 0;  // error and inconclusive: both mean "nothing proven", CI must not pass them
  int skipped = 0;
  double seconds = 0;
};

// SUREFIRE_TIME in the xsd: digits, a dot, digits. No sign, no exponent, no "nan".
std::string Seconds(double s) {
  return fmt::format("{:.3f}", std::isfinite(s) && s > 0 ? s : 0.0);
}

void SetAttr(pugi::xml_node node, const char* name, std::string_view raw,
             std::size_t cap) {
  node.append_attribute(name).set_value(SanitizeForXml(raw, cap).c_str());
}

void SetCountAttrs(pugi::xml_node node, const Counts& c, bool with_skipped) {
  node.append_attribute("tests").set_value(c.tests);
  node.append_attribute("failures").set_value(c.failures);
  node.append_attribute("errors").set_value(c.errors);
  if (with_skipped) node.append_attribute("skipped").set_value(c.skipped);
  node.append_attribute("time").set_value(Seconds(c.seconds).c_str());
}

const LaunchRecord* FindLaunch(const RunReport& report, const std::string& id) {
  if (id.empty()) return nullptr;
  for (const LaunchRecord& l : report.launches) {
    if (l.id == id) return &l;
  }
  return nullptr;
}

std::string FailureBody(const Verdict& v) {
  auto field = [](std::string_view raw) { return SanitizeForXml(raw, kJunitDetailCap); };
  const Check& c = v.check;
  std::string body = fmt::format("check: {} (severity {})\n", field(c.id), SeverityName(c.severity));
  // A field the judge left empty gets no line: "remediation: " alone reads like a lost value.
  for (const auto& [label, value] : {std::pair{"expected", &v.expected},
                                     std::pair{"observed", &v.observed},
                                     std::pair{"remediation", &v.remediation}}) {
    if (!value->empty()) body += fmt::format("{}: {}\n", label, field(*value));
  }
  if (!c.target.empty()) {
    body += fmt::format("target: {}", field(c.target));
    if (c.resolved_target != c.target) body += fmt::format(" ({})", field(c.resolved_target));
    body += "\n";
  }
  if (!c.reference.empty()) body += fmt::format("reference: {}\n", field(c.reference.Text()));
  body += fmt::format("evidence tier: {}\n", EvidenceTierName(v.tier()));
  if (!v.evidence.launch_id.empty()) {
    body += fmt::format("evidence: launch {}, frames [{}]\n", field(v.evidence.launch_id),
                        fmt::join(v.evidence.frame_indexes, ", "));
  }
  for (const std::string& fact : v.evidence.witness_facts) {
    body += fmt::format("witness: {}\n", field(fact));
  }
  return body;
}

// "waiver: fs.read.* (waivers.json:3:5), until 2027-01-31: SEC-12\n".
std::string WaiverLine(const AppliedWaiver& w) {
  return SanitizeForXml(fmt::format("waiver: {} ({}), {} {}: {}\n", w.pattern, w.where,
                                    w.expired ? "expired after" : "until", w.expires, w.reason),
                        kJunitDetailCap);
}

std::string_view FailureType(Direction direction) {
  switch (direction) {
    case Direction::kTooPermissive:
    case Direction::kTooRestrictive: return DirectionName(direction);
    case Direction::kNone: return "fail";  // Evaluate always sets one; keep the type non-empty
  }
  return "fail";
}

// "high:too-permissive", "critical:error": the severity first, so a CI reader (and a script
// splitting on ':') sees how bad it is before what kind it is.
std::string OutcomeType(Severity severity, std::string_view kind) {
  return fmt::format("{}:{}", SeverityName(severity), kind);
}

// Adds the outcome child (none for pass) and counts it.
void AddOutcome(pugi::xml_node testcase, const Verdict& v, Counts& counts) {
  // The evidence tier beside the severity: a long `observed` is cut at the cap, these never.
  const std::string message = fmt::format("[{}; evidence {}] expected {}; observed {}",
                                          SeverityName(v.check.severity), EvidenceTierName(v.tier()),
                                          v.expected, v.observed);
  pugi::xml_node child;
  switch (v.outcome) {
    case Outcome::kPass: return;
    case Outcome::kSkip:
      ++counts.skipped;
      SetAttr(testcase.append_child("skipped"), "message", v.observed, kJunitMessageCap);
      return;
    case Outcome::kFail:
      if (v.waived()) {
        // Accepted until its date: a JUnit viewer shows a skip with the waiver's reason, not a
        // red failure, and the body still says what failed. The JSON keeps it a fail.
        ++counts.skipped;
        child = testcase.append_child("skipped");
        child.append_attribute("type").set_value(OutcomeType(v.check.severity, "waived").c_str());
        SetAttr(child, "message",
                fmt::format("waived until {}: {} ({})", v.waiver->expires, v.waiver->reason, message),
                kJunitMessageCap);
        child.text().set((FailureBody(v) + WaiverLine(*v.waiver)).c_str());
        return;
      }
      ++counts.failures;
      child = testcase.append_child("failure");
      child.append_attribute("type").set_value(
          OutcomeType(v.check.severity, FailureType(v.direction)).c_str());
      if (v.waiver) {
        // An expired waiver waives nothing: a failure, and the body says which waiver lapsed.
        SetAttr(child, "message", fmt::format("{} (waiver expired {})", message, v.waiver->expires),
                kJunitMessageCap);
        child.text().set((FailureBody(v) + WaiverLine(*v.waiver)).c_str());
        return;
      }
      break;
    case Outcome::kError:
    case Outcome::kInconclusive:
      ++counts.errors;
      child = testcase.append_child("error");
      child.append_attribute("type").set_value(
          OutcomeType(v.check.severity, OutcomeName(v.outcome)).c_str());
      break;
  }
  SetAttr(child, "message", message, kJunitMessageCap);
  child.text().set(FailureBody(v).c_str());
}

// The launch's own output, for a case whose launch or probe went wrong (error, inconclusive):
// what a CI reader looks at first. A fail is explained by its facts, and one launch serves up to
// a thousand checks, so output is attached once per launch per suite to keep the file small.
void AddLaunchOutput(pugi::xml_node testcase, const LaunchRecord* launch,
                     std::set<std::string>& attached) {
  if (launch == nullptr) return;
  if (!attached.insert(launch->id).second) {
    testcase.append_child("system-out").text().set(
        SanitizeForXml("output of launch " + launch->id + ": see the first case citing it",
                       kJunitMessageCap).c_str());
    return;
  }
  std::string out = launch->error.empty() ? "" : "harness: " + launch->error + "\n";
  out += launch->stdout_tail;
  if (!out.empty()) {
    testcase.append_child("system-out").text().set(SanitizeForXml(out, kJunitOutputCap).c_str());
  }
  if (!launch->stderr_tail.empty()) {
    testcase.append_child("system-err").text().set(
        SanitizeForXml(launch->stderr_tail, kJunitOutputCap).c_str());
  }
}

// The run's properties, on its first suite: who ran what, and how many passes rest on each
// evidence tier.
void AddRunProperties(pugi::xml_node props, const RunReport& r) {
  const nlohmann::json tiers = PassesByEvidence(r.verdicts);
  std::vector<std::pair<std::string, std::string>> rows = {
      {"schema", kReportSchema},          {"tool_version", r.tool_version},
      {"run_id", r.run_id},               {"profile", r.profile_name},
      {"profile_path", r.profile_path},   {"policy", r.policy_name},
      {"policy_path", r.policy_path},     {"suite", r.suite_name},
      {"interrupted", r.interrupted ? "true" : "false"},
  };
  for (EvidenceTier tier : kEvidenceTiers) {
    const std::string name(EvidenceTierName(tier));
    rows.emplace_back("passes_" + name, std::to_string(tiers.at(name).get<int>()));
  }
  for (const auto& [name, value] : rows) {
    pugi::xml_node p = props.append_child("property");
    p.append_attribute("name").set_value(name.c_str());
    SetAttr(p, "value", value, kJunitMessageCap);  // present even when empty: the xsd needs it
  }
}

// "evidence:<check id>" = its tier, for every case of the suite: a testcase has no properties
// of its own in the schema, and a pass has no message to carry it.
void AddEvidenceProperty(pugi::xml_node props, const Verdict& v) {
  pugi::xml_node p = props.append_child("property");
  SetAttr(p, "name", "evidence:" + v.check.id, kJunitMessageCap);
  p.append_attribute("value").set_value(std::string(EvidenceTierName(v.tier())).c_str());
}

// A name part of the run: the name, else its file's stem (a harness failure has no loaded
// name), else "unknown".
// "docker-hardened/tier-low/default": what a run is, unique across a matrix job's reports.
std::string RunName(const RunReport& r) {
  return fmt::format("{}/{}/{}", NameOrStem(r.profile_name, r.profile_path, "unknown"),
                     NameOrStem(r.policy_name, r.policy_path, "unknown"), NameOrStem(r.suite_name, "", "unknown"));
}

std::string Hostname(const RunReport& r) {
  const auto it = r.host.find("hostname");
  if (it != r.host.end() && it->is_string() && !it->get<std::string>().empty()) {
    return it->get<std::string>();
  }
  return "localhost";
}

// One <testsuite> for `family` of `r`; returns its counts. Names carry profile, policy and
// suite, so the reports of a matrix job (one per profile x policy x suite) merge without two
// runs' cases falling together. Only a run's first suite carries the run's properties.
Counts AddSuite(pugi::xml_node root, const RunReport& r, const std::string& family,
                bool with_properties) {
  pugi::xml_node suite = root.append_child("testsuite");
  const std::string run_name = RunName(r);
  SetAttr(suite, "name", run_name + "/" + family, kJunitMessageCap);
  pugi::xml_node props = suite.append_child("properties");
  if (with_properties) AddRunProperties(props, r);
  std::string classname = run_name + "/" + family;
  std::replace(classname.begin(), classname.end(), '/', '.');
  classname = SanitizeForXml(classname, kJunitMessageCap);
  Counts counts;
  std::set<std::string> names;  // GitLab merges cases with equal classname+name: keep them apart
  std::set<std::string> attached;  // launch ids whose output this suite already carries
  for (const Verdict& v : r.verdicts) {
    if (v.check.family != family) continue;
    AddEvidenceProperty(props, v);
    const std::string base = SanitizeForXml(v.check.id, kJunitMessageCap);
    std::string name = base;
    for (int n = 2; !names.insert(name).second; ++n) name = fmt::format("{} #{}", base, n);
    pugi::xml_node tc = suite.append_child("testcase");
    tc.append_attribute("classname").set_value(classname.c_str());
    tc.append_attribute("name").set_value(name.c_str());
    tc.append_attribute("time").set_value(Seconds(v.duration_seconds).c_str());
    ++counts.tests;
    counts.seconds += std::isfinite(v.duration_seconds) ? v.duration_seconds : 0;
    AddOutcome(tc, v, counts);
    if (v.outcome == Outcome::kError || v.outcome == Outcome::kInconclusive) {
      AddLaunchOutput(tc, FindLaunch(r, v.evidence.launch_id), attached);
    }
  }
  SetCountAttrs(suite, counts, /*with_skipped=*/true);
  if (r.started_at) suite.append_attribute("timestamp").set_value(Rfc3339NoZone(*r.started_at).c_str());
  SetAttr(suite, "hostname", Hostname(r), kJunitMessageCap);
  return counts;
}

// Families in order of first appearance, so the file follows the plan.
std::vector<std::string> Families(const RunReport& r) {
  std::vector<std::string> families;
  std::set<std::string> seen;
  for (const Verdict& v : r.verdicts) {
    if (seen.insert(v.check.family).second) families.push_back(v.check.family);
  }
  return families;
}

}  // namespace

std::string RenderJunit(const std::vector<RunReport>& reports) {
  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version").set_value("1.0");
  decl.append_attribute("encoding").set_value("UTF-8");
  pugi::xml_node root = doc.append_child("testsuites");
  root.append_attribute("name").set_value("sandprobe");
  Counts total;
  for (const RunReport& r : reports) {
    bool first = true;
    for (const std::string& family : Families(r)) {
      const Counts c = AddSuite(root, r, family, std::exchange(first, false));
      total.tests += c.tests;
      total.failures += c.failures;
      total.errors += c.errors;
    }
    total.seconds += std::isfinite(r.duration_seconds) ? r.duration_seconds : 0;
  }
  SetCountAttrs(root, total, /*with_skipped=*/false);  // the xsd has no skipped here
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

Status WriteJunitReport(const std::vector<RunReport>& reports, const std::string& path) {
  return WriteReportOutput(path, RenderJunit(reports)).WithContext("write JUnit report");
}

}  // namespace sandprobe
