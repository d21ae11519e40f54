// Deno's --allow-net allowlist in the egress lab (issue 28 item 5), on real Deno: deno-allow-net
// (--allow-net=pkg.lab.test) must reach the allowed name, proven by a lab receipt carrying the
// launch's nonce, and Deno must refuse every control name and every net.bypass spelling of the
// denied destination, each judged by the lab's receipts (no receipt: pass; a receipt: fail).
// Its leaky twin (an unrestricted --allow-net, same policy) must be caught: exit 1, with more
// FAILs, every one backed by a lab receipt. Nothing may leave the lab in either run. Needs a root
// harness (the lab and the join) and Deno (scripts/setup.sh --with deno).
#include <unistd.h>

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/lab_expect.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

const std::string kDeno = "/opt/sandprobe-runtimes/node_modules/@deno/linux-x64-glibc/deno";

// The verdicts of the checks whose id starts with `prefix`, by id.
std::map<std::string, std::string> Verdicts(const json& report, const std::string& prefix) {
  std::map<std::string, std::string> out;
  for (const json& check : report["checks"]) {
    const std::string id = check.value("id", "");
    if (id.rfind(prefix, 0) == 0) out[id] = check.value("verdict", "");
  }
  return out;
}

int Count(const json& report, const std::string& verdict) {
  int n = 0;
  for (const json& check : report["checks"]) n += check.value("verdict", "") == verdict;
  return n;
}

TEST(LabDenoTest, AllowNetWithOneNameReachesItAndRefusesEveryControlAndSpellingTheLeakyTwinDoesNot) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (setns, mount)";
  if (!BackendAvailable("deno", {kDeno, "--version"})) return;
  const std::vector<std::string> suite = {"--suite", SourcePath("suites/network.json"), "--require-backend"};

  CliRun strict = RunProfile("sandboxes/deno-allow-net.json", suite);
  const json& s = strict.report;
  ASSERT_TRUE(s.is_object()) << strict.out << strict.err;
  // The allowed name, by the lab's receipt of this launch's request.
  ExpectAllowedNameReached(s);
  // Deno 2.9.6 refuses every control name and every spelling of the denied destination (zone id
  // and the nonce lookup included): no receipt for any of them. It judges the name only, so the
  // two bypasses that keep the allowed name get through, both true: rebinding (the name's later
  // lookup answered the rebind target, and Deno connected there) and fronting (a denied Host
  // sent over the allowed connection).
  const std::set<std::string> through = {"net.bypass.refused:rebinding", "net.bypass.refused:fronting"};
  const auto controls = Verdicts(s, "net.allow.refused:");
  const auto bypasses = Verdicts(s, "net.bypass.refused:");
  EXPECT_GE(controls.size(), 5u);
  EXPECT_EQ(bypasses.size(), 12u);
  for (const auto* group : {&controls, &bypasses}) {
    for (const auto& [id, verdict] : *group) {
      if (through.count(id)) {
        EXPECT_EQ(verdict, "fail") << id << ": " << CheckField(s, id, "observed");
        EXPECT_NE(CheckField(s, id, "observed").find("the lab received"), std::string::npos) << id;
        continue;
      }
      EXPECT_EQ(verdict, "pass") << id << ": " << CheckField(s, id, "observed");
      // Deno's own refusal, at the lookup (names, IPv4 spellings) or the connect (IPv6 literals).
      EXPECT_NE(CheckField(s, id, "observed").find("EACCES"), std::string::npos) << id;
    }
  }
  EXPECT_EQ(Count(s, "fail"), 2) << strict.out;  // rebinding and fronting: true (Deno judges the name only)
  // The JS probe's socket scan: Deno refuses the mount table and /proc/net/unix, and every unix
  // connect the probe tried (its read/write grants stand in front of connect()).
  ExpectVerdict(s, "net.unix.runtime-api", "pass");
  EXPECT_NE(CheckField(s, "net.unix.runtime-api", "observed").find("every unix connect the probe tried"),
            std::string::npos)
      << CheckField(s, "net.unix.runtime-api", "observed");
  EXPECT_EQ(Count(s, "error"), 0) << strict.out;
  EXPECT_EQ(Count(s, "inconclusive"), 0) << strict.out;
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  ExpectNothingLeftTheLab(s);

  CliRun leaky = RunProfile("sandboxes/deno-allow-net-leaky.json", suite);
  const json& l = leaky.report;
  ASSERT_TRUE(l.is_object()) << leaky.out << leaky.err;
  EXPECT_EQ(leaky.exit_code, 1) << leaky.out;
  EXPECT_GT(Count(l, "fail"), Count(s, "fail") + 8);
  ExpectVerdict(l, "net.allow.reachable:pkg.lab.test", "pass");
  for (const std::string prefix : {"net.allow.refused:", "net.bypass.refused:"}) {
    for (const auto& [id, verdict] : Verdicts(l, prefix)) {
      EXPECT_EQ(verdict, "fail") << id << ": " << CheckField(l, id, "observed");
      EXPECT_EQ(CheckField(l, id, "direction"), "too-permissive") << id;
      EXPECT_NE(CheckField(l, id, "observed").find("the lab received"), std::string::npos) << id;
    }
  }
  EXPECT_EQ(Verdicts(l, "net.bypass.refused:").size(), 12u);
  ExpectNothingLeftTheLab(l);
}

}  // namespace
}  // namespace sandprobe::testing
