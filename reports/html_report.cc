#include "reports/html_report.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/atomic_file.h"
#include "reports/fail_groups.h"
#include "reports/json_report.h"
#include "reports/sanitize.h"

namespace sandprobe {
namespace {

constexpr Outcome kOutcomesWorstFirst[] = {Outcome::kFail, Outcome::kError, Outcome::kInconclusive, Outcome::kPass,
                                 Outcome::kSkip};

// Colours: a fail by its severity (dark red to grey-blue), the other verdicts by their own.
// `hidden` rows must stay hidden whatever a rule says about their display.
constexpr std::string_view kStyle = R"css(
:root{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2937;background:#f8fafc}
body{margin:0 auto;max-width:1400px;padding:16px 24px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.25em;margin:1.2em 0 .3em;border-bottom:2px solid #cbd5e1}
h3{font-size:1.05em;margin:1em 0 .4em}
.meta{color:#475569;font-size:.9em;margin:.2em 0}
.headline{font-size:1.15em;font-weight:600;padding:6px 10px;border-radius:4px;display:inline-block;color:#fff}
.filter{position:sticky;top:0;background:#f8fafc;padding:8px 0;border-bottom:1px solid #cbd5e1;z-index:2}
table{border-collapse:collapse;margin:.4em 0}
th,td{border:1px solid #cbd5e1;padding:3px 8px;text-align:left;vertical-align:top;font-size:.9em}
th{background:#e2e8f0}td.n{text-align:right;font-variant-numeric:tabular-nums}td.zero{color:#94a3b8}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;word-break:break-all}
pre{white-space:pre-wrap;word-break:break-all;margin:0;font-size:.88em;max-height:16em;overflow:auto}
.badge{display:inline-block;padding:1px 7px;border-radius:9px;font-size:.8em;font-weight:600;color:#fff;margin-right:4px}
.finding{background:#fff;border:1px solid #cbd5e1;border-left:6px solid #94a3b8;border-radius:4px;margin:8px 0;padding:6px 10px}
.finding dl{display:grid;grid-template-columns:7em 1fr;gap:2px 10px;margin:.4em 0 0}
.finding dt{color:#475569;font-weight:600}.finding dd{margin:0}
.sev-critical{background:#7f1d1d;border-left-color:#7f1d1d}.sev-high{background:#dc2626;border-left-color:#dc2626}
.sev-medium{background:#ea580c;border-left-color:#ea580c}.sev-low{background:#ca8a04;border-left-color:#ca8a04}
.sev-info{background:#64748b;border-left-color:#64748b}
.finding.sev-critical,.finding.sev-high,.finding.sev-medium,.finding.sev-low,.finding.sev-info{background:#fff}
.out-pass{background:#16a34a}.out-fail{background:#b91c1c}.out-error{background:#6d28d9}
.out-inconclusive{background:#a78bfa}.out-skip{background:#9ca3af}.out-none{background:#fff}
.heat td.cell{width:6.5em;text-align:center;color:#fff;font-size:.78em;font-weight:600;padding:4px 2px}
.heat td.cell.out-skip{color:#1f2937;background:#e5e7eb}.heat td.cell.out-none{color:#94a3b8}
.heat td.cell.waived{background-image:repeating-linear-gradient(45deg,transparent 0 5px,rgba(255,255,255,.45) 5px 8px)}
.heat th.col{min-width:7em;max-width:14em;overflow-wrap:anywhere;font-size:.8em;text-align:center}
.heat tr.sep td{background:#e2e8f0;font-weight:600;text-align:center}
.legend span.badge{color:#fff}.legend .out-skip{color:#1f2937}
[hidden]{display:none!important}
)css";

// Shows only what matches the family select (and, in a matrix, only disagreements when ticked);
// a link may name the family (page.html#family=fs.read). Marks the body once wired, so a test of
// the rendered DOM sees that the script ran.
constexpr std::string_view kScript = R"js(
(function(){
  var family=document.getElementById('family'),only=document.getElementById('only-differ');
  function apply(){
    var f=family.value,o=only!==null&&only.checked;
    document.querySelectorAll('[data-family]').forEach(function(el){
      el.hidden=(f!==''&&el.getAttribute('data-family')!==f)||(o&&el.getAttribute('data-agree')==='1');
    });
    document.querySelectorAll('tr.sep').forEach(function(el){el.hidden=o;});
  }
  family.addEventListener('change',apply);
  if(only!==null)only.addEventListener('change',apply);
  var m=/^#family=(.*)$/.exec(location.hash);
  if(m!==null){family.value=decodeURIComponent(m[1]);apply();}
  document.body.setAttribute('data-filter','ready');
})();
)js";

std::string Sev(Severity s) { return "sev-" + std::string(SeverityName(s)); }
std::string Out(Outcome o) { return "out-" + std::string(OutcomeName(o)); }

// A run's name for a heading: the loaded name, else its file's stem, else "?".
int Count(const std::vector<Verdict>& verdicts, Outcome outcome, std::optional<Severity> severity = std::nullopt) {
  return static_cast<int>(std::count_if(verdicts.begin(), verdicts.end(), [&](const Verdict& v) {
    return v.outcome == outcome && (!severity || v.check.severity == *severity);
  }));
}

// "FAIL: 3 of 40 checks failed" and the colour that goes with it.
std::pair<std::string, std::string> Headline(const RunReport& r) {
  const int fails = Count(r.verdicts, Outcome::kFail), total = static_cast<int>(r.verdicts.size());
  if (r.interrupted) return {"INTERRUPTED: the run was cut short", "out-error"};
  if (fails > 0) return {fmt::format("FAIL: {} of {} checks failed", fails, total), "out-fail"};
  if (int n = Count(r.verdicts, Outcome::kError); n > 0) return {fmt::format("ERROR: {} checks could not run", n), "out-error"};
  if (int n = Count(r.verdicts, Outcome::kInconclusive); n > 0) {
    return {fmt::format("INCONCLUSIVE: {} checks proved nothing", n), "out-inconclusive"};
  }
  if (Count(r.verdicts, Outcome::kPass) == 0) return {"NOTHING CHECKED", "out-skip"};
  return {fmt::format("PASS: {} checks passed", Count(r.verdicts, Outcome::kPass)), "out-pass"};
}

// Severity x verdict counts: the summary a reviewer reads first.
std::string SeverityTable(const std::vector<Verdict>& verdicts) {
  std::string out = "<table class=\"sev-summary\"><tr><th>severity</th>";
  for (Outcome o : kOutcomesWorstFirst) out += fmt::format("<th>{}</th>", OutcomeName(o));
  out += "<th>total</th></tr>\n";
  for (Severity s : kAllSeverities) {
    out += fmt::format("<tr><td><span class=\"badge {}\">{}</span></td>", Sev(s), SeverityName(s));
    int total = 0;
    for (Outcome o : kOutcomesWorstFirst) {
      const int n = Count(verdicts, o, s);
      total += n;
      out += fmt::format("<td class=\"n{}\">{}</td>", n == 0 ? " zero" : "", n);
    }
    out += fmt::format("<td class=\"n\">{}</td></tr>\n", total);
  }
  return out + "</table>\n";
}

// Worst first: fails, errors, inconclusive, then waived fails; by severity within each.
int Rank(const Verdict& v) {
  switch (v.outcome) {
    case Outcome::kFail: return v.waived() ? 3 : 0;
    case Outcome::kError: return 1;
    case Outcome::kInconclusive: return 2;
    case Outcome::kPass:
    case Outcome::kSkip: return 4;
  }
  return 4;
}

// What the verdict rests on, and for an unfinished launch how it ended.
std::string EvidenceText(const RunReport& r, const Verdict& v) {
  std::string out = fmt::format("<span class=\"tier\">{}</span>", EvidenceTierName(v.tier()));
  const Evidence& e = v.evidence;
  if (!e.launch_id.empty()) {
    out += fmt::format(" · launch <code>{}</code>", HtmlText(e.launch_id, 80));
    if (!e.frame_indexes.empty()) out += fmt::format(" frames {}", fmt::join(e.frame_indexes, ", "));
    for (const LaunchRecord& l : r.launches) {
      if (l.id != e.launch_id) continue;
      if (!l.error.empty()) out += " · launch error: " + HtmlText(l.error, 600);
      else if (l.timed_out) out += " · timed out";
      else if (l.signal) out += fmt::format(" · killed by signal {}", *l.signal);
      else if (l.exit_code && *l.exit_code != 0) out += fmt::format(" · exit {}", *l.exit_code);
    }
  }
  for (const std::string& fact : e.witness_facts) out += "<br>witness: " + HtmlText(fact, 600);
  if (!e.expected_end.empty()) out += "<br>" + HtmlText(e.expected_end, 600);
  return out;
}

// `others`: the fails that say the same thing through other ways (fail_groups.h), shown under
// their lead as the console shows them, so one leak through four paths is one finding.
std::string Finding(const RunReport& r, const Verdict& v, const std::vector<const Verdict*>& others = {}) {
  std::string verdict(OutcomeName(v.outcome));
  if (v.direction != Direction::kNone) verdict += " · " + std::string(DirectionName(v.direction));
  if (v.waived()) verdict += " · waived";
  std::string out = fmt::format(
      "<article class=\"finding {}\" data-family=\"{}\"><header><span class=\"badge {}\">{}</span>"
      "<span class=\"badge {}\">{}</span> <code class=\"check-id\">{}</code></header><dl>\n",
      Sev(v.check.severity), HtmlText(v.check.family, 200), Sev(v.check.severity), SeverityName(v.check.severity),
      Out(v.outcome), verdict, HtmlText(v.check.id, 1000));
  if (!others.empty()) {
    std::string ids;
    for (const Verdict* other : others) ids += (ids.empty() ? "" : ", ") + HtmlText(other->check.id, 1000);
    out += fmt::format("<dt>also through</dt><dd>{} more way{}: <code>{}</code></dd>\n", others.size(),
                       others.size() == 1 ? "" : "s", ids);
  }
  if (!v.expected.empty()) out += fmt::format("<dt>expected</dt><dd>{}</dd>\n", HtmlText(v.expected));
  out += fmt::format("<dt>{}</dt><dd><pre>{}</pre></dd>\n", v.outcome == Outcome::kFail ? "observed" : "why",
                     HtmlText(v.observed.empty() ? "no reason given" : v.observed));
  out += fmt::format("<dt>evidence</dt><dd>{}</dd>\n", EvidenceText(r, v));
  if (v.waiver) {
    out += fmt::format("<dt>waiver</dt><dd>{}{} until {} ({})</dd>\n", v.waiver->expired ? "EXPIRED: " : "",
                       HtmlText(v.waiver->reason, 600), HtmlText(v.waiver->expires, 40), HtmlText(v.waiver->where, 200));
  }
  // A fix is for a fail: an error's or an inconclusive check's remediation is the leak's, and
  // the leak was not shown.
  if (v.outcome == Outcome::kFail) {
    out += fmt::format("<dt>fix</dt><dd>{}</dd>\n",
                       v.remediation.empty() ? "(none recorded)" : HtmlText(v.remediation));
  }
  return out + "</dl></article>\n";
}

std::string Findings(const RunReport& r) {
  // A fail that another fail of its group leads is shown under that lead, not on its own.
  std::map<const Verdict*, std::vector<const Verdict*>> others_of;
  std::set<const Verdict*> grouped_under_a_lead;
  for (const FailGroup& group : GroupFails(r.verdicts)) {
    others_of[group.lead] = group.others;
    grouped_under_a_lead.insert(group.others.begin(), group.others.end());
  }
  std::vector<const Verdict*> shown;
  for (const Verdict& v : r.verdicts) {
    if (Rank(v) < 4 && !grouped_under_a_lead.count(&v)) shown.push_back(&v);
  }
  std::stable_sort(shown.begin(), shown.end(), [](const Verdict* a, const Verdict* b) {
    return std::pair(Rank(*a), a->check.severity) < std::pair(Rank(*b), b->check.severity);
  });
  std::string out = fmt::format("<h3>Findings, worst first ({})</h3>\n", shown.size());
  if (shown.empty()) out += "<p>No fail, error or inconclusive check.</p>\n";
  for (const Verdict* v : shown) {
    auto group = others_of.find(v);
    out += group == others_of.end() ? Finding(r, *v) : Finding(r, *v, group->second);
  }
  return out;
}

// Skips share reasons (a missing backend skips a family): one line per reason.
std::string Skips(const std::vector<Verdict>& verdicts) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Verdict*>> by_reason;
  for (const Verdict& v : verdicts) {
    if (v.outcome != Outcome::kSkip) continue;
    auto [it, added] = by_reason.try_emplace(v.observed);
    if (added) order.push_back(v.observed);
    it->second.push_back(&v);
  }
  if (order.empty()) return "";
  std::string out = "<h3>Skipped</h3>\n";
  for (const std::string& reason : order) {
    out += fmt::format("<details><summary>{} checks: {}</summary><ul>", by_reason[reason].size(),
                       HtmlText(reason.empty() ? "no reason given" : reason, 600));
    for (const Verdict* v : by_reason[reason]) {
      out += fmt::format("<li data-family=\"{}\"><code class=\"check-id\">{}</code></li>",
                         HtmlText(v->check.family, 200), HtmlText(v->check.id, 1000));
    }
    out += "</ul></details>\n";
  }
  return out;
}

std::string EveryCheck(const std::vector<Verdict>& verdicts) {
  std::string out = fmt::format(
      "<details><summary>Every check ({})</summary><table class=\"checks\"><tr><th>check</th><th>family</th>"
      "<th>severity</th><th>verdict</th><th>evidence</th></tr>\n",
      verdicts.size());
  for (const Verdict& v : verdicts) {
    out += fmt::format(
        "<tr data-family=\"{}\"><td><code class=\"check-id\">{}</code></td><td>{}</td><td><span class=\"badge {}\">{}"
        "</span></td><td><span class=\"badge {}\">{}</span></td><td>{}</td></tr>\n",
        HtmlText(v.check.family, 200), HtmlText(v.check.id, 1000), HtmlText(v.check.family, 200), Sev(v.check.severity),
        SeverityName(v.check.severity), Out(v.outcome), OutcomeName(v.outcome), EvidenceTierName(v.tier()));
  }
  return out + "</table></details>\n";
}

std::string RunSection(const RunReport& r) {
  auto [headline, colour] = Headline(r);
  const std::string host = r.host.is_object() && r.host.value("hostname", nlohmann::json()).is_string()
                               ? r.host["hostname"].get<std::string>()
                               : "";
  std::string out = fmt::format(
      "<section class=\"run\"><h2>{} · policy {} · suite {}</h2>\n"
      "<p class=\"meta\">run {} · host {} · {} · {:.1f} s · sandprobe {}</p>\n"
      "<p class=\"headline {}\">{}</p>\n",
      HtmlText(NameOrStem(r.profile_name, r.profile_path, "?"), 200), HtmlText(NameOrStem(r.policy_name, r.policy_path, "?"), 200),
      HtmlText(NameOrStem(r.suite_name, "", "?"), 200), HtmlText(r.run_id, 80), HtmlText(host.empty() ? "?" : host, 200),
      r.started_at ? Rfc3339(*r.started_at) : "not started", r.duration_seconds, HtmlText(r.tool_version, 80), colour,
      headline);
  if (r.rejudged_from) {
    out += fmt::format("<p class=\"meta\">re-judged from run {} (recorded against policy {}); no probe ran</p>\n",
                       HtmlText(r.rejudged_from->run_id, 80), HtmlText(r.rejudged_from->policy_name, 200));
  }
  return out + SeverityTable(r.verdicts) + Findings(r) + Skips(r.verdicts) + EveryCheck(r.verdicts) + "</section>\n";
}

// The family select over every family the page shows.
std::string FamilyFilter(const std::set<std::string>& families, bool matrix) {
  std::string out = "<div class=\"filter\"><label>family <select id=\"family\"><option value=\"\">all</option>";
  for (const std::string& f : families) out += fmt::format("<option value=\"{0}\">{0}</option>", HtmlText(f, 200));
  out += "</select></label>";
  if (matrix) out += " <label><input type=\"checkbox\" id=\"only-differ\"> only where the sandboxes disagree</label>";
  return out + "</div>\n";
}

std::string Page(const std::string& title, const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title><style>{}</style></head>\n<body>\n{}<script>{}</script>\n</body></html>\n",
      title, kStyle, body, kScript);
}

}  // namespace

std::string HtmlText(std::string_view text, std::size_t cap) {
  const std::string clean = SanitizeForXml(text, cap);
  std::string out;
  out.reserve(clean.size() + clean.size() / 8);
  for (char c : clean) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderHtmlReport(const std::vector<RunReport>& reports) {
  std::set<std::string> families;
  std::string sections, names;
  for (const RunReport& r : reports) {
    for (const Verdict& v : r.verdicts) families.insert(v.check.family);
    sections += RunSection(r);
    names += (names.empty() ? "" : ", ") + NameOrStem(r.profile_name, r.profile_path, "?");
  }
  std::string body = fmt::format("<h1>sandprobe report: {}</h1>\n", HtmlText(names, 400)) +
                     FamilyFilter(families, false) + sections;
  return Page("sandprobe: " + HtmlText(names, 400), body);
}

namespace {

// A heatmap cell: coloured by verdict, a fail by its check's severity; the full text on hover.
std::string HeatCell(const std::optional<MatrixCell>& cell, Severity severity) {
  if (!cell) return "<td class=\"cell out-none\" title=\"not planned in this run\">–</td>";
  std::string label(OutcomeName(cell->outcome));
  std::string classes = cell->outcome == Outcome::kFail ? Sev(severity) : Out(cell->outcome);
  if (cell->direction == Direction::kTooPermissive) label += " ▲";
  if (cell->direction == Direction::kTooRestrictive) label += " ▼";
  if (cell->waived) classes += " waived";
  const std::string title = CellText(cell) + (cell->observed.empty() ? "" : ": " + cell->observed);
  return fmt::format("<td class=\"cell {}\" title=\"{}\">{}</td>", classes, HtmlText(title, 600), label);
}

std::string HeatRow(const MatrixRow& row) {
  std::string out = fmt::format(
      "<tr data-family=\"{}\" data-agree=\"{}\"><td><code class=\"check-id\">{}</code>{}</td>"
      "<td><span class=\"badge {}\">{}</span></td>",
      HtmlText(row.family, 200), row.Agrees() ? 1 : 0, HtmlText(row.id, 1000), row.Agrees() ? "" : " ≠", Sev(row.severity),
      SeverityName(row.severity));
  for (const std::optional<MatrixCell>& cell : row.cells) out += HeatCell(cell, row.severity);
  return out + "</tr>\n";
}

std::string Heatmap(const Matrix& matrix) {
  std::string out = "<table class=\"heat\"><tr><th>check</th><th>severity</th>";
  for (const MatrixColumn& col : matrix.columns) {
    out += fmt::format("<th class=\"col\" title=\"policy {}\">{}</th>", HtmlText(col.policy, 200),
                       HtmlText(col.sandbox, 200));
  }
  out += "</tr>\n";
  Matrix sorted = matrix;
  PutDisagreementsFirst(sorted);
  const std::size_t differ = static_cast<std::size_t>(
      std::count_if(sorted.rows.begin(), sorted.rows.end(), [](const MatrixRow& r) { return !r.Agrees(); }));
  for (std::size_t i = 0; i < sorted.rows.size(); ++i) {
    if (i == differ) {
      out += fmt::format("<tr class=\"sep\"><td colspan=\"{}\">{} checks have the same verdict on every sandbox "
                         "that ran them</td></tr>\n",
                         matrix.columns.size() + 2, sorted.rows.size() - differ);
    }
    out += HeatRow(sorted.rows[i]);
  }
  return out + "</table>\n";
}

// One row per column: its fails by severity (the check's highest), the other verdicts, why
// it is not a measurement when it is not.
std::string ColumnTable(const Matrix& matrix) {
  std::string out = "<table class=\"columns\"><tr><th>sandbox</th><th>policy</th><th>suite</th>";
  for (Severity s : kAllSeverities) out += fmt::format("<th><span class=\"badge {}\">fail {}</span></th>", Sev(s), SeverityName(s));
  out += "<th>error</th><th>inconclusive</th><th>pass</th><th>skip</th><th>note</th></tr>\n";
  for (std::size_t c = 0; c < matrix.columns.size(); ++c) {
    const MatrixColumn& col = matrix.columns[c];
    std::map<Severity, int> fails;
    for (const MatrixRow& row : matrix.rows) {
      if (row.cells[c] && row.cells[c]->outcome == Outcome::kFail) ++fails[row.severity];
    }
    out += fmt::format("<tr><td><b>{}</b></td><td>{}</td><td>{}</td>", HtmlText(col.sandbox, 200),
                       HtmlText(col.policy, 200), HtmlText(col.suite, 200));
    for (Severity s : kAllSeverities) out += fmt::format("<td class=\"n{}\">{}</td>", fails[s] ? "" : " zero", fails[s]);
    for (const char* o : {"error", "inconclusive", "pass", "skip"}) {
      const int n = col.summary.is_object() ? col.summary.value(o, 0) : 0;
      out += fmt::format("<td class=\"n{}\">{}</td>", n ? "" : " zero", n);
    }
    out += fmt::format("<td>{}</td></tr>\n", HtmlText(col.note, 600));
  }
  return out + "</table>\n";
}

constexpr std::string_view kLegend =
    "<p class=\"legend\"><span class=\"badge out-pass\">pass</span><span class=\"badge sev-critical\">fail critical</span>"
    "<span class=\"badge sev-high\">fail high</span><span class=\"badge sev-medium\">fail medium</span>"
    "<span class=\"badge sev-low\">fail low</span><span class=\"badge sev-info\">fail info</span>"
    "<span class=\"badge out-error\">error</span><span class=\"badge out-inconclusive\">inconclusive</span>"
    "<span class=\"badge out-skip\">skip</span> ▲ too permissive · ▼ too restrictive · – not planned · "
    "≠ the sandboxes disagree · hover a cell for what was observed</p>\n";

}  // namespace

std::string RenderMatrixHtml(const Matrix& matrix, const std::vector<RunReport>& reports) {
  std::set<std::string> families;
  for (const MatrixRow& row : matrix.rows) families.insert(row.family);
  const auto differ = std::count_if(matrix.rows.begin(), matrix.rows.end(), [](const MatrixRow& r) { return !r.Agrees(); });
  std::string body = fmt::format("<h1>sandprobe matrix: {} sandboxes × {} checks, {} disagree</h1>\n",
                                 matrix.columns.size(), matrix.rows.size(), differ);
  body += FamilyFilter(families, true) + ColumnTable(matrix) + std::string(kLegend) + Heatmap(matrix);
  // Each run's findings under its column's name (the matrix may have renamed it: sandbox@host).
  for (std::size_t c = 0; c < reports.size() && c < matrix.columns.size(); ++c) {
    body += fmt::format("<details class=\"column-run\"><summary>{}: findings and every check</summary>\n{}</details>\n",
                        HtmlText(matrix.columns[c].sandbox, 200), RunSection(reports[c]));
  }
  return Page(fmt::format("sandprobe matrix ({} sandboxes)", matrix.columns.size()), body);
}

Status WriteHtmlReport(const std::vector<RunReport>& reports, const std::string& path) {
  return WriteReportOutput(path, RenderHtmlReport(reports)).WithContext("write HTML report");
}

}  // namespace sandprobe
