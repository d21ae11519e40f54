// `sandprobe report RUN.json` and `sandprobe infer RUN.json` (issue 15 §3) on real runs:
// a recorded bwrap-strict run re-judged against another policy changes verdicts on the
// recorded facts, what it never probed is skip; its own policy gives its own verdicts; the
// re-judged JSON report validates; garbage and other schema versions are exit 2; the policy
// `infer` writes from a run against a wrong policy validates and makes the same sandbox pass.
#include <stdlib.h>

#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

std::string SaveReport(const std::string& dir, const nlohmann::json& report) {
  return WriteFile(dir, "run.json", report.dump());
}

// `sandprobe report ARGS --format json`: the re-judged report is stdout.
CliRun Report(std::vector<std::string> args) {
  args.insert(args.begin(), "report");
  args.insert(args.end(), {"--no-color", "--format", "json"});
  CliRun run = RunCli(args);
  run.report = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  return run;
}

// "" when `policy_file` is valid against docs/policy.schema.json (python3 jsonschema).
std::string PolicySchemaProblem(const std::string& policy_file) {
  CliRun check = RunCommand(
      {"python3", "-c",
       "import json, sys, jsonschema\n"
       "error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator("
       "json.load(open(sys.argv[1]))).iter_errors(json.load(open(sys.argv[2]))))\n"
       "print('' if error is None else f'{list(error.absolute_path)}: {error.message}')\n",
       SourcePath("docs/policy.schema.json"), policy_file});
  if (check.exit_code != 0) return "python3 jsonschema failed: " + check.err;
  while (!check.out.empty() && check.out.back() == '\n') check.out.pop_back();
  return check.out;
}

// tier-low with /tmp turned unreadable and /opt readable: one promise the recorded facts
// contradict, one the run never probed.
constexpr const char* kTmpDenied = R"({
  "name": "tmp-denied", "description": "tier-low, but /tmp unreadable and /opt readable",
  "filesystem": {"readable": ["{workspace}", "/opt"], "unreadable": ["/etc/shadow", "/root", "{host_canary}", "/tmp"],
                 "writable": ["{workspace}", "/tmp"], "unwritable": ["/", "/etc", "/usr"]}})";

TEST(RejudgeCliTest, AnotherPolicyChangesAVerdictWithoutLaunching) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunProfile("sandboxes/bwrap-strict.json");
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  ExpectVerdict(run.report, "fs.read.allowed:/tmp", "pass");
  const std::string run_id = run.report["run_id"];
  std::string dir = MakeTempDir("rejudge");
  std::string recorded = SaveReport(dir, run.report);

  CliRun same = Report({recorded});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  ASSERT_EQ(same.report["checks"].size(), run.report["checks"].size());
  for (std::size_t i = 0; i < run.report["checks"].size(); ++i) {
    EXPECT_EQ(same.report["checks"][i]["id"], run.report["checks"][i]["id"]);
    EXPECT_EQ(same.report["checks"][i]["verdict"], run.report["checks"][i]["verdict"]);
  }

  std::string policy = WriteFile(dir, "tmp-denied.json", kTmpDenied);
  std::string junit = dir + "/rejudged.xml";
  CliRun other = Report({recorded, "--policy", policy, "--junit", junit});
  EXPECT_EQ(other.exit_code, 1) << other.err;
  ExpectVerdict(other.report, "fs.read.denied:/tmp", "fail", "too-permissive");
  ExpectVerdict(other.report, "fs.read.allowed:/opt", "skip");
  EXPECT_EQ(CheckField(other.report, "fs.read.allowed:/opt", "observed").rfind("not probed in run " + run_id, 0), 0u)
      << CheckField(other.report, "fs.read.allowed:/opt", "observed");
  // The scratch dir option "--scratch /tmp" is no alias probe of /tmp.
  ExpectVerdict(other.report, "fs.alias.denied:/tmp[symlink]", "skip");
  ExpectVerdict(other.report, "fs.read.denied:/etc/shadow", "pass");
  EXPECT_EQ(other.report["rejudged_from"]["run_id"], run_id);
  EXPECT_EQ(other.report["rejudged_from"]["policy"], "tmp-denied");
  EXPECT_EQ(other.report["policy"]["name"], "tmp-denied");
  EXPECT_EQ(other.report["launches"], run.report["launches"]);  // nothing launched, facts kept
  EXPECT_EQ(SchemaProblem(other.report), "");
  EXPECT_TRUE(fs::file_size(junit) > 0);
  ExpectNoContainerLeft(run.report);
}

TEST(RejudgeCliTest, GarbageAndOtherSchemasAreExit2) {
  std::string dir = MakeTempDir("rejudge");
  CliRun garbage = RunCli({"report", WriteFile(dir, "g.json", "not json at all")});
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_NE(garbage.err.find("g.json"), std::string::npos) << garbage.err;
  CliRun other = RunCli({"report", WriteFile(dir, "o.json", R"({"schema": "sandprobe-report/0"})")});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("sandprobe-report/0"), std::string::npos) << other.err;
  CliRun infer = RunCli({"infer", dir + "/o.json"});
  EXPECT_EQ(infer.exit_code, 2);
  CliRun missing = RunCli({"report", dir + "/none.json"});
  EXPECT_EQ(missing.exit_code, 2);
}

// Runs `profile` against `policy` (which it must fail), infers, and runs it again with the
// inferred policy; `edit` is what infer must say it changed.
void ExpectInferredPolicyPasses(const std::string& profile, const std::string& policy,
                                const std::string& suite, const std::string& edit) {
  CliRun wrong = RunProfile(profile, {"--policy", SourcePath(policy), "--suite", suite});
  ASSERT_EQ(wrong.exit_code, 1) << "the wrong policy must fail first: " << wrong.err << wrong.out;
  std::string dir = MakeTempDir("rejudge");
  std::string recorded = SaveReport(dir, wrong.report);
  std::string inferred = dir + "/inferred.json";
  CliRun infer = RunCli({"infer", recorded, "-o", inferred});
  ASSERT_EQ(infer.exit_code, 0) << infer.err;
  EXPECT_NE(infer.err.find(edit), std::string::npos) << infer.err;
  CliRun validate = RunCli({"validate", inferred});
  EXPECT_EQ(validate.exit_code, 0) << validate.err << validate.out;
  EXPECT_EQ(PolicySchemaProblem(inferred), "");
  CliRun right = RunProfile(profile, {"--policy", inferred, "--suite", suite});
  EXPECT_EQ(right.exit_code, 0) << right.out << right.err;
  EXPECT_EQ(right.report["summary"]["fail"], 0);
  ExpectNoContainerLeft(right.report);
}

TEST(RejudgeCliTest, InferredPolicyMakesBwrapStrictPass) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  // tier-high promises /etc and /bin readable; bwrap-strict shows neither.
  ExpectInferredPolicyPasses("sandboxes/bwrap-strict.json", "policies/tier-high.json", "default",
                             "/filesystem/readable/1 moved to /filesystem/unreadable");
}

TEST(RejudgeCliTest, InferredPolicyMakesDockerHardenedPass) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  // tier-high promises network egress and DNS; docker-hardened runs with --network none.
  ExpectInferredPolicyPasses("sandboxes/docker-hardened.json", "policies/tier-high.json", "network",
                             "/network/egress flipped");
}

TEST(RejudgeCliTest, InferredPolicyMakesGvisorPass) {
  if (!BackendAvailable("gvisor", {"docker", "run", "--rm", "--pull", "never", "--runtime", "runsc", "--network",
                                   "none", "sandprobe/agent:latest", "true"})) {
    return;
  }
  // The same promises under gVisor (runsc, ptrace platform here): --network none, so tier-high's
  // egress and DNS fail first. About 3.5 s for both runs on this machine.
  ExpectInferredPolicyPasses("sandboxes/gvisor.json", "policies/tier-high.json", "network",
                             "/network/egress flipped");
}

TEST(RejudgeCliTest, InferredPolicyMakesMicrovmPass) {
  if (!BackendAvailable("qemu", {"sh", "-c",
                                 "command -v qemu-system-x86_64 && test -x /var/lib/sandprobe-microvm/launch && "
                                 "test -r /var/lib/sandprobe-microvm/initramfs.cpio.gz && "
                                 "test -r /var/lib/sandprobe-microvm/kernel"})) {
    return;
  }
  // The microVM under QEMU's TCG (~2 s a launch): no network device, so tier-high's egress and
  // DNS fail first. About 12 s for both runs on this machine.
  ExpectInferredPolicyPasses("sandboxes/microvm.json", "policies/tier-high.json", "network",
                             "/network/egress flipped");
}

TEST(RejudgeCliTest, InferredPolicyTakesTheMemoryLimitDockerEnforced) {
  if (!BackendAvailable("docker", kDockerUp)) return;
  // tier-low promises 512 MiB; docker-limits-wrong runs with --memory 256m.
  ExpectInferredPolicyPasses("sandboxes/docker-limits-wrong.json", "policies/tier-low.json", "resources",
                             "/limits/memory_mib set to the enforced");
}

}  // namespace
}  // namespace sandprobe::testing
