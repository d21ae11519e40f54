#include "run/scheduler.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace sandprobe {
namespace {

bool Chained(const ScheduleItem& item) { return item.exclusive && !item.chain.empty(); }

// The end (one past the last index) of the chain that starts at `first`.
std::size_t ChainEnd(const std::vector<ScheduleItem>& items, std::size_t first) {
  std::size_t end = first + 1;
  while (end < items.size() && Chained(items[end]) && items[end].chain == items[first].chain) ++end;
  return end;
}

}  // namespace

void RunScheduled(const std::vector<ScheduleItem>& items, int jobs,
                  const std::function<void(std::size_t)>& run_one,
                  const std::function<bool()>& should_stop,
                  const std::function<void(std::size_t)>& skipped) {
  if (jobs < 1) jobs = 1;
  std::size_t next = 0;
  if (jobs == 1 && std::none_of(items.begin(), items.end(), Chained)) {
    // One at a time: every launch is alone, in order, on this thread (no thread to start per
    // launch, which is a measurable part of a 6 ms bwrap launch).
    for (; next < items.size() && !should_stop(); ++next) run_one(next);
    for (; next < items.size(); ++next) skipped(next);
    return;
  }
  std::mutex mutex;
  std::condition_variable changed;
  int unchained_running = 0, chains_running = 0;  // unchained: shared, or an exclusive alone
  std::vector<std::size_t> not_started;  // by chain threads, which stopped before these
  std::vector<std::thread> workers;
  workers.reserve(items.size());
  // Woken by every finished launch. A stop needs no wake-up of its own: the running launches
  // are killed by it (their cancel flag) and end, and should_stop() is asked before each start.
  auto wait_until = [&](auto ready) {
    std::unique_lock lock(mutex);
    changed.wait(lock, ready);
  };
  auto start = [&](int& counter, auto work) {
    {
      std::lock_guard lock(mutex);
      ++counter;
    }
    workers.emplace_back([&mutex, &changed, &running = counter, work] {
      work();
      std::lock_guard lock(mutex);
      --running;
      changed.notify_all();
    });
  };
  while (next < items.size()) {
    const ScheduleItem& item = items[next];
    if (Chained(item)) {
      // Beside whatever shared items and other chains run; its own items one after another.
      if (should_stop()) break;
      const std::size_t first = next, end = ChainEnd(items, next);
      start(chains_running, [&, first, end] {
        std::size_t i = first;
        for (; i < end && !should_stop(); ++i) run_one(i);
        std::lock_guard lock(mutex);
        for (; i < end; ++i) not_started.push_back(i);
      });
      next = end;
      continue;
    }
    // An exclusive item waits for the machine to be free; a shared one for a free slot.
    wait_until([&] {
      return item.exclusive ? unchained_running + chains_running == 0 : unchained_running < jobs;
    });
    if (should_stop()) break;
    const std::size_t i = next++;
    start(unchained_running, [&, i] { run_one(i); });
    // Nothing starts beside an exclusive item.
    if (item.exclusive) wait_until([&] { return unchained_running + chains_running == 0; });
  }
  for (std::thread& worker : workers) worker.join();
  for (; next < items.size(); ++next) not_started.push_back(next);
  std::sort(not_started.begin(), not_started.end());
  for (std::size_t i : not_started) skipped(i);
}

}  // namespace sandprobe
