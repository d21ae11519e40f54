// net.unix: are container runtime sockets reachable from inside the sandbox? A reachable
// docker.sock is root on the host. The listed paths (contract/protocol.h's runtime sockets and
// the host's extra ones) are tried, then every other socket the sandbox can see
// (unix_sockets.h: a walk of the host's filesystems, socket mount points, /proc/net/unix), each
// with the same harmless handshake: connect, one read-only `GET /_ping HTTP/1.0`, and an HTTP/2
// preface when no HTTP/1 answer came. Nothing that could change state is ever sent.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "contract/protocol.h"
#include "probes/net_probes.h"
#include "probes/unix_sockets.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// One fact in net.unix's shape: ok (connected), step and errno of the failed step.
json SocketFact(const SocketAnswer& a) {
  json fact = {{"family", "net.unix"}};
  SetBytesField(fact, "path", a.path);
  if (!a.exists) {
    fact["ok"] = false;
    fact["step"] = "stat";
    fact["errno"] = ErrnoName(a.stat_errno);
    return fact;
  }
  fact["exists"] = true;
  fact["is_socket"] = S_ISSOCK(a.mode);
  fact["ok"] = a.connected;
  if (!S_ISSOCK(a.mode)) {
    fact["step"] = "stat";
    fact["errno"] = ErrnoName(ENOTSOCK);
  } else if (!a.connected) {
    fact["step"] = a.failed_step;
    fact["errno"] = ErrnoName(a.error);
  }
  AddSocketAnswerFacts(a, fact);
  return fact;
}

}  // namespace

const std::vector<std::string>& DefaultRuntimeSockets() {
  static const std::vector<std::string> kPaths(kRuntimeSocketPaths.begin(), kRuntimeSocketPaths.end());
  return kPaths;
}

std::string CheckNetUnixArgs(const FamilyArgs& args) {
  return SplitSocketArgs("net.unix", args, nullptr, nullptr);
}

void RunNetUnix(const ProbeContext& ctx, const FamilyArgs& args) {
  std::vector<std::string> walk_devs, given;
  SplitSocketArgs("net.unix", args, &walk_devs, &given);
  std::vector<std::string> paths = DefaultRuntimeSockets();
  for (const std::string& path : given) {
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  SocketWalk walk;
  const std::vector<FoundSocket> found = FindUnixSockets(walk_devs, paths, walk);
  const std::size_t listed = paths.size();
  for (const FoundSocket& f : found) paths.push_back(f.path);
  const std::vector<SocketAnswer> answers = TryUnixSockets(paths);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    json fact = SocketFact(answers[i]);
    if (i >= listed) {
      fact["variant"] = "found";
      fact["source"] = found[i - listed].source;
    }
    ctx.out.Emit(fact);
  }
  json summary = {{"family", "net.unix"}, {"variant", "summary"}, {"path", ""}};
  AddSocketScanSummary(walk, found.size(), summary);
  ctx.out.Emit(summary);
}

}  // namespace sandprobe
