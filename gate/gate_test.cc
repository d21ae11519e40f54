#include "gate/gate.h"

#include <gtest/gtest.h>

#include "contract/exit_code.h"

namespace sandprobe {
namespace {

Verdict Make(Outcome outcome, Severity severity = Severity::kHigh) {
  Verdict v;
  v.check.id = "c";
  v.check.severity = severity;
  v.outcome = outcome;
  return v;
}

FailOn At(Severity s) { return FailOn{s}; }
const FailOn kNone{std::nullopt};

TEST(GateTest, ParsesSeveritiesAndNone) {
  EXPECT_EQ(ParseFailOn("low")->threshold, Severity::kLow);
  EXPECT_FALSE(ParseFailOn("none")->threshold);
  EXPECT_FALSE(ParseFailOn("never"));
}

TEST(GateTest, FailAtOrAboveThresholdIsExit1AndSaysWhy) {
  RunReport r;
  r.verdicts = {Make(Outcome::kFail, Severity::kHigh), Make(Outcome::kFail, Severity::kLow)};
  GateResult g = Gate(r, At(Severity::kMedium));
  EXPECT_EQ(g.exit_code, kExitFail);
  EXPECT_EQ(g.why, "exit 1: 1 fail(s) at or above medium; 1 below --fail-on medium");
  EXPECT_EQ(Gate(r, At(Severity::kCritical)).exit_code, kExitPass);
}

TEST(GateTest, NoneReportsWithoutGatingButHarnessErrorsStill3) {
  RunReport r;
  r.verdicts = {Make(Outcome::kFail, Severity::kCritical)};
  GateResult g = Gate(r, kNone);
  EXPECT_EQ(g.exit_code, kExitPass);
  EXPECT_EQ(g.why, "exit 0: --fail-on none (1 judged); 1 not gated (--fail-on none)");
  r.verdicts.push_back(Make(Outcome::kError));
  EXPECT_EQ(Gate(r, kNone).exit_code, kExitHarness);
}

TEST(GateTest, AWaivedFailDoesNotGateButAnExpiredWaiverDoes) {
  RunReport r;
  Verdict waived = Make(Outcome::kFail, Severity::kCritical);
  waived.waiver = AppliedWaiver{"c", "accepted", "2027-01-31", "w.json:1:1", false};
  r.verdicts = {waived, Make(Outcome::kPass)};
  r.waivers = WaiverSummary{"w.json", {}, {}};
  GateResult g = Gate(r, At(Severity::kLow));
  EXPECT_EQ(g.exit_code, kExitPass);
  EXPECT_EQ(g.why, "exit 0: no fail at or above low (2 judged); 1 waived");

  r.verdicts[0].waiver->expired = true;
  r.waivers->expired = {"w.json:1:1: waiver for c expired on 2027-01-31 (accepted)"};
  g = Gate(r, At(Severity::kLow));
  EXPECT_EQ(g.exit_code, kExitFail);
  EXPECT_EQ(g.why, "exit 1: 1 fail(s) at or above low and 1 expired waiver(s) (renew or remove them)");
}

TEST(GateTest, AnExpiredWaiverAloneFailsTheGate) {
  RunReport r;
  r.verdicts = {Make(Outcome::kPass)};
  r.waivers = WaiverSummary{"w.json", {"w.json:1:1: waiver for x expired on 2026-01-01 (r)"}, {}};
  GateResult g = Gate(r, At(Severity::kLow));
  EXPECT_EQ(g.exit_code, kExitFail);
  EXPECT_EQ(g.why, "exit 1: 1 expired waiver(s) (renew or remove them)");
}

TEST(GateTest, ErrorsWithoutFailsAre3AndAllPassIs0) {
  RunReport r;
  r.verdicts = {Make(Outcome::kPass), Make(Outcome::kInconclusive)};
  EXPECT_EQ(Gate(r, At(Severity::kLow)).exit_code, kExitHarness);
  r.verdicts.pop_back();
  r.verdicts.push_back(Make(Outcome::kSkip));
  GateResult g = Gate(r, At(Severity::kLow));
  EXPECT_EQ(g.exit_code, kExitPass);
  EXPECT_EQ(g.judged, 1);
  EXPECT_EQ(g.why, "exit 0: no fail at or above low (1 judged); 1 skipped (see the SKIP lines)");
}

// A gate that checked nothing is not green: every check skipped (or none planned) is exit 3,
// naming the first skip's reason, with --fail-on none too.
TEST(GateTest, NothingJudgedIs3WhateverTheSkipsSay) {
  RunReport r;
  Verdict skip = Make(Outcome::kSkip);
  skip.observed = "not probed in run abc";
  r.verdicts = {skip, skip};
  for (FailOn fail_on : {At(Severity::kLow), kNone}) {
    GateResult g = Gate(r, fail_on);
    EXPECT_EQ(g.exit_code, kExitHarness);
    EXPECT_EQ(g.judged, 0);
    EXPECT_FALSE(g.backend_skipped);
    EXPECT_EQ(g.why, "exit 3: nothing was judged: 2 of 2 check(s) skipped: not probed in run abc");
  }
  r.verdicts.clear();
  EXPECT_EQ(Gate(r, At(Severity::kLow)).why, "exit 3: nothing was judged: 0 of 0 check(s) skipped: the run has no checks");
}

// --allow-missing-backend: the backend's skips are named, pass the gate when something else
// was judged, and mark a run that judged nothing for the matrix.
TEST(GateTest, ABackendSkippedByTheOptOutIsNamed) {
  RunReport r;
  r.backend_skipped = "backend docker unavailable for profile d: ...";
  r.verdicts = {Make(Outcome::kSkip)};
  GateResult g = Gate(r, At(Severity::kLow));
  EXPECT_EQ(g.exit_code, kExitHarness);
  EXPECT_TRUE(g.backend_skipped);
  EXPECT_EQ(g.why, "exit 3: nothing was judged: 1 of 1 check(s) skipped: backend docker unavailable for profile d: ...");
  r.verdicts.push_back(Make(Outcome::kPass));
  g = Gate(r, At(Severity::kLow));
  EXPECT_EQ(g.exit_code, kExitPass);
  EXPECT_FALSE(g.backend_skipped);
  EXPECT_EQ(g.why, "exit 0: no fail at or above low (1 judged); 1 skipped: the backend is unavailable and "
                   "--allow-missing-backend lets that through");
}

// The errors' common reason is on the last line: a backend gone explains every error.
TEST(GateTest, ErrorsNameTheirCommonReason) {
  RunReport r;
  Verdict e = Make(Outcome::kError);
  e.observed = "backend bwrap unavailable";
  Verdict other = Make(Outcome::kInconclusive);
  other.observed = "no control";
  r.verdicts = {e, e, other};
  EXPECT_EQ(Gate(r, At(Severity::kLow)).why, "exit 3: 3 check(s) error or inconclusive; 2 of them: backend bwrap unavailable");
  r.verdicts = {e, other, Make(Outcome::kPass)};
  EXPECT_EQ(Gate(r, At(Severity::kLow)).why, "exit 3: 2 check(s) error or inconclusive; 1 of them: backend bwrap unavailable");
}

}  // namespace
}  // namespace sandprobe
