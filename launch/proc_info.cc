#include "launch/proc_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

namespace sandprobe {

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  std::size_t open = text.find('(');
  std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcStat stat;
  stat.pid = std::atoi(std::string(text.substr(0, open)).c_str());
  // After ") ": field 3 (state) onwards; field 22 is the 20th of them.
  std::string rest(text.substr(close + 1));
  char state = 0;
  int ppid = 0, pgid = 0, sid = 0;
  int consumed = 0;
  if (std::sscanf(rest.c_str(), " %c %d %d %d%n", &state, &ppid, &pgid, &sid, &consumed) != 4) {
    return std::nullopt;
  }
  const char* p = rest.c_str() + consumed;
  // Fields 7..21 are skipped, then field 22.
  for (int field = 7; field <= 21; ++field) {
    while (*p == ' ') ++p;
    while (*p != ' ' && *p != '\0') ++p;
  }
  char* end = nullptr;
  unsigned long long start = std::strtoull(p, &end, 10);
  if (end == p) return std::nullopt;
  stat.state = state;
  stat.ppid = ppid;
  stat.pgid = pgid;
  stat.sid = sid;
  stat.start_ticks = start;
  return stat;
}

std::string ReadProcFile(int pid, const char* name, std::size_t cap) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buf[4096];
  while (text.size() < cap) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, cap - text.size()));
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

std::optional<ProcStat> ReadProcStat(int pid) {
  std::string text = ReadProcFile(pid, "stat", 4096);
  if (text.empty()) return std::nullopt;
  return ParseProcStat(text);
}

std::string CmdlineForDisplay(std::string_view raw, std::size_t cap) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::string out(raw.substr(0, cap));
  std::replace(out.begin(), out.end(), '\0', ' ');
  if (raw.size() > cap) out += "...";
  return out;
}

namespace {

// A walk this large is no real process tree: a fork bomb, or pids reused into a loop. The
// caller then falls back to ListPids().
constexpr std::size_t kMaxDescendants = 100000;
// Reads of one process's children before its answer counts as never settling.
constexpr int kChildrenReadAttempts = 4;

// The numeric entries of a /proc directory ("/proc", "/proc/<pid>/task"), ascending; empty
// when it cannot be opened.
std::vector<int> NumericEntries(const std::string& dir) {
  std::vector<int> numbers;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return numbers;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    numbers.push_back(std::atoi(e->d_name));
  }
  ::closedir(d);
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

// Appends the space-separated pids of a children file; false when it cannot be opened.
bool AppendChildrenFile(const std::string& path, std::vector<int>& pids) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  for (const char* p = text.c_str(); *p != '\0';) {
    char* end = nullptr;
    long pid = std::strtol(p, &end, 10);
    if (end == p) break;
    pids.push_back(static_cast<int>(pid));
    p = end;
  }
  return true;
}

// The children of every thread of `pid`, sorted. The kernel builds a children file by
// position, so a child reaped during the read (by another of our threads, say) can hide a
// sibling, and a thread that exits hands its children to another thread, perhaps one already
// read (proc(5): "stop or freeze ... if precise results are needed"). An answer counts once
// every pid it lists still exists and the threads are the same afterwards. Empty when the
// process is gone; nullopt when its children files are missing (CONFIG_PROC_CHILDREN off) or
// the answer never settles.
std::optional<std::vector<int>> SettledChildren(int pid) {
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task/";
  for (int attempt = 0; attempt < kChildrenReadAttempts; ++attempt) {
    std::vector<int> threads = NumericEntries(task_dir);
    std::vector<int> children;
    bool readable = false;
    for (int tid : threads) {
      readable |= AppendChildrenFile(task_dir + std::to_string(tid) + "/children", children);
    }
    if (!readable) {
      if (NumericEntries(task_dir).empty()) return children;  // gone
      return std::nullopt;
    }
    bool one_reaped = std::any_of(children.begin(), children.end(), [](int child) {
      return ::kill(child, 0) == -1 && errno == ESRCH;
    });
    if (one_reaped || NumericEntries(task_dir) != threads) continue;
    std::sort(children.begin(), children.end());
    children.erase(std::unique(children.begin(), children.end()), children.end());
    return children;
  }
  return std::nullopt;
}

// Adds to `found` every pid in `pending` and below it not yet `seen` (a pid reused during the
// walk could lead back up the tree). False past kMaxDescendants or on an unsettled answer.
bool WalkDown(std::vector<int> pending, std::unordered_set<int>& seen, std::vector<int>& found) {
  while (!pending.empty()) {
    int pid = pending.back();
    pending.pop_back();
    if (!seen.insert(pid).second) continue;
    found.push_back(pid);
    if (found.size() > kMaxDescendants) return false;
    std::optional<std::vector<int>> children = SettledChildren(pid);
    if (!children) return false;
    pending.insert(pending.end(), children->begin(), children->end());
  }
  return true;
}

std::string PidNamespace(const std::string& pid) {
  char target[128];
  ssize_t n = ::readlink(("/proc/" + pid + "/ns/pid").c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

}  // namespace

bool CmdlineHasArg(std::string_view cmdline, std::string_view arg) {
  for (std::size_t start = 0; start < cmdline.size();) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string_view::npos) end = cmdline.size();
    if (cmdline.substr(start, end - start) == arg) return true;
    start = end + 1;
  }
  return false;
}

std::vector<int> ListPids() { return NumericEntries("/proc"); }

std::vector<int> ListOwnChildrenOrAllPids() {
  std::optional<std::vector<int>> children = SettledChildren(::getpid());
  return children ? *children : ListPids();
}

std::optional<std::vector<int>> ListDescendants(int root_pid) {
  std::optional<std::vector<int>> children = SettledChildren(root_pid);
  std::unordered_set<int> seen = {root_pid};
  std::vector<int> found;
  if (!children || !WalkDown(*children, seen, found)) return std::nullopt;
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<int> ListOwnDescendantsOrAllPids() {
  const int self = ::getpid();
  std::unordered_set<int> seen = {self};
  std::vector<int> found;
  // A process whose parent exits during the walk moves up to the nearest subreaper, often this
  // process, whose children were read first: so they are read again until none is new.
  for (;;) {
    std::optional<std::vector<int>> children = SettledChildren(self);
    if (!children) return ListPids();
    std::erase_if(*children, [&seen](int pid) { return seen.count(pid) != 0; });
    if (children->empty()) break;
    if (!WalkDown(std::move(*children), seen, found)) return ListPids();
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<HostProcess> FindProcessesWithArg(const std::string& arg) {
  std::vector<HostProcess> found;
  const int self = ::getpid();
  const std::string own_namespace = PidNamespace("self");
  for (int pid : ListPids()) {
    if (pid == self) continue;
    std::string cmdline = ReadProcFile(pid, "cmdline");
    if (!CmdlineHasArg(cmdline, arg)) continue;
    std::string ns = PidNamespace(std::to_string(pid));
    found.push_back({pid, CmdlineForDisplay(cmdline, 64 * 1024),
                     !ns.empty() && ns == own_namespace});
  }
  return found;
}

}  // namespace sandprobe
