// env.secret: can the sandboxed process see secrets from the harness's environment?
//
// The host puts a canary `PREFIX...=token` into the launcher's environment. A sandbox that
// scrubs the environment and isolates the PID namespace (or hides other processes' environ)
// shows nothing; otherwise the token turns up in the probe's own environ or in some
// /proc/<pid>/environ. Values are reported only as SHA-256, so a real secret that happens to
// match the prefix never lands in a report.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/families.h"
#include "contract/sha256.h"

extern char** environ;

namespace sandprobe {
namespace {

constexpr std::size_t kMaxPids = 4096;
constexpr std::size_t kMaxEnvironBytes = 64 * 1024;

// Emits one fact when `entry` ("NAME=VALUE") has a name starting with `prefix`.
bool MatchEntry(const ProbeContext& ctx, std::string_view entry, const std::string& prefix,
                const std::string& source) {
  const std::size_t eq = entry.find('=');
  if (eq == std::string_view::npos) return false;
  const std::string_view name = entry.substr(0, eq);
  if (name.substr(0, prefix.size()) != prefix) return false;
  nlohmann::json fact = {{"family", "env.secret"}, {"source", source}};
  SetBytesField(fact, "name", name);
  fact["sha256"] = Sha256Hex(entry.substr(eq + 1));
  ctx.out.Emit(fact);
  return true;
}

bool IsPidName(const char* name) {
  if (*name == '\0') return false;
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  return true;
}

// Reads up to kMaxEnvironBytes of a NUL-separated environ; false when it cannot be read
// (EACCES/EPERM for other users' processes is the usual answer). An entry cut by the cap is
// dropped rather than hashed: its hash would not match anything and would only mislead.
bool ReadEnviron(const std::string& file, std::string& out) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  out.assign(kMaxEnvironBytes, '\0');
  std::size_t got = 0;
  bool ok = true;
  while (got < out.size()) {
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  if (got == kMaxEnvironBytes) {
    const std::size_t last_nul = out.rfind('\0');
    out.resize(last_nul == std::string::npos ? 0 : last_nul + 1);
  }
  return ok;
}

}  // namespace

std::string CheckEnvSecretArgs(const FamilyArgs& args) {
  if (args.size() != 1 || args[0].empty()) return "env.secret: usage: env.secret PREFIX";
  if (args[0].find('=') != std::string::npos) return "env.secret: PREFIX contains '='";
  return "";
}

void RunEnvSecret(const ProbeContext& ctx, const FamilyArgs& args) {
  const std::string& prefix = args[0];
  std::size_t matches = 0;
  for (char** env = environ; env != nullptr && *env != nullptr; ++env) {
    if (MatchEntry(ctx, *env, prefix, "environ")) ++matches;
  }

  nlohmann::json summary = {{"family", "env.secret"}, {"summary", true}};
  std::size_t scanned = 0;
  std::size_t readable = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) {
    summary["proc_errno"] = ErrnoName(errno);
  } else {
    const std::string self = std::to_string(::getpid());
    std::string content;
    while (scanned < kMaxPids) {
      const dirent* entry = ::readdir(proc);
      if (entry == nullptr) break;
      if (!IsPidName(entry->d_name) || self == entry->d_name) continue;
      ++scanned;
      const std::string source = std::string("/proc/") + entry->d_name + "/environ";
      if (!ReadEnviron(source, content)) continue;
      ++readable;
      std::size_t start = 0;
      while (start < content.size()) {
        std::size_t end = content.find('\0', start);
        if (end == std::string::npos) end = content.size();
        const std::string_view item(content.data() + start, end - start);
        if (MatchEntry(ctx, item, prefix, source)) ++matches;
        start = end + 1;
      }
    }
    ::closedir(proc);
  }
  summary["processes_scanned"] = scanned;
  summary["environs_readable"] = readable;
  summary["matches"] = matches;
  ctx.out.Emit(summary);
}

}  // namespace sandprobe
