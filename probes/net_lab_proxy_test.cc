#include "probes/net_lab_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

// The proxy variables a test sets, restored (unset) afterwards.
class ProxyEnvironment : public ::testing::Test {
 protected:
  void SetUp() override { Clear(); }
  void TearDown() override { Clear(); }
  static void Clear() {
    for (const char* name : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}) ::unsetenv(name);
  }
};

TEST(SplitLabProxyArgs, ALeadingProxyIsSplitOffAndAMalformedOneIsAUsageError) {
  std::string spec;
  std::vector<std::string> rest;
  EXPECT_EQ(SplitLabProxyArgs("net.lab", {"--proxy", "env", "a.test"}, &spec, &rest), "");
  EXPECT_EQ(spec, "env");
  EXPECT_EQ(rest, std::vector<std::string>{"a.test"});
  spec.clear();
  EXPECT_EQ(SplitLabProxyArgs("net.lab", {"a.test"}, &spec, &rest), "");
  EXPECT_EQ(spec, "");
  EXPECT_EQ(rest, std::vector<std::string>{"a.test"});
  EXPECT_EQ(SplitLabProxyArgs("net.bypass", {"--proxy"}, nullptr, nullptr),
            "net.bypass: --proxy needs env or an http:// URL");
  EXPECT_EQ(SplitLabProxyArgs("net.lab", {"--proxy", "socks5://127.0.0.1:1080", "a.test"}, nullptr, nullptr),
            "net.lab: --proxy needs env or an http:// URL");
}

TEST_F(ProxyEnvironment, EnvReadsTheLowerCaseHttpProxyFirstWithItsCredentialsAsBasic) {
  ::setenv("HTTP_PROXY", "http://127.0.0.9:9", 1);
  ::setenv("http_proxy", "http://srt%3Auser:tok@localhost:3128", 1);
  const LabProxy proxy = FindLabProxy("env");
  EXPECT_EQ(proxy.refuse, "");
  EXPECT_EQ(proxy.address, "127.0.0.1:3128");
  EXPECT_EQ(proxy.url, "http://127.0.0.1:3128");
  // base64("srt:user:tok"): the userinfo percent-decoded
  EXPECT_EQ(proxy.authorization, "Basic c3J0OnVzZXI6dG9r");
  const auto* sa = reinterpret_cast<const sockaddr_in*>(&proxy.sockaddr);
  EXPECT_EQ(sa->sin_family, AF_INET);
  EXPECT_EQ(ntohs(sa->sin_port), 3128);
}

TEST_F(ProxyEnvironment, EnvFallsBackToAllProxyAndRefusesWhenNothingIsSet) {
  EXPECT_EQ(FindLabProxy("env").refuse, "no http_proxy, HTTP_PROXY, all_proxy or ALL_PROXY in the environment");
  ::setenv("ALL_PROXY", "http://[::1]:8080/", 1);
  const LabProxy proxy = FindLabProxy("env");
  EXPECT_EQ(proxy.refuse, "");
  EXPECT_EQ(proxy.address, "[::1]:8080");
  EXPECT_EQ(proxy.authorization, "");
}

TEST(FindLabProxy, OnlyALoopbackOrLabAddressIsUsedAndNoNameIsResolved) {
  EXPECT_EQ(FindLabProxy("http://203.0.113.7").address, "203.0.113.7:80");
  EXPECT_EQ(FindLabProxy("http://203.0.113.7").refuse, "");
  EXPECT_EQ(FindLabProxy("http://10.0.0.1:3128").refuse,
            "--proxy http://10.0.0.1:3128: the proxy 10.0.0.1:3128 is neither loopback nor a lab address");
  EXPECT_EQ(FindLabProxy("http://proxy.example:3128").refuse,
            "--proxy http://proxy.example:3128: the proxy's host is a name other than localhost (never resolved): "
            "proxy.example");
  EXPECT_EQ(FindLabProxy("http://127.0.0.1:0").refuse, "--proxy http://127.0.0.1:0: not a port: 0");
  EXPECT_EQ(FindLabProxy("http://127.0.0.1:3128/path").refuse, "--proxy http://127.0.0.1:3128/path: a proxy URL with a path");
  EXPECT_EQ(FindLabProxy("").spec, "");
  EXPECT_EQ(FindLabProxy("").refuse, "");
}

}  // namespace
}  // namespace sandprobe
