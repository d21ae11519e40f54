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

// fuzz_report_read found a report that "changed" against itself: one id, two verdicts. Checks
// are matched by id, so such a report is refused, naming the id.
TEST(DiffTest, AReportNamingACheckTwiceIsRefused) {
  json twice = Report("x", {Check("net.egress.denied:dns", "pass"), Check("net.egress.denied:dns", "fail")});
  StatusOr<ReportDiff> diff = DiffReports(twice, twice);
  ASSERT_FALSE(diff.ok());
  EXPECT_EQ(diff.status().message(), "OLD: check net.egress.denied:dns appears twice");
  json once = Report("x", {Check("net.egress.denied:dns", "pass")});
  EXPECT_EQ(DiffReports(once, twice).status().message(), "NEW: check net.egress.denied:dns appears twice");
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

// A resource check as the JSON report writes it: its band in `tolerance`.
json Limit(const std::string& id, const std::string& verdict, const std::string& observed,
           double declared, double plus_minus, bool percent, json direction = nullptr) {
  json check = Check(id, verdict, observed, direction);
  double distance = percent ? declared * plus_minus / 100 : plus_minus;
  check["tolerance"] = {{"declared", declared}, {"plus_minus", plus_minus}, {"percent", percent},
                        {"low", declared - distance}, {"high", declared + distance}};
  return check;
}

TEST(DiffTest, JitterWithinTheToleranceIsListedButDoesNotFailOnChange) {
  json a = Report("a", {Limit("limits.cpus:1", "pass", "measured 1.001 cores: enforced", 1, 15, true),
                        Limit("limits.pids.max:50", "pass", "measured 50 tasks: enforced", 50, 1, false)});
  json b = Report("b", {Limit("limits.cpus:1", "pass", "measured 0.998 cores: enforced", 1, 15, true),
                        Limit("limits.pids.max:50", "pass", "measured 51 tasks: enforced", 50, 1, false)});
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  ASSERT_EQ(diff->changes.size(), 2u);
  EXPECT_TRUE(diff->changes[0].within_tolerance);
  EXPECT_TRUE(diff->changes[1].within_tolerance) << "±1 task: 50 -> 51 is the band's width";
  EXPECT_EQ(diff->within_tolerance, 2);
  EXPECT_EQ(diff->Significant(), 0);
  EXPECT_EQ(diff->regressions, 0);
  EXPECT_EQ(DiffExitCode(*diff, /*fail_on_change=*/true), 0);
  EXPECT_EQ(DiffExitCode(*diff, /*fail_on_change=*/false), 0);
  std::string text = RenderDiffText(*diff);
  EXPECT_NE(text.find("limits.cpus:1: pass (unchanged); measured 1.001 cores -> 0.998 cores  "
                      "[within tolerance: ±0.15 cores]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("2 changed (2 within tolerance), 0 regressed"), std::string::npos) << text;
  json j = DiffToJson(*diff);
  EXPECT_EQ(j["within_tolerance"], 2);
  EXPECT_EQ(j["changes"][0]["within_tolerance"], true);
}

TEST(DiffTest, MovesBeyondTheToleranceAndVerdictChangesStillCount) {
  // 510 -> 480 MiB: a 30 MiB move against a ±25.6 MiB band, same verdict: a real change.
  json a = Report("a", {Limit("limits.memory_mib:512", "pass", "measured 510 MiB: enforced", 512, 5, true),
                        Limit("limits.cpus:1", "pass", "measured 1.1 cores: enforced", 1, 15, true),
                        Limit("limits.pids.max:50", "pass", "measured 50 tasks: enforced", 50, 1, false)});
  json b = Report("b", {Limit("limits.memory_mib:512", "fail", "measured 480 MiB vs declared 512", 512, 5,
                              true, "too-restrictive"),
                        // In-band move that crosses the band's edge: the verdict changed.
                        Limit("limits.cpus:1", "fail", "measured 1.16 cores vs declared 1", 1, 15,
                              true, "too-permissive"),
                        Limit("limits.pids.max:50", "pass", "measured 52 tasks: enforced", 50, 1, false)});
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  ASSERT_EQ(diff->changes.size(), 3u);
  for (const CheckChange& c : diff->changes) EXPECT_FALSE(c.within_tolerance) << c.id;
  EXPECT_EQ(diff->regressions, 2);
  EXPECT_EQ(diff->Significant(), 3);
  EXPECT_EQ(DiffExitCode(*diff, false), 1);

  // Same verdict, out-of-band move only: no regression, but --fail-on-change trips.
  json c = Report("c", {Limit("limits.pids.max:50", "pass", "measured 48 tasks: enforced", 50, 1, false)});
  json d = Report("d", {Limit("limits.pids.max:50", "pass", "measured 50 tasks: enforced", 50, 1, false)});
  StatusOr<ReportDiff> moved = DiffReports(c, d);
  ASSERT_TRUE(moved.ok());
  ASSERT_EQ(moved->changes.size(), 1u);
  EXPECT_FALSE(moved->changes[0].within_tolerance) << "2 tasks against ±1";
  EXPECT_EQ(DiffExitCode(*moved, false), 0);
  EXPECT_EQ(DiffExitCode(*moved, true), 1);
}

TEST(DiffTest, ReportsWithoutToleranceCountEveryMove) {
  // Reports written before checks carried their band: nothing to judge jitter by.
  json a = Report("a", {Check("limits.cpus:1", "pass", "measured 1.001 cores: enforced")});
  json b = Report("b", {Check("limits.cpus:1", "pass", "measured 0.998 cores: enforced")});
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  ASSERT_EQ(diff->changes.size(), 1u);
  EXPECT_FALSE(diff->changes[0].within_tolerance);
  EXPECT_EQ(DiffExitCode(*diff, true), 1);
}

TEST(DiffTest, AddedFailingAndRemovedChecksAreListed) {
  json a = Report("a", {Check("gone", "pass")});
  json b = Report("b", {Check("new", "fail")});
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  ASSERT_EQ(diff->changes.size(), 2u);
  // Both: a new fail, and a check no longer run (what is not checked is not guarded).
  EXPECT_EQ(diff->regressions, 2);
  EXPECT_TRUE(diff->changes[1].regressed);
  EXPECT_EQ(DiffExitCode(*diff, false), 1);
  std::string text = RenderDiffText(*diff);
  EXPECT_NE(text.find("new: absent -> fail  [regressed]"), std::string::npos) << text;
  EXPECT_NE(text.find("gone: pass -> absent  [regressed: no longer checked]"), std::string::npos) << text;
}

TEST(DiffTest, ADisappearedCheckAloneFailsTheDiff) {
  json a = Report("a", {Check("fs.read.denied:/etc/shadow", "pass"), Check("x", "skip")});
  json b = Report("a", {Check("x", "skip")});
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->regressions, 1);
  EXPECT_EQ(DiffExitCode(*diff, false), 1);
}

TEST(DiffTest, TextShowsSeverityAndTheNewObservation) {
  json before = Check("fs.read.denied:/etc/shadow", "pass", "read denied: EACCES");
  json after = Check("fs.read.denied:/etc/shadow", "fail", "read ok:\n33 bytes", "too-permissive");
  before["severity"] = after["severity"] = "high";
  StatusOr<ReportDiff> diff = DiffReports(Report("a", {before}), Report("a", {after}));
  ASSERT_TRUE(diff.ok());
  std::string text = RenderDiffText(*diff);
  EXPECT_NE(text.find("[high] fs.read.denied:/etc/shadow: pass -> fail (too-permissive)  [regressed]\n"
                      "    now: read ok: 33 bytes\n"),
            std::string::npos) << text;
  json j = DiffToJson(*diff);
  EXPECT_EQ(j["changes"][0]["new"]["severity"], "high");
  EXPECT_EQ(j["changes"][0]["new"]["observed"], "read ok:\n33 bytes");
}

TEST(DiffTest, WarnsWhenSuitesOrPoliciesDiffer) {
  json a = Report("a", {Check("x", "pass")});
  json b = Report("a", {Check("x", "pass")});
  a["suite"] = "default";
  b["suite"] = "network";
  a["policy"] = {{"name", "tier-low"}, {"config", {{"name", "tier-low"}}}};
  b["policy"] = {{"name", "tier-low"}, {"config", {{"name", "tier-low"}, {"limits", {{"pids", 5}}}}}};
  StatusOr<ReportDiff> diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->warnings, (std::vector<std::string>{
                                "suite default -> network: the runs used different suites",
                                "policy tier-low: its content differs between the runs"}));
  std::string text = RenderDiffText(*diff);
  EXPECT_NE(text.find("warning: suite default -> network"), std::string::npos) << text;
  EXPECT_EQ(DiffToJson(*diff)["warnings"].size(), 2u);
  b["policy"] = {{"name", "tier-high"}, {"config", {{"name", "tier-high"}}}};
  b["suite"] = "default";
  diff = DiffReports(a, b);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->warnings, (std::vector<std::string>{
                                "policy tier-low -> tier-high: the runs used different policies"}));
  EXPECT_TRUE(DiffReports(a, a)->warnings.empty());
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

// A check as the JSON report writes it, with its family.
json FamilyCheck(const std::string& id, const std::string& family, const std::string& verdict) {
  json check = Check(id, verdict);
  check["family"] = family;
  return check;
}

TEST(DiffTest, ChecksTheNewRunsSelectionLeftOutAreNotRegressions) {
  json full = Report("a", {FamilyCheck("fs.read.denied:/etc/shadow", "fs.read", "pass"),
                           FamilyCheck("fs.write.denied:/etc", "fs.write", "pass"),
                           FamilyCheck("priv.caps.none", "priv.caps", "pass"),
                           FamilyCheck("net.tcp.loopback", "net.tcp", "pass")});
  json selected = Report("a", {FamilyCheck("fs.read.denied:/etc/shadow", "fs.read", "pass")});
  selected["suites"] = {"default", "privileges"};
  selected["selection"] = {{"families", {"fs.read", "fs.write", "priv.caps"}},
                           {"check", {"fs.*"}},
                           {"skip", {"fs.write.*"}}};
  StatusOr<ReportDiff> diff = DiffReports(full, selected);
  ASSERT_TRUE(diff.ok()) << diff.status().message();
  EXPECT_EQ(diff->regressions, 0);
  EXPECT_TRUE(diff->changes.empty());
  ASSERT_EQ(diff->not_selected.size(), 3u);
  EXPECT_EQ(diff->not_selected[0].id, "fs.write.denied:/etc");
  EXPECT_EQ(diff->not_selected[0].why, "left out by --skip fs.write.*");
  EXPECT_EQ(diff->not_selected[1].why, "matched by no --check (fs.*)") << "its family is selected, its id is not";
  EXPECT_EQ(diff->not_selected[2].why, "family net.tcp is in none of its suites (default, privileges)");
  EXPECT_EQ(DiffExitCode(*diff, /*fail_on_change=*/true), 0);
  std::string text = RenderDiffText(*diff);
  EXPECT_NE(text.find("3 checks of OLD not selected by NEW, not compared (first: fs.write.denied:/etc: left out by --skip fs.write.*)"),
            std::string::npos) << text;
  EXPECT_EQ(DiffToJson(*diff)["not_selected"].size(), 3u);
}

TEST(DiffTest, ACheckTheNewRunSelectedButLacksStillRegresses) {
  json full = Report("a", {FamilyCheck("fs.read.denied:/etc/shadow", "fs.read", "pass"),
                           FamilyCheck("fs.read.denied:/root", "fs.read", "pass")});
  json narrower = Report("a", {FamilyCheck("fs.read.denied:/etc/shadow", "fs.read", "pass")});
  narrower["suites"] = {"default"};
  narrower["selection"] = {{"families", {"fs.read"}}, {"check", json::array()}, {"skip", json::array()}};
  StatusOr<ReportDiff> diff = DiffReports(full, narrower);
  ASSERT_TRUE(diff.ok());
  EXPECT_TRUE(diff->not_selected.empty());
  EXPECT_EQ(diff->regressions, 1) << "selected, yet gone: no longer guarded";
  // An older report without a selection: every missing check is a regression, as before.
  narrower.erase("selection");
  EXPECT_EQ(DiffReports(full, narrower)->regressions, 1);
}

}  // namespace
}  // namespace sandprobe
