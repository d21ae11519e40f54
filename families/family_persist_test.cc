// The persistence family: its launches (plant, turn, fresh session) and both directions of
// judgement, with the probes' facts and the witness's observations made up.
#include <set>

#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/plan.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using testing::SuiteOf;
using testing::TierLowPolicy;

const char kToken[] = "persistTOKEN";

Policy SessionPolicy() {
  Policy policy = TierLowPolicy();
  policy.persistence.survives = testing::Paths({"{workspace}"}, "survives");
  policy.persistence.survives_turns = testing::Paths({"/tmp"}, "survives_turns");
  policy.persistence.background_processes = BackgroundProcesses::kSurviveTurns;
  return policy;
}

Plan PlanFor(const Policy& policy, bool session) {
  PlanContext context{"/c", "/workspace", {{"persist.token", kToken}}, session};
  StatusOr<Plan> plan = ExpandChecks(policy, SuiteOf({"persist"}), context);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan.ok() ? *plan : Plan{};
}

json Fact(const std::string& family, const std::string& path, bool value, json extra = {}) {
  json fact = {{"family", family}, {"path", path}};
  if (family == "persist.plant") {
    fact["ok"] = value;
    if (!value) fact["errno"] = "EROFS";
  } else {
    fact["present"] = value;
  }
  if (extra.is_object()) fact.update(extra);
  return fact;
}

BatchResult Ran(const std::string& launch_id, std::vector<json> facts) {
  BatchResult result{.state = BatchResult::State::kRan, .launch_id = launch_id, .complete = true};
  result.frames.facts = std::move(facts);
  result.frames.done = true;
  return result;
}

std::map<std::string, Verdict> Judge(const Plan& plan, const std::vector<BatchResult>& results,
                                     json persist_witness = json::object()) {
  WitnessFacts witnesses;
  persist_witness["token"] = kToken;
  witnesses.observed["persist"] = persist_witness;
  std::map<std::string, Verdict> by_id;
  for (Verdict& v : Evaluate(plan, results, witnesses)) by_id[v.check.id] = v;
  return by_id;
}

const char* const kLocations[] = {"/workspace", "/tmp", "@home", "/dev/shm", "/var/tmp", "@cwd"};

std::vector<json> PlantFacts(bool tmp_ok = true) {
  std::vector<json> facts;
  for (const char* l : kLocations) {
    facts.push_back(Fact("persist.plant", l, std::string(l) == "/tmp" ? tmp_ok : true));
  }
  facts.push_back(Fact("persist.plant", "background-process", true, {{"pid", 7}}));
  return facts;
}

// `present`: which locations still hold the token; @cwd is /workspace.
std::vector<json> CheckFacts(std::set<std::string> present, bool background) {
  std::vector<json> facts;
  for (const char* l : kLocations) {
    json extra = std::string(l) == "@cwd" ? json{{"same_as", "/workspace"}} : json::object();
    facts.push_back(Fact("persist.check", l, present.count(l) > 0, extra));
  }
  facts.push_back(Fact("persist.check", "background-process", background));
  return facts;
}

TEST(FamilyPersistTest, SessionProfileGetsPlantTurnAndFreshSessionLaunches) {
  Plan plan = PlanFor(SessionPolicy(), /*session=*/true);
  ASSERT_EQ(plan.batches.size(), 3u);
  EXPECT_EQ(plan.batches[0].invocations.at(0).family, "persist.plant");
  EXPECT_EQ(plan.batches[0].invocations[0].args,
            (std::vector<std::string>{"--token", kToken, "--background-seconds", "120",
                                      "/workspace", "/tmp", "@home", "/dev/shm", "/var/tmp", "@cwd"}));
  EXPECT_FALSE(plan.batches[1].fresh_instance);
  EXPECT_EQ(plan.batches[1].invocations.at(0).args.at(2), "--keep");
  EXPECT_TRUE(plan.batches[2].fresh_instance);
  EXPECT_EQ(plan.batches[2].invocations.at(0).args.at(2), "/workspace");
  for (const LaunchBatch& b : plan.batches) EXPECT_TRUE(b.exclusive);
  // A session's fresh instance closes the one every launch shares: nothing runs beside them.
  for (const LaunchBatch& b : plan.batches) EXPECT_EQ(b.overlap_chain, "") << b.id;
  // One-shot: every launch is fresh, so there is no separate turn; the plant and its check are
  // one chain that may run beside other launches (run/scheduler.h).
  Plan oneshot = PlanFor(SessionPolicy(), /*session=*/false);
  EXPECT_EQ(oneshot.batches.size(), 2u);
  for (const LaunchBatch& b : oneshot.batches) EXPECT_EQ(b.overlap_chain, "persist") << b.id;
}

// Issue 26 item 10: where the policy keeps background processes, the plant launch asks the
// launcher to leave the token's process running; where it also shares the host's pid
// namespace, a process on the host is what it declared, and no host check is planned.
TEST(FamilyPersistTest, APolicyThatKeepsBackgroundProcessesSparesThemAtThePlantLaunch) {
  Plan dies = PlanFor(TierLowPolicy(), /*session=*/false);
  EXPECT_EQ(dies.batches.at(0).spare_processes_with_arg, "");
  Policy keeps = TierLowPolicy();
  keeps.persistence.background_processes = BackgroundProcesses::kSurvive;
  Plan kept = PlanFor(keeps, /*session=*/false);
  EXPECT_EQ(kept.batches.at(0).spare_processes_with_arg, kToken);
  EXPECT_EQ(kept.batches.at(1).spare_processes_with_arg, "") << "only the plant launch starts it";
  auto host_expect = [](const Plan& plan) -> std::optional<Expectation> {
    for (const Check& c : plan.checks) {
      if (c.id == "persist.host:background-process") return c.expect;
    }
    return std::nullopt;
  };
  EXPECT_EQ(host_expect(dies), Expectation::kDenied);
  EXPECT_EQ(host_expect(kept), Expectation::kDenied) << "an isolated pid namespace: a process on the host escaped it";
  keeps.host.pid_namespace = NamespaceSharing::kShared;
  Plan shared = PlanFor(keeps, /*session=*/false);
  EXPECT_EQ(host_expect(shared), Expectation::kAllowed) << "on the host by design: it must only start";
  // Kept alive into the fresh instance, as declared: pass; gone: too restrictive.
  std::vector<json> left_on_host = {{{"after_launch", "L1"}, {"pid", 7}, {"host_pid_namespace", true},
                                     {"argv", std::string("/b/sandprobe-probe --nonce n persist.plant --token ") + kToken}}};
  auto v = Judge(shared, {Ran("L1", PlantFacts()), Ran("L2", CheckFacts({"/workspace"}, true))},
                 {{"processes", left_on_host}});
  EXPECT_EQ(v.at("persist.session.survives:background-process").outcome, Outcome::kPass);
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kPass) << v.at("persist.host:background-process").observed;
  v = Judge(shared, {Ran("L1", PlantFacts()), Ran("L2", CheckFacts({"/workspace"}, false))});
  EXPECT_EQ(v.at("persist.session.survives:background-process").direction, Direction::kTooRestrictive);
  // The same process on the host against an isolated pid namespace: escaped.
  v = Judge(kept, {Ran("L1", PlantFacts()), Ran("L2", CheckFacts({"/workspace"}, true))}, {{"processes", left_on_host}});
  EXPECT_EQ(v.at("persist.host:background-process").direction, Direction::kTooPermissive);
}

TEST(FamilyPersistTest, WithoutTheWitnessTokenExpansionFails) {
  StatusOr<Plan> plan = ExpandChecks(SessionPolicy(), SuiteOf({"persist"}), PlanContext{"/c", "/w", {}});
  EXPECT_FALSE(plan.ok());
}

TEST(FamilyPersistTest, AgentSessionKeepingItsPromisesPasses) {
  Plan plan = PlanFor(SessionPolicy(), true);
  auto v = Judge(plan, {Ran("L1", PlantFacts()),
                        Ran("L2", CheckFacts({"/workspace", "/tmp", "/dev/shm", "/var/tmp", "@home"}, true)),
                        Ran("L3", CheckFacts({"/workspace"}, false))});
  EXPECT_EQ(v.at("persist.turn.survives:workspace").outcome, Outcome::kPass);
  EXPECT_EQ(v.at("persist.turn.survives:/tmp").outcome, Outcome::kPass);
  EXPECT_EQ(v.at("persist.session.survives:workspace").outcome, Outcome::kPass);
  EXPECT_EQ(v.at("persist.session.ephemeral:/tmp").outcome, Outcome::kPass);
  EXPECT_EQ(v.at("persist.turn.survives:background-process").outcome, Outcome::kPass);
  EXPECT_EQ(v.at("persist.session.ephemeral:background-process").outcome, Outcome::kPass);
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kPass);
  // Unlisted scratch space kept across turns: against the default (ephemeral).
  EXPECT_EQ(v.at("persist.turn.ephemeral:/dev/shm").outcome, Outcome::kFail);
  EXPECT_EQ(v.at("persist.turn.ephemeral:/dev/shm").direction, Direction::kTooPermissive);
  // The working directory is the workspace: judged there, not twice.
  EXPECT_EQ(v.at("persist.turn.ephemeral:@cwd").outcome, Outcome::kSkip);
  EXPECT_NE(v.at("persist.turn.ephemeral:@cwd").observed.find("same directory as /workspace"), std::string::npos);
}

TEST(FamilyPersistTest, BothDirections) {
  Plan plan = PlanFor(SessionPolicy(), true);
  // A reused container: /tmp survives a new session (too permissive); a lost workspace (too
  // restrictive).
  auto v = Judge(plan, {Ran("L1", PlantFacts()), Ran("L2", CheckFacts({"/tmp"}, true)),
                        Ran("L3", CheckFacts({"/tmp"}, true))});
  EXPECT_EQ(v.at("persist.session.ephemeral:/tmp").outcome, Outcome::kFail);
  EXPECT_EQ(v.at("persist.session.ephemeral:/tmp").direction, Direction::kTooPermissive);
  EXPECT_EQ(v.at("persist.session.ephemeral:background-process").direction, Direction::kTooPermissive);
  EXPECT_EQ(v.at("persist.turn.survives:workspace").direction, Direction::kTooRestrictive);
  EXPECT_EQ(v.at("persist.session.survives:workspace").direction, Direction::kTooRestrictive);
}

TEST(FamilyPersistTest, WhatCouldNotBePlantedCannotSurviveButBreaksAPromiseToKeepIt) {
  Plan plan = PlanFor(SessionPolicy(), true);
  auto v = Judge(plan, {Ran("L1", PlantFacts(/*tmp_ok=*/false)), Ran("L2", CheckFacts({"/workspace"}, true)),
                        Ran("L3", CheckFacts({"/workspace"}, false))});
  EXPECT_EQ(v.at("persist.session.ephemeral:/tmp").outcome, Outcome::kPass);  // must be gone: it is
  EXPECT_EQ(v.at("persist.turn.survives:/tmp").outcome, Outcome::kFail);     // must be kept: never was
  EXPECT_EQ(v.at("persist.turn.survives:/tmp").direction, Direction::kTooRestrictive);
  EXPECT_NE(v.at("persist.turn.survives:/tmp").observed.find("EROFS"), std::string::npos);
}

TEST(FamilyPersistTest, BackgroundProcessLeftOnTheHostFails) {
  Plan plan = PlanFor(TierLowPolicy(), false);
  BatchResult plant = Ran("L1", PlantFacts());
  // Seen by the witness in the host's pid namespace after the plant launch...
  json witness = {{"processes", json::array({{{"after_launch", "L1"}, {"pid", 4242},
                                              {"argv", std::string("/b/sandprobe-probe --nonce n persist.plant --token ") + kToken},
                                              {"host_pid_namespace", true}}})}};
  auto v = Judge(plan, {plant, Ran("L2", CheckFacts({}, false))}, witness);
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kFail);
  EXPECT_EQ(v.at("persist.host:background-process").check.severity, Severity::kHigh);
  EXPECT_NE(v.at("persist.host:background-process").observed.find("4242"), std::string::npos);
  // ...or killed by the harness as a leftover of that launch.
  plant.leftover_processes = {std::string("/b/sandprobe-probe --nonce n persist.plant --token ") + kToken + " /tmp"};
  v = Judge(plan, {plant, Ran("L2", CheckFacts({}, false))});
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kFail);
  EXPECT_NE(v.at("persist.host:background-process").observed.find("killed by the harness"),
            std::string::npos);
  // A sandbox wrapper carrying the probe's arguments is not the planted process.
  plant.leftover_processes = {std::string("bwrap --unshare-all /opt/sandprobe-probe --nonce n persist.plant --token ") + kToken};
  v = Judge(plan, {plant, Ran("L2", CheckFacts({}, false))});
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kPass);
  // Another run's process is not ours.
  plant.leftover_processes = {"/b/sandprobe-probe --nonce n persist.plant --token otherTOKEN /tmp"};
  v = Judge(plan, {plant, Ran("L2", CheckFacts({}, false))});
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kPass);
  // In a container's own pid namespace it is not on the host.
  witness["processes"][0]["host_pid_namespace"] = false;
  v = Judge(plan, {Ran("L1", PlantFacts()), Ran("L2", CheckFacts({}, false))}, witness);
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kPass);
}

// firejail waits for everything inside it: the planted process keeps the launch alive until
// the harness's timeout, and the sandbox's teardown kills it before any scan after the launch.
// The tree the launcher read at the timeout proves it outlived the probe: a fail, not an error.
TEST(FamilyPersistTest, AProcessKeepingTheSandboxAliveUntilTheTimeoutFails) {
  Plan plan = PlanFor(TierLowPolicy(), false);
  BatchResult plant = Ran("L1", PlantFacts());
  plant.complete = false;
  plant.reason = "timed out; all frames complete, but the sandbox did not exit 0";
  plant.end.timed_out = true;
  plant.alive_at_timeout = {"firejail --quiet /b/sandprobe-probe --nonce n persist.plant --token x",
                            std::string("/b/sandprobe-probe --nonce n persist.plant --token ") + kToken + " /tmp"};
  auto v = Judge(plan, {plant, Ran("L2", CheckFacts({}, false))});
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kFail);
  EXPECT_NE(v.at("persist.host:background-process").observed.find("still running at the harness's timeout"),
            std::string::npos) << v.at("persist.host:background-process").observed;
  // The fix names the backend's own flag (the witness records the profile's label), never
  // another backend's; an unknown backend gets generic advice.
  const std::string firejail_fix =
      Judge(plan, {plant, Ran("L2", CheckFacts({}, false))}, {{"backend", "firejail"}}).at("persist.host:background-process").remediation;
  EXPECT_NE(firejail_fix.find("--deterministic-shutdown"), std::string::npos) << firejail_fix;
  EXPECT_EQ(firejail_fix.find("bwrap"), std::string::npos) << firejail_fix;
  EXPECT_EQ(firejail_fix.find("docker"), std::string::npos) << firejail_fix;
  const std::string bwrap_fix =
      Judge(plan, {plant, Ran("L2", CheckFacts({}, false))}, {{"backend", "bwrap"}}).at("persist.host:background-process").remediation;
  EXPECT_NE(bwrap_fix.find("--die-with-parent"), std::string::npos) << bwrap_fix;
  const std::string other_fix = v.at("persist.host:background-process").remediation;
  EXPECT_EQ(other_fix.find("bwrap"), std::string::npos) << other_fix;
  EXPECT_EQ(other_fix.find("firejail"), std::string::npos) << other_fix;
  // Before the probe's done frame, a live planted process proves nothing: the probe was busy.
  plant.frames.done = false;
  v = Judge(plan, {plant, Ran("L2", CheckFacts({}, false))});
  EXPECT_NE(v.at("persist.host:background-process").outcome, Outcome::kFail);
}

TEST(FamilyPersistTest, MissingOrGarbledFactsNeverPass) {
  Plan plan = PlanFor(TierLowPolicy(), false);
  // The check launch said nothing about /tmp.
  auto v = Judge(plan, {Ran("L1", PlantFacts()), Ran("L2", {})});
  EXPECT_EQ(v.at("persist.session.ephemeral:/tmp").outcome, Outcome::kInconclusive);
  // The plant launch failed: nothing to compare with.
  BatchResult failed{.state = BatchResult::State::kLaunchFailed, .launch_id = "L1",
                     .reason = "exit 125"};
  v = Judge(plan, {failed, Ran("L2", CheckFacts({}, false))});
  EXPECT_EQ(v.at("persist.host:background-process").outcome, Outcome::kError);
  EXPECT_EQ(v.at("persist.session.ephemeral:/tmp").outcome, Outcome::kError);
  // An incomplete check launch cannot pass "gone".
  BatchResult cut = Ran("L2", CheckFacts({}, false));
  cut.complete = false;
  cut.reason = "killed by signal 9";
  v = Judge(plan, {Ran("L1", PlantFacts()), cut});
  EXPECT_EQ(v.at("persist.session.ephemeral:/tmp").outcome, Outcome::kError);
}

}  // namespace
}  // namespace sandprobe
