// AllowEntry: one destination of a policy's network.allow, parsed into its kind once at load, so
// the planner, the lab and the judges never take a string apart again.
//
// Grammar (each form optionally followed by ":PORT", 1-65535; an IPv6 form then needs brackets):
//   loopback-tcp, bridge-udp, ...   a harness canary endpoint (witnesses/witness_net.h)
//   pkg.example.test                a host name: letters, digits, '-' and '_' in dot-separated
//                                   labels of 1-63 characters, 253 at most; matched without
//                                   regard to case, exactly (a subdomain is another name)
//   *.example.test                  every strict subdomain of example.test (not the name itself)
//   192.0.2.7, 2001:db8::7, [2001:db8::7]:443
//                                   one address, in the forms inet_pton reads (no 127.1 etc.)
//   192.0.2.0/24, 2001:db8::/32, [2001:db8::/32]:443
//                                   a network; the address must have no bits past the prefix
// Names are stored in lower case without a trailing dot (a trailing dot in the policy is an
// error: write the name as a filter would see it).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/policy_ref.h"
#include "model/status.h"

namespace sandprobe {

enum class AllowKind {
  kCanary,    // a harness canary endpoint name ("loopback-tcp")
  kName,      // an exact host name
  kWildcard,  // "*.base": strict subdomains of `host`
  kAddress,   // one IP address
  kNetwork,   // an IP network (CIDR)
};
std::string_view AllowKindName(AllowKind kind);  // "canary", "name", "wildcard", "address", "network"

struct IpAddress {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  // IPv4 in the first 4
  std::size_t size() const { return v6 ? 16 : 4; }
  // inet_ntop's form: "192.0.2.7", "2001:db8::7".
  std::string Text() const;
  bool operator==(const IpAddress&) const = default;
};

// inet_pton's strict forms only: nullopt for anything else ("127.1", "0x7f000001", "[::1]").
std::optional<IpAddress> ParseIpAddress(std::string_view text);
// Whether `address` lies in `network`/`prefix_length`. An IPv4-mapped IPv6 address
// (::ffff:192.0.2.7) is the IPv4 address it maps: a connection to it reaches that host.
bool InNetwork(const IpAddress& address, const IpAddress& network, int prefix_length);

struct AllowEntry {
  AllowKind kind = AllowKind::kName;
  std::string text;    // as written in the policy
  // kCanary: the endpoint name; kName: the name, lower case; kWildcard: the base, lower case
  // ("example.test" for "*.example.test"); kAddress, kNetwork: the address as Text() writes it.
  std::string host;
  IpAddress address;          // kAddress, kNetwork
  int prefix_length = 0;      // kNetwork
  std::optional<int> port;    // absent: every port
  PolicyRef ref;              // where it is written (set by the policy loader)

  // Whether a client connecting to `name` (any case, a trailing dot ignored) on `port` is
  // allowed by this entry. Address entries never match a name and vice versa (a name that
  // resolves to an allowed address is not itself allowed: the filter sees the name). An
  // IPv4-mapped IPv6 address matches the IPv4 entries of the address it maps.
  bool AllowsName(std::string_view name, int port) const;
  bool AllowsAddress(const IpAddress& address, int port) const;
};

// The entry `text` means, or an error saying what is wrong with it (no position: the caller
// adds file:line:col).
StatusOr<AllowEntry> ParseAllowEntry(std::string_view text);

// Whether `name` is a host name as the grammar above reads it (no trailing dot, any case).
bool IsHostName(std::string_view name);
// Lower case, trailing dot dropped: how names are compared.
std::string CanonicalName(std::string_view name);

// The canary endpoint names (witnesses/witness_net.h): "loopback-tcp", ... "bridge-udp".
bool IsCanaryEndpointName(std::string_view name);

// JSON network.proxy: the proxy the sandbox means its traffic to go through.
//   "env": the standard variables the sandbox sets for its processes (HTTPS_PROXY, HTTP_PROXY,
//     ALL_PROXY with an http:// URL, or their lower-case forms), read inside the sandbox;
//   "http://HOST:PORT" (HOST a name, an IPv4 address or a bracketed IPv6 one; PORT 1-65535,
//     80 when absent; nothing after it but an optional "/").
enum class ProxySource { kNone, kEnv, kUrl };
struct NetworkProxy {
  ProxySource source = ProxySource::kNone;
  std::string url;  // kUrl: as written
  bool operator==(const NetworkProxy&) const = default;
};
// The proxy `text` names, or what is wrong with it.
StatusOr<NetworkProxy> ParseNetworkProxy(std::string_view text);
// As the policy writes it: "env", the URL, or "" for none.
std::string ProxyText(const NetworkProxy& proxy);

// Whether some entry of `allow` lets a client reach `name` / `address` on `port`.
bool AllowListAllowsName(const std::vector<AllowEntry>& allow, std::string_view name, int port);
bool AllowListAllowsAddress(const std::vector<AllowEntry>& allow, const IpAddress& address, int port);
// Whether some entry lets a client reach `name` on some port: the names network.dns "filtered"
// lets the sandbox resolve.
bool AllowListNamesName(const std::vector<AllowEntry>& allow, std::string_view name);

}  // namespace sandprobe
