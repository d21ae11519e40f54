#include "gate/waivers.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

StatusOr<WaiverFile> Parse(const std::string& text) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "w.json");
  if (!doc.ok()) return doc.status();
  return ParseWaivers(*doc);
}

Verdict Fail(const std::string& id, Severity severity = Severity::kHigh) {
  Verdict v;
  v.check.id = id;
  v.check.severity = severity;
  v.outcome = Outcome::kFail;
  v.direction = Direction::kTooPermissive;
  return v;
}

TEST(WaiversTest, ParsesCommentsAndRemembersWhereEachWaiverIs) {
  StatusOr<WaiverFile> file = Parse(R"({
  // accepted for now
  "waivers": [
    {"check": "net.tcp.*", "reason": "INFRA-12", "expires": "2027-01-31"}
  ]
})");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->waivers.size(), 1u);
  EXPECT_EQ(file->waivers[0].check, "net.tcp.*");
  EXPECT_EQ(file->waivers[0].reason, "INFRA-12");
  EXPECT_EQ(file->waivers[0].expires, "2027-01-31");
  EXPECT_EQ(file->waivers[0].where, "w.json:4:5");
}

TEST(WaiversTest, ErrorsNameFileLineColumnAndField) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {R"({"waivers": [{"check": "x", "reason": "r", "expires": "2027-02-30"}]})",
       "w.json:1:55: /waivers/0/expires: \"2027-02-30\" is not a date YYYY-MM-DD"},
      {R"({"waivers": [{"check": "x", "reason": "", "expires": "2027-01-01"}]})",
       "/waivers/0/reason: must not be empty"},
      {R"({"waivers": [{"check": "x", "expires": "2027-01-01"}]})", "reason"},
      {R"({"waivers": [{"check": "x", "reason": "r", "expires": "2027-01-01", "until": 1}]})",
       "/waivers/0/until"},
      {R"({"waivers": {}})", "/waivers: expected array, got object"},
      {R"({"waiver": []})", "waiver"},
      {R"({})", "missing required \"waivers\""},
      {R"({"waivers": [{"check": "[", "reason": "r", "expires": "2027-01-01"}]})",
       "w.json:1:24: /waivers/0/check: not a valid glob"},
  };
  for (const Case& c : cases) {
    StatusOr<WaiverFile> file = Parse(c.text);
    ASSERT_FALSE(file.ok()) << c.text;
    EXPECT_EQ(file.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(file.status().message().find(c.expected), std::string::npos)
        << c.text << "\n" << file.status().message();
  }
}

TEST(WaiversTest, AnActiveWaiverMarksOnlyMatchingFails) {
  RunReport report;
  report.verdicts = {Fail("net.tcp.egress:bridge"), Fail("fs.read.denied:/etc/shadow")};
  Verdict pass = Fail("net.tcp.egress:loopback");
  pass.outcome = Outcome::kPass;
  report.verdicts.push_back(pass);
  WaiverFile file{"w.json", {{"net.tcp.*", "INFRA-12", "2027-01-31", "w.json:3:5"}}};
  ApplyWaivers(report, file, "2027-01-31");  // the last day still holds
  ASSERT_TRUE(report.verdicts[0].waiver);
  EXPECT_TRUE(report.verdicts[0].waived());
  EXPECT_EQ(report.verdicts[0].waiver->reason, "INFRA-12");
  EXPECT_EQ(report.verdicts[0].waiver->where, "w.json:3:5");
  EXPECT_FALSE(report.verdicts[1].waiver);
  EXPECT_FALSE(report.verdicts[2].waiver);  // a pass needs no waiver
  ASSERT_TRUE(report.waivers);
  EXPECT_TRUE(report.waivers->expired.empty());
  EXPECT_TRUE(report.waivers->unused.empty());
}

TEST(WaiversTest, AnExpiredWaiverWaivesNothingAndIsListed) {
  RunReport report;
  report.verdicts = {Fail("net.tcp.egress:bridge")};
  WaiverFile file{"w.json", {{"net.tcp.*", "INFRA-12", "2027-01-31", "w.json:3:5"}}};
  ApplyWaivers(report, file, "2027-02-01");
  ASSERT_TRUE(report.verdicts[0].waiver);
  EXPECT_TRUE(report.verdicts[0].waiver->expired);
  EXPECT_FALSE(report.verdicts[0].waived());
  ASSERT_EQ(report.waivers->expired.size(), 1u);
  EXPECT_EQ(report.waivers->expired[0], "w.json:3:5: waiver for net.tcp.* expired on 2027-01-31 (INFRA-12)");
}

TEST(WaiversTest, AnActiveWaiverWinsOverAnEarlierExpiredOneAndUnusedOnesAreListed) {
  RunReport report;
  report.verdicts = {Fail("priv.caps.effective:CAP_SYS_ADMIN")};
  WaiverFile file{"w.json",
                  {{"priv.caps.*", "old", "2026-01-01", "w.json:2:5"},
                   {"priv.caps.effective:*", "new", "2027-06-30", "w.json:3:5"},
                   {"fs.*", "never used", "2027-06-30", "w.json:4:5"}}};
  ApplyWaivers(report, file, "2026-11-23");
  EXPECT_TRUE(report.verdicts[0].waived());
  EXPECT_EQ(report.verdicts[0].waiver->reason, "new");
  EXPECT_EQ(report.waivers->expired.size(), 1u);
  ASSERT_EQ(report.waivers->unused.size(), 1u);
  EXPECT_EQ(report.waivers->unused[0], "w.json:4:5: waiver for fs.* matched no fail");
}

TEST(WaiversTest, ErrorsAndInconclusivesAreNeverWaived) {
  RunReport report;
  Verdict error = Fail("fs.read.denied:/etc/shadow");
  error.outcome = Outcome::kError;
  report.verdicts = {error};
  ApplyWaivers(report, {"w.json", {{"*", "all", "2099-01-01", "w.json:1:1"}}}, "2026-11-23");
  EXPECT_FALSE(report.verdicts[0].waiver);
}

TEST(WaiversTest, TodayIsADate) {
  std::string today = UtcToday();
  ASSERT_EQ(today.size(), 10u);
  EXPECT_EQ(today[4], '-');
  EXPECT_EQ(today[7], '-');
}

}  // namespace
}  // namespace sandprobe
