#include "reports/diff.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using nlohmann::json;

json Report(const std::string& profile, json checks) {
  return {{"run_id", "r-" + profile}, {"profile", {{"name", profile}}}, {"checks", checks}};
}
json Check(const std::string& id, const std::string& verdict, const std::string& observed = "",
           json direction = nullptr) {
  return {{"id", id}, {"verdict", verdict}, {"observed", observed}, {"direction", direction}};
}

TEST(DiffTest, MeasuredValueAndVerdictChangeIsARegression) {
  json a = Report("hardened", {Check("limits.memory_mib:512", "pass", "measured 510 MiB: enforced"),
                               Check("fs.read.denied:/etc/shadow", "pass", "read failed")});
  json b = Report("wrong", {Check("limits.memory_mib:512", "fail", "measured 255 MiB vs declared 512",
                                  "too-restrictive"),
                            Check("fs.read.denied:/etc/shadow", "pass", "read failed")});
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok()) << diff.status().message();
  ASSERT_EQ(diff->changes.size(), 1u);
  EXPECT_EQ(diff->regressions, 1);
  std::string text = RenderDiffText(*diff);
  EXPECT_NE(text.find("limits.memory_mib:512: pass -> fail (too-restrictive); measured 510 MiB -> "
                      "255 MiB  [regressed]"),
            std::string::npos)
      << text;
  json j = DiffToJson(*diff);
  EXPECT_EQ(j["changes"][0]["old"]["measured"], "510 MiB");
  EXPECT_EQ(j["changes"][0]["new"]["measured"], "255 MiB");
  EXPECT_EQ(j["regressions"], 1);
}

TEST(DiffTest, ImprovementAndMeasuredDriftAreChangesButNotRegressions) {
  json a = Report("a", {Check("limits.pids.max:50", "fail", "measured 257 tasks: not enforced", "too-permissive"),
                        Check("limits.cpus:1", "pass", "measured 1.001 cores: enforced")});
  json b = Report("b", {Check("limits.pids.max:50", "pass", "measured 50 tasks: enforced"),
                        Check("limits.cpus:1", "pass", "measured 0.98 cores: enforced")});
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->changes.size(), 2u);
  EXPECT_EQ(diff->regressions, 0);
}

TEST(DiffTest, AddedFailingAndRemovedChecksAreListed) {
  json a = Report("a", {Check("gone", "pass")});
  json b = Report("b", {Check("new", "fail")});
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  ASSERT_EQ(diff->changes.size(), 2u);
  EXPECT_EQ(diff->regressions, 1);
  std::string text = RenderDiffText(*diff);
  EXPECT_NE(text.find("new: absent -> fail"), std::string::npos) << text;
  EXPECT_NE(text.find("gone: pass -> absent"), std::string::npos) << text;
}

TEST(DiffTest, IdenticalReportsHaveNoChangesAndBadInputIsAnError) {
  json a = Report("a", {Check("x", "pass", "measured 1 MiB")});
  StatusOr<ReportDiff> same = DiffReports(a, a);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->changes.empty());
  StatusOr<ReportDiff> bad = DiffReports(json::object(), a);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("OLD"), std::string::npos);
}

}  // namespace
}  // namespace sandprobe
