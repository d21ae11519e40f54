// Fails that say one thing, grouped for the human reports (console, Markdown): a host file the
// sandbox reads fails fs.read.denied:X and, through each alias, fs.alias.denied:X[symlink],
// [dotdot], [proc_root]. That is one leak (one file, one fix), not four. The JSON, JUnit and
// SARIF reports keep one verdict per check; only the reading is grouped.
#pragma once

#include <string>
#include <vector>

#include "model/verdict.h"

namespace sandprobe {

struct FailGroup {
  // The fail shown: the plain read (fs.read.denied:X) when it failed, else the group's first.
  const Verdict* lead = nullptr;
  // The other fails about the same file, in report order (their variants name the aliases).
  std::vector<const Verdict*> others;
  std::size_t size() const { return 1 + others.size(); }
};

// Every fail of `verdicts` in exactly one group, groups in the order of their first fail. Fails
// group when they read-deny the same target (fs.read.denied and fs.alias.denied), are alike
// waived or not and of one severity; every other fail is a group of one.
std::vector<FailGroup> GroupFails(const std::vector<Verdict>& verdicts);

// "symlink, dotdot, proc_root": how the others reached the file (a non-alias other by its id).
std::string AliasList(const FailGroup& group);

}  // namespace sandprobe
