// See runtime_socket_judgement.h.
#include "families/runtime_socket_judgement.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

namespace sandprobe {

using nlohmann::json;

namespace {

long IntOr(const json& fact, const char* key, long fallback) {
  auto it = fact.find(key);
  return it != fact.end() && it->is_number_integer() ? it->get<long>() : fallback;
}

// The permission bits of a "0660"-style mode, or -1.
int ModeBits(const std::string& mode) {
  if (mode.empty() || mode.find_first_not_of("01234567") != std::string::npos) return -1;
  return std::stoi(mode, nullptr, 8);
}

// Whether the socket file's mode lets `caller` connect (write permission), as the kernel decides
// it: the owner's bits for the owner, else the group's for a member, else the others'. nullopt
// when the mode, the owner or the caller's groups are unknown.
std::optional<bool> ModeAdmits(const SocketAttempt& a, const SocketCaller& caller) {
  const int bits = ModeBits(a.mode);
  if (bits < 0 || a.owner_uid < 0 || a.owner_gid < 0 || !caller.euid || !caller.groups_known) return std::nullopt;
  if (*caller.euid == a.owner_uid) return (bits & 0200) != 0;
  const bool member = caller.egid == a.owner_gid ||
                      std::find(caller.groups.begin(), caller.groups.end(), a.owner_gid) != caller.groups.end();
  if (member) return (bits & 020) != 0;
  return (bits & 02) != 0;
}

std::string GroupsText(const SocketCaller& caller) {
  if (!caller.groups_known) return "";
  std::vector<std::string> ids;
  if (caller.egid) ids.push_back(std::to_string(*caller.egid));
  for (long g : caller.groups) {
    if (!caller.egid || g != *caller.egid) ids.push_back(std::to_string(g));
  }
  return fmt::format(" (groups {})", ids.empty() ? "none" : fmt::format("{}", fmt::join(ids, ",")));
}

// "answers GET /_ping: \"HTTP/1.0 200 OK\", Api-Version 1.41 (Docker/20.10.24)"
std::string DescribeAnswer(const SocketAttempt& a) {
  switch (ClassifyApi(a)) {
    case SocketApi::kNone:
      return a.ping_sent ? "GET /_ping -> no reply" : "";
    case SocketApi::kDockerApi:
      return fmt::format("GET /_ping -> \"{}\", Api-Version {}{}: a container engine's API", a.status_line,
                         a.api_version, a.server.empty() ? "" : " (" + a.server + ")");
    case SocketApi::kHttp:
      return fmt::format("GET /_ping -> \"{}\"", a.status_line);
    case SocketApi::kHttp2:
      return "answers with HTTP/2 SETTINGS: a gRPC server (containerd and cri-o speak it)";
    case SocketApi::kOther:
      return "GET /_ping -> no HTTP answer";
  }
  return "";
}

}  // namespace

SocketAttempt ReadSocketAttempt(const json& fact) {
  SocketAttempt a;
  a.path = fact.value("path", "?");
  a.source = fact.value("source", "list");
  a.exists = fact.value("exists", false) == true;
  a.is_socket = fact.contains("is_socket") ? fact.value("is_socket", false) == true
                                           : fact.value("kind", "") == "socket";
  a.connected = fact.contains("connect_ok") ? fact.value("connect_ok", false) == true
                                            : FactOk(fact);
  a.error = fact.value("errno", "");
  if (!a.connected && a.exists && a.is_socket) a.step = fact.value("step", "connect");
  if (!a.exists) a.step = "stat";
  a.mode = fact.value("mode", "");
  a.owner_uid = IntOr(fact, "owner_uid", -1);
  a.owner_gid = IntOr(fact, "owner_gid", -1);
  a.status_line = fact.value("status_line", "");
  a.api_version = fact.value("api_version", "");
  a.server = fact.value("server", "");
  a.h2 = fact.value("h2", false) == true;
  a.ping_sent = fact.contains("status_line") || fact.contains("reply_bytes");
  a.denied_by = fact.value("denied_by", "");
  a.runtime_error = fact.value("runtime_error", "");
  return a;
}

std::optional<long> ProbeEuid(const FactIndex& facts) {
  for (int index : facts.OfFamily("hello")) {
    const json& hello = facts.Fact(index);
    if (hello.contains("euid") && hello["euid"].is_number_integer()) return hello["euid"].get<long>();
  }
  return std::nullopt;
}

SocketCaller ReadSocketCaller(const FactIndex& facts, const std::string& family) {
  SocketCaller caller;
  caller.euid = ProbeEuid(facts);
  for (int index : facts.OfFamily(family)) {
    const json& f = facts.Fact(index);
    const bool summary = f.value("variant", "") == "summary" || f.value("summary", false) == true;
    if (!summary || !f.contains("groups") || !f["groups"].is_array()) continue;
    if (f.contains("euid") && f["euid"].is_number_integer()) caller.euid = f["euid"].get<long>();
    if (f.contains("egid") && f["egid"].is_number_integer()) caller.egid = f["egid"].get<long>();
    for (const json& g : f["groups"]) {
      if (g.is_number_integer()) caller.groups.push_back(g.get<long>());
    }
    caller.groups_known = caller.egid.has_value();
  }
  return caller;
}

SocketReach ClassifySocket(const SocketAttempt& a, const SocketCaller& caller) {
  if (!a.exists || !a.is_socket) return SocketReach::kAbsent;
  if (a.connected || a.error == "EAGAIN") return SocketReach::kReachable;
  const std::string& e = a.error;
  if (e == "EPERM" || e == "EAFNOSUPPORT") return SocketReach::kDenied;
  if (e == "EACCES") {
    // socket() is refused only by an LSM; connect() by the file's mode (unless root, who
    // passes the mode check: then an LSM or an owner outside root's user namespace refused).
    if (a.step == "socket" || caller.euid == 0L || a.denied_by == "runtime-permission") return SocketReach::kDenied;
    const std::optional<bool> admits = ModeAdmits(a, caller);
    if (!admits) return SocketReach::kOtherUserMay;
    return *admits ? SocketReach::kDenied : SocketReach::kDeniedByMode;
  }
  if (a.step == "connect" && (e == "ECONNREFUSED" || e == "ENOENT")) return SocketReach::kNoListener;
  return SocketReach::kUnclear;
}

SocketApi ClassifyApi(const SocketAttempt& a) {
  if (!a.connected) return SocketApi::kNone;
  if (a.h2) return SocketApi::kHttp2;
  if (a.status_line.rfind("HTTP/", 0) == 0) {
    return a.api_version.empty() ? SocketApi::kHttp : SocketApi::kDockerApi;
  }
  return a.ping_sent ? SocketApi::kOther : SocketApi::kNone;
}

std::string DescribeSocket(const SocketAttempt& a, SocketReach reach, const SocketCaller& caller) {
  const std::string failed = fmt::format("{}: {}", a.step.empty() ? "connect" : a.step, a.error);
  const std::string uid = caller.euid ? fmt::format("uid {}", *caller.euid) : "this uid (unknown)";
  switch (reach) {
    case SocketReach::kAbsent:
      if (!a.exists && a.denied_by == "runtime-permission") {
        return fmt::format("not visible: stat: {}: refused by the runtime's permission model{}", a.error,
                           a.runtime_error.empty() ? "" : " (" + a.runtime_error + ")");
      }
      return a.exists ? "present but not a socket" : fmt::format("absent (stat: {})", a.error);
    case SocketReach::kNoListener:
      return fmt::format("socket present; {}: nothing listens on it (a stale socket file)", failed);
    case SocketReach::kDenied:
      if (a.denied_by == "runtime-permission") {
        return fmt::format("socket present; {}: refused by the runtime's permission model{} for {} (denied)", failed,
                           a.runtime_error.empty() ? "" : " (" + a.runtime_error + ")", uid);
      }
      return fmt::format("socket present; {}: refused by a seccomp filter or an LSM for {} "
                         "(denied)", failed, uid);
    case SocketReach::kDeniedByMode:
      return fmt::format("socket present; {}: denied by the file's mode {} (owner {}, group {}) for "
                         "{}{}, neither its owner nor in its group", failed, a.mode, a.owner_uid,
                         a.owner_gid, uid, GroupsText(caller));
    case SocketReach::kOtherUserMay:
      return fmt::format("socket present; {} for {}: the file's mode, not a filter: another uid "
                         "or group it admits (e.g. the docker group) may use it", failed, uid);
    case SocketReach::kReachable: {
      if (!a.connected) return fmt::format("socket present; {}: a listener with a full backlog, connect permitted", failed);
      const std::string answer = DescribeAnswer(a);
      return answer.empty() ? "socket present, connect ok" : "socket present, connect ok; " + answer;
    }
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
    case SocketReach::kDenied:
    case SocketReach::kDeniedByMode: return 0;
  }
  return 0;
}
}  // namespace

void AddWalkDevs(const ExpandInput& in, ProbeInvocation& invocation) {
  auto it = in.context.values.find("host_mounts.walk_devs");
  if (it == in.context.values.end() || it->second.empty()) return;
  if (!invocation.args.empty() && invocation.args.front() == "--walk-devs") return;
  invocation.args.insert(invocation.args.begin(), {"--walk-devs", it->second});
}

std::string JoinSockets(const std::vector<std::string>& items, std::size_t max) {
  if (items.empty()) return "none";
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > max) out += fmt::format(" and {} more", items.size() - max);
  return out;
}

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
    case SocketReach::kDeniedByMode:
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

// The rule of JudgeRefusedScan (runtime_socket_judgement.h). Deno 2.9 wants --allow-net for
// "unix:PATH" and read and write access to PATH: deno-strict grants neither, so it refuses a
// socket even inside its workspace, and a socket the scan could not see is not reachable through
// the runtime either, outside what its grants allow. Where the grants allow some connects (a
// writable directory and --allow-net), the sockets in them are what this cannot see. Otherwise
// (Node 20: connect is not gated) nothing is proven. A runtime API that answered fails whatever
// the scan missed.
void JudgeRefusedScan(const JudgeInput& in, const std::string& family, const json& summary, Verdict& v) {
  const std::int64_t refused = summary.value("refused", std::int64_t{0});
  if (refused <= 0) return;
  std::size_t tried = 0, gated = 0;
  for (int index : in.facts.OfFamily(family)) {
    const json& f = in.facts.Fact(index);
    if (f.value("variant", "") == "summary" || f.value("summary", false) == true) continue;
    // net.unix says a connect that went through as ok, priv.runtime_sockets as connect_ok.
    const bool connect_tried = f.value("ok", false) == true || f.value("connect_ok", false) == true ||
                               f.value("step", "") == "connect";
    if (!connect_tried) continue;
    ++tried;
    if (f.value("step", "") == "connect" && f.value("denied_by", "") == "runtime-permission") ++gated;
  }
  const std::string first = fmt::format("{}: {}", summary.value("refused_path", "?"), summary.value("refused_errno", "?"));
  if (v.outcome == Outcome::kFail) {
    v.observed += fmt::format("; the runtime refused {} read(s) of the socket scan (first {})", refused, first);
    return;
  }
  if (tried > 0 && gated == tried) {
    v.observed = fmt::format("the runtime refused {} read(s) of the socket scan (first {}) and every unix connect "
                             "the probe tried ({} of {}): its permission layer stands in front of connect(), so no "
                             "socket outside its grants is reachable; ",
                             refused, first, gated, tried) + v.observed;
    return;
  }
  v.outcome = Outcome::kInconclusive;
  v.direction = Direction::kNone;
  v.observed = fmt::format("the runtime refused {} read(s) of the socket scan (first {}) but let {} of {} unix "
                           "connects through: a partial scan proves no absence; ",
                           refused, first, tried - gated, tried) + v.observed;
}

}  // namespace sandprobe
