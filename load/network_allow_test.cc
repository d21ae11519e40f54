#include "load/network_allow.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

AllowEntry Parsed(std::string_view text) {
  StatusOr<AllowEntry> entry = ParseAllowEntry(text);
  EXPECT_TRUE(entry.ok()) << text << ": " << entry.status().message();
  return entry.ok() ? *entry : AllowEntry{};
}

std::string Error(std::string_view text) {
  StatusOr<AllowEntry> entry = ParseAllowEntry(text);
  EXPECT_FALSE(entry.ok()) << text << " parsed as " << AllowKindName(entry->kind);
  return entry.ok() ? "" : entry.status().message();
}

TEST(NetworkAllowTest, EachKindWithAndWithoutPort) {
  struct Case {
    const char* text;
    AllowKind kind;
    const char* host;
    int prefix;
    std::optional<int> port;
  };
  const Case cases[] = {
      {"loopback-tcp", AllowKind::kCanary, "loopback-tcp", 0, std::nullopt},
      {"Pkg.Example.TEST", AllowKind::kName, "pkg.example.test", 0, std::nullopt},
      {"pkg.example.test:443", AllowKind::kName, "pkg.example.test", 0, 443},
      {"localhost", AllowKind::kName, "localhost", 0, std::nullopt},
      {"*.example.test", AllowKind::kWildcard, "example.test", 0, std::nullopt},
      {"*.example.test:8443", AllowKind::kWildcard, "example.test", 0, 8443},
      {"192.0.2.7", AllowKind::kAddress, "192.0.2.7", 0, std::nullopt},
      {"192.0.2.7:80", AllowKind::kAddress, "192.0.2.7", 0, 80},
      {"2001:DB8::7", AllowKind::kAddress, "2001:db8::7", 0, std::nullopt},
      {"[2001:db8::7]", AllowKind::kAddress, "2001:db8::7", 0, std::nullopt},
      {"[2001:db8::7]:443", AllowKind::kAddress, "2001:db8::7", 0, 443},
      {"198.51.100.0/24", AllowKind::kNetwork, "198.51.100.0", 24, std::nullopt},
      {"198.51.100.0/24:22", AllowKind::kNetwork, "198.51.100.0", 24, 22},
      {"0.0.0.0/0", AllowKind::kNetwork, "0.0.0.0", 0, std::nullopt},
      {"2001:db8::/32", AllowKind::kNetwork, "2001:db8::", 32, std::nullopt},
      {"[2001:db8::/32]:443", AllowKind::kNetwork, "2001:db8::", 32, 443},
  };
  for (const Case& c : cases) {
    AllowEntry e = Parsed(c.text);
    EXPECT_EQ(e.kind, c.kind) << c.text;
    EXPECT_EQ(e.host, c.host) << c.text;
    EXPECT_EQ(e.prefix_length, c.prefix) << c.text;
    EXPECT_EQ(e.port, c.port) << c.text;
    EXPECT_EQ(e.text, c.text);
  }
}

TEST(NetworkAllowTest, RefusesWhatNoFilterCouldMeanOneWay) {
  EXPECT_EQ(Error(""), "must not be empty");
  EXPECT_EQ(Error("pkg.test:0"), "\"0\" is not a port 1-65535");
  EXPECT_EQ(Error("pkg.test:65536"), "\"65536\" is not a port 1-65535");
  EXPECT_EQ(Error("pkg.test:080"), "\"080\" is not a port 1-65535");
  EXPECT_EQ(Error("pkg.test."), "a host name is written without its trailing dot");
  EXPECT_EQ(Error("*"), "\"*\" allows everything: set network.egress to \"allow\" instead");
  EXPECT_NE(Error("*pkg.test").find("is not a host name"), std::string::npos);
  EXPECT_NE(Error("pkg..test").find("is not a host name"), std::string::npos);
  EXPECT_EQ(Error("https://pkg.test"), "\"//pkg.test\" is not a port 1-65535");
  EXPECT_NE(Error(std::string(64, 'a') + ".test").find("is not a host name"), std::string::npos);
  // Spellings a filter may read differently are refused: the policy says one thing.
  for (const char* numeric : {"127.1", "2130706433", "0x7f000001", "0177.0.0.1", "1.2.3.0x10"}) {
    EXPECT_NE(Error(numeric).find("inet_aton reads as an IPv4 address"), std::string::npos) << numeric;
  }
  EXPECT_EQ(Parsed("1x.test").kind, AllowKind::kName);
  EXPECT_EQ(Error("192.0.2.1/24"), "192.0.2.1 has bits set past the /24 prefix (the network is 192.0.2.0/24)");
  EXPECT_EQ(Error("192.0.2.0/33"), "\"33\" is not a prefix length 0-32");
  EXPECT_EQ(Error("192.0.2.0/024"), "\"024\" is not a prefix length 0-32");
  EXPECT_EQ(Error("[192.0.2.1]"), "brackets are for IPv6 addresses only");
  EXPECT_EQ(Error("[2001:db8::1"), "\"[\" without its \"]\"");
  EXPECT_EQ(Error("[2001:db8::1]443"), "\"443\" after \"]\" is not \":PORT\" with a port 1-65535");
  EXPECT_EQ(Error("loopback-tcp:80"), "canary endpoint loopback-tcp takes no port");
}

TEST(NetworkAllowTest, NamesMatchExactlyWildcardsOnlyStrictSubdomains) {
  AllowEntry exact = Parsed("pkg.lab.test");
  EXPECT_TRUE(exact.AllowsName("pkg.lab.test", 80));
  EXPECT_TRUE(exact.AllowsName("PKG.Lab.Test.", 443));  // case and a trailing dot: the same name
  EXPECT_FALSE(exact.AllowsName("evil.pkg.lab.test", 80));
  EXPECT_FALSE(exact.AllowsName("evilpkg.lab.test", 80));
  EXPECT_FALSE(exact.AllowsName("pkg.lab.test.evil.test", 80));
  AllowEntry wildcard = Parsed("*.lab.test:443");
  EXPECT_TRUE(wildcard.AllowsName("a.b.lab.test", 443));
  EXPECT_FALSE(wildcard.AllowsName("a.lab.test", 80));
  EXPECT_FALSE(wildcard.AllowsName("lab.test", 443));
  EXPECT_FALSE(wildcard.AllowsName("evillab.test", 443));
  EXPECT_FALSE(wildcard.AllowsAddress(*ParseIpAddress("192.0.2.1"), 443));
}

// The control set of the lab (issue 28): spellings that contain an allowed name, or that an
// allowed name contains, but are other hosts.
TEST(NetworkAllowTest, LookAlikesOfAnAllowedNameAreOtherHosts) {
  const std::string allowed = "allowed.lab.test";
  const std::vector<AllowEntry> allow = {Parsed(allowed + ":443"), Parsed("*.pkgs.lab.test")};
  EXPECT_TRUE(AllowListAllowsName(allow, allowed, 443));
  EXPECT_TRUE(AllowListAllowsName(allow, "ALLOWED.LAB.TEST.", 443));
  EXPECT_FALSE(AllowListAllowsName(allow, allowed, 80));  // the port is part of the entry
  for (const std::string& other : std::vector<std::string>{
           "ALLOWED.lab.test.evil.test",   // the allowed name as a prefix of another zone
           "allowed.lab.test-evil.test",   // ... followed by a hyphen
           "evilALLOWED.lab.test",         // a prefix glued to the first label
           "evil.allowed.lab.test",        // a subdomain of an exact name
           "allowed.lab.tes",              // a suffix cut short
           "allowed.lab.test.",            // the same name: a trailing dot is the root
           "allowed-lab.test",             // a dot turned into a hyphen
           "allowed.lab.test:443",         // a port inside the name is no name
           std::string("allowed.lab.test\0.evil.test", 27),  // a NUL some parsers stop at
           "pkgs.lab.test",                // a wildcard's base is not its subdomain
           "evilpkgs.lab.test",            // a wildcard's base glued to a prefix
           "pkgs.lab.test.evil.test",      // a wildcard's base as a prefix of another zone
           "lab.test", "test", ""}) {
    const bool same_name = other == allowed + ".";
    EXPECT_EQ(AllowListAllowsName(allow, other, 443), same_name) << other;
  }
  EXPECT_TRUE(AllowListAllowsName(allow, "a.pkgs.lab.test", 80));
  EXPECT_TRUE(AllowListAllowsName(allow, "A.B.PKGS.lab.test", 443));
  // A name never matches an address entry, nor an address a name entry.
  EXPECT_FALSE(AllowListAllowsAddress(allow, *ParseIpAddress("192.0.2.1"), 443));
  EXPECT_FALSE(Parsed("192.0.2.1").AllowsName("192.0.2.1", 443));
  EXPECT_TRUE(AllowListNamesName(allow, "ALLOWED.lab.test"));
  EXPECT_FALSE(AllowListNamesName(allow, "evilALLOWED.lab.test"));
}

TEST(NetworkAllowTest, AddressesAndNetworks) {
  AllowEntry net = Parsed("198.51.100.0/25");
  EXPECT_TRUE(net.AllowsAddress(*ParseIpAddress("198.51.100.127"), 1));
  EXPECT_FALSE(net.AllowsAddress(*ParseIpAddress("198.51.100.128"), 1));
  // An IPv4-mapped IPv6 address reaches the IPv4 host it maps; another IPv6 address does not.
  EXPECT_TRUE(net.AllowsAddress(*ParseIpAddress("::ffff:198.51.100.1"), 1));
  EXPECT_FALSE(net.AllowsAddress(*ParseIpAddress("::ffff:198.51.100.128"), 1));
  EXPECT_FALSE(net.AllowsAddress(*ParseIpAddress("64:ff9b::198.51.100.1"), 1));
  EXPECT_TRUE(Parsed("198.51.100.1").AllowsAddress(*ParseIpAddress("::ffff:198.51.100.1"), 1));
  EXPECT_FALSE(Parsed("198.51.100.1").AllowsAddress(*ParseIpAddress("198.51.100.2"), 1));
  EXPECT_FALSE(Parsed("::ffff:198.51.100.1").AllowsAddress(*ParseIpAddress("::1"), 1));
  EXPECT_FALSE(net.AllowsName("198.51.100.1", 1));
  AllowEntry v6 = Parsed("[2001:db8::/32]:443");
  EXPECT_TRUE(v6.AllowsAddress(*ParseIpAddress("2001:db8:ffff::1"), 443));
  EXPECT_FALSE(v6.AllowsAddress(*ParseIpAddress("2001:db8:ffff::1"), 80));
  EXPECT_FALSE(ParseIpAddress("127.1"));
  EXPECT_FALSE(ParseIpAddress("0x7f000001"));
  EXPECT_FALSE(ParseIpAddress("[::1]"));
  EXPECT_EQ(ParseIpAddress("::FFFF:127.0.0.1")->Text(), "::ffff:127.0.0.1");
}

TEST(NetworkAllowTest, Proxy) {
  EXPECT_EQ(ParseNetworkProxy("env")->source, ProxySource::kEnv);
  EXPECT_EQ(ParseNetworkProxy("http://127.0.0.1:3128")->url, "http://127.0.0.1:3128");
  EXPECT_EQ(ParseNetworkProxy("http://proxy.lab.test/")->source, ProxySource::kUrl);
  EXPECT_EQ(ParseNetworkProxy("http://[::1]:3128")->source, ProxySource::kUrl);
  EXPECT_EQ(ParseNetworkProxy("socks5://127.0.0.1:1080").status().message(),
            "\"socks5://127.0.0.1:1080\" is not \"env\" or a proxy URL http://HOST:PORT: only http:// proxies are understood");
  EXPECT_FALSE(ParseNetworkProxy("http://u:p@proxy:3128").ok());
  EXPECT_FALSE(ParseNetworkProxy("http://10.0.0.0/8").ok());
  EXPECT_FALSE(ParseNetworkProxy("http://*.lab.test:3128").ok());
}

}  // namespace
}  // namespace sandprobe
