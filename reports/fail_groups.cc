#include "reports/fail_groups.h"

#include <map>
#include <optional>
#include <tuple>

namespace sandprobe {
namespace {

// A plain denied read or a read through an alias: they leak the same file.
bool IsFileRead(const Check& c) {
  return (c.family == "fs.read" && c.expect == Expectation::kDenied) || c.family == "fs.alias";
}

bool IsPlainRead(const Check& c) { return c.family == "fs.read"; }

}  // namespace

std::vector<FailGroup> GroupFails(const std::vector<Verdict>& verdicts) {
  std::vector<FailGroup> groups;
  // (target, waived, severity) -> group: fails of another severity say something else (and a
  // group is ordered by its lead's severity).
  std::map<std::tuple<std::string, bool, Severity>, std::size_t> by_file;
  for (const Verdict& v : verdicts) {
    if (v.outcome != Outcome::kFail) continue;
    if (!IsFileRead(v.check)) {
      groups.push_back({.lead = &v});
      continue;
    }
    auto [it, fresh] = by_file.try_emplace({v.check.target, v.waived(), v.check.severity}, groups.size());
    if (fresh) {
      groups.push_back({.lead = &v});
      continue;
    }
    FailGroup& group = groups[it->second];
    if (IsPlainRead(v.check) && !IsPlainRead(group.lead->check)) {
      // The plain read leads; the alias that led so far moves to the front of the others.
      group.others.insert(group.others.begin(), group.lead);
      group.lead = &v;
    } else {
      group.others.push_back(&v);
    }
  }
  return groups;
}

std::string AliasList(const FailGroup& group) {
  std::string out;
  for (const Verdict* v : group.others) {
    if (!out.empty()) out += ", ";
    out += v->check.variant.empty() ? v->check.id : v->check.variant;
  }
  return out;
}

}  // namespace sandprobe
