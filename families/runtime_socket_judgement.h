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
//   EACCES for a non-root probe -> the socket file's mode refused this uid, but a uid or group
//       the mode admits (the docker group) could connect: fail at medium (at most) — the
//       sandbox still holds the host's runtime socket, only the workload's uid stands between;
//   EPERM (a seccomp filter or an LSM refused socket() or connect()), EACCES for root (only
//       an LSM or an owner outside root's user namespace refuses root), or an address family
//       not supported -> denied: pass;
//   ECONNREFUSED / ENOENT -> a socket file nothing listens on: pass;
//   no such path, or not a socket -> absent: pass;
//   any other errno -> nothing proven: inconclusive.
// An EACCES whose probe uid is unknown (no hello frame) is judged as non-root: the finding stays.
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
  kOtherUserMay,  // EACCES for a non-root probe: file permissions only
  kReachable,     // connect ok (or EAGAIN)
  kUnclear,       // another errno: neither reachable nor denied is proven
};

// One probe attempt at a socket path, from either fact shape:
//   net.unix:              exists, is_socket, ok, step ("stat"|"socket"|"connect"), errno,
//                          status_line (the reply to GET /_ping)
//   priv.runtime_sockets:  exists, kind ("socket"...), connect_ok, errno (of socket() or
//                          connect(), told apart by nothing: read as connect)
struct SocketAttempt {
  std::string path;
  bool exists = false;
  bool is_socket = false;
  bool connected = false;
  std::string step;          // the failed step: "stat", "socket", "connect"; empty when connected
  std::string error;         // errno name of the failed step
  std::string status_line;   // net.unix only, when connected and the ping got a reply
  bool ping_sent = false;    // net.unix: the probe sent GET /_ping
};
SocketAttempt ReadSocketAttempt(const nlohmann::json& fact);

// The probe's effective uid, from the launch's "hello" frame; nullopt when there is none.
std::optional<long> ProbeEuid(const FactIndex& facts);

SocketReach ClassifySocket(const SocketAttempt& attempt, std::optional<long> euid);

// "socket present; connect: EPERM: refused by a seccomp filter or an LSM (denied)".
std::string DescribeSocket(const SocketAttempt& attempt, SocketReach reach,
                           std::optional<long> euid);

// The reach that decides a set of sockets: the most exposed one (reachable, then another
// uid may, then unclear, then the rest).
SocketReach WorstReach(const std::vector<SocketReach>& reaches);

// Judges a "hidden" promise (check.expect == kDenied) at `reach`: pass, fail at the check's
// severity, fail at medium at most (kOtherUserMay), or inconclusive. Sets outcome, direction,
// severity; `v.observed` is the caller's.
void JudgeHiddenSocket(Verdict& v, SocketReach reach);

}  // namespace sandprobe
