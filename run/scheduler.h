// Scheduler: runs a plan's launches — up to `jobs` shared launches at once, every exclusive
// launch alone and in plan order (resource probes must not share the machine; persistence's
// plant/turn/session launches must follow each other) — and stops starting new ones as soon as
// it is told to stop. It knows nothing of sandboxes: `run_one(i)` does the launch.
//
// An exclusive item with a `chain` may run beside others: beside the shared items and beside
// the items of other chains, never beside an exclusive item without one. The items of one chain
// run one after another, in order (persistence's plant, then its check). A chain is one
// maximal run of consecutive items that name it; it takes no shared slot (`jobs` bounds the
// shared items only).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace sandprobe {

struct ScheduleItem {
  bool exclusive = false;
  // Non-empty (exclusive items only): may run beside shared items and other chains (above).
  std::string chain;
};

// Calls run_one(i) for each item, in order of i, on worker threads (with jobs 1 and no chain,
// one after another on the caller's thread); returns when every started call has returned.
// `should_stop()` is asked before each start: once true, the remaining items are not started
// and `skipped(i)` is called for each instead (on the caller's thread, in order of i). `jobs`
// < 1 counts as 1.
void RunScheduled(const std::vector<ScheduleItem>& items, int jobs,
                  const std::function<void(std::size_t)>& run_one,
                  const std::function<bool()>& should_stop,
                  const std::function<void(std::size_t)>& skipped);

}  // namespace sandprobe
