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
  EXPECT_EQ(g.why, "exit 0: --fail-on none; 1 not gated (--fail-on none)");
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
  EXPECT_EQ(g.why, "exit 0: no fail at or above low; 1 waived");

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
  EXPECT_EQ(Gate(r, At(Severity::kLow)).exit_code, kExitPass);
}

}  // namespace
}  // namespace sandprobe
