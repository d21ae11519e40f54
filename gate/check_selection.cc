#include "gate/check_selection.h"
#include "model/check_id.h"

#include <fnmatch.h>
#include <regex.h>

#include <algorithm>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sandprobe {
namespace {

bool MatchesAny(const std::vector<std::string>& patterns, const std::string& id) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&id](const std::string& p) { return CheckIdMatches(p, id); });
}

// A check of family `check` needs an invocation of `invocation`: "res.memory" needs
// "res.memory"; "persist" needs "persist.plant" and "persist.check".
bool Needs(const std::string& check, const std::string& invocation) {
  return invocation == check || invocation.rfind(check + ".", 0) == 0;
}

// Drops from the shared launch the invocations no check left in it needs: a family whose
// checks were all skipped is not sent to the probe. (A judge reads only its own family's facts
// and the hello; the read and write controls of fs.alias come from the fs.read and fs.write
// checks the launch still has, ComputeControl, so they stay exactly when those checks do.)
void TrimSharedLaunch(LaunchBatch& batch, const std::vector<Check>& checks) {
  std::set<std::string> families;
  for (std::size_t i : batch.check_indexes) families.insert(checks[i].family);
  std::erase_if(batch.invocations, [&families](const ProbeInvocation& inv) {
    return std::none_of(families.begin(), families.end(),
                        [&inv](const std::string& f) { return Needs(f, inv.family); });
  });
}

bool ExclusiveLaunchNeeded(const LaunchBatch& batch, const std::set<std::string>& families) {
  for (const ProbeInvocation& inv : batch.invocations) {
    for (const std::string& family : families) {
      if (Needs(family, inv.family)) return true;
    }
  }
  return false;
}

// The POSIX extended regular expression that matches what fnmatch(pattern, ·, 0) matches:
// `*` -> `.*`, `?` -> `.`, a backslash quotes the next character, a bracket expression is
// handed over as it is (its `!` negation as `^`), every other character quoted. A bracket
// that never closes is handed over too, so regcomp reports it.
StatusOr<std::string> GlobAsRegex(const std::string& pattern) {
  std::string out = "^";
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (++i == pattern.size()) return Status::Error("not a valid glob: it ends in a lone backslash");
      out += '\\';
      out += pattern[i];
    } else if (c == '*') {
      out += ".*";
    } else if (c == '?') {
      out += '.';
    } else if (c == '[') {
      out += '[';
      std::size_t j = i + 1;
      if (j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^')) {
        out += '^';
        ++j;
      }
      if (j < pattern.size() && pattern[j] == ']') {  // a leading ] is a member
        out += ']';
        ++j;
      }
      while (j < pattern.size() && pattern[j] != ']') {
        // [:class:], [.x.], [=x=] hold a ']' of their own.
        const bool nested = pattern[j] == '[' && j + 1 < pattern.size() &&
                            std::string_view(":.=").find(pattern[j + 1]) != std::string_view::npos;
        const std::size_t close = nested ? pattern.find(std::string{pattern[j + 1], ']'}, j + 2) : j;
        if (close == std::string::npos) break;
        const std::size_t next = nested ? close + 2 : j + 1;
        out += pattern.substr(j, next - j);
        j = next;
      }
      if (j >= pattern.size() || pattern[j] != ']') return out + pattern.substr(j);  // never closed: regcomp says so
      out += ']';
      i = j;
    } else {
      if (std::string_view(".^$+(){}|").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out + "$";
}

}  // namespace

bool CheckIdMatches(const std::string& pattern, const std::string& id) {
  // A pattern written with the placeholders ids once held ("fs.read.denied:{host_canary}")
  // still names its check.
  const std::string spelled = PlaceholderFreeId(pattern);
  return spelled == id || ::fnmatch(spelled.c_str(), id.c_str(), 0) == 0;
}

std::optional<std::string> GlobProblem(const std::string& pattern) {
  if (pattern.empty()) return "an empty pattern matches no check id";
  StatusOr<std::string> regex = GlobAsRegex(pattern);
  if (!regex.ok()) return regex.status().message();
  regex_t compiled;
  const int error = ::regcomp(&compiled, regex->c_str(), REG_EXTENDED | REG_NOSUB);
  if (error == 0) {
    ::regfree(&compiled);
    return std::nullopt;
  }
  char text[256];
  ::regerror(error, &compiled, text, sizeof text);
  return fmt::format("not a valid glob: {} (a literal [ is written [[], a literal * [*])", text);
}

Status CheckSelectionGlobs(const CheckSelection& selection) {
  for (auto [flag, patterns] : {std::pair{"--check", &selection.only}, std::pair{"--skip", &selection.skip}}) {
    for (const std::string& pattern : *patterns) {
      if (std::optional<std::string> problem = GlobProblem(pattern)) {
        return Status::Error(fmt::format("{} \"{}\": {}", flag, pattern, *problem));
      }
    }
  }
  return Status::Ok();
}

Status SelectChecks(Plan& plan, const CheckSelection& selection) {
  if (selection.empty()) return Status::Ok();
  if (Status s = CheckSelectionGlobs(selection); !s.ok()) return s;
  for (const std::string& pattern : selection.only) {
    bool any = std::any_of(plan.checks.begin(), plan.checks.end(),
                           [&](const Check& c) { return CheckIdMatches(pattern, c.id); });
    if (!any) {
      return Status::Error(fmt::format("--check {}: matches none of the plan's {} checks",
                                       pattern, plan.checks.size()));
    }
  }
  // Old index -> new index, for the selected checks only.
  std::vector<std::optional<std::size_t>> renumbered(plan.checks.size());
  std::vector<Check> kept;
  for (std::size_t i = 0; i < plan.checks.size(); ++i) {
    const std::string& id = plan.checks[i].id;
    bool selected = (selection.only.empty() || MatchesAny(selection.only, id)) &&
                    !MatchesAny(selection.skip, id);
    if (!selected) continue;
    renumbered[i] = kept.size();
    kept.push_back(plan.checks[i]);
  }
  if (kept.empty()) {
    return Status::Error(fmt::format("--check {} --skip {}: no check of the plan's {} is left",
                                     fmt::join(selection.only, ","), fmt::join(selection.skip, ","),
                                     plan.checks.size()));
  }
  std::set<std::string> families;
  for (const Check& c : kept) families.insert(c.family);
  plan.checks = std::move(kept);
  for (LaunchBatch& batch : plan.batches) {
    std::vector<std::size_t> indexes;
    for (std::size_t i : batch.check_indexes) {
      if (renumbered[i]) indexes.push_back(*renumbered[i]);
    }
    batch.check_indexes = std::move(indexes);
    if (!batch.exclusive) TrimSharedLaunch(batch, plan.checks);
    // An exclusive launch shared by a group (res.disk + res.fds) runs only what is selected.
    if (batch.exclusive) {
      std::erase_if(batch.invocations, [&families](const ProbeInvocation& inv) {
        return std::none_of(families.begin(), families.end(),
                            [&inv](const std::string& f) { return Needs(f, inv.family); });
      });
    }
  }
  std::erase_if(plan.batches, [&families](const LaunchBatch& b) {
    return b.exclusive ? !ExclusiveLaunchNeeded(b, families) : b.check_indexes.empty();
  });
  return Status::Ok();
}

}  // namespace sandprobe
