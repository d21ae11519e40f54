#include "load/network_allow.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include <fmt/format.h>

namespace sandprobe {
namespace {

constexpr std::string_view kCanaryEndpoints[] = {"loopback-tcp", "loopback-udp", "bridge-tcp",
                                                 "bridge-udp"};

bool IsLabelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// "443" -> 443; nullopt for anything but 1-65535 in plain decimal without a leading zero.
std::optional<int> ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5 || text[0] == '0') return std::nullopt;
  int port = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port > 65535) return std::nullopt;
  return port;
}

// A last label of digits, or of 0x and hex digits: inet_aton (and so many clients and filters)
// read such a name as an IPv4 address ("127.1", "2130706433", "0x7f000001").
bool NumericLastLabel(std::string_view name) {
  std::string_view last = name.substr(name.rfind('.') + 1);
  if (last.size() > 2 && (last.substr(0, 2) == "0x" || last.substr(0, 2) == "0X")) last.remove_prefix(2);
  const bool hex = last.size() != name.substr(name.rfind('.') + 1).size();
  return !last.empty() && std::all_of(last.begin(), last.end(), [&](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || (hex && std::isxdigit(static_cast<unsigned char>(c)));
  });
}

// What inet_aton makes of `name`, or "an IPv4 address" when it reads none.
std::string InetAtonText(std::string_view name) {
  in_addr address{};
  if (::inet_aton(std::string(name).c_str(), &address) == 0) return "an IPv4 address";
  char text[INET_ADDRSTRLEN] = "";
  ::inet_ntop(AF_INET, &address, text, sizeof text);
  return text;
}

// "ADDR/LEN" (already without brackets and port) into `entry`.
Status ParseNetwork(std::string_view text, AllowEntry& entry) {
  const std::size_t slash = text.find('/');
  std::optional<IpAddress> address = ParseIpAddress(text.substr(0, slash));
  if (!address) {
    return Status::Error(fmt::format("\"{}\" is not an IPv4 or IPv6 address", text.substr(0, slash)));
  }
  const std::string_view length = text.substr(slash + 1);
  const int max = address->v6 ? 128 : 32;
  int prefix = -1;
  if (!length.empty() && length.size() <= 3 && std::all_of(length.begin(), length.end(), ::isdigit)) {
    prefix = std::stoi(std::string(length));
  }
  if (prefix < 0 || prefix > max || (length.size() > 1 && length[0] == '0')) {
    return Status::Error(fmt::format("\"{}\" is not a prefix length 0-{}", length, max));
  }
  IpAddress masked = *address;
  for (std::size_t bit = static_cast<std::size_t>(prefix); bit < address->size() * 8; ++bit) {
    masked.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80u >> (bit % 8)));
  }
  if (!(masked == *address)) {
    return Status::Error(fmt::format("{} has bits set past the /{} prefix (the network is {}/{})",
                                     address->Text(), prefix, masked.Text(), prefix));
  }
  entry.kind = AllowKind::kNetwork;
  entry.address = *address;
  entry.prefix_length = prefix;
  entry.host = address->Text();
  return Status::Ok();
}

// The host part of an entry, port already split off.
Status ParseHost(std::string_view host, bool bracketed, AllowEntry& entry) {
  if (host.find('/') != std::string_view::npos) {
    if (Status s = ParseNetwork(host, entry); !s.ok()) return s;
    if (bracketed && !entry.address.v6) return Status::Error("brackets are for IPv6 networks only");
    return Status::Ok();
  }
  if (std::optional<IpAddress> address = ParseIpAddress(host)) {
    if (bracketed && !address->v6) return Status::Error("brackets are for IPv6 addresses only");
    entry.kind = AllowKind::kAddress;
    entry.address = *address;
    entry.host = address->Text();
    return Status::Ok();
  }
  if (bracketed) return Status::Error(fmt::format("\"{}\" in brackets is not an IPv6 address", host));
  if (IsCanaryEndpointName(host)) {
    entry.kind = AllowKind::kCanary;
    entry.host = std::string(host);
    return Status::Ok();
  }
  if (host == "*") return Status::Error("\"*\" allows everything: set network.egress to \"allow\" instead");
  if (!host.empty() && host.back() == '.') {
    return Status::Error("a host name is written without its trailing dot");
  }
  const bool wildcard = host.rfind("*.", 0) == 0;
  const std::string_view name = wildcard ? host.substr(2) : host;
  if (!IsHostName(name)) {
    return Status::Error(fmt::format(
        "\"{}\" is not a host name (labels of letters, digits, '-', '_', 1-63 characters, dot-separated), "
        "a \"*.\" wildcard, an IP address or a CIDR network",
        host));
  }
  if (NumericLastLabel(name)) {
    return Status::Error(fmt::format(
        "\"{}\" is not a host name: its last label is a number, which inet_aton reads as an IPv4 "
        "address (write the address as {})",
        host, InetAtonText(name)));
  }
  entry.kind = wildcard ? AllowKind::kWildcard : AllowKind::kName;
  entry.host = CanonicalName(name);
  return Status::Ok();
}

// ::ffff:a.b.c.d as the IPv4 address a.b.c.d; any other address unchanged.
IpAddress Unmapped(const IpAddress& address) {
  constexpr std::uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (!address.v6 || std::memcmp(address.bytes.data(), kMappedPrefix, sizeof kMappedPrefix) != 0) return address;
  IpAddress v4;
  std::copy_n(address.bytes.begin() + 12, 4, v4.bytes.begin());
  return v4;
}

}  // namespace

std::string_view AllowKindName(AllowKind kind) {
  switch (kind) {
    case AllowKind::kCanary: return "canary";
    case AllowKind::kName: return "name";
    case AllowKind::kWildcard: return "wildcard";
    case AllowKind::kAddress: return "address";
    case AllowKind::kNetwork: return "network";
  }
  return "?";
}

std::string IpAddress::Text() const {
  char text[INET6_ADDRSTRLEN] = "";
  ::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), text, sizeof text);
  return text;
}

std::optional<IpAddress> ParseIpAddress(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string nul_terminated(text);
  IpAddress address;
  if (::inet_pton(AF_INET, nul_terminated.c_str(), address.bytes.data()) == 1) return address;
  address.v6 = true;
  if (::inet_pton(AF_INET6, nul_terminated.c_str(), address.bytes.data()) == 1) return address;
  return std::nullopt;
}

bool InNetwork(const IpAddress& mapped_or_not, const IpAddress& network, int prefix_length) {
  const IpAddress address = network.v6 ? mapped_or_not : Unmapped(mapped_or_not);
  if (address.v6 != network.v6 || prefix_length < 0 || prefix_length > static_cast<int>(address.size() * 8)) {
    return false;
  }
  for (int bit = 0; bit < prefix_length; ++bit) {
    const std::uint8_t mask = static_cast<std::uint8_t>(0x80u >> (bit % 8));
    if ((address.bytes[bit / 8] & mask) != (network.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

bool IsHostName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    const std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || !std::all_of(label.begin(), label.end(), IsLabelChar)) return false;
    start = dot + 1;
  }
  return true;
}

std::string CanonicalName(std::string_view name) {
  std::string out(name);
  if (!out.empty() && out.back() == '.') out.pop_back();
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return out;
}

bool IsCanaryEndpointName(std::string_view name) {
  return std::find(std::begin(kCanaryEndpoints), std::end(kCanaryEndpoints), name) != std::end(kCanaryEndpoints);
}

StatusOr<AllowEntry> ParseAllowEntry(std::string_view text) {
  AllowEntry entry;
  entry.text = std::string(text);
  if (text.empty()) return Status::Error("must not be empty");
  std::string_view host = text;
  bool bracketed = false;
  if (text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return Status::Error("\"[\" without its \"]\"");
    host = text.substr(1, close - 1);
    bracketed = true;
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':' || !(entry.port = ParsePort(rest.substr(1)))) {
        return Status::Error(fmt::format("\"{}\" after \"]\" is not \":PORT\" with a port 1-65535", rest));
      }
    }
  } else if (const std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    if (text.find(':', colon + 1) == std::string_view::npos) {  // one colon: HOST:PORT
      host = text.substr(0, colon);
      if (!(entry.port = ParsePort(text.substr(colon + 1)))) {
        return Status::Error(fmt::format("\"{}\" is not a port 1-65535", text.substr(colon + 1)));
      }
    }  // two or more: a bare IPv6 address or network, never split
  }
  if (Status s = ParseHost(host, bracketed, entry); !s.ok()) return s;
  if (entry.kind == AllowKind::kCanary && entry.port) {
    return Status::Error(fmt::format("canary endpoint {} takes no port", entry.host));
  }
  return entry;
}

bool AllowEntry::AllowsName(std::string_view name, int to_port) const {
  if (port && *port != to_port) return false;
  const std::string canonical = CanonicalName(name);
  switch (kind) {
    case AllowKind::kName: return canonical == host;
    case AllowKind::kWildcard:
      return canonical.size() > host.size() + 1 &&
             canonical.compare(canonical.size() - host.size() - 1, std::string::npos, "." + host) == 0;
    case AllowKind::kCanary:
    case AllowKind::kAddress:
    case AllowKind::kNetwork: return false;
  }
  return false;
}

bool AllowEntry::AllowsAddress(const IpAddress& to, int to_port) const {
  if (port && *port != to_port) return false;
  switch (kind) {
    case AllowKind::kAddress: return (address.v6 ? to : Unmapped(to)) == address;
    case AllowKind::kNetwork: return InNetwork(to, address, prefix_length);
    case AllowKind::kCanary:
    case AllowKind::kName:
    case AllowKind::kWildcard: return false;
  }
  return false;
}

StatusOr<NetworkProxy> ParseNetworkProxy(std::string_view text) {
  if (text == "env") return NetworkProxy{ProxySource::kEnv, ""};
  constexpr std::string_view kScheme = "http://";
  const auto bad = [&](std::string_view why) {
    return Status::Error(fmt::format("\"{}\" is not \"env\" or a proxy URL http://HOST:PORT: {}", text, why));
  };
  if (text.rfind(kScheme, 0) != 0) return bad("only http:// proxies are understood");
  std::string_view rest = text.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find_first_of("/@?#") != std::string_view::npos) return bad("no path, user or query");
  StatusOr<AllowEntry> host = ParseAllowEntry(rest);
  if (!host.ok()) return bad(host.status().message());
  if (host->kind != AllowKind::kName && host->kind != AllowKind::kAddress) return bad("HOST must be a name or an address");
  return NetworkProxy{ProxySource::kUrl, std::string(text)};
}

std::string ProxyText(const NetworkProxy& proxy) {
  switch (proxy.source) {
    case ProxySource::kNone: return "";
    case ProxySource::kEnv: return "env";
    case ProxySource::kUrl: return proxy.url;
  }
  return "";
}

bool AllowListAllowsName(const std::vector<AllowEntry>& allow, std::string_view name, int port) {
  return std::any_of(allow.begin(), allow.end(), [&](const AllowEntry& e) { return e.AllowsName(name, port); });
}

bool AllowListAllowsAddress(const std::vector<AllowEntry>& allow, const IpAddress& address, int port) {
  return std::any_of(allow.begin(), allow.end(), [&](const AllowEntry& e) { return e.AllowsAddress(address, port); });
}

bool AllowListNamesName(const std::vector<AllowEntry>& allow, std::string_view name) {
  return std::any_of(allow.begin(), allow.end(),
                     [&](const AllowEntry& e) { return e.AllowsName(name, e.port.value_or(0)); });
}

}  // namespace sandprobe
