// Which launch an orphan belongs to (the pure rules); the killing itself is tested end to end
// in launcher_test.cc.
#include "launch/launch_leftovers.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using namespace std::string_literals;

// Two live launches: 1 started at tick 100 (a long-lived one), 2 at tick 200.
const std::vector<LiveLaunch> kLive = {
    {.seq = 1, .child_pid = 500, .start_ticks = 100, .marker = "9-1"},
    {.seq = 2, .child_pid = 600, .start_ticks = 200, .marker = "9-2"},
};

ProcStat Orphan(int pgid, unsigned long long start) {
  return {.pid = 700, .state = 'S', .ppid = 9, .pgid = pgid, .sid = pgid, .start_ticks = start};
}

TEST(LauncherOrphanAttribution, ProcessGroupWinsOverEverythingElse) {
  EXPECT_EQ(AttributeOrphan(Orphan(500, 300), "SANDPROBE_LAUNCH_ID=9-2\0"s, kLive), 1u);
}

TEST(LauncherOrphanAttribution, MarkerFindsTheLaunchWhenTheGroupWasLeft) {
  // Started after launch 2, so the start time alone would pick 2.
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "A=b\0SANDPROBE_LAUNCH_ID=9-1\0C=d\0"s, kLive), 1u);
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "SANDPROBE_LAUNCH_ID=9-2"s, kLive), 2u);
}

TEST(LauncherOrphanAttribution, WithoutGroupOrMarkerTheLatestEarlierLaunchWins) {
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "", kLive), 2u);
  EXPECT_EQ(AttributeOrphan(Orphan(700, 200), "", kLive), 2u);
  EXPECT_EQ(AttributeOrphan(Orphan(700, 150), "", kLive), 1u);
  // A marker of no live launch (or a look-alike name) is no evidence.
  EXPECT_EQ(AttributeOrphan(Orphan(700, 150), "SANDPROBE_LAUNCH_ID=9-7\0"s, kLive), 1u);
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "SANDPROBE_LAUNCH_ID_X=9-1\0"s, kLive), 2u);
}

TEST(LauncherOrphanAttribution, AnOrphanNamingALaunchsTagIsThatLaunchsWithoutMarker) {
  // podman's conmon: its own session and environment, "-n INSTANCE" in its argv, started
  // after launch 2 (the start time alone would hand it to 2, which would kill it at its end).
  std::vector<LiveLaunch> live = kLive;
  live[0].orphan_tag = "sp-run-1";
  live[1].orphan_tag = "sp-run-2";
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "PATH=/bin\0"s, live, "/usr/bin/conmon\0-n\0sp-run-1\0-c\0abc\0"s), 1u);
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "", live, "/usr/bin/conmon\0-n\0sp-run-2\0"s), 2u);
  // Only a whole element counts, and the marker comes first.
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "", live, "x\0sp-run-10\0"s), 2u);
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "SANDPROBE_LAUNCH_ID=9-2\0"s, live, "x\0sp-run-1\0"s), 2u);
  // An empty tag matches nothing (an empty argv element).
  live[0].orphan_tag = "";
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "", live, "x\0\0"s), 2u);
}

TEST(LauncherOrphanAttribution, OlderThanEveryLiveLaunchBelongsToNone) {
  EXPECT_EQ(AttributeOrphan(Orphan(700, 50), "", kLive), std::nullopt);
  EXPECT_EQ(AttributeOrphan(Orphan(700, 300), "", {}), std::nullopt);
}

}  // namespace
}  // namespace sandprobe
