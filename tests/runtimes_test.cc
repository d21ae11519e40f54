// The probe that ran is ours, and every runtime's probe plugs in (issues 25 and 27), on real
// backends: a --probe-dir holding another program and a profile that never injects the probe
// are refused; a program answering with another build's hello is refused after its launch; the
// build's table of probes agrees with each probe's own --families; deno-strict judges what the
// JS probe expresses and skips the rest as not expressible in js; the native hello names the
// probe.
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

const std::string kDeno = "/opt/sandprobe-runtimes/node_modules/@deno/linux-x64-glibc/deno";

std::string BuildPath(const std::string& relative) { return std::string(SANDPROBE_BINARY_DIR) + "/" + relative; }

std::string WriteScript(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = WriteFile(dir, name, text);
  ::chmod(path.c_str(), 0755);
  return path;
}

// issue 25: `--probe-dir` pointing at another program gave 8 passes on main.
TEST(RuntimesTest, AProbeDirHoldingAnotherProgramIsRefusedBeforeAnyLaunch) {
  const std::string dir = MakeTempDir("fake-probe");
  WriteScript(dir, "sandprobe-probe", "#!/bin/sh\nexec " + BuildPath("probe/sandprobe-probe") + " \"$@\"\n");
  CliRun run = RunProfile("sandboxes/host.json", {"--probe-dir", dir});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  // The temp dir is private (0700): the run hashes the copy it makes for the sandbox's uid.
  EXPECT_THAT(run.err, HasSubstr("the probe that would run is not ours: "));
  EXPECT_THAT(run.err, HasSubstr(dir + "/sandprobe-probe, --probe-dir " + dir + ") has SHA-256 "));
  EXPECT_THAT(run.err, HasSubstr(", the native probe this build made has "));
  EXPECT_TRUE(run.report.is_null()) << "nothing was judged";
}

// issue 25: an ro-bind profile that never mounts {probe_dir} ran the image's own file (12
// passes on main, and `validate` accepted it).
TEST(RuntimesTest, AnRoBindProfileThatNeverBindsTheProbeDirIsRefusedByValidateAndRun) {
  const std::string dir = MakeTempDir("robind");
  const std::string profile = WriteFile(dir, "robind.json", R"({
  "name": "robind-without-probe-dir",
  "description": "binds the host root and runs the file at the probe path, never {probe_dir}",
  "backend": "bwrap", "lifecycle": "oneshot", "injection": "ro-bind", "environment": "empty",
  "probe_path": "/usr/local/bin/sandprobe-probe", "workspace_path": "/tmp/ws",
  "run": ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
          "--bind", "{workspace}", "/tmp/ws", "--unshare-all", "{probe}", "{probe_args...}"]
})");
  CliRun validate = RunCli({"validate", profile});
  EXPECT_EQ(validate.exit_code, 2) << validate.out << validate.err;
  EXPECT_THAT(validate.out + validate.err,
              HasSubstr(profile + ":4:60: /injection: \"ro-bind\", but run never uses {probe_dir}"));
  CliRun run = RunCli({"run", "--sandbox", profile, "--policy", SourcePath("policies/tier-low.json")});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("/injection: \"ro-bind\", but run never uses {probe_dir}"));
}

// A sandbox whose image carries a program of its own at the probe path: its hello is not this
// build's, so the run judges nothing and says which key differs.
TEST(RuntimesTest, AHelloOfAnotherBuildEndsTheRunAsInvalidInput) {
  const std::string dir = MakeTempDir("other-build");
  const std::string program = WriteScript(dir, "other-probe", R"(#!/usr/bin/python3
import json, os, sys
nonce = sys.argv[sys.argv.index("--nonce") + 1]
def frame(fact):
    os.write(1, ("@@sandprobe %s %s\n" % (nonce, json.dumps(fact))).encode())
frame({"family": "hello", "pid": os.getpid(), "uid": 0, "euid": 0, "gid": 0, "cwd": "/", "runtime": "native",
       "runtime_version": "glibc 2.36", "build_id": "native-0000000000000000", "families": ["fs.read"]})
frame({"done": True})
)");
  const std::string profile = WriteFile(dir, "image.json", R"({
  "name": "own-probe-image", "description": "an image that carries its own probe", "backend": "host",
  "lifecycle": "oneshot", "injection": "image", "probe_path": ")" + program + R"(",
  "workspace_path": "{workspace}", "run": ["{probe}", "{probe_args...}"]
})");
  const std::string json_path = dir + "/report.json";
  CliRun run = RunCli({"run", "--sandbox", profile, "--policy", SourcePath("policies/tier-low.json"), "--suite",
                       SourcePath("suites/default.json"), "--json", json_path});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("the probe that ran is not ours: launch L1"));
  EXPECT_THAT(run.err, HasSubstr("hello build_id \"native-0000000000000000\", the injected probe's is \"native-"));
  EXPECT_FALSE(std::ifstream(json_path).good()) << "no report: nothing was judged";
}

// `sandprobe list` shows the build's table of probes; each probe must say the same itself.
std::map<std::string, std::set<std::string>> ListedProbes() {
  CliRun list = RunCli({"list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  std::map<std::string, std::set<std::string>> probes;
  std::istringstream lines(list.out.substr(list.out.find("\nprobes:\n") + 9));
  for (std::string line; std::getline(lines, line) && line.rfind("  ", 0) == 0;) {
    std::istringstream words(line);
    std::string runtime, word;
    words >> runtime;
    while (words >> word && word != "families:") {}
    while (words >> word) probes[runtime].insert(word);
  }
  return probes;
}

std::set<std::string> Lines(const std::string& text) {
  std::set<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) if (!line.empty()) lines.insert(line);
  return lines;
}

TEST(RuntimesTest, TheBuildsTableOfProbesIsWhatEachProbeSaysItCanDo) {
  std::map<std::string, std::set<std::string>> listed = ListedProbes();
  ASSERT_TRUE(listed.count("native")) << "no native row";
  ASSERT_TRUE(listed.count("js")) << "no js row";
  CliRun native = RunCommand({BuildPath("probe/sandprobe-probe"), "--families"});
  ASSERT_EQ(native.exit_code, 0);
  EXPECT_EQ(Lines(native.out), listed["native"]);
  ASSERT_TRUE(listed.count("python")) << "no python row";
  CliRun python = RunCommand({"/usr/bin/python3", BuildPath("probe-python/sandprobe_probe.py"), "--families"});
  ASSERT_EQ(python.exit_code, 0) << python.err;
  EXPECT_EQ(Lines(python.out), listed["python"]) << "the list CMake read from the Python source (probes/python/CMakeLists.txt)";
  EXPECT_EQ(listed["python"].count("lang.escape"), 1u);
  if (!BackendAvailable("node", {"node", "--version"})) return;
  CliRun node = RunCommand({"node", BuildPath("probe-js/sandprobe-probe.js"), "--families"});
  ASSERT_EQ(node.exit_code, 0) << node.err;
  EXPECT_EQ(Lines(node.out), listed["js"]) << "the list CMake read from the JS source (probes/js/CMakeLists.txt)";
  EXPECT_EQ(listed["js"].count("priv.caps"), 0u);
  if (!BackendAvailable("deno", {kDeno, "--version"})) return;
  CliRun deno = RunCommand({kDeno, "run", "--no-prompt", "--allow-read", BuildPath("probe-js/sandprobe-probe.js"),
                            "--families"});
  ASSERT_EQ(deno.exit_code, 0) << deno.err;
  EXPECT_EQ(Lines(deno.out), listed["js"]);
}

// issue 27: deno-strict runs the JS probe; what it cannot express is a skip, never an error.
// priv.runtime_sockets it does express: Deno refuses the socket scan's reads and every unix
// connect, and that gate is the boundary the judge passes it on.
TEST(RuntimesTest, DenoStrictJudgesWhatTheJsProbeExpressesAndSkipsThePrivFamilies) {
  if (!BackendAvailable("deno", {kDeno, "--version"})) return;
  CliRun run = RunProfile("sandboxes/deno-strict.json",
                          {"--require-backend", "--suite", SourcePath("suites/default.json") + "," +
                                                               SourcePath("suites/privileges.json")});
  ASSERT_TRUE(run.report.contains("checks")) << run.out << run.err;
  int pass = 0, not_expressible = 0;
  for (const json& check : run.report["checks"]) {
    const std::string id = check.value("id", ""), verdict = check.value("verdict", "");
    EXPECT_NE(verdict, "error") << id << ": " << check.value("observed", "");
    pass += verdict == "pass";
    if (id == "priv.runtime_sockets") {
      EXPECT_EQ(verdict, "pass") << check.value("observed", "");
      EXPECT_THAT(check.value("observed", ""), HasSubstr("and every unix connect the probe tried"));
      continue;
    }
    if (id.rfind("priv.", 0) == 0 || id.rfind("host.", 0) == 0) {
      EXPECT_EQ(verdict, "skip") << id;
      EXPECT_THAT(check.value("observed", ""), HasSubstr("not expressible in js: the js probe does not implement priv."))
          << id;
      ++not_expressible;
    }
  }
  EXPECT_GE(pass, 8) << run.out;
  EXPECT_GE(not_expressible, 20);
  for (const json& launch : run.report["launches"]) {
    for (const std::string& arg : launch.value("argv", std::vector<std::string>{})) {
      if (arg == "priv.runtime_sockets") continue;
      EXPECT_NE(arg.rfind("priv.", 0), 0u) << "a priv family the JS probe lacks was sent to it: " << arg;
    }
  }
  EXPECT_EQ(run.report["witnesses"]["probe"]["runtime"], "js");
  EXPECT_EQ(SchemaProblem(run.report), "");
}

// issue 27: RestrictedPython audited through the Python probe. As its docs set it up
// (restrictedpython.json) no escape route reads the host canary: lang.escape passes; with the
// plain getattr as the guard (restrictedpython-unguarded.json) the canary is read, and the
// verdict's evidence is the frame whose SHA-256 equals the harness's own hash of the canary.
const std::string kRestrictedPython = "/opt/sandprobe-runtimes/restrictedpython-8.0";

CliRun RunRestrictedPython(const std::string& profile) {
  return RunProfile(profile, {"--require-backend", "--policy", SourcePath("policies/restrictedpython.json"),
                              "--suite", SourcePath("suites/default.json") + "," + SourcePath("suites/language.json")});
}

const json* CheckById(const json& report, const std::string& id) {
  for (const json& check : report["checks"]) {
    if (check.value("id", "") == id) return &check;
  }
  return nullptr;
}

TEST(RuntimesTest, RestrictedPythonAsDocumentedKeepsTheCanaryAndLangEscapePasses) {
  if (!BackendAvailable("restrictedpython", {"/usr/bin/python3", "-c", "import sys; sys.path.insert(0, '" +
                                             kRestrictedPython + "/usr/lib/python3/dist-packages'); import RestrictedPython"})) {
    return;
  }
  CliRun run = RunRestrictedPython("sandboxes/restrictedpython.json");
  ASSERT_TRUE(run.report.contains("checks")) << run.out << run.err;
  const json* escape = CheckById(run.report, "lang.escape.denied:host-canary");
  ASSERT_NE(escape, nullptr) << run.out;
  EXPECT_EQ(escape->value("verdict", ""), "pass") << escape->dump();
  EXPECT_THAT(escape->value("observed", ""), HasSubstr("escape routes were refused"));
  for (const json& check : run.report["checks"]) {
    EXPECT_NE(check.value("verdict", ""), "error") << check.dump();
    EXPECT_NE(check.value("verdict", ""), "fail") << check.dump();
  }
  EXPECT_EQ(run.report["witnesses"]["probe"]["runtime"], "python");
  EXPECT_EQ(SchemaProblem(run.report), "");
}

TEST(RuntimesTest, RestrictedPythonWithThePlainGetattrFailsLangEscapeByTheCanaryHash) {
  if (!BackendAvailable("restrictedpython", {"/usr/bin/python3", "-c", "import sys; sys.path.insert(0, '" +
                                             kRestrictedPython + "/usr/lib/python3/dist-packages'); import RestrictedPython"})) {
    return;
  }
  CliRun run = RunRestrictedPython("sandboxes/restrictedpython-unguarded.json");
  ASSERT_TRUE(run.report.contains("checks")) << run.out << run.err;
  const json* escape = CheckById(run.report, "lang.escape.denied:host-canary");
  ASSERT_NE(escape, nullptr) << run.out;
  EXPECT_EQ(escape->value("verdict", ""), "fail") << escape->dump();
  EXPECT_THAT(escape->value("observed", ""), HasSubstr("generator_frame"));
  // The proof is the harness's: a frame of the run reports the hash of the canary it planted.
  const std::string canary_sha256 = run.report["witnesses"]["canary_file"].value("sha256", "");
  ASSERT_EQ(canary_sha256.size(), 64u) << run.report["witnesses"].dump();
  int proven = 0;
  for (const json& launch : run.report["launches"]) {
    for (const json& frame : launch["frames"]) {
      proven += frame.value("family", "") == "lang.escape" && frame.value("sha256", "") == canary_sha256;
    }
  }
  EXPECT_GE(proven, 5) << "generator_frame, traceback_frame, function_globals, subclasses, module_private";
  EXPECT_EQ(SchemaProblem(run.report), "");
}

// The native probe's hello names its runtime, version, build id and families, and the build id
// is the one the harness expected (the report's witnesses.probe).
TEST(RuntimesTest, TheNativeHelloCarriesTheFourKeys) {
  CliRun run = RunProfile("sandboxes/host.json", {"--suite", SourcePath("suites/default.json")});
  ASSERT_TRUE(run.report.contains("launches")) << run.err;
  const json& hello = run.report["launches"].at(0)["frames"].at(0);
  EXPECT_EQ(hello.value("family", ""), "hello");
  EXPECT_EQ(hello.value("runtime", ""), "native");
  EXPECT_THAT(hello.value("runtime_version", ""), HasSubstr("glibc 2."));
  EXPECT_EQ(hello.value("build_id", ""), run.report["witnesses"]["probe"].value("build_id", "?"));
  EXPECT_EQ(hello.value("build_id", "").rfind("native-", 0), 0u);
  EXPECT_GE(hello["families"].size(), 30u);
  EXPECT_EQ(Lines(RunCommand({BuildPath("probe/sandprobe-probe"), "--families"}).out),
            std::set<std::string>(hello["families"].begin(), hello["families"].end()));
}

}  // namespace
}  // namespace sandprobe::testing
