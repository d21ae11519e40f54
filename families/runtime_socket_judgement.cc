// See runtime_socket_judgement.h.
#include "families/runtime_socket_judgement.h"

#include <algorithm>

#include <fmt/format.h>

namespace sandprobe {

using nlohmann::json;

SocketAttempt ReadSocketAttempt(const json& fact) {
  SocketAttempt a;
  a.path = fact.value("path", "?");
  a.exists = fact.value("exists", false) == true;
  a.is_socket = fact.contains("is_socket") ? fact.value("is_socket", false) == true
                                           : fact.value("kind", "") == "socket";
  a.connected = fact.contains("connect_ok") ? fact.value("connect_ok", false) == true
                                            : FactOk(fact);
  a.error = fact.value("errno", "");
  if (!a.connected && a.exists && a.is_socket) a.step = fact.value("step", "connect");
  if (!a.exists) a.step = "stat";
  a.status_line = fact.value("status_line", "");
  a.ping_sent = fact.contains("status_line");
  return a;
}

std::optional<long> ProbeEuid(const FactIndex& facts) {
  for (int index : facts.OfFamily("hello")) {
    const json& hello = facts.Fact(index);
    if (hello.contains("euid") && hello["euid"].is_number_integer()) return hello["euid"].get<long>();
  }
  return std::nullopt;
}

SocketReach ClassifySocket(const SocketAttempt& a, std::optional<long> euid) {
  if (!a.exists || !a.is_socket) return SocketReach::kAbsent;
  if (a.connected || a.error == "EAGAIN") return SocketReach::kReachable;
  const std::string& e = a.error;
  if (e == "EPERM" || e == "EAFNOSUPPORT") return SocketReach::kDenied;
  if (e == "EACCES") {
    // socket() is refused only by an LSM; connect() by the file's mode (unless root, who
    // passes the mode check: then an LSM or an owner outside root's user namespace refused).
    if (a.step == "socket" || euid == 0L) return SocketReach::kDenied;
    return SocketReach::kOtherUserMay;
  }
  if (a.step == "connect" && (e == "ECONNREFUSED" || e == "ENOENT")) return SocketReach::kNoListener;
  return SocketReach::kUnclear;
}

std::string DescribeSocket(const SocketAttempt& a, SocketReach reach, std::optional<long> euid) {
  const std::string failed = fmt::format("{}: {}", a.step.empty() ? "connect" : a.step, a.error);
  const std::string uid = euid ? fmt::format("uid {}", *euid) : "this uid (unknown)";
  switch (reach) {
    case SocketReach::kAbsent:
      return a.exists ? "present but not a socket" : fmt::format("absent (stat: {})", a.error);
    case SocketReach::kNoListener:
      return fmt::format("socket present; {}: nothing listens on it (a stale socket file)", failed);
    case SocketReach::kDenied:
      return fmt::format("socket present; {}: refused by a seccomp filter or an LSM for {} "
                         "(denied)", failed, uid);
    case SocketReach::kOtherUserMay:
      return fmt::format("socket present; {} for {}: the file's mode, not a filter: another uid "
                         "or group it admits (e.g. the docker group) may use it", failed, uid);
    case SocketReach::kReachable:
      if (!a.connected) return fmt::format("socket present; {}: a listener with a full backlog, connect permitted", failed);
      if (!a.ping_sent) return "socket present, connect ok";
      return fmt::format("socket present, connect ok; GET /_ping -> {}",
                         a.status_line.empty() ? "no reply" : "\"" + a.status_line + "\"");
    case SocketReach::kUnclear:
      return fmt::format("socket present; {}: neither reachable nor denied is proven", failed);
  }
  return "";
}

namespace {
int Exposure(SocketReach reach) {
  switch (reach) {
    case SocketReach::kReachable: return 3;
    case SocketReach::kOtherUserMay: return 2;
    case SocketReach::kUnclear: return 1;
    case SocketReach::kAbsent:
    case SocketReach::kNoListener:
    case SocketReach::kDenied: return 0;
  }
  return 0;
}
}  // namespace

SocketReach WorstReach(const std::vector<SocketReach>& reaches) {
  SocketReach worst = SocketReach::kAbsent;
  for (SocketReach r : reaches) {
    if (Exposure(r) > Exposure(worst)) worst = r;
  }
  return worst;
}

void JudgeHiddenSocket(Verdict& v, SocketReach reach) {
  switch (reach) {
    case SocketReach::kAbsent:
    case SocketReach::kNoListener:
    case SocketReach::kDenied:
      Judge(v, true, Direction::kTooPermissive);
      return;
    case SocketReach::kReachable:
      Judge(v, false, Direction::kTooPermissive);
      return;
    case SocketReach::kOtherUserMay:
      Judge(v, false, Direction::kTooPermissive);
      if (AtLeast(v.check.severity, Severity::kMedium)) v.check.severity = Severity::kMedium;
      return;
    case SocketReach::kUnclear:
      v.outcome = Outcome::kInconclusive;
      v.direction = Direction::kNone;
      return;
  }
}

}  // namespace sandprobe
