#include "mutate/mutate_report.h"

#include <gtest/gtest.h>

#include "contract/exit_code.h"

namespace sandprobe {
namespace {

MutantResult Mutant(const std::string& name, MutantStatus status, std::vector<std::string> flipped = {},
                    std::string why = "") {
  MutantResult m;
  m.name = name;
  m.description = "how " + name + " weakens";
  m.edit = {{"insert", {{"after", "run"}, {"args", {"--" + name}}}}};
  m.status = status;
  m.flipped = std::move(flipped);
  m.why = std::move(why);
  return m;
}

MutateReport Report(std::vector<MutantResult> mutants) {
  MutateReport r;
  r.tool_version = "0.1";
  r.profile_name = "dock";
  r.profile_path = "sandboxes/dock.json";
  r.policy_name = "tier-low";
  r.operators_path = "sandboxes/mutations/docker.json";
  r.suites = {"default", "resources"};
  r.mutants = std::move(mutants);
  r.phases = {{"default", false, 3, 2.5}, {"resources", true, 2, 4.0}};
  return r;
}

TEST(MutateReportTest, CountsAndScoreLeaveOutWhatCouldNotBeJudged) {
  MutateReport r = Report({Mutant("a", MutantStatus::kKilled, {"priv.seccomp"}), Mutant("b", MutantStatus::kSurvived),
                           Mutant("c", MutantStatus::kKilled, {"x"}), Mutant("d", MutantStatus::kKilled, {"y"}),
                           Mutant("e", MutantStatus::kInvalid, {}, "exit 125"),
                           Mutant("f", MutantStatus::kNotApplicable, {}, "no --pid")});
  EXPECT_EQ(r.total(), 4u);
  EXPECT_EQ(DescribeScore(r), "3/4 (75 %)");
  nlohmann::json j = MutateReportToJson(r);
  EXPECT_EQ(j["schema"], "sandprobe-mutate/1");
  EXPECT_EQ(j["total"], 4);
  EXPECT_EQ(j["killed"], 3);
  EXPECT_EQ(j["survived"], 1);
  EXPECT_EQ(j["invalid"], 1);
  EXPECT_EQ(j["not_applicable"], 1);
  EXPECT_DOUBLE_EQ(j["score"].get<double>(), 0.75);
  EXPECT_EQ(j["mutants"][0]["name"], "a");
  EXPECT_EQ(j["mutants"][0]["killed"], true);
  EXPECT_EQ(j["mutants"][0]["flipped"], nlohmann::json({"priv.seccomp"}));
  EXPECT_EQ(j["mutants"][0]["edit"]["insert"]["after"], "run");
  EXPECT_EQ(j["mutants"][1]["killed"], false);
  EXPECT_EQ(j["mutants"][1]["status"], "survived");
  EXPECT_EQ(j["phases"][1]["exclusive"], true);
  EXPECT_EQ(MutateExitCode(r), kExitFail);
}

TEST(MutateReportTest, NoApplicableMutantHasNoScoreAndProvesNothing) {
  MutateReport r = Report({Mutant("f", MutantStatus::kNotApplicable, {}, "no --pid")});
  EXPECT_EQ(DescribeScore(r), "0/0 (no applicable mutant)");
  EXPECT_TRUE(MutateReportToJson(r)["score"].is_null());
  EXPECT_EQ(MutateExitCode(r), kExitHarness);
}

TEST(MutateReportTest, ExitCodes) {
  EXPECT_EQ(MutateExitCode(Report({Mutant("a", MutantStatus::kKilled, {"x"})})), kExitPass);
  EXPECT_EQ(MutateExitCode(Report({Mutant("a", MutantStatus::kKilled, {"x"}), Mutant("i", MutantStatus::kInvalid)})),
            kExitPass)
      << "an invalid mutant is listed, not a failure of the gate";
  EXPECT_EQ(MutateExitCode(Report({Mutant("a", MutantStatus::kKilled, {"x"}), Mutant("u", MutantStatus::kUnfinished)})),
            kExitHarness);
  MutateReport interrupted = Report({Mutant("a", MutantStatus::kKilled, {"x"})});
  interrupted.interrupted = true;
  EXPECT_EQ(MutateExitCode(interrupted), kExitHarness);
}

TEST(MutateReportTest, MarkdownAndConsoleListSurvivorsFirstWithWhy) {
  MutateReport r = Report({Mutant("a", MutantStatus::kKilled, {"priv.seccomp"}),
                           Mutant("b", MutantStatus::kSurvived, {}, "no check moved the permissive way in default")});
  std::string md = RenderMutateMarkdown(r);
  EXPECT_NE(md.find("Mutation score **1/2 (50 %)**"), std::string::npos) << md;
  EXPECT_LT(md.find("| `b` | survived | no check moved"), md.find("| `a` | killed | `priv.seccomp` |")) << md;
  std::string console = RenderMutateConsole(r);
  EXPECT_EQ(console.substr(0, console.find('\n')),
            "dock: mutation score 1/2 (50 %) (1 killed, 1 survived, 0 invalid, 0 unfinished, 0 equivalent, 0 not applicable) in 0.0 s");
  EXPECT_LT(console.find("survived"), console.find("killed         a")) << console;
  EXPECT_NE(console.find("phase resources: 2 run(s) one at a time in 4.0 s"), std::string::npos) << console;
}

}  // namespace

TEST(MutateReportTest, AnEquivalentMutantIsShownAndLeftOutOfTheScore) {
  MutateReport r = Report({Mutant("a", MutantStatus::kKilled, {"priv.seccomp"}),
                           Mutant("e", MutantStatus::kEquivalent, {}, "only in the bounding set")});
  EXPECT_EQ(r.total(), 1u);
  EXPECT_EQ(DescribeScore(r), "1/1 (100 %)");
  nlohmann::json j = MutateReportToJson(r);
  EXPECT_EQ(j["equivalent"], 1);
  EXPECT_EQ(j["total"], 1);
  EXPECT_EQ(j["mutants"][1]["status"], "equivalent");
  EXPECT_EQ(j["mutants"][1]["why"], "only in the bounding set");
  EXPECT_EQ(MutateExitCode(r), kExitPass);
  EXPECT_NE(RenderMutateMarkdown(r).find("| `e` | equivalent | only in the bounding set |"), std::string::npos);
  EXPECT_NE(RenderMutateMarkdown(r).find("1 equivalent (not in the score)"), std::string::npos);
}

}  // namespace sandprobe
