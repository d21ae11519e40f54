#include "lab/lab_sinks.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cstring>

namespace sandprobe {
namespace {

constexpr char kTlsHandshakeRecord = 0x16;
constexpr char kNoContent[] = "HTTP/1.1 204 No Content\r\nX-Sandprobe-Lab: sink\r\nConnection: close\r\n\r\n";
constexpr char kTunnelOpen[] = "HTTP/1.1 200 Connection established\r\n\r\n";

// A byte source: the socket, or a TLS session on it.
struct Stream {
  int fd;
  SSL* ssl = nullptr;
  long Read(char* buf, std::size_t size) const {
    if (ssl != nullptr) return SSL_read(ssl, buf, static_cast<int>(size));
    return ::recv(fd, buf, size, 0);
  }
  void Write(const char* text) const {
    if (ssl != nullptr) SSL_write(ssl, text, static_cast<int>(std::strlen(text)));
    else ::send(fd, text, std::strlen(text), MSG_NOSIGNAL);
  }
};

// Reads until an HTTP head ends, the cap, the peer's close or a timeout; returns what came.
std::string ReadHead(const Stream& stream) {
  std::string data;
  char buf[1024];
  for (int i = 0; i < kMaxSinkReads && data.size() < kMaxSinkBytes; ++i) {
    const long n = stream.Read(buf, std::min(sizeof buf, kMaxSinkBytes - data.size()));
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.find("\r\n\r\n") != std::string::npos || data.find("\n\n") != std::string::npos) break;
  }
  return data;
}

// The first byte waiting on `fd` (not consumed), or -1 when none came in time.
int PeekFirstByte(int fd) {
  char byte = 0;
  return ::recv(fd, &byte, 1, MSG_PEEK) == 1 ? static_cast<unsigned char>(byte) : -1;
}

// Reads an HTTP head from `stream` into `receipt`; answers it. Returns the CONNECT target when
// it was a CONNECT (answered 200: the caller reads the tunnel), else "".
std::string ServeHttp(const Stream& stream, const std::string& head, SinkReceipt& receipt,
                      const SinkRequestHook& on_request) {
  std::string target;
  if (!ParseHttpHead(head, receipt.http_method, target, receipt.http_host)) return "";
  if (receipt.http_method == "CONNECT") {
    stream.Write(kTunnelOpen);
    return target;
  }
  receipt.http_target = target;
  if (on_request) on_request(receipt.http_host, target);
  stream.Write(kNoContent);
  return "";
}

// One TLS session on `fd`: the SNI, then the HTTP request inside it, if the handshake finishes.
void ServeTls(int fd, const LabTlsContext& tls, SinkReceipt& receipt, const SinkRequestHook& on_request) {
  SSL* ssl = tls.NewServerSsl(fd, &receipt.tls_sni);
  if (ssl == nullptr) return;
  if (SSL_accept(ssl) == 1) {
    receipt.tls_handshake_done = true;
    const Stream stream{fd, ssl};
    std::string connect_inside = ServeHttp(stream, ReadHead(stream), receipt, on_request);
    (void)connect_inside;  // a CONNECT inside TLS is recorded by its method and Host only
    SSL_shutdown(ssl);
  }
  SSL_free(ssl);
}

}  // namespace

std::string_view SinkProtocolName(SinkProtocol protocol) {
  switch (protocol) {
    case SinkProtocol::kTcp: return "tcp";
    case SinkProtocol::kHttp: return "http";
    case SinkProtocol::kTls: return "tls";
    case SinkProtocol::kDns: return "dns";
  }
  return "?";
}

std::string PrintableText(const std::string& text, std::size_t cap) {
  std::string out;
  for (char c : text.substr(0, cap)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

bool ParseHttpHead(const std::string& head, std::string& method, std::string& target, std::string& host) {
  const std::size_t line_end = head.find('\n');
  if (line_end == std::string::npos) return false;
  const std::string line = head.substr(0, line_end);
  const std::size_t first = line.find(' ');
  const std::size_t second = first == std::string::npos ? first : line.find(' ', first + 1);
  if (second == std::string::npos || line.compare(second + 1, 5, "HTTP/") != 0 || first == 0) return false;
  method = PrintableText(line.substr(0, first), 16);
  target = PrintableText(line.substr(first + 1, second - first - 1), 255);
  host.clear();
  for (std::size_t at = line_end + 1; at < head.size();) {
    std::size_t end = head.find('\n', at);
    if (end == std::string::npos) end = head.size();
    std::string header = head.substr(at, end - at);
    if (!header.empty() && header.back() == '\r') header.pop_back();
    if (header.empty()) break;
    if (header.size() > 5 && strncasecmp(header.c_str(), "host:", 5) == 0) {
      const std::size_t value = header.find_first_not_of(" \t", 5);
      host = value == std::string::npos ? "" : PrintableText(header.substr(value), 255);
      break;
    }
    at = end + 1;
  }
  return true;
}

void ServeSinkConnection(int fd, const LabTlsContext& tls, SinkReceipt& receipt, const SinkRequestHook& on_request) {
  const timeval timeout{kSinkReadMs / 1000, (kSinkReadMs % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  const int first = PeekFirstByte(fd);
  if (first == kTlsHandshakeRecord) {
    receipt.protocol = SinkProtocol::kTls;
    ServeTls(fd, tls, receipt, on_request);
    return;
  }
  const Stream plain{fd};
  const std::string head = first < 0 ? "" : ReadHead(plain);
  std::string method, target;
  if (!ParseHttpHead(head, method, target, receipt.http_host)) {
    receipt.protocol = SinkProtocol::kTcp;
    receipt.first_bytes = PrintableText(head, 64);
    return;
  }
  receipt.protocol = SinkProtocol::kHttp;
  receipt.connect_target = ServeHttp(plain, head, receipt, on_request);
  if (receipt.connect_target.empty()) return;
  // The tunnel, read once: TLS (its SNI) or plain HTTP (its Host); nothing deeper.
  if (PeekFirstByte(fd) == kTlsHandshakeRecord) {
    ServeTls(fd, tls, receipt, on_request);
  } else {
    ServeHttp(plain, ReadHead(plain), receipt, on_request);
  }
}

}  // namespace sandprobe
