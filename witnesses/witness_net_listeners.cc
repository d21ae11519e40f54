#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "contract/protocol.h"
#include "witnesses/witness_net.h"

namespace sandprobe {
namespace {

constexpr std::size_t kMaxConnections = 64;
constexpr std::size_t kMaxPayload = 512;
constexpr long long kConnectionMs = 2000;
constexpr char kAck[] = "sandprobe-ack\n";

long long NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string PeerText(const sockaddr_in& addr) {
  char ip[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
  return fmt::format("{}:{}", ip, ntohs(addr.sin_port));
}

bool IsNonceChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool IsNonce(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    if (!IsNonceChar(c)) return false;
  }
  return true;
}

// Printable ASCII only, so what a sandbox sends cannot garble a report.
std::string Printable(const std::string& s, std::size_t cap) {
  std::string out;
  for (char c : s.substr(0, cap)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// Opens a socket bound to ip:0; returns the fd and the port, or an error naming the call.
StatusOr<int> BoundSocket(const std::string& ip, int type, std::string& addr_text) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) {
    return Status::Error(fmt::format("canary address {}: not a numeric IPv4 address", ip));
  }
  int fd = ::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Error(fmt::format("socket(): {}", std::strerror(errno)));
  const int one = 1;  // a canary port of an earlier run may linger in TIME_WAIT
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 16) != 0)) {
    int err = errno;
    ::close(fd);
    return Status::Error(fmt::format("bind({}:0): {}", ip, std::strerror(err)));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  addr_text = PeerText(addr);
  return fd;
}

}  // namespace

bool ParseCanaryPayload(const std::string& payload, std::string& nonce, std::string& detail) {
  const std::string line = payload.substr(0, payload.find('\n'));
  if (line.rfind("sandprobe ", 0) != 0) return false;
  const std::size_t end = line.find(' ', 10);
  nonce = line.substr(10, end == std::string::npos ? std::string::npos : end - 10);
  if (!IsNonce(nonce)) return false;
  detail = end == std::string::npos ? "" : Printable(line.substr(end + 1), 200);
  return true;
}

std::string AnswerDnsQuery(const std::string& q, std::string& qname) {
  qname.clear();
  if (q.size() < 12 || (q[2] & 0x80) != 0) return "";  // too short, or a response
  std::size_t at = 12;
  for (int labels = 0; labels < 128; ++labels) {
    if (at >= q.size()) return "";
    const auto len = static_cast<unsigned char>(q[at]);
    if (len == 0) break;
    if (len > 63 || at + 1 + len > q.size()) return "";
    if (!qname.empty()) qname += '.';
    qname += Printable(q.substr(at + 1, len), 63);
    at += 1 + len;
  }
  if (at + 5 > q.size()) return "";
  const std::string question = q.substr(12, at + 5 - 12);
  const bool type_a = q[at + 1] == 0 && q[at + 2] == 1;
  static const std::string kZone = "." + std::string(kDnsZone);
  const bool ours = qname.size() > kZone.size() &&
                    qname.compare(qname.size() - kZone.size(), kZone.size(), kZone) == 0;
  std::string r = q.substr(0, 2);
  r += static_cast<char>(0x84 | (q[2] & 0x01));   // QR, AA, RD copied
  r += static_cast<char>(ours ? 0x00 : 0x05);     // NOERROR or REFUSED
  r += std::string{0, 1, 0, static_cast<char>(ours && type_a ? 1 : 0), 0, 0, 0, 0};
  r += question;
  if (ours && type_a) {
    // Name pointer to the question, type A, class IN, TTL 0, 4 bytes: 127.0.0.1.
    r += std::string{static_cast<char>(0xC0), 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1};
  }
  return r;
}

nlohmann::json ReceiptsToJson(const std::vector<CanaryReceipt>& receipts) {
  nlohmann::json out = nlohmann::json::array();
  for (const CanaryReceipt& r : receipts) {
    out.push_back({{"endpoint", r.endpoint}, {"peer", r.peer}, {"nonce", r.nonce},
                   {"detail", r.detail}});
  }
  return out;
}

StatusOr<std::unique_ptr<CanaryListeners>> CanaryListeners::Start(
    const std::vector<CanarySite>& sites) {
  std::unique_ptr<CanaryListeners> self(new CanaryListeners());
  self->stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (self->stop_fd_ < 0) return Status::Error(fmt::format("eventfd: {}", std::strerror(errno)));
  for (const CanarySite& site : sites) {
    if (Status s = self->Bind(site); !s.ok()) return s.WithContext("canary site " + site.name);
  }
  self->thread_ = std::thread([raw = self.get()] { raw->Serve(); });
  return self;
}

Status CanaryListeners::Bind(const CanarySite& site) {
  struct Want {
    const char* suffix;
    int type;
    Socket::Kind kind;
  };
  for (const Want& want : {Want{"tcp", SOCK_STREAM, Socket::Kind::kTcpListen},
                           Want{"udp", SOCK_DGRAM, Socket::Kind::kUdp},
                           Want{"dns", SOCK_DGRAM, Socket::Kind::kDns}}) {
    std::string text;
    StatusOr<int> fd = BoundSocket(site.ip, want.type, text);
    if (!fd.ok()) return fd.status();
    const std::string endpoint = site.name + "-" + want.suffix;
    sockets_.push_back(Socket{*fd, endpoint, want.kind});
    endpoints_[endpoint] = text;
  }
  return Status::Ok();
}

CanaryListeners::~CanaryListeners() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    ssize_t ignored = ::write(stop_fd_, &one, sizeof one);
    (void)ignored;
    thread_.join();
  }
  for (const Socket& s : sockets_) ::close(s.fd);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

std::vector<CanaryReceipt> CanaryListeners::Receipts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return receipts_;
}

void CanaryListeners::Record(CanaryReceipt receipt) {
  std::lock_guard<std::mutex> lock(mu_);
  if (receipts_.size() < kMaxReceipts) receipts_.push_back(std::move(receipt));
}

void CanaryListeners::Serve() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign(1, pollfd{stop_fd_, POLLIN, 0});
    for (const Socket& s : sockets_) fds.push_back(pollfd{s.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    const long long now = NowMs();
    const std::size_t count = sockets_.size();  // OnAccept appends; serve those next round
    for (std::size_t i = 0; i < count; ++i) {
      Socket& s = sockets_[i];
      const bool ready = (fds[i + 1].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
      switch (s.kind) {
        case Socket::Kind::kTcpListen:
          if (ready) OnAccept(s);
          break;
        case Socket::Kind::kUdp:
        case Socket::Kind::kDns:
          if (ready) OnDatagram(s);
          break;
        case Socket::Kind::kTcpConn:
          bool done = ready && !OnConnReadable(s);
          if (!done && now > s.deadline_ms) {
            FinishConnection(s);  // silent or partial: log what came
            done = true;
          }
          if (done) {
            ::close(s.fd);
            s.fd = -1;
          }
          break;
      }
    }
    std::erase_if(sockets_, [](const Socket& s) { return s.fd < 0; });
  }
}

void CanaryListeners::OnAccept(const Socket& listener) {
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  int fd = ::accept4(listener.fd, reinterpret_cast<sockaddr*>(&peer), &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  std::size_t open = 0;
  for (const Socket& s : sockets_) open += s.kind == Socket::Kind::kTcpConn;
  if (open >= kMaxConnections) {
    ::close(fd);
    return;
  }
  Socket conn{fd, listener.endpoint, Socket::Kind::kTcpConn};
  conn.peer = PeerText(peer);
  conn.deadline_ms = NowMs() + kConnectionMs;
  sockets_.push_back(std::move(conn));
}

bool CanaryListeners::OnConnReadable(Socket& s) {
  char buf[kMaxPayload];
  ssize_t n = ::recv(s.fd, buf, kMaxPayload - s.buffer.size(), MSG_DONTWAIT);
  if (n > 0) s.buffer.append(buf, static_cast<std::size_t>(n));
  if (n > 0 && s.buffer.find('\n') == std::string::npos && s.buffer.size() < kMaxPayload) {
    return true;  // wait for the rest of the line
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR) && s.deadline_ms >= NowMs()) return true;
  FinishConnection(s);
  return false;
}

void CanaryListeners::FinishConnection(Socket& s) {
  CanaryReceipt receipt{s.endpoint, s.peer, "", ""};
  if (!ParseCanaryPayload(s.buffer, receipt.nonce, receipt.detail)) {
    receipt.detail = s.buffer.empty() ? "connection without a payload"
                                      : "not a canary payload: " + Printable(s.buffer, 80);
  } else {
    ssize_t ignored = ::send(s.fd, kAck, sizeof kAck - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
  Record(std::move(receipt));
  s.buffer.clear();
}

void CanaryListeners::OnDatagram(Socket& s) {
  // Bounded: at most 64 datagrams per wake-up, the rest wait for the next round.
  for (int i = 0; i < 64; ++i) {
    char buf[kMaxPayload];
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    ssize_t n = ::recvfrom(s.fd, buf, sizeof buf, MSG_DONTWAIT,
                           reinterpret_cast<sockaddr*>(&peer), &len);
    if (n < 0) return;
    const std::string packet(buf, static_cast<std::size_t>(n));
    CanaryReceipt receipt{s.endpoint, PeerText(peer), "", ""};
    std::string reply;
    if (s.kind == Socket::Kind::kDns) {
      std::string qname;
      reply = AnswerDnsQuery(packet, qname);
      receipt.detail = reply.empty() ? "not a DNS query" : "query " + qname;
      const std::string label = qname.substr(0, qname.find('.'));
      if (IsNonce(label)) receipt.nonce = label;
    } else if (ParseCanaryPayload(packet, receipt.nonce, receipt.detail)) {
      reply = kAck;
    } else {
      receipt.detail = "not a canary payload: " + Printable(packet, 80);
    }
    // Replies go only to the sender of a well-formed packet, and are no larger than it plus
    // one answer record: the canary cannot be used to amplify traffic.
    if (!reply.empty()) {
      ::sendto(s.fd, reply.data(), reply.size(), MSG_DONTWAIT,
               reinterpret_cast<const sockaddr*>(&peer), len);
    }
    Record(std::move(receipt));
  }
}

}  // namespace sandprobe
