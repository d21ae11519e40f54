#include "model/verdict.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

TEST(EvidenceTier, NamesRoundTripStrongestFirst) {
  EXPECT_EQ(EvidenceTierName(kEvidenceTiers[0]), "witnessed");
  EXPECT_EQ(EvidenceTierName(kEvidenceTiers[1]), "measured");
  EXPECT_EQ(EvidenceTierName(kEvidenceTiers[2]), "reported");
  EXPECT_EQ(EvidenceTierName(kEvidenceTiers[3]), "none");
  for (EvidenceTier tier : kEvidenceTiers) EXPECT_EQ(ParseEvidenceTier(EvidenceTierName(tier)), tier);
  EXPECT_EQ(ParseEvidenceTier("seen"), std::nullopt);
}

TEST(EvidenceTier, AVerdictNobodyJudgedRestsOnNothing) {
  Verdict v;
  EXPECT_EQ(v.tier(), EvidenceTier::kNone);
  v.evidence.tier = EvidenceTier::kWitnessed;
  EXPECT_EQ(v.tier(), EvidenceTier::kWitnessed);
}

}  // namespace
}  // namespace sandprobe
