// A probe that lists items (mount lines, device nodes, runtime sockets, cgroup mounts, inherited
// fds) also says how many it listed, in its family's summary fact. The two must agree: a list
// that lost items on the way (a launcher dropping the frame of the one socket that leaks, a
// truncated stream) would otherwise read as "nothing found" and pass. Where they disagree, the
// family's verdicts are errors, never passes; a leak the remaining items prove still fails.
#pragma once

#include <optional>
#include <string>

#include "families/family.h"

namespace sandprobe {

// "the probe's summary counts 3 device nodes (nodes), but it listed 2": the first disagreement
// of `family`'s summaries with its items in `facts`; nullopt when they agree, the family keeps
// no count, or the launch has no summary (its judge says what a missing summary means).
std::optional<std::string> ListCountMismatch(const std::string& family, const FactIndex& facts);

// Makes `v` an error when its family's counts disagree (ListCountMismatch), unless it is a
// too-permissive fail (a leak the listed items prove stands).
void DistrustMiscountedList(const FactIndex& facts, Verdict& v);

}  // namespace sandprobe
