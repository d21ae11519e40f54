// CheckSelection: `--check GLOB` / `--skip GLOB`, applied to a plan before anything launches.
//
// Globs are fnmatch(3) patterns without FNM_PATHNAME, so `*` spans the '/' of path ids:
// `fs.read.*`, `*:/etc/shadow`, `priv.caps.*`. A pattern equal to an id selects it even when
// the id holds fnmatch syntax (`fs.alias.denied:host-canary[symlink]`). A pattern spelled with
// the placeholders ids once held (`{host_canary}`) matches as if spelled as words (check_id.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "families/plan.h"
#include "model/status.h"
#include "model/check_id.h"

namespace sandprobe {

struct CheckSelection {
  std::vector<std::string> only;  // --check: keep the checks matching any (none given: all)
  std::vector<std::string> skip;  // --skip: then drop the checks matching any
  bool empty() const { return only.empty() && skip.empty(); }
};

// Whether `id` matches `pattern` (equal, or an fnmatch glob match).
bool CheckIdMatches(const std::string& pattern, const std::string& id);

// Why `pattern` is not a glob CheckIdMatches can use, or nullopt. fnmatch(3) never says: a
// '[' that opens no complete bracket expression silently matches a literal '[', an unknown
// character class or a reversed range silently matches nothing, so a typo would select or
// waive nothing. The pattern is translated to the POSIX regular expression of the same
// grammar and compiled by regcomp(3), whose error names the fault ("Unmatched [ ..."). An
// empty pattern is refused too.
std::optional<std::string> GlobProblem(const std::string& pattern);

// Invalid input naming the flag and its pattern when a --check or --skip glob has a GlobProblem.
Status CheckSelectionGlobs(const CheckSelection& selection);

// Keeps the selected checks of `plan` and only the launches they need:
// - the shared launch keeps the invocations a check still in it needs, and no other: a family
//   whose checks were all left out is not sent to the probe (fs.alias's read control comes from
//   the fs.read checks still selected, so nothing is lost);
// - an exclusive launch stays while a selected check's family is, or is the prefix of, one of
//   its invocations: the persistence plant launch stays for its turn and session checks, a
//   resource launch goes with its own check.
// Checks keep their order. Invalid input (exit 2): a --check glob that matches no check of the
// plan (a typo would otherwise gate on nothing), a glob with a GlobProblem, or no check left.
Status SelectChecks(Plan& plan, const CheckSelection& selection);

}  // namespace sandprobe
