// priv.namespaces, priv.host_pid, priv.runtime_sockets, priv.fds, priv.cwd: what of the host
// reaches into the sandbox — its namespaces, its processes, its container runtime's socket,
// descriptors and a working directory left open across the sandbox boundary.
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "contract/sha256.h"
#include "probes/priv_families.h"
#include "probes/read_path.h"
#include "probes/unix_sockets.h"

namespace sandprobe {
namespace {

constexpr std::size_t kMaxPids = 4096;
constexpr std::size_t kMaxCmdlineBytes = 4096;
constexpr int kMaxFds = 1024;
constexpr int kMaxCwdDepth = 256;

bool IsNumber(const char* name) {
  if (*name == '\0') return false;
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  return true;
}


}  // namespace

std::string CheckPrivPathArgs(const FamilyArgs& args) {
  if (args.size() > kMaxPathsPerFamily) return "more than 4096 arguments";
  for (const std::string& a : args) {
    if (a.empty()) return "empty argument";
  }
  return "";
}

// SHA256 [--canary-pid PID] [--canary-file PATH]
std::string CheckHostPidArgs(const FamilyArgs& args) {
  const std::string usage = "priv.host_pid: usage: priv.host_pid SHA256 [--canary-pid PID] [--canary-file PATH]";
  if (args.empty() || args[0].size() != 64) return usage;
  for (std::size_t i = 1; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return usage;
    const std::string& value = args[i + 1];
    if (args[i] == "--canary-pid") {
      if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos) return usage;
    } else if (args[i] == "--canary-file") {
      if (value.empty() || value[0] != '/') return usage;
    } else {
      return usage;
    }
  }
  return "";
}

std::string CheckRuntimeSocketsArgs(const FamilyArgs& args) {
  return SplitSocketArgs("priv.runtime_sockets", args, nullptr, nullptr);
}

// Every kernel numbers its initial namespaces alike (pid:[4026531836] ...), so a link equal to
// the harness's means "the host's namespace" only in the same kernel: each fact carries the
// kernel's boot id, which the judge compares with the host's (a VM's guest kernel has its own).
void RunPrivNamespaces(const ProbeContext& ctx, const FamilyArgs& args) {
  std::optional<std::string> boot_id = ReadSmallFile("/proc/sys/kernel/random/boot_id", 64);
  const nlohmann::json kernel = KernelContext();  // the other identity signals (boot_id alone can be mounted)
  for (const std::string& ns : args) {
    nlohmann::json fact = {{"family", "priv.namespaces"}, {"path", ns}, {"kernel", kernel}};
    if (boot_id) fact["boot_id"] = boot_id->substr(0, boot_id->find('\n'));
    char link[256];
    const std::string file = "/proc/self/ns/" + ns;
    ssize_t n = ::readlink(file.c_str(), link, sizeof link - 1);
    fact["ok"] = n >= 0;
    if (n >= 0) {
      fact["link"] = std::string(link, static_cast<std::size_t>(n));
    } else {
      fact["errno"] = ErrnoName(errno);
    }
    ctx.out.Emit(fact);
  }
}

// The canary process carries "sandprobe-canary-<token>" as an argv element; the probe is given
// only its SHA-256, so neither its own argv nor a wrapper's (bwrap's pid 1 keeps the probe's
// command line) can match by accident.
//
// A visible host process is a door: with ptrace access to it (CAP_SYS_PTRACE, or root and its
// capabilities), /proc/<pid>/root and /proc/<pid>/cwd are that process's view of the host's
// filesystem. Given the canary file's host path (--canary-file) and the canary process's host
// pid (--canary-pid), the probe reads the canary through those doors of the pid it saw and of
// the host pid (read-only, as fs.read reads): one fact per door tried, judged by the canary's
// hash. The canary process runs in the canary file's directory, so its cwd door is
// /proc/<pid>/cwd/<file name>.
void RunPrivHostPid(const ProbeContext& ctx, const FamilyArgs& args) {
  const std::string& want = args[0];
  long canary_pid = 0;
  std::string canary_file;
  for (std::size_t i = 1; i + 1 < args.size(); i += 2) {
    if (args[i] == "--canary-pid") canary_pid = std::atol(args[i + 1].c_str());
    if (args[i] == "--canary-file") canary_file = args[i + 1];
  }
  nlohmann::json summary = {{"family", "priv.host_pid"}, {"summary", true}};
  std::size_t scanned = 0, readable = 0;
  long seen_pid = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) {
    summary["proc_errno"] = ErrnoName(errno);
  } else {
    while (scanned < kMaxPids && seen_pid == 0) {
      const dirent* entry = ::readdir(proc);
      if (entry == nullptr) break;
      if (!IsNumber(entry->d_name)) continue;
      ++scanned;
      std::optional<std::string> cmdline =
          ReadSmallFile(std::string("/proc/") + entry->d_name + "/cmdline", kMaxCmdlineBytes);
      if (!cmdline) continue;
      ++readable;
      std::size_t start = 0;
      while (start < cmdline->size()) {
        std::size_t end = cmdline->find('\0', start);
        if (end == std::string::npos) end = cmdline->size();
        if (Sha256Hex(std::string_view(*cmdline).substr(start, end - start)) == want) {
          seen_pid = std::atol(entry->d_name);
        }
        start = end + 1;
      }
    }
    ::closedir(proc);
  }
  summary["processes_scanned"] = scanned;
  summary["cmdlines_readable"] = readable;
  summary["seen"] = seen_pid != 0;
  if (seen_pid != 0) summary["pid"] = seen_pid;
  ctx.out.Emit(summary);
  if (canary_file.empty()) return;
  const std::string name = canary_file.substr(canary_file.rfind('/') + 1);
  std::set<long> pids;
  for (long pid : {seen_pid, canary_pid}) {
    if (pid <= 0 || !pids.insert(pid).second) continue;
    const std::string base = "/proc/" + std::to_string(pid);
    for (const auto& [variant, via] : {std::pair<const char*, std::string>{"door_root", base + "/root" + canary_file},
                                       {"door_cwd", base + "/cwd/" + name}}) {
      nlohmann::json fact = {{"family", "priv.host_pid"}, {"variant", variant}, {"pid", pid}};
      SetBytesField(fact, "path", via);
      ReadPathFacts(via, fact);
      ctx.out.Emit(fact);
    }
  }
}

// Every socket the sandbox can see, found and tried as net.unix does (unix_sockets.h): the
// listed paths first, then the discovered ones; one fact each, then a summary.
void RunPrivRuntimeSockets(const ProbeContext& ctx, const FamilyArgs& args) {
  std::vector<std::string> walk_devs, paths;
  SplitSocketArgs("priv.runtime_sockets", args, &walk_devs, &paths);
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  SocketWalk walk;
  const std::vector<FoundSocket> found = FindUnixSockets(walk_devs, paths, walk);
  std::vector<const char*> sources(paths.size(), "list");
  for (const FoundSocket& f : found) {
    paths.push_back(f.path);
    sources.push_back(f.source);
  }
  const std::vector<SocketAnswer> answers = TryUnixSockets(paths);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const SocketAnswer& a = answers[i];
    nlohmann::json fact = {{"family", "priv.runtime_sockets"}, {"source", sources[i]}};
    SetBytesField(fact, "path", a.path);
    fact["exists"] = a.exists;
    if (!a.exists) {
      fact["errno"] = ErrnoName(a.stat_errno);
      ctx.out.Emit(fact);
      continue;
    }
    fact["kind"] = FileKindName(a.mode);
    if (S_ISSOCK(a.mode)) {
      fact["connect_ok"] = a.connected;
      if (!a.connected) {
        fact["step"] = a.failed_step;
        fact["errno"] = ErrnoName(a.error);
      }
    }
    AddSocketAnswerFacts(a, fact);
    ctx.out.Emit(fact);
  }
  nlohmann::json summary = {{"family", "priv.runtime_sockets"}, {"summary", true}, {"paths", answers.size()}};
  AddSocketScanSummary(walk, found.size(), summary);
  ctx.out.Emit(summary);
}

// Descriptors beyond 0-2 that the sandbox let through. A directory fd is the worst kind:
// openat(fd, "..") walks out of any chroot or mount namespace (CVE-2024-21626 in runc).
void RunPrivFds(const ProbeContext& ctx, const FamilyArgs&) {
  nlohmann::json summary = {{"family", "priv.fds"}, {"summary", true}};
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) {
    summary["ok"] = false;
    summary["errno"] = ErrnoName(errno);
    ctx.out.Emit(summary);
    return;
  }
  const int own = ::dirfd(dir);
  int count = 0, dirs = 0, seen = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (!IsNumber(entry->d_name) || ++seen > kMaxFds) continue;
    const int fd = std::atoi(entry->d_name);
    if (fd <= 2 || fd == own) continue;
    nlohmann::json fact = {{"family", "priv.fds"}, {"fd", fd}};
    char target[PATH_MAX];
    ssize_t n = ::readlink((std::string("/proc/self/fd/") + entry->d_name).c_str(), target, sizeof target - 1);
    if (n >= 0) SetBytesField(fact, "target", std::string_view(target, static_cast<std::size_t>(n)));
    struct stat st {};
    if (::fstat(fd, &st) == 0) fact["kind"] = FileKindName(st.st_mode);
    if (fact.value("kind", "") == "dir") ++dirs;
    ++count;
    ctx.out.Emit(fact);
  }
  ::closedir(dir);
  summary["ok"] = true;
  summary["inherited"] = count;
  summary["directories"] = dirs;
  ctx.out.Emit(summary);
}

// A working directory outside the sandbox's root: getcwd fails (ENOENT, "(unreachable)") and
// walking ".." never meets "/".
void RunPrivCwd(const ProbeContext& ctx, const FamilyArgs&) {
  nlohmann::json fact = {{"family", "priv.cwd"}};
  char buf[PATH_MAX];
  if (::getcwd(buf, sizeof buf) != nullptr) {
    SetBytesField(fact, "cwd", buf);
    fact["getcwd_ok"] = buf[0] == '/';
  } else {
    fact["getcwd_ok"] = false;
    fact["errno"] = ErrnoName(errno);
  }
  struct stat root {};
  int fd = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (::stat("/", &root) != 0 || fd < 0) {
    fact["walk_errno"] = ErrnoName(errno);
  } else {
    bool reached = false;
    int depth = 0;
    for (; depth < kMaxCwdDepth; ++depth) {
      struct stat here {}, up {};
      if (::fstat(fd, &here) != 0) break;
      if (here.st_dev == root.st_dev && here.st_ino == root.st_ino) {
        reached = true;
        break;
      }
      const int parent = ::openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (parent < 0 || ::fstat(parent, &up) != 0) {
        if (parent >= 0) ::close(parent);
        break;
      }
      ::close(fd);
      fd = parent;
      if (up.st_dev == here.st_dev && up.st_ino == here.st_ino) break;  // a top that is not "/"
    }
    fact["reaches_root"] = reached;
    fact["depth"] = depth;
  }
  if (fd >= 0) ::close(fd);
  ctx.out.Emit(fact);
}

}  // namespace sandprobe
