// The liar corpus: sandboxes that forge, contradict or cut what the probe said, or end badly
// after a clean stream (tests/liars/liar.py wraps a real sandbox command and lies one way). For
// every lie, no check passes; where the harness holds its own evidence (the canary's hash, the
// nonce it generated, a listener's receipt) the leak is a fail. The honest row proves the
// wrapper itself can pass, so "no pass" below is the lie's doing.
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// bwrap-strict's command line without its trailing {probe} {probe_args...}: honest, every
// check of the default suite passes through it.
json BwrapStrictProfile() {
  std::ifstream in(SourcePath("sandboxes/bwrap-strict.json"));
  return json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
}

std::vector<std::string> BwrapStrictCommand() {
  std::vector<std::string> run = BwrapStrictProfile().value("run", std::vector<std::string>{});
  if (run.size() >= 2) run.resize(run.size() - 2);
  return run;
}

enum class Base { kBwrap, kHost };

struct Liar {
  const char* name;
  const char* mode;  // liar.py's MODE
  Base base;
  const char* suite;
  // Checks whose facts the lie touched (id prefixes); empty: every check.
  std::vector<std::string> lied_about;
  std::vector<std::string> must_fail;  // checks the harness's own evidence fails
  bool preflight_fails = false;        // requires: ["false"], run only after an incomplete launch
  int exit_code;
};

const std::vector<Liar>& Corpus() {
  static const std::vector<Liar> kCorpus = {
      {"frames under a guessed nonce", "foreign-nonce", Base::kBwrap, "default", {}, {}, false, 3},
      {"a denial stated before the real read", "deny-then-leak", Base::kBwrap, "default", {}, {}, false, 3},
      {"exit 1 after a complete stream", "exit-1-after-done", Base::kBwrap, "default", {}, {}, false, 3},
      {"killed by a signal after a complete stream", "signal-after-done", Base::kBwrap, "default", {}, {},
       false, 3},
      {"a denial before the canary read, on the host", "deny-then-leak", Base::kHost, "default", {},
       {"fs.read.denied:host-canary"}, false, 1},
      {"the canary hash moved to another fact", "hide-canary-hash", Base::kHost, "default",
       {"fs.read.denied:host-canary", "fs.alias.denied:host-canary"},
       {"fs.read.denied:host-canary"}, false, 1},
      {"nonce delivered, another one reported", "fact-nonce", Base::kHost, "network",
       {"net.tcp.", "net.udp.", "net.dns."}, {"net.tcp.denied:loopback", "net.udp.denied:loopback"}, false, 1},
      // Only the host's watch of its canary sees these two (witness_canary_watch.h).
      {"a canary read reported as EACCES, its hash nowhere", "deny-canary", Base::kHost, "default",
       {"fs.read.denied:host-canary", "fs.alias.denied:host-canary"},
       {"fs.read.denied:host-canary", "fs.alias.denied:host-canary[symlink]"}, false, 1},
      {"the host canary deleted before the probe looks", "delete-canary", Base::kBwrap, "default",
       {"fs.read.denied:host-canary", "fs.alias.denied:host-canary"},
       {"fs.read.denied:host-canary", "fs.alias.denied:host-canary[symlink]"}, false, 1},
      {"a leak, then death, then a failing preflight", "leak-then-die", Base::kHost, "default", {},
       {"fs.read.denied:host-canary", "env.secret.hidden"}, true, 1},
  };
  return kCorpus;
}

// Writes a profile whose run is liar.py MODE around the base sandbox's command line.
std::string WriteProfile(const std::string& dir, const std::string& mode, Base base, bool preflight_fails) {
  // An explicit path: a bare name would resolve through PATH (pyenv shims, say) and be distrusted.
  json run = {"/usr/bin/python3", SourcePath("tests/liars/liar.py"), mode};
  if (base == Base::kBwrap) {
    for (const std::string& arg : BwrapStrictCommand()) run.push_back(arg);
  }
  run.push_back("{probe}");
  run.push_back("{probe_args...}");
  json profile = {{"name", "liar"},
                  {"description", "a sandbox that lies about what its probe said"},
                  {"backend", base == Base::kBwrap ? "bwrap" : "host"},
                  {"policy", SourcePath("policies/tier-low.json")},
                  {"lifecycle", "oneshot"},
                  {"injection", base == Base::kBwrap ? "ro-bind" : "host-path"},
                  {"probe_path", base == Base::kBwrap ? "/opt/sandprobe/sandprobe-probe"
                                                      : "{probe_dir}/sandprobe-probe"},
                  {"workspace_path", base == Base::kBwrap ? "/workspace" : "{workspace}"},
                  {"run", run},
                  {"timeout_seconds", 30}};
  // The wrapper runs bwrap-strict's command as bwrap-strict runs it (an empty environment).
  if (base == Base::kBwrap) {
    profile["environment"] = BwrapStrictProfile().value("environment", "inherit");
    // bwrap-strict runs its probe as nobody, who must reach the workspace (run/run_dir.h).
    if (BwrapStrictProfile().contains("workspace_owner")) profile["workspace_owner"] = BwrapStrictProfile()["workspace_owner"];
  }
  if (preflight_fails) {
    profile["requires"] = json::array({json::array({"false"})});
    profile["preflight"] = "on_failure";
  }
  std::string path = dir + "/liar.json";
  std::ofstream(path) << profile.dump(2);
  return path;
}

CliRun RunLiar(const std::string& mode, Base base, const std::string& suite, bool preflight_fails) {
  std::string dir = MakeTempDir("liar");
  std::string profile = WriteProfile(dir, mode, base, preflight_fails);
  CliRun run = RunCli({"run", "--sandbox", profile, "--suite", SourcePath("suites/" + suite + ".json"),
                       "--no-color", "--json", dir + "/report.json"});
  std::ifstream in(dir + "/report.json");
  if (in) run.report = json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return run;
}

TEST(LiarsTest, TheHonestWrapperPassesEveryCheck) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunLiar("honest", Base::kBwrap, "default", false);
  ASSERT_TRUE(run.report.contains("checks")) << run.err;
  for (const json& check : run.report["checks"]) {
    EXPECT_EQ(check.value("verdict", ""), "pass") << check.value("id", "") << ": " << check.value("observed", "");
  }
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(LiarsTest, NoLieYieldsAPass) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  for (const Liar& liar : Corpus()) {
    SCOPED_TRACE(liar.name);
    CliRun run = RunLiar(liar.mode, liar.base, liar.suite, liar.preflight_fails);
    ASSERT_TRUE(run.report.contains("checks")) << run.err;
    ASSERT_FALSE(run.report["checks"].empty());
    for (const json& check : run.report["checks"]) {
      const std::string id = check.value("id", "");
      bool lied_about = liar.lied_about.empty();
      for (const std::string& prefix : liar.lied_about) lied_about = lied_about || id.starts_with(prefix);
      if (!lied_about) continue;
      EXPECT_NE(check.value("verdict", ""), "pass") << id << ": " << check.value("observed", "");
    }
    for (const std::string& id : liar.must_fail) ExpectVerdict(run.report, id, "fail", "too-permissive");
    EXPECT_EQ(run.exit_code, liar.exit_code) << run.out << run.err;
  }
}

// A cached result: the first run records every launch's output (and passes); the second
// replays it under each new launch's nonce without running the probe. Every frame is well
// formed and carries the right nonce: only the launch's fresh control (an answer over a file
// that did not exist before the launch, and an open the host's watch saw) tells (issue 25).
TEST(LiarsTest, AReplayOfAnEarlierRunsOutputPassesNothing) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string cache = MakeTempDir("liar-replay");
  CliRun recorded = RunLiar("replay:" + cache, Base::kBwrap, "default", false);
  ASSERT_TRUE(recorded.report.contains("checks")) << recorded.err;
  EXPECT_EQ(recorded.exit_code, 0) << "the recording run is honest" << recorded.err;
  CliRun replayed = RunLiar("replay:" + cache, Base::kBwrap, "default", false);
  ASSERT_TRUE(replayed.report.contains("checks")) << replayed.err;
  ASSERT_FALSE(replayed.report["checks"].empty());
  for (const json& check : replayed.report["checks"]) {
    EXPECT_NE(check.value("verdict", ""), "pass") << check.value("id", "");
    EXPECT_NE(check.value("observed", "").find("fresh positive control failed"), std::string::npos)
        << check.value("observed", "");
  }
  for (const json& launch : replayed.report["witnesses"]["launch_control"]["launches"]) {
    EXPECT_TRUE(launch.contains("failed")) << launch.dump();
    EXPECT_EQ(launch.value("opened", true), false) << launch.dump();
  }
  EXPECT_EQ(replayed.exit_code, 3) << replayed.out << replayed.err;
  std::error_code ec;
  fs::remove_all(cache, ec);
}

// The same replay, with the one excuse that leaves a launch without a control: "my probe could
// not read it". The policy (tier-low) promises the workspace readable, so the excuse is not
// taken: before, it only capped the replayed passes at `reported`, and the run exited 0.
TEST(LiarsTest, AReplayExcusedAsAnUnreadableControlPassesNothing) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string cache = MakeTempDir("liar-excused");
  CliRun recorded = RunLiar("replay-excused:" + cache, Base::kBwrap, "default", false);
  EXPECT_EQ(recorded.exit_code, 0) << "the recording run is honest" << recorded.err;
  CliRun replayed = RunLiar("replay-excused:" + cache, Base::kBwrap, "default", false);
  ASSERT_TRUE(replayed.report.contains("checks")) << replayed.err;
  ASSERT_FALSE(replayed.report["checks"].empty());
  for (const json& check : replayed.report["checks"]) {
    EXPECT_NE(check.value("verdict", ""), "pass") << check.value("id", "");
  }
  for (const json& launch : replayed.report["witnesses"]["launch_control"]["launches"]) {
    EXPECT_FALSE(launch.contains("unavailable")) << launch.dump();
    EXPECT_NE(launch.value("failed", "").find("policy declares {workspace} readable"), std::string::npos)
        << launch.dump();
  }
  EXPECT_EQ(replayed.exit_code, 3) << replayed.out << replayed.err;
  std::error_code ec;
  fs::remove_all(cache, ec);
}

// The forged program: a copy of bwrap-strict's first program (a bare name: `setpriv`) earlier in
// PATH, in a directory another user owns (who could have put anything there). It runs the real
// one, so the frames are perfect: only the harness's own record of which program ran, and who
// could have written it, tells, and such a run passes nothing. (A program in a directory only
// the invoking user can write, say ~/.local/bin, runs with a warning: CliConventionsTest.)
TEST(LiarsTest, AProgramShadowedInPathPassesNothing) {
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string dir = MakeTempDir("liar");
  ::chmod(dir.c_str(), 0755);
  const std::string program = BwrapStrictCommand().at(0);
  ASSERT_EQ(program.find('/'), std::string::npos) << "bwrap-strict names its first program by a bare name";
  const std::string forged = dir + "/" + program;
  std::ofstream(forged) << "#!/bin/sh\nexec /usr/bin/" << program << " \"$@\"\n";
  ::chmod(forged.c_str(), 0755);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0) << "the directory becomes nobody's";
  CliRun run = RunCommand({"/usr/bin/env", "PATH=" + dir + ":" + std::getenv("PATH"), SANDPROBE_CLI, "run",
                           "--sandbox", SourcePath("sandboxes/bwrap-strict.json"), "--no-color",
                           "--json", dir + "/r.json"});
  std::ifstream in(dir + "/r.json");
  json report = json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(report.contains("checks")) << run.err;
  for (const json& check : report["checks"]) {
    EXPECT_NE(check.value("verdict", ""), "pass") << check.value("id", "");
    EXPECT_NE(check.value("observed", "").find(forged), std::string::npos) << check.value("observed", "");
  }
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace sandprobe::testing
