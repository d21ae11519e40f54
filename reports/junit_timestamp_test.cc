#include "reports/junit_timestamp.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

TEST(JunitTimestamp, ConvertsRfc3339ToUtcWithoutZone) {
  EXPECT_EQ(JunitTimestamp("2026-11-20T10:00:00Z"), "2026-11-20T10:00:00");
  EXPECT_EQ(JunitTimestamp("2026-11-20T10:00:00.123456Z"), "2026-11-20T10:00:00");
  EXPECT_EQ(JunitTimestamp("2026-11-20T01:30:00+02:00"), "2026-11-19T23:30:00");
  EXPECT_EQ(JunitTimestamp("2026-12-31T23:30:00-01:00"), "2027-01-01T00:30:00");
}

TEST(JunitTimestamp, RejectsWhatIsNotRfc3339) {
  EXPECT_EQ(JunitTimestamp(""), "");
  EXPECT_EQ(JunitTimestamp("2026-11-20T10:00:00"), "");  // no zone: ambiguous
  EXPECT_EQ(JunitTimestamp("2026-13-20T10:00:00Z"), "");
  EXPECT_EQ(JunitTimestamp("2026-11-20T10:00:00Zjunk"), "");
  EXPECT_EQ(JunitTimestamp("yesterday"), "");
}

}  // namespace
}  // namespace sandprobe
