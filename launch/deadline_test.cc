// Deadline: min(own limit, what is left), with a fake clock.
#include "launch/deadline.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using std::chrono::milliseconds;

TEST(DeadlineTest, UnboundedKeepsTheStepsOwnLimit) {
  Deadline none;
  EXPECT_FALSE(none.bounded());
  Deadline::Bound b = none.For(milliseconds(60000));
  EXPECT_EQ(b.limit, milliseconds(60000));
  EXPECT_FALSE(b.cut);
  EXPECT_EQ(DescribeCut(b, milliseconds(60000)), "");
  Deadline zero(milliseconds(0), [] { return std::chrono::steady_clock::time_point{}; });
  EXPECT_FALSE(zero.bounded()) << "--timeout 0 means none";
}

TEST(DeadlineTest, AStepGetsWhatIsLeftAndNothingOncePassed) {
  std::chrono::steady_clock::time_point now{};
  Deadline deadline(milliseconds(5000), [&now] { return now; });
  EXPECT_EQ(deadline.For(milliseconds(1000)).limit, milliseconds(1000));
  EXPECT_FALSE(deadline.For(milliseconds(1000)).cut);
  now += milliseconds(3800);
  Deadline::Bound cut = deadline.For(milliseconds(60000));
  EXPECT_EQ(cut.limit, milliseconds(1200));
  EXPECT_TRUE(cut.cut);
  EXPECT_EQ(DescribeCut(cut, milliseconds(60000)), "timeout cut from 60000 ms to 1200 ms by the run's deadline");
  now += milliseconds(5000);
  Deadline::Bound none = deadline.For(milliseconds(60000));
  EXPECT_TRUE(none.nothing_left());
  EXPECT_EQ(deadline.Remaining(), milliseconds(0));
  EXPECT_EQ(DescribeCut(none, milliseconds(60000)), "not started: the run's deadline had passed");
}

TEST(DeadlineTest, RemovalsShareAShortWindowPastTheDeadline) {
  std::chrono::steady_clock::time_point now{};
  Deadline deadline(milliseconds(5000), [&now] { return now; });
  now += milliseconds(5500);
  EXPECT_TRUE(deadline.For(milliseconds(60000)).nothing_left());
  Deadline::Bound removal = deadline.ForRemoval(milliseconds(60000));
  EXPECT_EQ(removal.limit, Deadline::kRemovalWindow) << "the window opened when the first removal asked";
  EXPECT_TRUE(removal.cut);
  now += Deadline::kRemovalWindow;
  EXPECT_TRUE(deadline.ForRemoval(milliseconds(60000)).nothing_left());

  // The window opens when the first removal asks, if that is after the deadline (a probe
  // launch killed at the deadline takes its kill grace to end); copies share it.
  now = {};
  Deadline late(milliseconds(3000), [&now] { return now; });
  Deadline copy = late;
  now += milliseconds(5000);
  EXPECT_EQ(copy.ForRemoval(milliseconds(60000)).limit, Deadline::kRemovalWindow);
  now += milliseconds(1500);
  EXPECT_EQ(late.ForRemoval(milliseconds(60000)).limit, Deadline::kRemovalWindow - milliseconds(1500));
  EXPECT_EQ(Deadline().ForRemoval(milliseconds(60000)).limit, milliseconds(60000));
}

}  // namespace
}  // namespace sandprobe
