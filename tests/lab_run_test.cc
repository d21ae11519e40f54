// The egress lab in a real run (issue 28): bwrap-lab (bwrap --share-net, started by the launcher
// inside the run's lab) under policies/lab-allow-one.json. bwrap has no allowlist, so the
// allowed name must pass and every control name must FAIL as too permissive, each decided by the
// lab's receipts; and nothing may have left the lab: its namespaces' only links are loopback and
// the veth pair between them, no host canary heard the run, and the host's resolv.conf, hosts,
// mounts and interfaces are as they were. Needs root (the lab and the join) and bwrap.
#include <net/if.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/lab_expect.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The mounts at or under /etc (the rest of the table changes with whatever else runs here).
std::string EtcMounts() {
  std::istringstream table(ReadAll("/proc/self/mountinfo"));
  std::string out;
  for (std::string line; std::getline(table, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    if (point.rfind("/etc", 0) == 0) out += line + "\n";
  }
  return out;
}

// What the host must still look like after the run (docker's veth* interfaces come and go with
// other users' containers).
struct HostState {
  std::string resolv_conf, hosts, mountinfo;
  ino_t resolv_inode = 0, hosts_inode = 0;
  std::set<std::string> interfaces;
  static HostState Now() {
    HostState s{ReadAll("/etc/resolv.conf"), ReadAll("/etc/hosts"), EtcMounts()};
    struct stat st {};
    if (::stat("/etc/resolv.conf", &st) == 0) s.resolv_inode = st.st_ino;
    if (::stat("/etc/hosts", &st) == 0) s.hosts_inode = st.st_ino;
    if (struct if_nameindex* list = ::if_nameindex()) {
      for (struct if_nameindex* i = list; i->if_index != 0; ++i) {
        if (std::string(i->if_name).rfind("veth", 0) != 0) s.interfaces.insert(i->if_name);
      }
      ::if_freenameindex(list);
    }
    return s;
  }
  bool operator==(const HostState&) const = default;
};

TEST(LabRunTest, BwrapWithoutAnAllowlistPassesTheAllowedNameAndFailsEveryControl) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (setns, mount)";
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const HostState before = HostState::Now();
  CliRun run = RunProfile("sandboxes/bwrap-lab.json",
                          {"--suite", SourcePath("suites/network.json"), "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 1) << run.err;

  const std::string allowed = "net.allow.reachable:pkg.lab.test";
  const json* reachable = FindCheck(r, allowed);
  ASSERT_NE(reachable, nullptr);
  EXPECT_EQ(reachable->value("verdict", ""), "pass") << reachable->value("observed", "");
  EXPECT_NE(reachable->value("observed", "").find("Host pkg.lab.test /sandprobe/"), std::string::npos)
      << reachable->value("observed", "");

  int controls = 0;
  for (const json& check : r["checks"]) {
    const std::string id = check.value("id", "");
    if (id.rfind("net.allow.refused:", 0) != 0) continue;
    ++controls;
    EXPECT_EQ(check.value("verdict", ""), "fail") << id << ": " << check.value("observed", "");
    EXPECT_EQ(check.value("direction", ""), "too-permissive") << id;
    EXPECT_NE(check.value("observed", "").find("the lab received"), std::string::npos) << id;
  }
  EXPECT_GE(controls, 5) << "the lab's look-alike and unrelated names";
  // Every spelling of the denied destination got through too: bwrap filters nothing.
  int bypasses = 0;
  for (const json& check : r["checks"]) {
    const std::string id = check.value("id", "");
    if (id.rfind("net.bypass.refused:", 0) != 0) continue;
    ++bypasses;
    EXPECT_EQ(check.value("verdict", ""), "fail") << id << ": " << check.value("observed", "");
    EXPECT_NE(check.value("observed", "").find("the lab received"), std::string::npos) << id;
  }
  // The 9 spellings, rebinding, fronting and (lab-allow-one filters DNS) DNS exfiltration.
  EXPECT_EQ(bypasses, 12);
  for (const char* id : {"net.bypass.refused:zone-id", "net.bypass.refused:rebinding", "net.bypass.refused:fronting",
                         "net.bypass.refused:dns-exfil"}) {
    EXPECT_NE(FindCheck(r, id), nullptr) << id;
  }
  // Rebinding reached the rebind target (an address of no allowed name), fronting carried the
  // denied Host to the allowed address, the exfiltrating lookup reached the lab's resolver.
  EXPECT_NE(FindCheck(r, "net.bypass.refused:rebinding")->value("observed", "").find("Host pkg.lab.test"),
            std::string::npos);
  EXPECT_NE(FindCheck(r, "net.bypass.refused:fronting")->value("observed", "").find("Host fronted.unrelated.evil.test"),
            std::string::npos);
  EXPECT_NE(FindCheck(r, "net.bypass.refused:dns-exfil")->value("observed", "").find(".unrelated.evil.test"),
            std::string::npos);
  // The host names are judged in the lab now, not skipped as untested.
  for (const json& check : r["checks"]) {
    EXPECT_NE(check.value("id", ""), "net.allow.untested:pkg.lab.test");
  }

  // Nothing could leave: its links, the receipts' peers, the host's canaries.
  ASSERT_TRUE(r["witnesses"]["lab"].is_object()) << r["witnesses"].dump();
  ASSERT_FALSE(r["witnesses"]["lab"]["sink_receipts"].empty());
  ExpectNothingLeftTheLab(r);
  EXPECT_EQ(HostState::Now(), before) << "the host's resolv.conf, hosts, mounts or interfaces changed";
}

}  // namespace
}  // namespace sandprobe::testing

namespace sandprobe::testing {
namespace {

// A "lab": "join" profile runs every probe launch in the lab, whatever the suite: bwrap-lab's
// --share-net must never share the host's network namespace.
TEST(LabRunTest, EveryLaunchOfAJoiningProfileRunsInTheLab) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (setns, mount)";
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  CliRun run = RunProfile("sandboxes/bwrap-lab.json",
                          {"--suite", SourcePath("suites/privileges.json"), "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;
  const json* net = FindCheck(r, "priv.namespace:net");
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->value("verdict", ""), "pass") << net->value("observed", "");
  ASSERT_TRUE(r["witnesses"]["lab"].is_object()) << r["witnesses"].dump();
  EXPECT_EQ(JsonStrings(r["witnesses"]["lab"]["sandbox_links"]), (std::set<std::string>{"lo", "eth0"}));
}

}  // namespace
}  // namespace sandprobe::testing
