#include "probes/net_lab_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace sandprobe {
namespace {

// The standard variables, in the order a client for http:// URLs reads them.
constexpr const char* kProxyVariables[] = {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};

// "%41" -> "A" (a URL's userinfo is percent-encoded; Basic credentials are not).
std::string PercentDecoded(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string Base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

bool UsableProxyAddress(const sockaddr_storage& sa) {
  if (sa.ss_family == AF_INET) {
    const auto* b = reinterpret_cast<const unsigned char*>(&reinterpret_cast<const sockaddr_in*>(&sa)->sin_addr);
    return b[0] == 127 || (b[0] == 192 && b[1] == 0 && b[2] == 2) || (b[0] == 198 && b[1] == 51 && b[2] == 100) ||
           (b[0] == 203 && b[1] == 0 && b[2] == 113);
  }
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&sa)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(&a) || (a.s6_addr[0] == 0x20 && a.s6_addr[1] == 0x01 && a.s6_addr[2] == 0x0d &&
                                      a.s6_addr[3] == 0xb8);
}

// http://[USER[:PASSWORD]@]HOST[:PORT][/] into `proxy`; "" or what is wrong.
std::string ParseProxyUrl(const std::string& url, LabProxy& proxy) {
  constexpr std::string_view kScheme = "http://";
  if (url.compare(0, kScheme.size(), kScheme) != 0) return "not an http:// proxy URL";
  std::string rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos) return "a proxy URL with a path";
  if (const std::size_t at = rest.rfind('@'); at != std::string::npos) {
    proxy.authorization = "Basic " + Base64(PercentDecoded(rest.substr(0, at)));
    rest = rest.substr(at + 1);
  }
  std::string host = rest, port = "80";
  if (!rest.empty() && rest.front() == '[') {
    const std::size_t end = rest.find(']');
    if (end == std::string::npos) return "an unterminated [IPv6] host";
    host = rest.substr(1, end - 1);
    if (end + 1 < rest.size()) {
      if (rest[end + 1] != ':') return "garbage after the [IPv6] host";
      port = rest.substr(end + 2);
    }
  } else if (const std::size_t colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) == 0 || std::stoi(port) > 65535) {
    return "not a port: " + port;
  }
  if (host == "localhost") host = "127.0.0.1";  // never resolved
  auto* v4 = reinterpret_cast<sockaddr_in*>(&proxy.sockaddr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&proxy.sockaddr);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(std::stoi(port)));
    proxy.sockaddr_length = sizeof *v4;
    proxy.address = host + ":" + port;
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(std::stoi(port)));
    proxy.sockaddr_length = sizeof *v6;
    proxy.address = "[" + host + "]:" + port;
  } else {
    return "the proxy's host is a name other than localhost (never resolved): " + host;
  }
  if (!UsableProxyAddress(proxy.sockaddr)) return "the proxy " + proxy.address + " is neither loopback nor a lab address";
  proxy.url = "http://" + proxy.address;
  return "";
}

}  // namespace

std::string SplitLabProxyArgs(const std::string& family, const std::vector<std::string>& args, std::string* spec,
                              std::vector<std::string>* rest) {
  std::size_t i = 0;
  if (!args.empty() && args[0] == "--proxy") {
    if (args.size() < 2 || (args[1] != "env" && args[1].rfind("http://", 0) != 0)) {
      return family + ": --proxy needs env or an http:// URL";
    }
    if (spec != nullptr) *spec = args[1];
    i = 2;
  }
  if (rest != nullptr) rest->assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return "";
}

LabProxy FindLabProxy(const std::string& spec) {
  LabProxy proxy;
  proxy.spec = spec;
  if (spec.empty()) return proxy;
  std::string url = spec;
  if (spec == "env") {
    url.clear();
    for (const char* name : kProxyVariables) {
      if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
        url = value;
        break;
      }
    }
    if (url.empty()) {
      proxy.refuse = "no http_proxy, HTTP_PROXY, all_proxy or ALL_PROXY in the environment";
      return proxy;
    }
  }
  if (std::string error = ParseProxyUrl(url, proxy); !error.empty()) proxy.refuse = "--proxy " + spec + ": " + error;
  return proxy;
}

}  // namespace sandprobe
