#include "runner/preflight_gate.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

// A preflight that counts its runs and answers `answer`.
struct CountingPreflight {
  Status answer = Status::Ok();
  std::atomic<int> runs{0};
  std::function<Status()> Fn() {
    return [this] {
      ++runs;
      return answer;
    };
  }
};

TEST(PreflightGateTest, BeforeRunsOnceAheadOfTheFirstLaunchAndBlocksOnFailure) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("backend docker unavailable; install: x");
  PreflightGate gate(PreflightWhen::kBefore, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), "backend docker unavailable; install: x");
  EXPECT_EQ(gate.BeforeLaunch(), "backend docker unavailable; install: x");
  EXPECT_EQ(preflight.runs, 1);
  EXPECT_EQ(gate.Summary(), "backend docker unavailable; install: x");
}

TEST(PreflightGateTest, BeforeThatPassesLetsLaunchesAndIncompleteOnesThrough) {
  CountingPreflight preflight;
  PreflightGate gate(PreflightWhen::kBefore, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  // A launch that broke on a present backend is the sandbox's failure, not a missing backend.
  EXPECT_EQ(gate.AfterIncompleteLaunch(), std::nullopt);
  EXPECT_EQ(preflight.runs, 1);
  EXPECT_EQ(gate.Summary(), "ok");
}

TEST(PreflightGateTest, BeforeWithNoLaunchSaysSo) {
  CountingPreflight preflight;
  PreflightGate gate(PreflightWhen::kBefore, preflight.Fn());
  EXPECT_EQ(gate.Summary(), "not run: no probe launch");
  EXPECT_EQ(preflight.runs, 0);
}

TEST(PreflightGateTest, OnFailureNeverRunsWhileLaunchesComplete) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("would fail");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  EXPECT_EQ(preflight.runs, 0);
  EXPECT_EQ(gate.Summary(),
            "not run: every probe launch completed (profile preflight: on_failure)");
}

TEST(PreflightGateTest, OnFailureExplainsAnIncompleteLaunchAndBlocksTheRest) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("backend bwrap unavailable; install: apt-get install bubblewrap");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  EXPECT_EQ(gate.AfterIncompleteLaunch(),
            "backend bwrap unavailable; install: apt-get install bubblewrap");
  EXPECT_EQ(gate.BeforeLaunch(), "backend bwrap unavailable; install: apt-get install bubblewrap");
  EXPECT_EQ(gate.AfterIncompleteLaunch(),
            "backend bwrap unavailable; install: apt-get install bubblewrap");
  EXPECT_EQ(preflight.runs, 1);
}

TEST(PreflightGateTest, OnFailureWithAPresentBackendLeavesTheLaunchItsOwnFailure) {
  CountingPreflight preflight;
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  EXPECT_EQ(gate.AfterIncompleteLaunch(), std::nullopt);
  EXPECT_EQ(gate.AfterIncompleteLaunch(), std::nullopt);
  EXPECT_EQ(preflight.runs, 1);
  EXPECT_EQ(gate.Summary(), "ok");
}

TEST(PreflightGateTest, ConcurrentFailuresRunThePreflightOnce) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("gone");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  std::vector<std::thread> threads;
  std::atomic<int> told{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (gate.AfterIncompleteLaunch() == std::optional<std::string>("gone")) ++told;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(told, 8);
  EXPECT_EQ(preflight.runs, 1);
}

}  // namespace
}  // namespace sandprobe
