// The lab's sinks: what one TCP connection to a lab address carried, told apart by its first
// bytes (a TLS handshake, an HTTP request, anything else) and recorded as a SinkReceipt. A
// CONNECT request is answered "200" and the tunnel read once more, so a receipt of a proxied
// connection holds both the CONNECT target and the SNI or Host sent through it (fronting).
//
// Bounded: one connection reads at most kMaxSinkBytes of plain text, in at most kMaxSinkReads
// reads, each waiting at most kSinkReadMs; a TLS handshake is bounded by the same socket timeouts.
#pragma once

#include <functional>
#include <string>

#include "lab/lab_tls.h"

namespace sandprobe {

enum class SinkProtocol { kTcp, kHttp, kTls, kDns };
std::string_view SinkProtocolName(SinkProtocol protocol);  // "tcp", "http", "tls", "dns"

struct SinkReceipt {
  std::string peer;            // "192.0.2.1:40000", "[2001:db8:a::a]:40000"
  std::string local;           // the lab address and port the connection reached
  int port = 0;
  SinkProtocol protocol = SinkProtocol::kTcp;  // the outer protocol
  std::string http_method;     // "GET", "CONNECT"; of the innermost HTTP request seen
  std::string http_host;       // the Host header as sent (printable, at most 255)
  std::string http_target;     // the innermost non-CONNECT request's target ("/sandprobe/NONCE"), at most 255
  std::string connect_target;  // a CONNECT request's target ("pkg.lab.test:443")
  std::string tls_sni;         // the ClientHello's server name, "" when none was sent
  bool tls_handshake_done = false;
  std::string first_bytes;     // kTcp: what came first, printable, at most 64
};

constexpr std::size_t kMaxSinkBytes = 4096;
constexpr int kMaxSinkReads = 16;
constexpr int kSinkReadMs = 1000;

// The request line and Host of an HTTP/1 request head ("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
// false when `head` does not start with one.
bool ParseHttpHead(const std::string& head, std::string& method, std::string& target, std::string& host);

// Called with each non-CONNECT HTTP request's Host and target before it is answered, so that
// what the lab does on a request (arming a rebinding) happens before the client hears back.
using SinkRequestHook = std::function<void(const std::string& host, const std::string& target)>;

// Serves the accepted connection `fd` (blocking; its timeouts are set here) and fills
// `receipt`'s protocol fields. Does not close `fd`.
void ServeSinkConnection(int fd, const LabTlsContext& tls, SinkReceipt& receipt, const SinkRequestHook& on_request = {});

// Printable ASCII only (others become '?'), at most `cap` characters.
std::string PrintableText(const std::string& text, std::size_t cap);

}  // namespace sandprobe
