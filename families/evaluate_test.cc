#include "families/evaluate.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "contract/frame_reader.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;

const PlanContext kContext{"/var/tmp/sp/canary.txt", "/workspace"};
const WitnessFacts kWitnesses{"/var/tmp/sp/canary.txt", std::string(64, 'c'), std::string(64, 'e')};

Plan TierLowPlan() {
  auto plan = ExpandChecks(testing::TierLowPolicy(),
                           testing::SuiteOf({"fs.read", "fs.write", "fs.alias", "env.secret"}), kContext);
  EXPECT_TRUE(plan.ok());
  return *plan;
}

// The facts a perfect tier-low sandbox produces.
std::vector<json> PerfectFacts() {
  std::vector<json> facts = {{{"family", "hello"}, {"pid", 1}}};
  for (const char* p : {"/workspace", "/tmp"}) {
    facts.push_back({{"family", "fs.read"}, {"path", p}, {"ok", true}, {"kind", "dir"}, {"entries", 0}});
    facts.push_back({{"family", "fs.write"}, {"path", p}, {"ok", true}, {"ro_mount", false}});
  }
  for (const char* p : {"/etc/shadow", "/var/tmp/sp/canary.txt"}) {
    facts.push_back({{"family", "fs.read"}, {"path", p}, {"ok", false}, {"step", "open"}, {"errno", "ENOENT"}});
    for (const char* v : {"symlink", "dotdot", "proc_root", "mount_root"}) {
      facts.push_back({{"family", "fs.alias"}, {"path", p}, {"variant", v}, {"via", "x"}, {"ok", false}, {"errno", "ENOENT"}});
    }
  }
  facts.push_back({{"family", "fs.write"}, {"path", "/etc"}, {"ok", false}, {"step", "open"}, {"errno", "EROFS"}, {"ro_mount", true}});
  facts.push_back({{"family", "env.secret"}, {"summary", true}, {"processes_scanned", 1}, {"environs_readable", 1}, {"matches", 0}});
  return facts;
}

BatchResult Ran(std::vector<json> facts, bool complete = true) {
  BatchResult result;
  result.state = BatchResult::State::kRan;
  result.launch_id = "L1";
  result.frames.facts = std::move(facts);
  result.frames.done = complete;
  result.complete = complete;
  if (!complete) result.reason = "killed by signal 9; no done frame";
  return result;
}

const Verdict& Find(const std::vector<Verdict>& verdicts, const std::string& id) {
  for (const Verdict& v : verdicts) {
    if (v.check.id == id) return v;
  }
  static Verdict missing;
  ADD_FAILURE() << "no verdict " << id;
  return missing;
}

void SetFact(std::vector<json>& facts, const std::string& family, const std::string& path, json patch,
             const std::string& variant = "") {
  for (json& f : facts) {
    if (f.value("family", "") == family && f.value("path", "") == path && f.value("variant", "") == variant) {
      f.update(patch);
      return;
    }
  }
  ADD_FAILURE() << "no fact " << family << " " << path;
}

TEST(EvaluateTest, PerfectSandboxPassesEveryCheck) {
  Plan plan = TierLowPlan();
  auto verdicts = Evaluate(plan, {Ran(PerfectFacts())}, kWitnesses);
  ASSERT_EQ(verdicts.size(), plan.checks.size());
  for (const Verdict& v : verdicts) EXPECT_EQ(v.outcome, Outcome::kPass) << v.check.id << ": " << v.observed;
  EXPECT_EQ(ExitCodeFor(verdicts, Severity::kLow), 0);
}

TEST(EvaluateTest, ReadableDeniedPathFailsTooPermissive) {
  auto facts = PerfectFacts();
  SetFact(facts, "fs.read", "/etc/shadow", {{"ok", true}, {"kind", "file"}, {"bytes", 10}, {"sha256", "ab"}});
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  const Verdict& v = Find(verdicts, "fs.read.denied:/etc/shadow");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.direction, Direction::kTooPermissive);
  EXPECT_FALSE(v.remediation.empty());
  EXPECT_EQ(v.evidence.launch_id, "L1");
  ASSERT_EQ(v.evidence.frame_indexes.size(), 1u);
  EXPECT_EQ(ExitCodeFor(verdicts, Severity::kLow), 1);
  EXPECT_EQ(ExitCodeFor(verdicts, Severity::kCritical), 0);  // high is below critical
}

TEST(EvaluateTest, CanaryLeakCountsOnlyWithTheCanaryHash) {
  auto facts = PerfectFacts();
  SetFact(facts, "fs.read", "/var/tmp/sp/canary.txt", {{"ok", true}, {"kind", "file"}, {"bytes", 5}, {"sha256", "different"}});
  auto other_file = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  EXPECT_EQ(Find(other_file, "fs.read.denied:host-canary").outcome, Outcome::kPass);

  SetFact(facts, "fs.read", "/var/tmp/sp/canary.txt", {{"sha256", kWitnesses.canary_sha256}});
  auto leaked = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  const Verdict& v = Find(leaked, "fs.read.denied:host-canary");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_NE(v.observed.find("matches the host canary"), std::string::npos);
  EXPECT_FALSE(v.evidence.witness_facts.empty());
}

TEST(EvaluateTest, UnwritableWorkspaceFailsTooRestrictive) {
  auto facts = PerfectFacts();
  SetFact(facts, "fs.write", "/workspace", {{"ok", false}, {"step", "open"}, {"errno", "EROFS"}, {"ro_mount", true}});
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  const Verdict& v = Find(verdicts, "fs.write.allowed:workspace");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.direction, Direction::kTooRestrictive);
  EXPECT_NE(v.observed.find("EROFS"), std::string::npos);
  EXPECT_EQ(ExitCodeFor(verdicts, Severity::kLow), 1);
  EXPECT_EQ(ExitCodeFor(verdicts, Severity::kHigh), 0);  // too-restrictive is medium
}

TEST(EvaluateTest, DeniedReadsAreInconclusiveWhenNoAllowedReadWorked) {
  auto facts = PerfectFacts();
  for (const char* p : {"/workspace", "/tmp"}) {
    SetFact(facts, "fs.read", p, {{"ok", false}, {"step", "open"}, {"errno", "EACCES"}});
  }
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.read.denied:/etc/shadow").outcome, Outcome::kInconclusive);
  EXPECT_EQ(Find(verdicts, "fs.alias.denied:/etc/shadow[symlink]").outcome, Outcome::kInconclusive);
  EXPECT_EQ(Find(verdicts, "fs.read.allowed:/tmp").outcome, Outcome::kFail);
  EXPECT_EQ(Find(verdicts, "fs.write.denied:/etc").outcome, Outcome::kPass);  // writes had their control
}

TEST(EvaluateTest, DeniedWritesAreInconclusiveWhenNoAllowedWriteWorked) {
  auto facts = PerfectFacts();
  for (const char* p : {"/workspace", "/tmp"}) {
    SetFact(facts, "fs.write", p, {{"ok", false}, {"step", "open"}, {"errno", "EROFS"}});
  }
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.write.denied:/etc").outcome, Outcome::kInconclusive);
  EXPECT_EQ(ExitCodeFor({Find(verdicts, "fs.write.denied:/etc")}, Severity::kLow), 3);
}

TEST(EvaluateTest, MissingFactIsInconclusive) {
  auto facts = PerfectFacts();
  facts.erase(std::remove_if(facts.begin(), facts.end(), [](const json& f) {
    return f.value("path", "") == "/etc" && f.value("family", "") == "fs.write";
  }), facts.end());
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.write.denied:/etc").outcome, Outcome::kInconclusive);
}

TEST(EvaluateTest, AliasReadFailsTooPermissive) {
  auto facts = PerfectFacts();
  SetFact(facts, "fs.alias", "/etc/shadow", {{"ok", true}, {"kind", "file"}, {"bytes", 3}, {"sha256", "x"}}, "dotdot");
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.alias.denied:/etc/shadow[dotdot]").outcome, Outcome::kFail);
  EXPECT_EQ(Find(verdicts, "fs.alias.denied:/etc/shadow[symlink]").outcome, Outcome::kPass);
}

TEST(EvaluateTest, EnvSecretSeenByHashFails) {
  auto facts = PerfectFacts();
  facts.push_back({{"family", "env.secret"}, {"source", "environ"}, {"name", "SANDPROBE_CANARY_1"}, {"sha256", kWitnesses.env_secret_sha256}});
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  const Verdict& v = Find(verdicts, "env.secret.hidden");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_NE(v.observed.find("environ"), std::string::npos);
  // A variable with the prefix but another value is not the harness's secret.
  facts.back()["sha256"] = "other";
  EXPECT_EQ(Find(Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses), "env.secret.hidden").outcome, Outcome::kPass);
}

TEST(EvaluateTest, EnvScanMissingIsInconclusive) {
  auto facts = PerfectFacts();
  facts.pop_back();  // the summary
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts)}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "env.secret.hidden").outcome, Outcome::kInconclusive);
}

TEST(EvaluateTest, IncompleteLaunchTurnsPassesIntoErrorsButKeepsProvenFails) {
  auto facts = PerfectFacts();
  SetFact(facts, "fs.read", "/var/tmp/sp/canary.txt", {{"ok", true}, {"kind", "file"}, {"bytes", 5}, {"sha256", kWitnesses.canary_sha256}});
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts, /*complete=*/false)}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.read.denied:host-canary").outcome, Outcome::kFail);
  const Verdict& v = Find(verdicts, "fs.read.denied:/etc/shadow");
  EXPECT_EQ(v.outcome, Outcome::kError);
  EXPECT_NE(v.observed.find("incomplete"), std::string::npos);
  for (const Verdict& each : verdicts) EXPECT_NE(each.outcome, Outcome::kPass) << each.check.id;
}

TEST(EvaluateTest, SkippedFailedAndInterruptedBatches) {
  Plan plan = TierLowPlan();
  BatchResult skipped{.state = BatchResult::State::kSkipped, .reason = "backend docker unavailable"};
  for (const Verdict& v : Evaluate(plan, {skipped}, kWitnesses)) {
    EXPECT_EQ(v.outcome, Outcome::kSkip);
    EXPECT_EQ(v.observed, "backend docker unavailable");
  }
  EXPECT_EQ(ExitCodeFor(Evaluate(plan, {skipped}, kWitnesses), Severity::kLow), 0);
  BatchResult failed{.state = BatchResult::State::kLaunchFailed, .reason = "execve(bwrap): ENOENT"};
  auto errors = Evaluate(plan, {failed}, kWitnesses);
  for (const Verdict& v : errors) EXPECT_EQ(v.outcome, Outcome::kError);
  EXPECT_EQ(ExitCodeFor(errors, Severity::kLow), 3);
  BatchResult interrupted{.state = BatchResult::State::kInterrupted};
  for (const Verdict& v : Evaluate(plan, {interrupted}, kWitnesses)) {
    EXPECT_EQ(v.outcome, Outcome::kError);
    EXPECT_EQ(v.observed, "interrupted");
  }
  // No result recorded at all is an error too, never a pass.
  for (const Verdict& v : Evaluate(plan, {}, kWitnesses)) EXPECT_EQ(v.outcome, Outcome::kError);
}

// The garbage corpus, end to end through the frame parser: nothing here may become a pass.
TEST(EvaluateTest, GarbageNeverYieldsAPass) {
  const std::string nonce = "n0nce";
  std::string perfect;
  for (const json& f : PerfectFacts()) perfect += "@@sandprobe " + nonce + " " + f.dump() + "\n";
  const std::string done = "@@sandprobe " + nonce + " {\"done\":true}\n";
  const std::vector<std::pair<std::string, std::string>> corpus = {
      {"empty output", ""},
      {"a probe that prints PASS", "PASS\nall checks ok\n"},
      {"no done frame", perfect},
      {"wrong nonce", [&] { std::string s = perfect + done; for (std::size_t p; (p = s.find(nonce)) != std::string::npos;) s.replace(p, nonce.size(), "other"); return s; }()},
      {"two done frames", perfect + done + done},
      {"truncated JSON", perfect + "@@sandprobe " + nonce + " {\"family\":\"fs.read\",\"pa\n" + done},
      {"invalid UTF-8", perfect + "@@sandprobe " + nonce + " {\"family\":\"x\",\"path\":\"\xff\xfe\"}\n" + done},
      {"killed mid-frame", perfect + "@@sandprobe " + nonce + " {\"family\":\"fs.re"},
      {"frame after done", perfect + done + "@@sandprobe " + nonce + " {\"family\":\"x\"}\n"},
  };
  for (const auto& [name, output] : corpus) {
    BatchResult result;
    result.state = BatchResult::State::kRan;
    result.launch_id = "L1";
    result.frames = ParseFrames(output, nonce, false);
    result.complete = FramesComplete(result.frames);
    result.reason = DescribeFrameProblems(result.frames);
    for (const Verdict& v : Evaluate(TierLowPlan(), {result}, kWitnesses)) {
      EXPECT_NE(v.outcome, Outcome::kPass) << name << ": " << v.check.id;
    }
  }
  // The control: the same facts, well framed, do pass.
  BatchResult clean;
  clean.state = BatchResult::State::kRan;
  clean.frames = ParseFrames(perfect + done, nonce, false);
  clean.complete = FramesComplete(clean.frames);
  for (const Verdict& v : Evaluate(TierLowPlan(), {clean}, kWitnesses)) {
    EXPECT_EQ(v.outcome, Outcome::kPass) << v.check.id;
  }
}

// A fact is stated once: a second fact for the same path that shows the leak is a protocol
// error (the launch is incomplete), never silently dropped behind the first, innocent one.
TEST(EvaluateTest, ADuplicateFactIsAProtocolErrorAndTheCanaryLeakStillFails) {
  const std::string nonce = "n0nce";
  std::string out;
  for (const json& f : PerfectFacts()) out += "@@sandprobe " + nonce + " " + f.dump() + "\n";
  const json leak = {{"family", "fs.read"}, {"path", "/var/tmp/sp/canary.txt"}, {"ok", true},
                     {"kind", "file"}, {"bytes", 5}, {"sha256", kWitnesses.canary_sha256}};
  const json shadow = {{"family", "fs.read"}, {"path", "/etc/shadow"}, {"ok", true}, {"kind", "file"},
                       {"bytes", 9}, {"sha256", std::string(64, 'a')}};
  out += "@@sandprobe " + nonce + " " + leak.dump() + "\n";
  out += "@@sandprobe " + nonce + " " + shadow.dump() + "\n";
  out += "@@sandprobe " + nonce + " {\"done\":true}\n";
  BatchResult result = Ran({});
  result.frames = ParseFrames(out, nonce, false);
  result.complete = FramesComplete(result.frames);
  result.reason = DescribeFrameProblems(result.frames);
  ASSERT_FALSE(result.complete);
  EXPECT_NE(result.reason.find("a second fact for fs.read /etc/shadow"), std::string::npos) << result.reason;
  auto verdicts = Evaluate(TierLowPlan(), {result}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.read.denied:/etc/shadow").outcome, Outcome::kError);
  for (const Verdict& v : verdicts) EXPECT_NE(v.outcome, Outcome::kPass) << v.check.id;
}

// A broken launch proves leaks, not restrictions: "could not read /tmp" from a probe that was
// killed half-way is an error, never a too-restrictive fail.
TEST(EvaluateTest, AnIncompleteLaunchProvesNoRestriction) {
  auto facts = PerfectFacts();
  SetFact(facts, "fs.read", "/tmp", {{"ok", false}, {"step", "open"}, {"errno", "EACCES"}});
  auto verdicts = Evaluate(TierLowPlan(), {Ran(facts, /*complete=*/false)}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.read.allowed:/tmp").outcome, Outcome::kError);
  EXPECT_EQ(Find(verdicts, "fs.read.allowed:/tmp").direction, Direction::kNone);
  verdicts = Evaluate(TierLowPlan(), {Ran(facts, /*complete=*/true)}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.read.allowed:/tmp").outcome, Outcome::kFail);
}

// Streams and lists are not duplicates: progress steps, one env.secret fact per source+name.
TEST(EvaluateTest, ProgressStepsAndListItemsAreNotDuplicates) {
  const std::string nonce = "n0nce";
  std::string out;
  for (int mib : {8, 16}) {
    out += "@@sandprobe " + nonce + " " + json{{"family", "res.memory"}, {"kind", "progress"}, {"mib", mib}}.dump() + "\n";
  }
  for (const char* source : {"environ", "/proc/1/environ"}) {
    out += "@@sandprobe " + nonce + " " +
           json{{"family", "env.secret"}, {"source", source}, {"name", "SANDPROBE_CANARY_A"}}.dump() + "\n";
  }
  out += "@@sandprobe " + nonce + " {\"done\":true}\n";
  ProbeFrames frames = ParseFrames(out, nonce, false);
  EXPECT_TRUE(FramesComplete(frames)) << DescribeFrameProblems(frames);
}

// A preflight that fails after a launch that leaked (the daemon went away) cannot turn the
// proven leak into a skip: only checks without any evidence skip.
TEST(EvaluateTest, ABackendLostAfterALeakKeepsTheLeakAFail) {
  auto facts = PerfectFacts();
  SetFact(facts, "fs.read", "/var/tmp/sp/canary.txt", {{"ok", true}, {"kind", "file"}, {"bytes", 5}, {"sha256", kWitnesses.canary_sha256}});
  facts.erase(std::remove_if(facts.begin(), facts.end(),
                             [](const json& f) { return f.value("path", "") == "/etc/shadow"; }),
              facts.end());
  BatchResult result = Ran(facts, /*complete=*/false);
  result.backend_unavailable = "backend docker unavailable: docker info: Cannot connect";
  auto verdicts = Evaluate(TierLowPlan(), {result}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.read.denied:host-canary").outcome, Outcome::kFail);
  EXPECT_EQ(Find(verdicts, "fs.read.denied:/etc/shadow").outcome, Outcome::kSkip);
  EXPECT_EQ(Find(verdicts, "fs.read.denied:/etc/shadow").observed, result.backend_unavailable);
  // A check with a fact from the broken launch is an error, not a skip: there was evidence.
  EXPECT_EQ(Find(verdicts, "fs.read.allowed:/tmp").outcome, Outcome::kError);
  EXPECT_EQ(ExitCodeFor(verdicts, Severity::kLow), 1);
  result.backend_required = true;
  verdicts = Evaluate(TierLowPlan(), {result}, kWitnesses);
  EXPECT_EQ(Find(verdicts, "fs.read.denied:/etc/shadow").outcome, Outcome::kError);
}

}  // namespace
}  // namespace sandprobe
