#include "tests/lab_expect.h"

#include <gtest/gtest.h>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {

using nlohmann::json;

std::set<std::string> JsonStrings(const json& list) {
  std::set<std::string> out;
  if (!list.is_array()) return out;
  for (const json& item : list) out.insert(item.is_string() ? item.get<std::string>() : item.dump());
  return out;
}

void ExpectNothingLeftTheLab(const json& report) {
  const json& lab = report["witnesses"]["lab"];
  ASSERT_TRUE(lab.is_object()) << report["witnesses"].dump();
  EXPECT_EQ(JsonStrings(lab["lab_links"]), (std::set<std::string>{"lo", "sp-sandbox"}));
  EXPECT_EQ(JsonStrings(lab["sandbox_links"]), (std::set<std::string>{"lo", "eth0"}));
  const std::set<std::string> sandbox = JsonStrings(lab["sandbox_addresses"]);
  for (const char* kind : {"sink_receipts", "dns_receipts"}) {
    for (const json& receipt : lab[kind]) {
      const std::string peer = receipt.value("peer", "");
      const std::string address =
          peer.front() == '[' ? peer.substr(1, peer.find(']') - 1) : peer.substr(0, peer.rfind(':'));
      EXPECT_TRUE(sandbox.count(address)) << kind << " from " << peer;
    }
  }
  for (const json& receipt : report["witnesses"]["net"]["receipts"]) {
    EXPECT_TRUE(receipt.value("nonce", "").empty()) << "a host canary heard the run: " << receipt.dump();
  }
}

void ExpectAllowedNameReached(const json& report) {
  ExpectVerdict(report, "net.allow.reachable:pkg.lab.test", "pass");
  const std::string observed = CheckField(report, "net.allow.reachable:pkg.lab.test", "observed");
  EXPECT_NE(observed.find("Host pkg.lab.test /sandprobe/"), std::string::npos) << observed;
}

int ExpectEveryControlAndBypassThrough(const json& report) {
  int through = 0, controls = 0, bypasses = 0;
  for (const json& check : report["checks"]) {
    const std::string id = check.value("id", "");
    const bool control = id.rfind("net.allow.refused:", 0) == 0, bypass = id.rfind("net.bypass.refused:", 0) == 0;
    if (!control && !bypass) continue;
    controls += control;
    bypasses += bypass;
    EXPECT_EQ(check.value("verdict", ""), "fail") << id << ": " << check.value("observed", "");
    EXPECT_EQ(check.value("direction", ""), "too-permissive") << id;
    EXPECT_NE(check.value("observed", "").find("the lab received"), std::string::npos) << id;
    through += check.value("verdict", "") == "fail";
  }
  EXPECT_GE(controls, 5);
  EXPECT_EQ(bypasses, 12);
  return through;
}

}  // namespace sandprobe::testing
