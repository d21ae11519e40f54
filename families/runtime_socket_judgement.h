// One answer to "can the sandbox use this container runtime socket?", shared by the two
// families that ask it: net.unix (family_net_local.cc, one check per socket) and
// priv.runtime_sockets (family_priv_host.cc, one check for all of them). Both probes do the
// same thing (stat the path, socket(AF_UNIX), connect()), so the same fact must get the same
// judgement in both; only the field names of their facts differ, and ReadSocketAttempt reads
// either shape.
//
// The judgement, for a socket the policy wants hidden:
//   connect ok (or EAGAIN: the listener's backlog is full, permission was granted) -> reachable:
//       fail at the check's severity (critical: a usable docker.sock is root on the host);
//   EACCES for a non-root probe, with the socket file's mode and owner and the probe's
//       credentials known -> the mode refused this uid and its groups: denied, pass (becoming
//       another uid or joining the group is what the privilege checks judge: root,
//       no_new_privs, capabilities); when the mode would admit the probe, an LSM refused: denied;
//   EACCES for a non-root probe from an older record without the mode -> the file's mode, and a
//       uid or group it admits could connect: fail at medium (at most);
//   EPERM (a seccomp filter or an LSM refused socket() or connect()), EACCES for root (only
//       an LSM or an owner outside root's user namespace refuses root), EACCES from a language
//       runtime's permission layer (denied_by "runtime-permission": the kernel never saw the
//       connect, so the file's mode says nothing), or an address family not supported -> denied: pass;
//   ECONNREFUSED / ENOENT -> a socket file nothing listens on: pass;
//   no such path, or not a socket -> absent: pass;
//   any other errno -> nothing proven: inconclusive.
// An EACCES whose probe uid is unknown (no hello frame) is judged as non-root.
//
// What a socket is comes from what it answered (unix_sockets.h in the probe): an HTTP reply to
// GET /_ping with an Api-Version header is a Docker-API engine (docker, podman); an HTTP/2
// SETTINGS frame is a gRPC server (containerd, cri-o, buildkitd). A discovered socket (found by
// the probe's walk or in /proc/net/unix, not at a listed path) counts as a runtime socket only
// when it answered as one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "families/family.h"

namespace sandprobe {

enum class SocketReach {
  kAbsent,        // no such path, or not a socket
  kNoListener,    // ECONNREFUSED / ENOENT at connect: a stale socket file
  kDenied,        // EPERM, EAFNOSUPPORT, or EACCES for root: refused by a filter or LSM
  kDeniedByMode,  // EACCES for a non-root probe whose uid and groups the file's mode refuses
  kOtherUserMay,  // EACCES for a non-root probe, mode unknown (an older record)
  kReachable,     // connect ok (or EAGAIN)
  kUnclear,       // another errno: neither reachable nor denied is proven
};

// What answered on a connected socket.
enum class SocketApi {
  kNone,       // not connected, or no handshake was tried (an older record)
  kDockerApi,  // HTTP reply to GET /_ping with an Api-Version header
  kHttp,       // another HTTP reply
  kHttp2,      // an HTTP/2 SETTINGS frame: a gRPC server
  kOther,      // silence, a close, or bytes of another protocol
};

// One probe attempt at a socket path, from either fact shape:
//   net.unix:              exists, is_socket, ok, step ("stat"|"socket"|"connect"), errno,
//                          status_line (the reply to GET /_ping)
//   priv.runtime_sockets:  exists, kind ("socket"...), connect_ok, errno (of socket() or
//                          connect(), told apart by nothing: read as connect)
struct SocketAttempt {
  std::string path;
  std::string source;        // "list" (a listed path), or how the probe found it: "walk", ...
  bool exists = false;
  bool is_socket = false;
  bool connected = false;
  std::string step;          // the failed step: "stat", "socket", "connect"; empty when connected
  std::string error;         // errno name of the failed step
  std::string mode;          // the socket file's permission bits ("0660"); "" when not reported
  long owner_uid = -1, owner_gid = -1;
  std::string status_line;   // the HTTP reply's first line to GET /_ping
  std::string api_version;   // its Api-Version header
  std::string server;        // its Server header
  bool h2 = false;           // an HTTP/2 SETTINGS frame came
  bool ping_sent = false;    // the probe sent GET /_ping (a status line or reply_bytes)
  // "runtime-permission" when a language runtime's own permission layer refused (the JS
  // probe: Deno's NotCapable, Node's ERR_ACCESS_DENIED), with the runtime's name for it.
  std::string denied_by, runtime_error;
};
SocketAttempt ReadSocketAttempt(const nlohmann::json& fact);

// Who connected: the probe's effective uid (hello frame) and, from the family's summary fact,
// its effective gid and supplementary groups.
struct SocketCaller {
  std::optional<long> euid;
  std::optional<long> egid;
  std::vector<long> groups;
  bool groups_known = false;
};
SocketCaller ReadSocketCaller(const FactIndex& facts, const std::string& family);

// The probe's effective uid, from the launch's "hello" frame; nullopt when there is none.
std::optional<long> ProbeEuid(const FactIndex& facts);

SocketReach ClassifySocket(const SocketAttempt& attempt, const SocketCaller& caller);
SocketApi ClassifyApi(const SocketAttempt& attempt);
// A Docker-API engine or a gRPC server answered.
inline bool IsRuntimeApi(SocketApi api) { return api == SocketApi::kDockerApi || api == SocketApi::kHttp2; }

// "socket present; connect: EPERM: refused by a seccomp filter or an LSM (denied)".
std::string DescribeSocket(const SocketAttempt& attempt, SocketReach reach, const SocketCaller& caller);

// The reach that decides a set of sockets: the most exposed one (reachable, then another
// uid may, then unclear, then the rest: absent, no listener, denied, denied by mode).
SocketReach WorstReach(const std::vector<SocketReach>& reaches);

// Adds "--walk-devs LIST" in front of a socket family's arguments: the host filesystems the
// probe walks for sockets, offered by the host_mounts witness ("host_mounts.walk_devs"); nothing
// when the witness offered none.
void AddWalkDevs(const ExpandInput& in, ProbeInvocation& invocation);

// "a, b and 3 more" (at most `max` items).
std::string JoinSockets(const std::vector<std::string>& items, std::size_t max = 6);

// Judges a "hidden" promise (check.expect == kDenied) at `reach`: pass, fail at the check's
// severity, fail at medium at most (kOtherUserMay, an older record), or inconclusive. Sets outcome, direction,
// severity; `v.observed` is the caller's.
void JudgeHiddenSocket(Verdict& v, SocketReach reach);

// A socket scan whose reads the runtime's permission layer refused (a runtime probe's summary
// `refused`: the mount table, /proc/net/unix, directories of the walk) proves no absence. After
// the hidden promise was judged from `family`'s facts, a pass stands only when the runtime also
// refused every unix connect the probe tried (its permission layer is then the boundary in front
// of connect(), as Deno's is), else it becomes inconclusive; a fail stands, the refusals noted.
// Nothing changes when the summary names no refusal.
void JudgeRefusedScan(const JudgeInput& in, const std::string& family, const nlohmann::json& summary, Verdict& v);

}  // namespace sandprobe
