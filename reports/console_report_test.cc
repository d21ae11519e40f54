#include "reports/console_report.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <utf8cpp/utf8.h>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using report_fixture::BwrapReport;
using report_fixture::HardenedReport;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(text.substr(start, nl - start));
  }
  return lines;
}

TEST(RenderConsole, ListsEachCheckThatDidNotPassWithItsRemediation) {
  const std::string out = RenderConsole(HardenedReport(), /*color=*/false);
  const std::vector<std::string> lines = Lines(out);
  ASSERT_GE(lines.size(), 12u);
  EXPECT_EQ(lines[0], "sandprobe run r-20261120-0001: profile docker-hardened, policy tier-low, "
                      "suite default");
  // Fails first (worst first), then errors, then inconclusive: a headline, what was observed
  // and expected, the fix.
  EXPECT_EQ(lines[1], "FAIL         critical fs.read.denied:host-canary  too-permissive, witnessed");
  EXPECT_THAT(lines[2], HasSubstr("    observed read ok"));
  EXPECT_THAT(lines[2], HasSubstr("; expected read denied"));
  EXPECT_EQ(lines[3], "    fix: mount the host canary directory out of the sandbox");
  EXPECT_EQ(lines[4], "FAIL         medium   fs.write.allowed:/tmp  too-restrictive, reported");
  EXPECT_EQ(lines[6], "    fix: add --tmpfs /tmp to the profile");
  EXPECT_EQ(lines[7], "ERROR        high     env.secret.hidden");
  EXPECT_THAT(out, HasSubstr("INCONCLUSIVE high     net.egress.denied:tcp\n"));
  EXPECT_THAT(out, HasSubstr("INCONCLUSIVE high     net.egress.denied:dns\n"));
  EXPECT_THAT(out, Not(HasSubstr("fs.read.allowed:/workspace/a")));  // passes are not listed
  // A skip is not a line of its own: its reason is, naming it.
  EXPECT_THAT(out, HasSubstr("SKIP           1 check: not applicable: udp listener disabled "
                             "(net.egress.denied:udp)\n"));
}

TEST(RenderConsole, AnErrorSaysWhatFailedAndWhatToDoNotTheLeaksFix) {
  const std::string out = RenderConsole(HardenedReport(), /*color=*/false);
  EXPECT_THAT(out, HasSubstr("ERROR        high     env.secret.hidden\n"
                             "    could not judge: launch failed: exit 125\n"
                             "    launch L2 (docker) docker run (instance sp-r-20261120-0001-2): exit 125; "
                             "stderr: Unable to find image 'sandprobe/agent:latest' locally\n"
                             "    what to do: fix the cause above (the JSON report has launch L2's argv"));
  // The error's remediation is a leak's fix; an error judged nothing.
  EXPECT_THAT(out, Not(HasSubstr("check that the image exists")));
}

TEST(RenderConsole, ErrorsWithOneCauseAreOneEntry) {
  RunReport r = HardenedReport();
  Verdict error = *std::find_if(r.verdicts.begin(), r.verdicts.end(),
                                [](const Verdict& v) { return v.outcome == Outcome::kError; });
  for (int i = 0; i < 40; ++i) {
    error.check.id = "priv.case" + std::to_string(i);
    r.verdicts.push_back(error);
  }
  const std::string out = RenderConsole(r, /*color=*/false);
  EXPECT_THAT(out, HasSubstr("ERROR        high     env.secret.hidden  (and 40 more with this cause: "
                             "priv.case0, priv.case1, priv.case2 and 37 more)\n"));
  EXPECT_EQ(Lines(out).size(), Lines(RenderConsole(HardenedReport(), false)).size());
  EXPECT_THAT(out, HasSubstr("ERROR           41\n"));  // the counts stay per check
}

TEST(RenderConsole, FindingsComeWorstFirst) {
  RunReport r = HardenedReport();
  Verdict low = *std::find_if(r.verdicts.begin(), r.verdicts.end(),
                              [](const Verdict& v) { return v.outcome == Outcome::kFail; });
  low.check.id = "priv.namespace:uts";
  low.check.severity = Severity::kLow;
  low.check.family = "priv.namespace";
  r.verdicts.insert(r.verdicts.begin(), low);
  const std::string out = RenderConsole(r, /*color=*/false);
  const auto critical = out.find("FAIL         critical"), medium = out.find("FAIL         medium");
  const auto lowest = out.find("FAIL         low      priv.namespace:uts");
  ASSERT_NE(lowest, std::string::npos);
  EXPECT_LT(critical, medium);
  EXPECT_LT(medium, lowest);
}

TEST(RenderConsole, LinesAreCutToTheWidthAndTheEndSaysWhereTheWholeTextIs) {
  const std::string whole = RenderConsole(HardenedReport(), ConsoleLayout{});
  EXPECT_THAT(whole, Not(HasSubstr("lines cut at")));
  const std::string cut = RenderConsole(HardenedReport(), ConsoleLayout{.width = 60});
  for (const std::string& line : Lines(cut)) {
    if (line.starts_with("(lines cut at")) continue;
    EXPECT_LE(utf8::unchecked::distance(line.begin(), line.end()), 60) << line;
  }
  EXPECT_THAT(cut, HasSubstr("\u2026\n"));
  EXPECT_THAT(cut, HasSubstr("(lines cut at 60 columns: the reports hold the whole text; COLUMNS=0 prints it here)\n"));
  // Colour codes do not count as columns: the same lines, coloured, are cut at the same place.
  const std::string colored = RenderConsole(HardenedReport(), ConsoleLayout{.color = true, .width = 60});
  EXPECT_THAT(colored, HasSubstr("\x1b[1;31mFAIL        \x1b[0m critical fs.read.denied:host-canary  too-permi\u2026\n"));
}

TEST(RenderConsole, EndsWithACountTable) {
  const std::string out = RenderConsole(HardenedReport(), /*color=*/false);
  EXPECT_THAT(out, HasSubstr("\nOUTCOME      COUNT\n"
                             "PASS             1\n"
                             "  witnessed      0\n"
                             "  measured       0\n"
                             "  reported       1\n"
                             "FAIL             2\n"
                             "  critical       1\n"
                             "  medium         1\n"
                             "INCONCLUSIVE     2\n"
                             "ERROR            1\n"
                             "SKIP             1\n"
                             "TOTAL            7\n"));
}

TEST(RenderConsole, WithoutColorHasNoEscapeEvenFromHostileProbeText) {
  // The leak's observed text holds CSI and OSC sequences, NUL and a lone ESC.
  const std::string out = RenderConsole(HardenedReport(), /*color=*/false);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\0'), std::string::npos);
  EXPECT_EQ(out.find('\x07'), std::string::npos);
  EXPECT_THAT(out, HasSubstr("stdout: red plain  after-osc"));
}

TEST(RenderConsole, HostileTextStaysOnOneLine) {
  // HostileBytes() holds "\n" and "\r\n"; the check must still be one line.
  const std::vector<std::string> lines = Lines(RenderConsole(HardenedReport(), false));
  EXPECT_THAT(lines[4], HasSubstr("fs.write.allowed:/tmp"));
}

TEST(RenderConsole, ColorOnlyWhenAsked) {
  const std::string out = RenderConsole(HardenedReport(), /*color=*/true);
  EXPECT_THAT(out, HasSubstr("\x1b[1;31mFAIL"));
  EXPECT_THAT(out, HasSubstr("\x1b[0m"));
  EXPECT_THAT(out, Not(HasSubstr("\x1b]")));     // the probe's OSC is still stripped
  EXPECT_THAT(out, Not(HasSubstr("\x1b[1;31mred")));  // and its own colours too
}

TEST(RenderConsole, SaysWhenTheRunWasInterrupted) {
  EXPECT_THAT(RenderConsole(BwrapReport(), false), HasSubstr("interrupted:"));
  EXPECT_THAT(RenderConsole(HardenedReport(), false), Not(HasSubstr("interrupted:")));
}

TEST(RenderConsole, WarnsOncePerSuspiciousProgram) {
  RunReport r = HardenedReport();
  const std::string sha = "ab12cd34ef56" + std::string(52, '0');
  for (LaunchRecord& l : r.launches) {  // every launch ran the same forged env
    l.executable = "/tmp/evil/env";
    l.executable_sha256 = sha;
    l.executable_warning = "in a world-writable directory /tmp/evil";
  }
  LaunchRecord clean;
  clean.executable = "/usr/bin/docker";
  clean.executable_sha256 = std::string(64, 'f');
  r.launches.push_back(clean);
  LaunchRecord escape;  // a path is text from the host, but still never drives the terminal
  escape.executable = "/tmp/x\x1b[2J/env";
  escape.executable_warning = "not hashed: open(\"/tmp/x/env\"): EACCES";
  r.launches.push_back(escape);
  const std::string out = RenderConsole(r, /*color=*/false);
  const std::vector<std::string> lines = Lines(out);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1], "warning: launches ran /tmp/evil/env (sha256 ab12cd34ef56\u2026): in a "
                      "world-writable directory /tmp/evil");
  EXPECT_EQ(lines[2], "warning: launches ran /tmp/x/env (no sha256): not hashed: "
                      "open(\"/tmp/x/env\"): EACCES");
  EXPECT_THAT(lines[3], HasSubstr("FAIL"));
  EXPECT_THAT(out, Not(HasSubstr("/usr/bin/docker")));
  EXPECT_THAT(RenderConsole(HardenedReport(), false), Not(HasSubstr("warning:")));
}

// An alias fail for `v`'s file through `variant`.
Verdict AliasOf(const Verdict& v, const std::string& variant) {
  Verdict alias = v;
  alias.check.family = "fs.alias";
  alias.check.variant = variant;
  alias.check.id = "fs.alias.denied:" + v.check.target + "[" + variant + "]";
  return alias;
}

Verdict* Find(RunReport& r, const std::string& id) {
  for (Verdict& v : r.verdicts) {
    if (v.check.id == id) return &v;
  }
  return nullptr;
}

TEST(RenderConsole, OneLeakedFileIsOneLineWithItsAliases) {
  RunReport r = HardenedReport();
  const Verdict* leak = Find(r, "fs.read.denied:host-canary");
  ASSERT_NE(leak, nullptr);
  ASSERT_EQ(leak->check.target, "{host_canary}");
  const Verdict read = *leak;
  for (const char* variant : {"symlink", "dotdot", "proc_root"}) r.verdicts.push_back(AliasOf(read, variant));
  const std::string out = RenderConsole(r, /*color=*/false);
  EXPECT_THAT(out, HasSubstr("fs.read.denied:host-canary  too-permissive, witnessed  "
                             "(also through 3 more ways: symlink, dotdot, proc_root)\n"));
  EXPECT_THAT(out, Not(HasSubstr("FAIL         critical fs.alias.denied")));
  // The counts stay per check.
  EXPECT_THAT(out, HasSubstr("FAIL             5\n"));
}

TEST(RenderConsole, EverySkipReasonIsShownOnceWithItsChecks) {
  RunReport r = HardenedReport();
  Verdict skip;
  skip.outcome = Outcome::kSkip;
  skip.observed = "backend docker unavailable; install: apt-get install docker.io";
  for (int i = 0; i < 5; ++i) {
    skip.check.id = "net.case" + std::to_string(i);
    r.verdicts.push_back(skip);
  }
  const std::string out = RenderConsole(r, /*color=*/false);
  EXPECT_THAT(out, HasSubstr("SKIP           5 checks: backend docker unavailable; install: apt-get "
                             "install docker.io (net.case0, net.case1, net.case2 and 2 more)\n"));
  // The fixture's own skip, with its own reason.
  EXPECT_THAT(out, HasSubstr("SKIP           1 check: "));
}

TEST(RenderConsole, WaivedFailsAreCountedWhenTheRunHadWaivers) {
  RunReport r = HardenedReport();
  EXPECT_THAT(RenderConsole(r, false), Not(HasSubstr("waived")));
  r.waivers = WaiverSummary{.source_path = "w.json"};
  EXPECT_THAT(RenderConsole(r, false), HasSubstr("  medium         1\n  waived         0\nINCONCLUSIVE"));
  Find(r, "fs.read.denied:host-canary")->waiver =
      AppliedWaiver{"fs.read.*", "tracked in SEC-12", "2027-01-31", "w.json:3:5", false};
  EXPECT_THAT(RenderConsole(r, false), HasSubstr("  medium         1\n  waived         1\n"));
}

TEST(RenderConsole, LongTextIsCut) {
  const std::string out = RenderConsole(BwrapReport(), false);
  EXPECT_LT(out.size(), 4096u);
  EXPECT_THAT(out, HasSubstr("bytes truncated]"));
}

}  // namespace
}  // namespace sandprobe
