#include "mutate/profile_mutation.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using Argv = std::vector<std::string>;

const nlohmann::json kDocker = nlohmann::json::parse(R"({
  "name": "dock", "description": "d", "backend": "docker", "policy": "../policies/tier-low.json",
  "lifecycle": "oneshot", "injection": "image", "probe_path": "/opt/sandprobe/sandprobe-probe",
  "run": ["docker", "run", "--network", "none", "--memory", "512m", "--memory-swap=512m",
          "--tmpfs", "/tmp:size=100m,mode=1777", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
          "--security-opt", "label=disable", "--read-only", "--user", "1000:1000",
          "image", "{probe}", "{probe_args...}"]})");

const nlohmann::json kBwrap = nlohmann::json::parse(R"({
  "name": "bw", "description": "d", "backend": "bwrap", "lifecycle": "oneshot", "injection": "image",
  "probe_path": "/opt/p", "environment": "empty",
  "run": ["setpriv", "--reuid", "65534", "bwrap", "--unshare-all", "--clearenv", "--tmpfs", "/tmp",
          "--remount-ro", "/", "{probe}", "{probe_args...}"]})");

MutationOperator Op(std::vector<EditStep> steps) {
  MutationOperator op;
  op.name = "op";
  op.steps = std::move(steps);
  return op;
}

ProfileMutation Mutate(const nlohmann::json& profile, std::vector<EditStep> steps,
                       const std::map<std::string, std::string>& host_values = {}) {
  StatusOr<ProfileMutation> m = MutateProfileJson(profile, Op(std::move(steps)), host_values);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ProfileMutation{};
}

Argv RunArgv(const ProfileMutation& m) { return m.profile.is_null() ? Argv{} : m.profile["run"].get<Argv>(); }

// How often `arg` is in the mutant's run.
long Count(const ProfileMutation& m, const std::string& arg) {
  Argv run = RunArgv(m);
  return std::count(run.begin(), run.end(), arg);
}

// run[from, from + n).
Argv Slice(const ProfileMutation& m, std::size_t from, std::size_t n) {
  Argv run = RunArgv(m);
  return Argv(run.begin() + static_cast<long>(from), run.begin() + static_cast<long>(from + n));
}

TEST(ProfileMutationTest, InsertsAfterOrBeforeTheFirstAnchor) {
  ProfileMutation m = Mutate(kDocker, {InsertArgs{"run", false, {"--pid", "host"}}});
  EXPECT_EQ(Slice(m, 0, 4), (Argv{"docker", "run", "--pid", "host"}));
  EXPECT_EQ(m.applied, (std::vector<std::string>{"inserted --pid host after run"}));
  ProfileMutation before = Mutate(kBwrap, {InsertArgs{"{probe}", true, {"--bind", "/tmp", "/tmp"}}});
  Argv run = RunArgv(before);
  EXPECT_EQ(Argv(run.end() - 5, run.end()), (Argv{"--bind", "/tmp", "/tmp", "{probe}", "{probe_args...}"}));
}

TEST(ProfileMutationTest, AnInsertWithoutItsAnchorOrAlreadyThereDoesNotApply) {
  ProfileMutation m = Mutate(kBwrap, {InsertArgs{"run", false, {"--pid", "host"}}});
  EXPECT_TRUE(m.profile.is_null());
  EXPECT_EQ(m.not_applicable, "no \"run\" in run");
  ProfileMutation there = Mutate(kDocker, {InsertArgs{"run", false, {"--cap-drop", "ALL"}}});
  EXPECT_TRUE(there.profile.is_null());
  EXPECT_EQ(there.not_applicable, "run already has --cap-drop ALL");
}

TEST(ProfileMutationTest, RemovesAFlagWithItsValuesInBothForms) {
  ProfileMutation caps = Mutate(kDocker, {RemoveFlag{"--cap-drop", 1, "[Aa][Ll][Ll]"}});
  EXPECT_EQ(Count(caps, "ALL"), 0);
  EXPECT_EQ(Count(caps, "--cap-drop"), 0);
  EXPECT_EQ(caps.applied, (std::vector<std::string>{"removed --cap-drop ALL"}));
  ProfileMutation swap = Mutate(kDocker, {RemoveFlag{"--memory-swap", 1, ""}, RemoveFlag{"--memory", 1, ""}});
  for (const std::string& arg : RunArgv(swap)) EXPECT_EQ(arg.find("--memory"), std::string::npos) << arg;
  EXPECT_EQ(Count(swap, "512m"), 0);
  EXPECT_EQ(swap.applied, (std::vector<std::string>{"removed --memory-swap=512m", "removed --memory 512m"}));
  ProfileMutation flag = Mutate(kDocker, {RemoveFlag{"--read-only", 0, ""}});
  EXPECT_EQ(Count(flag, "--read-only"), 0);
  EXPECT_EQ(RunArgv(flag).size(), kDocker["run"].size() - 1);
}

TEST(ProfileMutationTest, RemoveMatchesOnlyTheValuesItsGlobNames) {
  ProfileMutation m = Mutate(kDocker, {RemoveFlag{"--security-opt", 1, "no-new-privileges*"}});
  Argv run = RunArgv(m);
  EXPECT_EQ(std::count(run.begin(), run.end(), "no-new-privileges"), 0);
  EXPECT_EQ(std::count(run.begin(), run.end(), "label=disable"), 1);  // the other --security-opt stays
  ProfileMutation none = Mutate(kDocker, {RemoveFlag{"--security-opt", 1, "seccomp=*"}});
  EXPECT_TRUE(none.profile.is_null());
  EXPECT_EQ(none.not_applicable, "no --security-opt seccomp=* in run");
}

TEST(ProfileMutationTest, ReplacesAndRewritesValues) {
  ProfileMutation net = Mutate(kDocker, {ReplaceValue{"--network", "host", ""}});
  EXPECT_EQ(RunArgv(net)[3], "host");
  EXPECT_EQ(net.applied, (std::vector<std::string>{"set --network none -> host"}));
  ProfileMutation swap = Mutate(kDocker, {ReplaceValue{"--memory-swap", "4g", ""}});
  EXPECT_EQ(RunArgv(swap)[6], "--memory-swap=4g");
  ProfileMutation unmatched = Mutate(kDocker, {ReplaceValue{"--network", "bridge", "host"}});
  EXPECT_TRUE(unmatched.profile.is_null());
  ProfileMutation same = Mutate(kDocker, {ReplaceValue{"--network", "none", ""}});
  EXPECT_TRUE(same.profile.is_null()) << "a value set to what it is changes nothing";
  RewriteValue size{"--tmpfs", "size=[^,]*,?", std::regex("size=[^,]*,?"), ""};
  ProfileMutation tmp = Mutate(kDocker, {size});
  EXPECT_EQ(RunArgv(tmp)[8], "/tmp:mode=1777");
  EXPECT_EQ(tmp.applied, (std::vector<std::string>{"rewrote --tmpfs /tmp:size=100m,mode=1777 -> /tmp:mode=1777"}));
  RewriteValue absent{"--tmpfs", "uid=\\d+", std::regex("uid=\\d+"), "uid=0"};
  EXPECT_TRUE(Mutate(kDocker, {absent}).profile.is_null());
}

TEST(ProfileMutationTest, ReplacesAnArgWithAList) {
  ProfileMutation m = Mutate(kBwrap, {ReplaceArg{"--unshare-all", {"--unshare-pid", "--unshare-ipc"}}});
  EXPECT_EQ(Slice(m, 3, 4), (Argv{"bwrap", "--unshare-pid", "--unshare-ipc", "--clearenv"}));
}

TEST(ProfileMutationTest, RemovesASpanUpToItsEnd) {
  ProfileMutation m = Mutate(kBwrap, {RemoveSpan{"setpriv", "bwrap"}});
  EXPECT_EQ(RunArgv(m).front(), "bwrap");
  EXPECT_EQ(m.applied, (std::vector<std::string>{"removed setpriv --reuid 65534 (up to bwrap)"}));
  EXPECT_TRUE(Mutate(kDocker, {RemoveSpan{"setpriv", "bwrap"}}).profile.is_null());
}

TEST(ProfileMutationTest, SetsAFieldOnlyFromItsNamedValue) {
  ProfileMutation m = Mutate(kBwrap, {SetField{"environment", "empty", "inherit"}, RemoveFlag{"--clearenv", 0, ""}});
  EXPECT_EQ(m.profile["environment"], "inherit");
  EXPECT_EQ(Count(m, "--clearenv"), 0);
  EXPECT_EQ(m.applied.size(), 2u);
  ProfileMutation none = Mutate(kDocker, {SetField{"environment", "empty", "inherit"}});
  EXPECT_TRUE(none.profile.is_null());
  EXPECT_EQ(none.not_applicable, "\"environment\" is not \"empty\"");
}

TEST(ProfileMutationTest, StepsThatDoNotApplyArePassedOverAndNamedWhenNoneApplies) {
  // --network already there: the replace applies, the insert then finds its args in place.
  ProfileMutation m = Mutate(kDocker, {ReplaceValue{"--network", "host", ""}, InsertArgs{"run", false, {"--network", "host"}}});
  EXPECT_EQ(Count(m, "--network"), 1);
  EXPECT_EQ(m.applied.size(), 1u);
  ProfileMutation none = Mutate(kBwrap, {RemoveFlag{"--pids-limit", 1, ""}, RemoveFlag{"--memory", 1, ""}});
  EXPECT_EQ(none.not_applicable, "no --pids-limit in run; no --memory in run");
}

TEST(ProfileMutationTest, HostValuesJoinTheMutantsVars) {
  ProfileMutation m = Mutate(kDocker, {InsertArgs{"run", false, {"--group-add", "{gid}"}}}, {{"gid", "110"}});
  EXPECT_EQ(m.profile["vars"]["gid"], "110");
  nlohmann::json with_var = kDocker;
  with_var["vars"] = {{"gid", "7"}};
  StatusOr<ProfileMutation> clash =
      MutateProfileJson(with_var, Op({InsertArgs{"run", false, {"--group-add", "{gid}"}}}), {{"gid", "110"}});
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("host value gid would replace the profile's variable"), std::string::npos);
}

TEST(ProfileMutationTest, EditsASessionsStart) {
  nlohmann::json session = {{"start", {"docker", "run", "-d", "image", "sleep", "inf"}},
                            {"exec", {"docker", "exec", "x", "{probe}", "{probe_args...}"}}};
  ProfileMutation m = Mutate(session, {InsertArgs{"run", false, {"--pid", "host"}}});
  EXPECT_EQ(m.profile["start"][2], "--pid");
  EXPECT_EQ(m.profile["exec"], session["exec"]);
}

TEST(ProfileMutationTest, TheMutantParsesAsAProfileNamedAfterBoth) {
  ProfileMutation m = Mutate(kDocker, {InsertArgs{"run", false, {"--pid", "host"}}});
  StatusOr<Profile> p = ParseMutant(m.profile, "/data/sandboxes/dock.json", "pid-host");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "dock.pid-host");
  EXPECT_EQ(p->source_path, "/data/sandboxes/dock.json");
  EXPECT_EQ(p->policy_path, "/data/policies/tier-low.json");
  EXPECT_EQ(p->run[2], "--pid");
  ProfileMutation broken = Mutate(kDocker, {InsertArgs{"run", false, {"{nope}"}}});
  StatusOr<Profile> refused = ParseMutant(broken.profile, "/data/sandboxes/dock.json", "bad");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("/data/sandboxes/dock.json (mutant bad):"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("unknown placeholder {nope}"), std::string::npos);
}

}  // namespace
}  // namespace sandprobe
