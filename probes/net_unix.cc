// net.unix: are container runtime sockets reachable from inside the sandbox? A reachable
// docker.sock is root on the host. Detection only: the probe connects and sends at most one
// read-only `GET /_ping HTTP/1.0` (the Docker/Podman API's health check), and reports the
// reply's status line. Nothing that could change state is ever sent.
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "contract/protocol.h"
#include "contract/errno_name.h"
#include "probes/net_probes.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxReply = 256;

std::string StatusLine(int fd) {
  std::string reply;
  char buf[kMaxReply];
  for (int reads = 0; reads < 16 && reply.size() < kMaxReply; ++reads) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kNetWaitMs) <= 0) break;
    ssize_t n = ::recv(fd, buf, kMaxReply - reply.size(), MSG_DONTWAIT);
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
    if (reply.find('\n') != std::string::npos) break;
  }
  return reply.substr(0, reply.find_first_of("\r\n"));
}

json TrySocket(const std::string& path) {
  json fact = {{"family", "net.unix"}};
  SetBytesField(fact, "path", path);
  auto fail = [&](const char* step, int err) {
    fact["ok"] = false;
    fact["step"] = step;
    fact["errno"] = ErrnoName(err);
    return fact;
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return fail("stat", errno);
  fact["exists"] = true;
  fact["is_socket"] = S_ISSOCK(st.st_mode);
  if (!S_ISSOCK(st.st_mode)) return fail("stat", ENOTSOCK);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return fail("connect", ENAMETOOLONG);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket", errno);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    return fail("connect", err);  // EAGAIN: the listener's backlog is full; still "there"
  }
  fact["ok"] = true;
  static const char kPing[] = "GET /_ping HTTP/1.0\r\n\r\n";
  if (::send(fd, kPing, sizeof kPing - 1, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof kPing - 1)) {
    SetBytesField(fact, "status_line", StatusLine(fd));
  } else {
    fact["send_errno"] = ErrnoName(errno);
  }
  ::close(fd);
  return fact;
}

}  // namespace

const std::vector<std::string>& DefaultRuntimeSockets() {
  static const std::vector<std::string> kPaths(kRuntimeSocketPaths.begin(), kRuntimeSocketPaths.end());
  return kPaths;
}

std::string CheckNetUnixArgs(const FamilyArgs& args) {
  if (args.size() > kMaxPathsPerFamily) return "net.unix: more than 4096 paths";
  for (const std::string& path : args) {
    if (path.empty() || path.front() != '/') return "net.unix: not an absolute path: " + path;
  }
  return "";
}

void RunNetUnix(const ProbeContext& ctx, const FamilyArgs& args) {
  std::vector<std::string> paths = DefaultRuntimeSockets();
  for (const std::string& path : args) {
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  for (const std::string& path : paths) ctx.out.Emit(TrySocket(path));
}

}  // namespace sandprobe
