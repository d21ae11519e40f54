// The proxy net.lab and net.bypass send through when the host says the policy declares one
// (issue 28: network.proxy): "--proxy env" (the standard variables the sandbox set: http_proxy,
// HTTP_PROXY, then all_proxy, ALL_PROXY, an http:// URL) or "--proxy http://HOST:PORT". The
// request then goes to the proxy as a forward-proxy request ("GET http://NAME/sandprobe/NONCE",
// Host NAME), and the proxy resolves and connects: what it lets through is what the lab's sinks
// receive. NO_PROXY is not consulted: every name the lab plans is one the proxy is meant to see.
//
// Safety: a proxy is used only at a loopback address ("localhost" is 127.0.0.1; no name is
// ever resolved for it) or a documentation-range one (a lab's); anything else is refused.
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

namespace sandprobe {

struct LabProxy {
  std::string spec;           // "env" or the URL the host passed; "" for no proxy
  std::string url;            // the URL used (for "env": the variable's value, credentials cut)
  std::string address;        // "127.0.0.1:3128", "[::1]:3128"
  sockaddr_storage sockaddr{};
  socklen_t sockaddr_length = 0;
  std::string authorization;  // "Basic ..." from the URL's user:password, "" without
  std::string refuse;         // set: why no proxy can be used (the family then tries nothing)
};

// Splits a leading "--proxy SPEC" off `args` into `spec` (SPEC "env" or "http://..."), leaving
// the rest in `rest`. "" or the usage error (`family` names it).
std::string SplitLabProxyArgs(const std::string& family, const std::vector<std::string>& args,
                              std::string* spec, std::vector<std::string>* rest);

// The proxy `spec` names, read from the environment for "env"; `refuse` says what is wrong.
LabProxy FindLabProxy(const std::string& spec);

}  // namespace sandprobe
