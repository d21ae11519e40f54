#include "mutate/mutant_setup.h"

#include <gtest/gtest.h>

#include "launch/fake_launcher.h"
#include "load/json_document.h"

namespace sandprobe {
namespace {

using testing::Exit;
using testing::FakeLauncher;

Profile DockerProfile() {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(R"({
    "name": "dock", "description": "d", "backend": "docker", "lifecycle": "oneshot", "injection": "image",
    "probe_path": "/opt/p", "run": ["docker", "run", "--cap-drop", "ALL", "image", "{probe}", "{probe_args...}"]})",
                                                   "/data/sandboxes/dock.json");
  EXPECT_TRUE(doc.ok());
  StatusOr<Profile> profile = ParseProfile(*doc);
  EXPECT_TRUE(profile.ok()) << profile.status().message();
  return *profile;
}

MutationOperatorFile Operators(std::vector<Backend> backends, std::vector<MutationOperator> ops) {
  return MutationOperatorFile{.name = "ops", .description = "d", .source_path = "ops.json", .backends = std::move(backends),
                              .operators = std::move(ops)};
}

MutationOperator Op(const std::string& name, std::vector<EditStep> steps) {
  MutationOperator op;
  op.name = name;
  op.description = "why";
  op.steps = std::move(steps);
  op.edit = {{"remove", {{"flag", "--cap-drop"}}}};
  return op;
}

TEST(MutantSetupTest, AnApplicableOperatorGivesAProfileToAudit) {
  FakeLauncher launcher;
  HostCommands host(launcher);
  MutationOperator op = Op("caps", {RemoveFlag{"--cap-drop", 1, ""}});
  MutantSetup m = SetUpMutant(DockerProfile(), Operators({Backend::kDocker}, {op}), op, host);
  EXPECT_FALSE(m.decided.has_value()) << m.result.why;
  ASSERT_TRUE(m.profile.has_value());
  EXPECT_EQ(m.profile->name, "dock.caps");
  EXPECT_EQ(m.profile->run, (std::vector<std::string>{"docker", "run", "image", "{probe}", "{probe_args...}"}));
  EXPECT_EQ(m.result.applied, (std::vector<std::string>{"removed --cap-drop ALL"}));
  EXPECT_EQ(m.result.edit, op.edit);
  EXPECT_TRUE(launcher.specs.empty()) << "no host command asked for, none run";
}

TEST(MutantSetupTest, AnotherClassOrAnEditThatDoesNotApplyIsNotApplicable) {
  FakeLauncher launcher;
  HostCommands host(launcher);
  MutationOperator op = Op("caps", {RemoveFlag{"--cap-drop", 1, ""}});
  MutantSetup other = SetUpMutant(DockerProfile(), Operators({Backend::kBwrap, Backend::kFirejail}, {op}), op, host);
  EXPECT_EQ(other.decided, MutantStatus::kNotApplicable);
  EXPECT_EQ(other.result.why, "the operators are for bwrap, firejail profiles; this one's backend is docker");
  EXPECT_FALSE(other.profile.has_value());
  MutationOperator absent = Op("pids", {RemoveFlag{"--pids-limit", 1, ""}});
  MutantSetup none = SetUpMutant(DockerProfile(), Operators({Backend::kDocker}, {absent}), absent, host);
  EXPECT_EQ(none.decided, MutantStatus::kNotApplicable);
  EXPECT_EQ(none.result.why, "no --pids-limit in run");
}

TEST(MutantSetupTest, AFailedRequirementIsNotApplicableAndSaysWhichCommand) {
  FakeLauncher launcher;
  launcher.replies.push_back(Exit(1));
  HostCommands host(launcher);
  MutationOperator op = Op("apparmor", {InsertArgs{"run", false, {"--security-opt", "apparmor=unconfined"}}});
  op.requirements = {{"sh", "-c", "docker info | grep -q apparmor"}};
  MutantSetup m = SetUpMutant(DockerProfile(), Operators({Backend::kDocker}, {op}), op, host);
  EXPECT_EQ(m.decided, MutantStatus::kNotApplicable);
  EXPECT_EQ(m.result.why, "requires sh -c 'docker info | grep -q apparmor': exit 1");
}

TEST(MutantSetupTest, HostValuesAreAskedOnceAndJoinTheMutantsVars) {
  FakeLauncher launcher;
  launcher.replies.push_back(Exit(0, "110\nignored\n"));
  HostCommands host(launcher);
  MutationOperator op = Op("sock", {InsertArgs{"run", false, {"--group-add", "{gid}"}}});
  op.host_values = {{"gid", {"stat", "-c", "%g", "/var/run/docker.sock"}}};
  MutationOperatorFile file = Operators({Backend::kDocker}, {op});
  MutantSetup first = SetUpMutant(DockerProfile(), file, op, host);
  MutantSetup second = SetUpMutant(DockerProfile(), file, op, host);
  ASSERT_TRUE(first.profile.has_value()) << first.result.why;
  EXPECT_EQ(first.profile->vars.at("gid"), "110");
  ASSERT_TRUE(second.profile.has_value());
  EXPECT_EQ(launcher.specs.size(), 1u) << "the same command is run once per session";
  FakeLauncher failing;
  failing.replies.push_back(Exit(1, "", "stat: No such file"));
  HostCommands failing_host(failing);
  MutantSetup none = SetUpMutant(DockerProfile(), file, op, failing_host);
  EXPECT_EQ(none.decided, MutantStatus::kNotApplicable);
  EXPECT_EQ(none.result.why, "host value gid: stat -c %g /var/run/docker.sock: exit 1");
}

TEST(MutantSetupTest, AMutantThatDoesNotLoadAsAProfileIsInvalid) {
  FakeLauncher launcher;
  HostCommands host(launcher);
  MutationOperator op = Op("bad", {InsertArgs{"run", false, {"{undeclared}"}}});
  MutantSetup m = SetUpMutant(DockerProfile(), Operators({Backend::kDocker}, {op}), op, host);
  EXPECT_EQ(m.decided, MutantStatus::kInvalid);
  EXPECT_NE(m.result.why.find("unknown placeholder {undeclared}"), std::string::npos) << m.result.why;
}

}  // namespace

// An equivalence claim holds only while the profile keeps what the proof rests on.
TEST(MutantSetupTest, AnEquivalenceClaimHoldsOnlyWhileItsArgumentsStand) {
  FakeLauncher launcher;
  HostCommands host(launcher);
  MutationOperator op = Op("caps", {InsertArgs{"run", false, {"--cap-add", "NET_ADMIN"}}});
  op.equivalences = {{.profile = "dock", .holds_while = {{"--cap-drop", "ALL"}}, .why = "only bounding", .where = "ops.json:3:4"}};
  MutantSetup held = SetUpMutant(DockerProfile(), Operators({Backend::kDocker}, {op}), op, host);
  EXPECT_FALSE(held.decided.has_value()) << "a claimed mutant is still audited: a kill overrides the claim";
  ASSERT_TRUE(held.profile.has_value());
  EXPECT_EQ(held.equivalent_because, std::optional<std::string>("only bounding"));
  EXPECT_EQ(held.claim_lapsed, "");

  op.equivalences[0].holds_while = {{"--cap-drop", "ALL"}, {"--user", "1000:1000"}};
  MutantSetup lapsed = SetUpMutant(DockerProfile(), Operators({Backend::kDocker}, {op}), op, host);
  EXPECT_FALSE(lapsed.equivalent_because.has_value());
  EXPECT_EQ(lapsed.claim_lapsed, "the equivalence claim at ops.json:3:4 does not hold: the profile's argv lacks \"--user 1000:1000\"");

  // In a row, not scattered: "--cap-drop" then "ALL" stand together, "ALL --cap-drop" does not.
  op.equivalences[0].holds_while = {{"ALL", "--cap-drop"}};
  EXPECT_FALSE(SetUpMutant(DockerProfile(), Operators({Backend::kDocker}, {op}), op, host).equivalent_because);
  // Another profile's claim says nothing about this one.
  op.equivalences[0] = {.profile = "other", .holds_while = {{"--cap-drop"}}, .why = "w", .where = "x"};
  MutantSetup other = SetUpMutant(DockerProfile(), Operators({Backend::kDocker}, {op}), op, host);
  EXPECT_FALSE(other.equivalent_because.has_value());
  EXPECT_EQ(other.claim_lapsed, "");
}

}  // namespace sandprobe
