// persist.plant / persist.check: what survives from one sandbox invocation to the next?
//
// Invocation 1 (plant) writes `.sandprobe-persist-TOKEN` holding TOKEN into each given
// directory and starts a detached background process (double fork + setsid) whose argv is the
// probe's own, so it carries "persist.plant" and TOKEN; it sleeps a bounded time and exits.
// Invocation 2 (check), in the next turn or a fresh instance, reports which files still hold
// TOKEN and whether such a process is alive — then removes the files and ends the process it
// found, so nothing planted outlives the check; with --keep it only reports (a turn check
// that a later fresh-instance check follows).
// Both report `same_as` for a directory that is the same directory (device and inode) as an
// earlier one in the list — e.g. @cwd being /workspace — so the host judges it once.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#if !defined(__wasi__)
#include <signal.h>
#include <sys/wait.h>
#endif
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/families.h"

namespace sandprobe {
namespace {

constexpr long kMaxBackgroundSeconds = 600;
constexpr std::size_t kMaxPids = 4096;
constexpr std::size_t kMaxCmdlineBytes = 64 * 1024;

struct PersistArgs {
  std::string token;
  long background_seconds = 0;  // plant only: 0 = no background process
  bool keep = false;            // check only: report, remove nothing, kill nothing
  std::vector<std::string> dirs;
};

bool IsToken(const std::string& token) {
  if (token.empty() || token.size() > 64) return false;
  for (char c : token) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// "--token T [--background-seconds N] DIR..."; "" or the usage error.
std::string Parse(const std::string& family, const FamilyArgs& args, PersistArgs& out) {
  std::size_t i = 0;
  while (i < args.size() && args[i].rfind("--", 0) == 0) {
    if (args[i] == "--keep" && family == "persist.check") {
      out.keep = true;
      ++i;
      continue;
    }
    if (i + 1 >= args.size()) return family + ": " + args[i] + ": missing value";
    if (args[i] == "--token") {
      out.token = args[i + 1];
    } else if (args[i] == "--background-seconds" && family == "persist.plant") {
      char* end = nullptr;
      out.background_seconds = std::strtol(args[i + 1].c_str(), &end, 10);
      if (*end != '\0' || out.background_seconds < 0 || out.background_seconds > kMaxBackgroundSeconds) {
        return family + ": --background-seconds: 0.." + std::to_string(kMaxBackgroundSeconds);
      }
    } else {
      return family + ": unknown option " + args[i];
    }
    i += 2;
  }
  if (!IsToken(out.token)) return family + ": --token: 1-64 characters of [A-Za-z0-9]";
  out.dirs.assign(args.begin() + static_cast<long>(i), args.end());
  for (const std::string& dir : out.dirs) {
    if (dir != "@home" && dir != "@cwd" && (dir.empty() || dir[0] != '/')) {
      return family + ": not an absolute path (nor @home, @cwd): " + dir;
    }
  }
  return out.dirs.size() > kMaxPathsPerFamily ? family + ": too many paths" : "";
}

// "@home" is $HOME and "@cwd" the working directory, as the sandbox sets them; "" when unset.
std::string ResolveDir(const std::string& dir) {
  if (dir == "@home") {
    const char* home = std::getenv("HOME");
    return home != nullptr && home[0] == '/' ? home : "";
  }
  if (dir == "@cwd") {
    char cwd[4096];
    return ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "";
  }
  return dir;
}

// The token file in `dir` (a resolved path), reported as fact["resolved"].
std::string TokenFile(const std::string& dir, const std::string& token, nlohmann::json& fact) {
  std::string resolved = ResolveDir(dir);
  if (resolved != dir) fact["resolved"] = resolved;
  if (resolved.empty()) return "";
  return (resolved == "/" ? "" : resolved) + "/.sandprobe-persist-" + token;
}

// Marks fact["same_as"] when `dir` (resolved) is a directory seen before under another name.
class SameDirectory {
 public:
  void Mark(const std::string& dir, const std::string& resolved, nlohmann::json& fact) {
    struct stat st {};
    if (resolved.empty() || ::stat(resolved.c_str(), &st) != 0) return;
    for (const Seen& seen : seen_) {
      if (seen.dev == st.st_dev && seen.ino == st.st_ino) {
        fact["same_as"] = seen.dir;
        return;
      }
    }
    seen_.push_back({st.st_dev, st.st_ino, dir});
  }

 private:
  struct Seen {
    dev_t dev;
    ino_t ino;
    std::string dir;
  };
  std::vector<Seen> seen_;
};

[[maybe_unused]] void SleepSeconds(long seconds) {  // unused on WASI
  struct timespec left {seconds, 0};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

// Double fork + setsid: the grandchild leaves the probe's session and process group, as a
// daemon would, and holds none of the probe's pipes. Returns its pid, or -1 with errno.
pid_t StartBackground(long seconds) {
#if defined(__wasi__)
  // WASI has no processes to start: the background process is not expressible (ENOSYS).
  (void)seconds;
  errno = ENOSYS;
  return -1;
#else
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return -1;
  pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    ::setsid();
    pid_t grandchild = ::fork();
    if (grandchild == 0) {
      int null_fd = ::open("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3; ++fd) ::dup2(null_fd, fd);
      for (int fd = 3; fd < 1024; ++fd) ::close(fd);  // the report pipe and anything else
      ::alarm(0);
      SleepSeconds(seconds);  // bounded: it ends by itself
      ::_exit(0);
    }
    ssize_t ignored = ::write(report[1], &grandchild, sizeof grandchild);
    (void)ignored;
    ::_exit(grandchild < 0 ? 1 : 0);
  }
  ::close(report[1]);
  pid_t grandchild = -1;
  ssize_t n = ::read(report[0], &grandchild, sizeof grandchild);
  ::close(report[0]);
  ::waitpid(child, nullptr, 0);
  return n == sizeof grandchild ? grandchild : -1;
#endif
}

// Pids (other than ours) whose argv holds both "persist.plant" and the token.
std::vector<pid_t> FindPlanted(const std::string& token) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  std::size_t seen = 0;
  std::string buffer(kMaxCmdlineBytes, '\0');
  while (dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == ::getpid()) continue;
    if (++seen > kMaxPids) break;
    int fd = ::open(("/proc/" + std::string(entry->d_name) + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    ::close(fd);
    if (n <= 0) continue;
    std::string_view cmdline(buffer.data(), static_cast<std::size_t>(n));
    bool plant = false, has_token = false;
    for (std::size_t start = 0; start < cmdline.size();) {
      std::size_t nul = cmdline.find('\0', start);
      std::string_view arg = cmdline.substr(start, nul == std::string_view::npos ? std::string_view::npos : nul - start);
      plant = plant || arg == "persist.plant";
      has_token = has_token || arg == token;
      if (nul == std::string_view::npos) break;
      start = nul + 1;
    }
    if (plant && has_token) found.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return found;
}

}  // namespace

std::string CheckPersistPlantArgs(const FamilyArgs& args) {
  PersistArgs parsed;
  return Parse("persist.plant", args, parsed);
}

std::string CheckPersistCheckArgs(const FamilyArgs& args) {
  PersistArgs parsed;
  return Parse("persist.check", args, parsed);
}

void RunPersistPlant(const ProbeContext& ctx, const FamilyArgs& args) {
  PersistArgs parsed;
  Parse("persist.plant", args, parsed);
  SameDirectory same;
  for (const std::string& dir : parsed.dirs) {
    nlohmann::json fact = {{"family", "persist.plant"}, {"path", dir}};
    std::string file = TokenFile(dir, parsed.token, fact);
    same.Mark(dir, ResolveDir(dir), fact);
    errno = ENOENT;  // an unresolvable @home/@cwd
    int fd = file.empty() ? -1 : ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && ::write(fd, parsed.token.data(), parsed.token.size()) ==
                             static_cast<ssize_t>(parsed.token.size());
    if (!ok) fact["errno"] = ErrnoName(errno);
    if (fd >= 0) ::close(fd);
    fact["ok"] = ok;
    ctx.out.Emit(fact);
  }
  if (parsed.background_seconds > 0) {
    pid_t pid = StartBackground(parsed.background_seconds);
    nlohmann::json fact = {{"family", "persist.plant"}, {"path", "background-process"}, {"ok", pid > 0}};
    if (pid > 0) fact["pid"] = pid; else fact["errno"] = ErrnoName(errno);
    ctx.out.Emit(fact);
  }
}

void RunPersistCheck(const ProbeContext& ctx, const FamilyArgs& args) {
  PersistArgs parsed;
  Parse("persist.check", args, parsed);
  SameDirectory same;
  for (const std::string& dir : parsed.dirs) {
    nlohmann::json fact = {{"family", "persist.check"}, {"path", dir}};
    std::string file = TokenFile(dir, parsed.token, fact);
    same.Mark(dir, ResolveDir(dir), fact);
    errno = ENOENT;
    int fd = file.empty() ? -1 : ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      fact["present"] = false;
      fact["errno"] = ErrnoName(errno);
    } else {
      char buffer[80];
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      ::close(fd);
      fact["present"] = n > 0 && std::string_view(buffer, static_cast<std::size_t>(n)) == parsed.token;
      if (!parsed.keep) fact["removed"] = ::unlink(file.c_str()) == 0;
    }
    ctx.out.Emit(fact);
  }
  std::vector<pid_t> alive = FindPlanted(parsed.token);
  nlohmann::json fact = {{"family", "persist.check"}, {"path", "background-process"},
                         {"present", !alive.empty()}, {"pids", alive}};
#if !defined(__wasi__)  // WASI: no /proc, so nothing found to end
  if (!parsed.keep) {
    for (pid_t pid : alive) ::kill(pid, SIGKILL);  // ours: it carries this run's token
  }
#endif
  ctx.out.Emit(fact);
}

std::vector<ProbeFamilyRow> PersistenceProbeFamilies() {
  return {
      {"persist.plant", "--token T [--background-seconds N] DIR...", CheckPersistPlantArgs, RunPersistPlant},
      {"persist.check", "--token T [--keep] DIR...", CheckPersistCheckArgs, RunPersistCheck},
  };
}

}  // namespace sandprobe
