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
    "test -r /var/lib/sandprobe-microvm/initramfs.cpio.gz && test -r /var/lib/sandprobe-microvm/vmlinuz"};

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
  }
  EXPECT_GT(probes, 0);
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
  ExpectVerdict(run.report, "persist.session.survives:{workspace}", "pass");
  ExpectVerdict(run.report, "persist.session.ephemeral:/tmp", "pass");
}

// The run directory shared over 9p: the host canary's content is read inside the VM.
TEST(MicrovmTest, LeakyFailsTheHostCanaryItShares) {
  if (!BackendAvailable("qemu", kQemuUp)) return;
  CliRun run = RunSuite("sandboxes/microvm-leaky.json", "default");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  ExpectVerdict(run.report, "fs.read.denied:{host_canary}", "fail", "too-permissive");
  ExpectVerdict(run.report, "fs.alias.denied:{host_canary}[dotdot]", "fail", "too-permissive");
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
  CliRun run = RunCommand({guest + "/launch", "--kernel", guest + "/vmlinuz", "--initrd",
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
  CliRun run = RunCommand({guest + "/launch", "--kernel", guest + "/vmlinuz", "--initrd",
                           initrd, "--", "/bin/true"});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(run.exit_code, 125) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("reported no exit status"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sandprobe::testing
