// Unix sockets by what they are, not where they usually live: shared by net.unix (net_unix.cc)
// and priv.runtime_sockets (priv_host.cc), so the same socket gets the same facts in both.
//
// FindUnixSockets discovers sockets the sandbox can see: every S_ISSOCK under the mounts whose
// device the harness names as the host's (`--walk-devs`: a breadth-first walk that stays on the
// mount's own filesystem), every mount point that is itself a socket, the bound paths listed in
// /proc/net/unix, and /run/user/*/{docker.sock,podman/podman.sock}. TryUnixSockets then tries
// each the way a client of a container runtime would, and nothing more: stat, connect, one
// read-only `GET /_ping HTTP/1.0` (the Docker and Podman APIs' health check), and, when no HTTP/1
// answer came, an HTTP/2 connection preface with an empty SETTINGS frame (what a gRPC server
// such as containerd or cri-o answers with its own SETTINGS). No request that changes state is
// ever sent. All sockets are tried at once, so a silent listener costs one wait, not one each.
//
// Bounds: the walk stops at kMaxWalkEntries directory entries (over all mounts) and
// kMaxWalkDepth levels; at most kMaxFoundSockets sockets are discovered and tried; a reply is
// read up to kMaxReplyBytes; the pings wait kPingWaitMs in all, the prefaces kPrefaceWaitMs.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sandprobe {

inline constexpr std::size_t kMaxWalkEntries = 50000;
inline constexpr int kMaxWalkDepth = 8;
inline constexpr std::size_t kMaxFoundSockets = 64;
inline constexpr std::size_t kMaxProcNetUnixPaths = 256;
inline constexpr std::size_t kMaxReplyBytes = 1024;
inline constexpr int kPingWaitMs = 1000;     // for all the ping replies of one batch
inline constexpr int kPrefaceWaitMs = 500;   // for the HTTP/2 answers of the silent ones

struct FoundSocket {
  std::string path;
  const char* source;  // "walk", "mountinfo", "proc_net_unix", "run_user"
};

// What the discovery looked at, for the summary fact.
struct SocketWalk {
  std::size_t mounts = 0;   // mounts walked
  std::size_t dirs = 0;     // directories listed
  std::size_t entries = 0;  // directory entries seen
  bool truncated = false;   // stopped at kMaxWalkEntries
  std::size_t proc_net_unix = 0;  // paths /proc/net/unix listed (bound, not abstract)
  bool found_truncated = false;   // more than kMaxFoundSockets sockets
};

// `walk_devs`: "MAJOR:MINOR" of the host filesystems worth walking. `skip`: paths already
// tried (the caller's list), never reported twice. Sockets are told apart by (dev, ino): one
// socket bound under two names is reported once, by its first name.
std::vector<FoundSocket> FindUnixSockets(const std::vector<std::string>& walk_devs,
                                         const std::vector<std::string>& skip, SocketWalk& walk);

// One attempt at a path, as facts.
struct SocketAnswer {
  std::string path;
  bool exists = false;
  int stat_errno = 0;
  mode_t mode = 0;
  uid_t owner_uid = 0;
  gid_t owner_gid = 0;
  const char* failed_step = nullptr;  // "socket" or "connect" when that failed
  int error = 0;                      // its errno
  bool connected = false;
  bool ping_sent = false;
  int send_errno = 0;
  std::string reply;        // the first bytes of the reply to the ping (up to kMaxReplyBytes)
  bool h2 = false;          // an HTTP/2 SETTINGS frame came (on the ping, or on a preface)
};

// Tries every path (at most 128 sockets open at once).
std::vector<SocketAnswer> TryUnixSockets(const std::vector<std::string>& paths);

// The parts of a ping's reply the host judges by.
struct PingReply {
  std::string status_line;  // "HTTP/1.0 200 OK"
  std::string api_version;  // the Api-Version header (Docker, Podman)
  std::string server;       // the Server header ("Docker/20.10.24 (linux)")
};
PingReply ParsePingReply(const std::string& reply);

// The shared keys of an attempt: "mode" ("0660"), "owner_uid", "owner_gid"; once connected
// either the HTTP answer ("status_line", "api_version", "server") or "reply_bytes" (what came
// instead) and "h2" (an HTTP/2 server answered), or "send_errno"; the family adds its own
// shape's keys.
void AddSocketAnswerFacts(const SocketAnswer& answer, nlohmann::json& fact);

// The summary keys: "walk" {mounts, dirs, entries, truncated}, "proc_net_unix", "found",
// "found_truncated", and the caller's credentials the host weighs a mode refusal by: "euid",
// "egid", "groups".
void AddSocketScanSummary(const SocketWalk& walk, std::size_t found, nlohmann::json& fact);

// "--walk-devs LIST PATH..." -> the devices and the paths; "" or the usage error.
std::string SplitSocketArgs(const std::string& family, const std::vector<std::string>& args,
                            std::vector<std::string>* walk_devs, std::vector<std::string>* paths);

}  // namespace sandprobe
