// srt's allowedDomains in the egress lab (issue 28 item 5), on real srt (npm
// @anthropic-ai/sandbox-runtime 0.0.83): srt-allowlist (allowedDomains ["pkg.lab.test"]) joins the
// lab, so srt's host-side proxy resolves and connects through it; the policy declares the proxy
// ("proxy": "env"), so the probe sends its net.lab / net.bypass requests through the proxy srt
// names in HTTP_PROXY. The allowed name must be reached (a lab receipt with the launch's nonce),
// and every control name and every spelling of the denied destination must be judged by the
// lab's receipts after the proxy answered (never skipped, never "no attempt"). Nothing may leave
// the lab. Needs a root harness, srt and its settings (scripts/setup.sh --with agents).
#include <unistd.h>

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/lab_expect.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kSrtAllowlistUp = {"test", "-x", "/opt/sandprobe-agents/node_modules/.bin/srt", "-a",
                                                  "-r", "/opt/sandprobe-agents/srt-allowlist-settings.json"};

TEST(LabSrtTest, AllowedDomainsReachesTheOneNameThroughSrtsProxyAndEveryControlAndSpellingIsJudged) {
  if (::geteuid() != 0) GTEST_SKIP() << "the egress lab needs a root harness (setns, mount)";
  if (!BackendAvailable("srt-allowlist", kSrtAllowlistUp)) return;
  CliRun run = RunProfile("sandboxes/srt-allowlist.json",
                          {"--suite", SourcePath("suites/network.json"), "--require-backend"});
  const json& r = run.report;
  ASSERT_TRUE(r.is_object()) << run.out << run.err;

  ExpectAllowedNameReached(r);
  int controls = 0, bypasses = 0;
  for (const json& check : r["checks"]) {
    const std::string id = check.value("id", "");
    const bool control = id.rfind("net.allow.refused:", 0) == 0;
    const bool bypass = id.rfind("net.bypass.refused:", 0) == 0;
    if (!control && !bypass) continue;
    controls += control;
    bypasses += bypass;
    const std::string observed = check.value("observed", "");
    // Through srt 0.0.83's proxy, which checks the name it is asked for: rebinding (the proxy
    // resolves the allowed name again and connects to the rebind target) and fronting (a
    // CONNECT to the allowed name carries a denied Host) get through, both true.
    if (id == "net.bypass.refused:rebinding" || id == "net.bypass.refused:fronting") {
      EXPECT_EQ(check.value("verdict", ""), "fail") << id << ": " << observed;
      EXPECT_NE(observed.find("the lab received"), std::string::npos) << id << ": " << observed;
      continue;
    }
    // Every other one the proxy refuses (403; the zone id's URL it cannot parse: 500) and the
    // lab receives nothing for it (for dns-exfil: no query; the probe's own lookup inside srt
    // has no resolver to reach).
    EXPECT_EQ(check.value("verdict", ""), "pass") << id << ": " << observed;
    EXPECT_NE(observed.find("proxy 127.0.0.1:3128"), std::string::npos) << id << ": " << observed;
    EXPECT_NE(observed.find(id == "net.bypass.refused:zone-id" ? "HTTP 500" : "403"), std::string::npos)
        << id << ": " << observed;
  }
  EXPECT_GE(controls, 5);
  EXPECT_EQ(bypasses, 12);
  for (const json& check : r["checks"]) {
    EXPECT_NE(check.value("id", ""), "net.proxy.untested") << "the lab judges the declared proxy";
  }

  ExpectNothingLeftTheLab(r);
  const json& lab = r["witnesses"]["lab"];
  // srt's proxy asked the lab's resolver for the allowed name only.
  for (const json& query : lab["dns_receipts"]) {
    EXPECT_EQ(query.value("name", ""), "pkg.lab.test") << query.dump();
  }
}

}  // namespace
}  // namespace sandprobe::testing
