// The scheduler's promises: at most `jobs` at once, exclusive items alone and in order, and a
// stop that starts nothing more.
#include "run/scheduler.h"

#include <atomic>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

struct Trace {
  std::mutex mutex;
  int running = 0, max_running = 0;
  std::vector<std::pair<std::size_t, char>> events;  // (item, 's'tart / 'e'nd)
  void Run(std::size_t i) {
    {
      std::lock_guard lock(mutex);
      max_running = std::max(max_running, ++running);
      events.push_back({i, 's'});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::lock_guard lock(mutex);
    --running;
    events.push_back({i, 'e'});
  }
  std::size_t Index(std::size_t item, char what) {
    for (std::size_t k = 0; k < events.size(); ++k) {
      if (events[k] == std::pair{item, what}) return k;
    }
    return events.size();
  }
};

TEST(SchedulerTest, RunsAtMostJobsSharedItemsAtOnce) {
  Trace trace;
  std::vector<ScheduleItem> items(6);
  RunScheduled(items, 2, [&](std::size_t i) { trace.Run(i); }, [] { return false; },
               [](std::size_t) { ADD_FAILURE() << "nothing may be skipped"; });
  EXPECT_EQ(trace.max_running, 2);
  EXPECT_EQ(trace.events.size(), 12u);
}

TEST(SchedulerTest, ExclusiveItemsRunAloneAndInOrder) {
  Trace trace;
  std::vector<ScheduleItem> items = {{false}, {false}, {true}, {true}, {false}, {false}};
  RunScheduled(items, 4, [&](std::size_t i) { trace.Run(i); }, [] { return false; },
               [](std::size_t) {});
  // Everything before an exclusive item has ended when it starts; nothing starts before it ends.
  for (std::size_t ex : {2u, 3u}) {
    for (std::size_t before = 0; before < ex; ++before) {
      EXPECT_LT(trace.Index(before, 'e'), trace.Index(ex, 's')) << before << " vs " << ex;
    }
    for (std::size_t after = ex + 1; after < items.size(); ++after) {
      EXPECT_GT(trace.Index(after, 's'), trace.Index(ex, 'e')) << after << " vs " << ex;
    }
  }
  EXPECT_EQ(trace.max_running, 2);  // items 0 and 1, and 4 and 5
}

TEST(SchedulerTest, StopStartsNothingMoreAndReportsTheRestSkipped) {
  Trace trace;
  std::atomic<int> started{0};
  std::vector<std::size_t> skipped;
  std::vector<ScheduleItem> items(5);
  RunScheduled(
      items, 1, [&](std::size_t i) { ++started; trace.Run(i); },
      [&] { return started.load() >= 2; }, [&](std::size_t i) { skipped.push_back(i); });
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(skipped, (std::vector<std::size_t>{2, 3, 4}));
}

TEST(SchedulerTest, OneJobRunsEachItemInOrderOnTheCallersThread) {
  Trace trace;
  std::vector<ScheduleItem> items = {{false}, {true}, {false}};
  std::vector<std::thread::id> threads;
  RunScheduled(
      items, 1, [&](std::size_t i) { threads.push_back(std::this_thread::get_id()); trace.Run(i); },
      [] { return false; }, [](std::size_t) { ADD_FAILURE() << "nothing may be skipped"; });
  EXPECT_EQ(trace.max_running, 1);
  EXPECT_EQ(threads, std::vector<std::thread::id>(3, std::this_thread::get_id()));
  for (std::size_t i = 0; i + 1 < items.size(); ++i) {
    EXPECT_LT(trace.Index(i, 'e'), trace.Index(i + 1, 's'));
  }
}

TEST(SchedulerTest, ChainsRunBesideSharedItemsAndEachOtherButNeverBesideAnExclusiveOne) {
  Trace trace;
  // 0 shared; 1, 2 chain "a" (one after another); 3 chain "b"; 4 exclusive alone; 5 chain "b".
  std::vector<ScheduleItem> items = {{false}, {true, "a"}, {true, "a"}, {true, "b"}, {true}, {true, "b"}};
  RunScheduled(items, 1, [&](std::size_t i) { trace.Run(i); }, [] { return false; },
               [](std::size_t) { ADD_FAILURE() << "nothing may be skipped"; });
  EXPECT_EQ(trace.max_running, 3);  // 0, 1 and 3 at once
  EXPECT_LT(trace.Index(1, 's'), trace.Index(0, 'e'));
  EXPECT_LT(trace.Index(3, 's'), trace.Index(0, 'e'));
  EXPECT_LT(trace.Index(1, 'e'), trace.Index(2, 's'));  // a chain's items follow each other
  for (std::size_t before : {0u, 1u, 2u, 3u}) {
    EXPECT_LT(trace.Index(before, 'e'), trace.Index(4, 's')) << before;
  }
  EXPECT_GT(trace.Index(5, 's'), trace.Index(4, 'e'));
}

TEST(SchedulerTest, AStoppedChainReportsItsRestSkippedOnTheCallersThreadInOrder) {
  Trace trace;
  std::atomic<int> started{0};
  std::vector<std::size_t> skipped;
  std::vector<std::thread::id> skipped_on;
  std::vector<ScheduleItem> items = {{true, "a"}, {true, "a"}, {true, "a"}, {true}};
  RunScheduled(
      items, 1, [&](std::size_t i) { ++started; trace.Run(i); },
      [&] { return started.load() >= 1; },
      [&](std::size_t i) { skipped.push_back(i); skipped_on.push_back(std::this_thread::get_id()); });
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(skipped, (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_EQ(skipped_on, std::vector<std::thread::id>(3, std::this_thread::get_id()));
}

}  // namespace
}  // namespace sandprobe
