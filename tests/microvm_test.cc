// The QEMU microVM profiles (sandboxes/microvm*.json) on a real VM: QEMU's software CPU boots
// Debian's kernel per launch (seconds each), so these tests are few. scripts/setup.sh installs
// qemu and builds the guest into /var/lib/sandprobe-microvm.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

const char kGuest[] = "/var/lib/sandprobe-microvm";
const std::vector<std::string> kQemuUp = {
    "sh", "-c",
    "command -v qemu-system-x86_64 && test -x /var/lib/sandprobe-microvm/launch && "
    "test -r /var/lib/sandprobe-microvm/initramfs.cpio.gz && test -r /var/lib/sandprobe-microvm/kernel"};

CliRun RunSuite(const std::string& profile, const std::string& suite) {
  return RunProfile(profile, {"--suite", SourcePath("suites/" + suite + ".json"), "--require-backend"});
}

// Every check passes (skips are directories judged under another name), and every probe
// launch's stream ended with the guest's exit status line: the status came from inside.
void ExpectAllPass(const CliRun& run) {
  const json& r = run.report;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_TRUE(r.contains("checks")) << run.out << run.err;
  for (const json& v : r["checks"]) {
    if (v.value("verdict", "") == "skip") continue;
    EXPECT_EQ(v.value("verdict", ""), "pass") << v.value("id", "") << ": " << v.value("observed", "");
  }
  int probes = 0;
  for (const json& launch : r["launches"]) {
    if (launch.value("purpose", "") != "probe") continue;
    ++probes;
    EXPECT_NE(launch.value("stdout_tail", "").find("@@sandprobe-exit 0"), std::string::npos)
        << launch.dump();
    // The accelerator and why (the cached preflight), at the end of the launch's stderr.
    EXPECT_NE(launch.value("stderr_tail", "").find("microvm launch: accel "), std::string::npos)
        << launch.value("stderr_tail", "");
  }
  EXPECT_GT(probes, 0);
  // ... and in the host facts, from the profile's `version`, in the runs that ask the privilege
  // witness for them (the privileges suite).
  if (!r["host"].contains("backend_version")) return;
  std::string version = r["host"].value("backend_version", "");
  EXPECT_TRUE(version.find("; accel tcg, because ") != std::string::npos ||
              version.find("; accel kvm, because ") != std::string::npos)
      << r["host"].dump();
}

TEST(MicrovmTest, StrictPassesItsPolicyInTheDefaultSuite) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  ExpectAllPass(RunSuite("sandboxes/microvm.json", "default"));
}

TEST(MicrovmTest, StrictPassesItsPolicyInTheNetworkSuite) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  ExpectAllPass(RunSuite("sandboxes/microvm.json", "network"));
}

// The workspace is a 9p share of the host's: it survives into a fresh VM; the guest's /tmp
// and the background process do not.
TEST(MicrovmTest, StrictPassesItsPolicyInThePersistenceSuite) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  CliRun run = RunSuite("sandboxes/microvm.json", "persistence");
  ExpectAllPass(run);
  ExpectVerdict(run.report, "persist.session.survives:workspace", "pass");
  ExpectVerdict(run.report, "persist.session.ephemeral:/tmp", "pass");
}

// The run directory shared over 9p: the host canary's content is read inside the VM.
TEST(MicrovmTest, LeakyFailsTheHostCanaryItShares) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  CliRun run = RunSuite("sandboxes/microvm-leaky.json", "default");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  ExpectVerdict(run.report, "fs.read.denied:host-canary", "fail", "too-permissive");
  ExpectVerdict(run.report, "fs.alias.denied:host-canary[dotdot]", "fail", "too-permissive");
  ExpectVerdict(run.report, "fs.read.denied:/etc/shadow", "pass");
}

// A NIC on QEMU's user-mode network: slirp connects from the host's own sockets, so the guest
// reaches the host's bridge canaries (the guest's 127.0.0.1 is its own loopback).
TEST(MicrovmTest, UsernetFailsTheBridgeCanaries) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  CliRun run = RunSuite("sandboxes/microvm-usernet.json", "network");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  ExpectVerdict(run.report, "net.tcp.denied:bridge", "fail", "too-permissive");
  ExpectVerdict(run.report, "net.udp.denied:bridge", "fail", "too-permissive");
  ExpectVerdict(run.report, "net.tcp.denied:loopback", "pass");
}

// qemu exits 0 after a clean poweroff whatever the guest command returned: a complete probe
// run followed by exit 3 in the guest must not be a clean launch.
TEST(MicrovmTest, TheGuestsExitStatusDecidesNotQemus) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  CliRun run = RunSuite("tests/data/microvm-exit3.json", "default");
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  ASSERT_TRUE(run.report.contains("checks")) << run.out << run.err;
  for (const json& v : run.report["checks"]) {
    EXPECT_EQ(v.value("verdict", ""), "error") << v.value("id", "");
    EXPECT_NE(v.value("observed", "").find("exit 3 (the sandbox's exit status line"), std::string::npos)
        << v.value("observed", "");
  }
}

// The argv reaches the guest exactly (spaces, quotes, newlines, empty arguments) over fw_cfg,
// and stdout carries the guest command's output and then its status, nothing else.
TEST(MicrovmTest, TheLauncherCarriesArgvExactlyAndTheStatusLast) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  const std::string guest = kGuest;
  CliRun run = RunCommand({guest + "/launch", "--kernel", guest + "/kernel", "--initrd",
                           guest + "/initramfs.cpio.gz", "--", "/bin/sh", "-c",
                           "printf '[%s]' \"$@\"; echo; exit 7", "sh", "a b", "", "it's",
                           "two\nlines", std::string(4096, 'x')});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "[a b][][it's][two\nlines][" + std::string(4096, 'x') + "]\n@@sandprobe-exit 7\n")
      << run.err;
}

}  // namespace
}  // namespace sandprobe::testing

namespace sandprobe::testing {
namespace {

// A guest that panics (here: an initramfs that is not a cpio archive, so no root filesystem)
// makes qemu exit 0 under -no-reboot; the launcher must not pass that on as a clean exit.
TEST(MicrovmTest, AGuestPanicIsNotACleanExit) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  const std::string guest = kGuest;
  std::string tmpl = (std::filesystem::temp_directory_path() / "sp-microvm-XXXXXX").string();
  const std::string dir = mkdtemp(tmpl.data());
  const std::string initrd = dir + "/not-a-cpio";
  std::ofstream(initrd) << "not a cpio archive\n";
  CliRun run = RunCommand({guest + "/launch", "--kernel", guest + "/kernel", "--initrd",
                           initrd, "--", "/bin/true"});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(run.exit_code, 125) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("reported no exit status"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sandprobe::testing

namespace sandprobe::testing {
namespace {

// A temp dir removed at the end of the test.
struct TempDir {
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sp-microvm-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

// A host profile (the probe runs directly, exits 0, prints no exit status line) that says its
// probe status comes from that line: the runner, not a launcher script, must refuse to pass it.
std::string ExitLineProfile(const std::string& dir, const json& run) {
  json profile = {{"name", "host-exit-line"},
                  {"description", "host, with probe_exit: exit_line"},
                  {"backend", "host"},
                  {"policy", SourcePath("policies/tier-low.json")},
                  {"lifecycle", "oneshot"},
                  {"injection", "host-path"},
                  {"probe_path", "{probe_dir}/sandprobe-probe"},
                  {"workspace_path", "{workspace}"},
                  {"run", run},
                  {"probe_exit", "exit_line"}};
  std::string path = dir + "/profile.json";
  std::ofstream(path) << profile.dump(2);
  return path;
}

CliRun RunDefaultSuite(const std::string& profile_path, const std::string& dir) {
  CliRun run = RunCli({"run", "--sandbox", profile_path, "--suite", SourcePath("suites/default.json"),
                       "--no-color", "--json", dir + "/report.json"});
  std::ifstream in(dir + "/report.json");
  if (in) run.report = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return run;
}

TEST(MicrovmTest, TheRunnerRequiresTheExitLineWhenTheProfileSaysSo) {
  TempDir dir;
  CliRun run = RunDefaultSuite(ExitLineProfile(dir.path, {"{probe}", "{probe_args...}"}), dir.path);
  ASSERT_TRUE(run.report.contains("checks")) << run.out << run.err;
  int errors = 0;
  for (const json& v : run.report["checks"]) {
    EXPECT_NE(v.value("verdict", ""), "pass") << v.value("id", "") << ": " << v.value("observed", "");
    if (v.value("verdict", "") != "error") continue;
    ++errors;
    EXPECT_NE(v.value("observed", "").find("(probe_exit: exit_line)"), std::string::npos)
        << v.value("id", "") << ": " << v.value("observed", "");
  }
  EXPECT_GT(errors, 0);

  // The control: the same probe followed by the line it promised passes what it passes.
  TempDir again;
  CliRun with_line = RunDefaultSuite(
      ExitLineProfile(again.path, {"/bin/sh", "-c", "\"$0\" \"$@\"; echo \"@@sandprobe-exit $?\"",
                                   "{probe}", "{probe_args...}"}),
      again.path);
  ASSERT_TRUE(with_line.report.contains("checks")) << with_line.out << with_line.err;
  int passes = 0;
  for (const json& v : with_line.report["checks"]) {
    if (v.value("verdict", "") == "pass") ++passes;
    EXPECT_EQ(v.value("observed", "").find("probe_exit"), std::string::npos) << v.value("observed", "");
  }
  EXPECT_GT(passes, 0);
}

// --accel auto decides once per guest and qemu and says why; the qemu the preflight started is
// gone afterwards (SIGKILLed by pid at the timeout when kvm cannot run the guest, as here).
TEST(MicrovmTest, TheAcceleratorPreflightSaysWhyCachesItAndLeavesNoQemu) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  const std::string guest = kGuest;
  TempDir dir;
  std::filesystem::copy_file(guest + "/initramfs.cpio.gz", dir.path + "/initramfs.cpio.gz");
  const std::vector<std::string> preflight = {guest + "/launch", "--kernel", guest + "/kernel", "--initrd",
                                              dir.path + "/initramfs.cpio.gz", "--accel", "auto",
                                              "--accel-cache", dir.path + "/accel", "--accel-timeout", "3",
                                              "--preflight"};
  CliRun first = RunCommand(preflight);
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(first.out.starts_with("microvm launch: accel kvm, because kvm booted the guest") ||
              first.out.starts_with("microvm launch: accel tcg, because "))
      << first.out;
  EXPECT_NE(first.out.find("cached in " + dir.path + "/accel"), std::string::npos) << first.out;
  EXPECT_TRUE(Carriers(dir.path).empty()) << "a qemu of the preflight is still running";

  CliRun second = RunCommand(preflight);  // from the cache: the same line, the same time
  EXPECT_EQ(second.out, first.out);
  CliRun version = RunCommand({guest + "/launch", "--kernel", guest + "/kernel", "--initrd",
                               dir.path + "/initramfs.cpio.gz", "--accel-cache", dir.path + "/accel",
                               "--version"});
  EXPECT_NE(version.out.find("; accel " + first.out.substr(first.out.find("accel ") + 6, 5)), std::string::npos)
      << version.out;
}

// The preflight's other outcome, where kvm cannot show it here: a boot that runs the guest
// picks that accelerator (tcg stands in for a working kvm).
TEST(MicrovmTest, APreflightBootThatRunsTheGuestPicksItsAccelerator) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  const std::string guest = kGuest;
  CliRun run = RunCommand({guest + "/launch", "--kernel", guest + "/kernel", "--initrd",
                           guest + "/initramfs.cpio.gz", "--accel", "auto", "--preflight-tries", "tcg",
                           "--accel-timeout", "300", "--preflight"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.out.starts_with("microvm launch: accel tcg, because tcg booted the guest and ran sh -c \"exit 0\" in "))
      << run.out;
}

}  // namespace
}  // namespace sandprobe::testing
