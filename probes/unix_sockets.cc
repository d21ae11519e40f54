// See unix_sockets.h.
#include "probes/unix_sockets.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <set>
#include <utility>

#include "contract/errno_name.h"
#include "contract/frame_writer.h"
#include "contract/mountinfo.h"
#include "probes/families.h"

namespace sandprobe {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxOpenAtOnce = 128;
constexpr std::size_t kMaxGroups = 64;
constexpr std::size_t kMaxProcNetUnixBytes = 1 << 20;

std::string Join(const std::string& dir, const char* name) {
  return dir == "/" ? "/" + std::string(name) : dir + "/" + name;
}

// Collects sockets, once each by (dev, ino), at most kMaxFoundSockets.
class Collector {
 public:
  Collector(const std::vector<std::string>& skip, SocketWalk& walk) : walk_(walk) {
    for (const std::string& path : skip) Seen(path);
  }
  // Adds `path` if it is a socket not seen before; false when the cap is reached.
  bool Add(const std::string& path, const char* source) {
    if (out_.size() == kMaxFoundSockets) {
      walk_.found_truncated = true;
      return false;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return true;
    if (!ids_.insert({st.st_dev, st.st_ino}).second) return true;
    out_.push_back({path, source});
    return true;
  }
  std::vector<FoundSocket> Take() { return std::move(out_); }

 private:
  void Seen(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ids_.insert({st.st_dev, st.st_ino});
  }
  SocketWalk& walk_;
  std::set<std::pair<dev_t, ino_t>> ids_;
  std::vector<FoundSocket> out_;
};

// Breadth first, so the shallow places sockets live in (/run, /var/run, /tmp) come before the
// deep trees; never leaves the mount's filesystem (its own device) and never follows a link.
void WalkMount(const std::string& top, Collector& found, SocketWalk& walk) {
  struct stat top_st {};
  if (::stat(top.c_str(), &top_st) != 0 || !S_ISDIR(top_st.st_mode)) return;
  ++walk.mounts;
  std::deque<std::pair<std::string, int>> queue = {{top, 0}};
  while (!queue.empty() && !walk.truncated) {
    auto [dir, depth] = std::move(queue.front());
    queue.pop_front();
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_dev != top_st.st_dev) {
      ::close(fd);  // another filesystem mounted here: walked as its own mount, if at all
      continue;
    }
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
      ::close(fd);
      continue;
    }
    ++walk.dirs;
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      if (++walk.entries > kMaxWalkEntries) {
        walk.truncated = true;
        break;
      }
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat est {};
        if (::fstatat(::dirfd(d), e->d_name, &est, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISSOCK(est.st_mode) ? DT_SOCK : S_ISDIR(est.st_mode) ? DT_DIR : DT_REG;
      }
      if (type == DT_SOCK) {
        if (!found.Add(Join(dir, e->d_name), "walk")) break;
      } else if (type == DT_DIR && depth + 1 <= kMaxWalkDepth) {
        queue.emplace_back(Join(dir, e->d_name), depth + 1);
      }
    }
    ::closedir(d);
  }
}

// The bound paths of /proc/net/unix ("Num RefCount Protocol Flags Type St Inode Path"): the
// sockets of this network namespace, which is the host's when the sandbox shares it.
std::vector<std::string> ProcNetUnixPaths() {
  int error = 0;
  const std::string text = ReadMountinfoText(&error, "/proc/net/unix");  // a bounded read
  std::vector<std::string> paths;
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start < text.size() && start < kMaxProcNetUnixBytes) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t slash = line.find(" /");
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash + 1);
    if (seen.insert(path).second) paths.push_back(std::move(path));
    if (paths.size() == kMaxProcNetUnixPaths) break;
  }
  return paths;
}

bool HasDev(const std::vector<std::string>& devs, const std::string& dev) {
  return std::find(devs.begin(), devs.end(), dev) != devs.end();
}

// ---- handshakes ----

struct Pending {
  std::size_t index;  // into the answers
  int fd;
  std::string got;
  bool done = false;
};

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Reads what each pending socket sends until `complete` says so, it closes, or the deadline.
template <typename Complete>
void ReadReplies(std::vector<Pending>& pending, int wait_ms, Complete complete) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  while (true) {
    std::vector<pollfd> fds;
    std::vector<Pending*> who;
    for (Pending& p : pending) {
      if (p.done) continue;
      fds.push_back({p.fd, POLLIN, 0});
      who.push_back(&p);
    }
    const int wait = RemainingMs(deadline);
    if (fds.empty() || wait == 0) return;
    if (::poll(fds.data(), fds.size(), wait) <= 0) return;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Pending& p = *who[i];
      char buf[512];
      const ssize_t n = ::recv(p.fd, buf, std::min(sizeof buf, kMaxReplyBytes - p.got.size()), MSG_DONTWAIT);
      if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        p.done = true;  // closed, or an error
        continue;
      }
      p.got.append(buf, static_cast<std::size_t>(n));
      p.done = p.got.size() >= kMaxReplyBytes || complete(p.got);
    }
  }
}

// socket + connect; the fd, or -1 with the failed step and errno in `a`.
int Connect(SocketAnswer& a) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (a.path.size() >= sizeof addr.sun_path) {
    a.failed_step = "connect";
    a.error = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(addr.sun_path, a.path.c_str(), a.path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    a.failed_step = "socket";
    a.error = errno;
    return -1;
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    a.failed_step = "connect";
    a.error = errno;  // EAGAIN: the listener's backlog is full; still "there"
    ::close(fd);
    return -1;
  }
  return fd;
}

bool Send(int fd, const std::string& bytes, int* error) {
  const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (n == static_cast<ssize_t>(bytes.size())) return true;
  *error = n < 0 ? errno : EAGAIN;
  return false;
}

// Whether `got` starts with an HTTP/2 frame header (RFC 9113 4.1) of type SETTINGS on stream 0.
bool IsHttp2Settings(const std::string& got) {
  return got.size() >= 9 && static_cast<unsigned char>(got[3]) == 0x04 && got[5] == 0 && got[6] == 0 &&
         got[7] == 0 && got[8] == 0 && got.rfind("HTTP/", 0) != 0;
}

// The HTTP/2 client preface and an empty SETTINGS frame (RFC 9113 3.4, 6.5).
std::string Http2Preface() {
  std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  const char settings[9] = {0, 0, 0, 0x04, 0, 0, 0, 0, 0};
  return preface + std::string(settings, sizeof settings);
}

void TryChunk(std::vector<SocketAnswer>& answers, std::size_t from, std::size_t to) {
  std::vector<Pending> pings;
  for (std::size_t i = from; i < to; ++i) {
    SocketAnswer& a = answers[i];
    struct stat st {};
    if (::stat(a.path.c_str(), &st) != 0) {
      a.stat_errno = errno;
      continue;
    }
    a.exists = true;
    a.mode = st.st_mode;
    a.owner_uid = st.st_uid;
    a.owner_gid = st.st_gid;
    if (!S_ISSOCK(st.st_mode)) continue;
    const int fd = Connect(a);
    if (fd < 0) continue;
    a.connected = true;
    a.ping_sent = Send(fd, "GET /_ping HTTP/1.0\r\n\r\n", &a.send_errno);
    pings.push_back({i, fd, {}});  // even unsent: a server that speaks first may have spoken
  }
  ReadReplies(pings, kPingWaitMs, [](const std::string& got) {
    return got.find("\r\n\r\n") != std::string::npos || IsHttp2Settings(got);
  });
  std::vector<Pending> h2;
  for (Pending& p : pings) {
    ::close(p.fd);
    SocketAnswer& a = answers[p.index];
    a.reply = std::move(p.got);
    if (a.reply.rfind("HTTP/", 0) == 0) continue;
    if (IsHttp2Settings(a.reply)) {  // a gRPC server speaks first: its SETTINGS, on any input
      a.h2 = true;
      continue;
    }
    // No answer yet: perhaps an HTTP/2-only server that waits for the client's preface.
    SocketAnswer again = a;
    const int fd = Connect(again);
    if (fd < 0) continue;
    int ignored = 0;
    if (!Send(fd, Http2Preface(), &ignored)) {
      ::close(fd);
      continue;
    }
    h2.push_back({p.index, fd, {}});
  }
  ReadReplies(h2, kPrefaceWaitMs, [](const std::string& got) { return got.size() >= 9; });
  for (Pending& p : h2) {
    ::close(p.fd);
    answers[p.index].h2 = IsHttp2Settings(p.got);
  }
}

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The value of header `name` (case-insensitive) in an HTTP reply head, "" when absent.
std::string Header(const std::string& head, const std::string& name) {
  std::size_t start = head.find('\n');
  while (start != std::string::npos && start + 1 < head.size()) {
    const std::size_t line_start = start + 1;
    std::size_t end = head.find('\n', line_start);
    const std::string line = head.substr(line_start, (end == std::string::npos ? head.size() : end) - line_start);
    const std::size_t colon = line.find(':');
    if (colon == name.size() &&
        std::equal(name.begin(), name.end(), line.begin(),
                   [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) ==
                                               std::tolower(static_cast<unsigned char>(b)); })) {
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
      return value;
    }
    if (line == "\r" || line.empty()) break;  // end of the head
    start = end;
  }
  return "";
}

}  // namespace

std::vector<FoundSocket> FindUnixSockets(const std::vector<std::string>& walk_devs,
                                         const std::vector<std::string>& skip, SocketWalk& walk) {
  Collector found(skip, walk);
  int error = 0;
  const std::vector<MountEntry> mounts = ParseMountinfo(ReadMountinfoText(&error));
  // A socket bound by itself over a path (docker -v /var/run/docker.sock:/anything).
  for (const MountEntry& m : mounts) found.Add(m.mount_point, "mountinfo");
  std::set<std::pair<std::string, std::string>> walked;  // (dev, root): one walk per host directory
  for (const MountEntry& m : mounts) {
    const std::string dev = DeviceText(m.major, m.minor);
    if (walk.truncated || !HasDev(walk_devs, dev) || m.root.empty() || m.root[0] != '/') continue;
    if (!walked.insert({dev, m.root}).second) continue;
    WalkMount(m.mount_point, found, walk);
  }
  const std::vector<std::string> listed = ProcNetUnixPaths();
  walk.proc_net_unix = listed.size();
  for (const std::string& path : listed) found.Add(path, "proc_net_unix");
  if (DIR* run_user = ::opendir("/run/user")) {
    int dirs = 0;
    while (const dirent* entry = ::readdir(run_user)) {
      if (entry->d_name[0] == '.' || ++dirs > 64) continue;
      for (const char* rel : {"/docker.sock", "/podman/podman.sock"}) {
        found.Add(std::string("/run/user/") + entry->d_name + rel, "run_user");
      }
    }
    ::closedir(run_user);
  }
  return found.Take();
}

std::vector<SocketAnswer> TryUnixSockets(const std::vector<std::string>& paths) {
  std::vector<SocketAnswer> answers(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) answers[i].path = paths[i];
  for (std::size_t from = 0; from < answers.size(); from += kMaxOpenAtOnce) {
    TryChunk(answers, from, std::min(answers.size(), from + kMaxOpenAtOnce));
  }
  return answers;
}

PingReply ParsePingReply(const std::string& reply) {
  PingReply out;
  out.status_line = reply.substr(0, reply.find_first_of("\r\n"));
  if (reply.rfind("HTTP/", 0) != 0) return out;
  out.api_version = Header(reply, "Api-Version");
  out.server = Header(reply, "Server");
  return out;
}

void AddSocketAnswerFacts(const SocketAnswer& a, json& fact) {
  if (!a.exists) return;
  fact["mode"] = ModeText(a.mode);
  fact["owner_uid"] = a.owner_uid;
  fact["owner_gid"] = a.owner_gid;
  if (!a.connected) return;
  if (!a.ping_sent) fact["send_errno"] = ErrnoName(a.send_errno);
  if (a.reply.rfind("HTTP/", 0) == 0) {
    const PingReply ping = ParsePingReply(a.reply);
    SetBytesField(fact, "status_line", ping.status_line);
    if (!ping.api_version.empty()) SetBytesField(fact, "api_version", ping.api_version);
    if (!ping.server.empty()) SetBytesField(fact, "server", ping.server);
  } else {
    fact["reply_bytes"] = a.reply.size();  // no HTTP/1 answer: silence, a close, or another protocol
    fact["h2"] = a.h2;
  }
}

void AddSocketScanSummary(const SocketWalk& walk, std::size_t found, json& fact) {
  fact["walk"] = {{"mounts", walk.mounts}, {"dirs", walk.dirs}, {"entries", walk.entries},
                  {"truncated", walk.truncated}};
  fact["proc_net_unix"] = walk.proc_net_unix;
  fact["found"] = found;
  fact["found_truncated"] = walk.found_truncated;
  fact["euid"] = ::geteuid();
  fact["egid"] = ::getegid();
  gid_t groups[kMaxGroups];
  const int n = ::getgroups(static_cast<int>(kMaxGroups), groups);
  json list = json::array();
  for (int i = 0; i < n; ++i) list.push_back(groups[i]);
  fact["groups"] = std::move(list);
}

std::string SplitSocketArgs(const std::string& family, const std::vector<std::string>& args,
                            std::vector<std::string>* walk_devs, std::vector<std::string>* paths) {
  std::size_t i = 0;
  if (!args.empty() && args[0] == "--walk-devs") {
    if (args.size() < 2) return family + ": --walk-devs needs a list (MAJOR:MINOR,...)";
    std::size_t start = 0;
    const std::string& list = args[1];
    while (start <= list.size()) {
      std::size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      const std::string dev = list.substr(start, end - start);
      const std::size_t colon = dev.find(':');
      if (dev.empty() || colon == 0 || colon == std::string::npos || colon + 1 == dev.size() ||
          dev.find_first_not_of("0123456789:") != std::string::npos || dev.find(':', colon + 1) != std::string::npos) {
        return family + ": --walk-devs: not MAJOR:MINOR: " + dev;
      }
      if (walk_devs != nullptr) walk_devs->push_back(dev);
      start = end + 1;
    }
    i = 2;
  }
  if (args.size() - i > kMaxPathsPerFamily) return family + ": more than 4096 paths";
  for (; i < args.size(); ++i) {
    if (args[i].empty() || args[i].front() != '/') return family + ": not an absolute path: " + args[i];
    if (paths != nullptr) paths->push_back(args[i]);
  }
  return "";
}

}  // namespace sandprobe
