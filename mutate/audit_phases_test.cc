#include "mutate/audit_phases.h"

#include <gtest/gtest.h>

#include "families/plan.h"

namespace sandprobe {
namespace {

std::string Suite(const std::string& name) { return SANDPROBE_SOURCE_DIR "/suites/" + name + ".json"; }

TEST(AuditPhasesTest, SharedSuitesMergeFirstAndEachExclusiveSuiteStandsAlone) {
  StatusOr<std::vector<AuditPhase>> phases =
      PlanAuditPhases({Suite("default"), Suite("persistence"), Suite("network"), Suite("resources"), Suite("privileges")},
                      KnownFamilies());
  ASSERT_TRUE(phases.ok()) << phases.status().message();
  ASSERT_EQ(phases->size(), 3u);
  EXPECT_EQ((*phases)[0].suite.name, "default+network+privileges");
  EXPECT_FALSE((*phases)[0].exclusive);
  EXPECT_EQ((*phases)[1].suite.name, "persistence");
  EXPECT_TRUE((*phases)[1].exclusive);
  EXPECT_EQ((*phases)[2].suite.name, "resources");
  EXPECT_TRUE((*phases)[2].exclusive);
  for (const AuditPhase& phase : *phases) {
    EXPECT_FALSE(phase.measures) << "known only once the profile's run is in";
    EXPECT_FALSE(phase.baseline.has_value());
  }
}

TEST(AuditPhasesTest, OnlyExclusiveSuitesHaveNoSharedPhase) {
  StatusOr<std::vector<AuditPhase>> phases = PlanAuditPhases({Suite("resources")}, KnownFamilies());
  ASSERT_TRUE(phases.ok()) << phases.status().message();
  ASSERT_EQ(phases->size(), 1u);
  EXPECT_TRUE((*phases)[0].exclusive);
  EXPECT_FALSE(PlanAuditPhases({"/nonexistent/suite.json"}, KnownFamilies()).ok());
}

TEST(AuditPhasesTest, ARunMeasuresLimitsWhenACheckHasATolerance) {
  Verdict read;
  read.check.id = "fs.read.denied:/etc/shadow";
  Verdict pids;
  pids.check.id = "limits.pids.max:50";
  pids.check.tolerance = Tolerance{.declared = 50};
  EXPECT_FALSE(MeasuresLimits({read}));
  EXPECT_TRUE(MeasuresLimits({read, pids}));
}

}  // namespace
}  // namespace sandprobe
