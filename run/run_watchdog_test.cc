// The watchdog's three reasons to stop, and the last resort when a stopped run stays stuck.
#include "run/run_watchdog.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using namespace std::chrono_literals;

// Polls `condition` for up to 10 s (generous: shared machines), then gives its last answer.
template <typename F>
bool Eventually(F condition) {
  for (int i = 0; i < 200 && !condition(); ++i) std::this_thread::sleep_for(50ms);
  return condition();
}

TEST(RunWatchdogTest, InterruptStopsTheRun) {
  std::atomic<bool> interrupt{false};
  RunWatchdog watchdog({.interrupt = &interrupt});
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(watchdog.stopped());
  interrupt = true;
  EXPECT_TRUE(Eventually([&] { return watchdog.stopped(); }));
  EXPECT_EQ(watchdog.why(), "interrupted");
}

TEST(RunWatchdogTest, RunTimeoutStopsTheRunEvenWhileLaunchesProgress) {
  RunWatchdog watchdog({.run_timeout = 1s, .stall_after = 60s});
  EXPECT_TRUE(Eventually([&] { watchdog.Progress(); return watchdog.stopped(); }));
  EXPECT_EQ(watchdog.why(), "run timeout after 1 s (--timeout)");
}

TEST(RunWatchdogTest, AStalledRunIsStoppedThenGivenUpOn) {
  std::atomic<int> calls{0};
  std::string reason;
  RunWatchdog watchdog({.stall_after = 1s, .stall_grace = 1s,
                        .on_stalled = [&](const std::string& why) { reason = why; ++calls; }});
  EXPECT_TRUE(Eventually([&] { return watchdog.stopped(); }));
  EXPECT_NE(watchdog.why().find("watchdog: no launch started or ended for 1 s"), std::string::npos);
  EXPECT_TRUE(Eventually([&] { return calls.load() == 1; }));
  EXPECT_EQ(reason, watchdog.why());
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(calls.load(), 1);  // once
}

TEST(RunWatchdogTest, ProgressKeepsAStallAway) {
  bool called = false;
  RunWatchdog watchdog({.stall_after = 1s, .on_stalled = [&](const std::string&) { called = true; }});
  for (int i = 0; i < 30; ++i) {
    watchdog.Progress();
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_FALSE(watchdog.stopped());
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace sandprobe
