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
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/priv_families.h"
#include "contract/sha256.h"

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

std::string KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "dir";
  if (S_ISREG(mode)) return "file";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISFIFO(mode)) return "pipe";
  if (S_ISCHR(mode)) return "char";
  if (S_ISBLK(mode)) return "block";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

// stat + a connect that is closed at once: no byte is ever sent to the runtime.
void SocketFact(const ProbeContext& ctx, const std::string& path, const char* source) {
  nlohmann::json fact = {{"family", "priv.runtime_sockets"}, {"source", source}};
  SetBytesField(fact, "path", path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    fact["exists"] = false;
    fact["errno"] = ErrnoName(errno);
    ctx.out.Emit(fact);
    return;
  }
  fact["exists"] = true;
  fact["kind"] = KindOf(st.st_mode);
  sockaddr_un addr{};
  if (S_ISSOCK(st.st_mode) && path.size() < sizeof addr.sun_path) {
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      fact["connect_ok"] = false;
      fact["errno"] = ErrnoName(errno);
    } else {
      const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      fact["connect_ok"] = ok;
      if (!ok) fact["errno"] = ErrnoName(errno);
      ::close(fd);
    }
  }
  ctx.out.Emit(fact);
}

}  // namespace

std::string CheckPrivPathArgs(const FamilyArgs& args) {
  if (args.size() > kMaxPathsPerFamily) return "more than 4096 arguments";
  for (const std::string& a : args) {
    if (a.empty()) return "empty argument";
  }
  return "";
}

std::string CheckHostPidArgs(const FamilyArgs& args) {
  if (args.size() != 1 || args[0].size() != 64) return "priv.host_pid: usage: priv.host_pid SHA256";
  return "";
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
void RunPrivHostPid(const ProbeContext& ctx, const FamilyArgs& args) {
  const std::string& want = args[0];
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
}

// The listed paths, sockets under /run/user/*/, and every mount point that is a socket (a
// bind-mounted docker.sock can sit anywhere).
void RunPrivRuntimeSockets(const ProbeContext& ctx, const FamilyArgs& args) {
  std::set<std::string> done;
  for (const std::string& path : args) {
    if (done.insert(path).second) SocketFact(ctx, path, "list");
  }
  if (DIR* run_user = ::opendir("/run/user")) {
    int dirs = 0;
    while (const dirent* entry = ::readdir(run_user)) {
      if (!IsNumber(entry->d_name) || ++dirs > 64) continue;
      for (const char* rel : {"/docker.sock", "/podman/podman.sock"}) {
        std::string path = std::string("/run/user/") + entry->d_name + rel;
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0 && done.insert(path).second) SocketFact(ctx, path, "run_user");
      }
    }
    ::closedir(run_user);
  }
  if (std::optional<std::string> text = ReadSmallFile("/proc/self/mountinfo", 1 << 20)) {
    for (const MountEntry& m : ParseMountInfo(*text)) {
      struct stat st {};
      if (::stat(m.mount_point.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
          done.insert(m.mount_point).second) {
        SocketFact(ctx, m.mount_point, "mountinfo");
      }
    }
  }
  ctx.out.Emit({{"family", "priv.runtime_sockets"}, {"summary", true}, {"paths", done.size()}});
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
    if (::fstat(fd, &st) == 0) fact["kind"] = KindOf(st.st_mode);
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
