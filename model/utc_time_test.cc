#include "model/utc_time.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using namespace std::chrono;

TEST(UtcTimeTest, FormatsOneInstantForEachReport) {
  const UtcTime t = sys_days(2026y / 11 / 20) + 10h + 0min + 42s;
  EXPECT_EQ(Rfc3339(t), "2026-11-20T10:00:42Z");
  EXPECT_EQ(Rfc3339NoZone(t), "2026-11-20T10:00:42");
  EXPECT_EQ(UtcDate(t), "2026-11-20");
}

TEST(UtcTimeTest, ReadsRfc3339BackInUtc) {
  EXPECT_EQ(ParseRfc3339("2026-11-20T10:00:00Z"), sys_days(2026y / 11 / 20) + 10h);
  EXPECT_EQ(ParseRfc3339("2026-11-20T10:00:00.123456Z"), sys_days(2026y / 11 / 20) + 10h);
  EXPECT_EQ(ParseRfc3339("2026-11-20T01:30:00+02:00"), sys_days(2026y / 11 / 19) + 23h + 30min);
  EXPECT_EQ(ParseRfc3339("2026-12-31T23:30:00-01:00"), sys_days(2027y / 1 / 1) + 30min);
  const UtcTime now = UtcNow();
  EXPECT_EQ(ParseRfc3339(Rfc3339(now)), now);
}

TEST(UtcTimeTest, RefusesWhatIsNotRfc3339) {
  EXPECT_FALSE(ParseRfc3339(""));
  EXPECT_FALSE(ParseRfc3339("2026-11-20T10:00:00"));  // no zone: ambiguous
  EXPECT_FALSE(ParseRfc3339("2026-13-20T10:00:00Z"));
  EXPECT_FALSE(ParseRfc3339("2026-02-30T10:00:00Z"));
  EXPECT_FALSE(ParseRfc3339("2026-11-20T10:00:00Zjunk"));
  EXPECT_FALSE(ParseRfc3339("yesterday"));
}

}  // namespace
}  // namespace sandprobe
