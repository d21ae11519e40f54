#include "runner/proc_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

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

std::vector<int> ListPids() {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (const dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    pids.push_back(std::atoi(e->d_name));
  }
  ::closedir(proc);
  std::sort(pids.begin(), pids.end());
  return pids;
}

std::vector<int> ListOwnChildrenOrAllPids() {
  std::vector<int> pids;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return ListPids();
  bool readable = false;
  while (const dirent* e = ::readdir(tasks)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/children");
    if (!in) continue;
    readable = true;
    for (int pid = 0; in >> pid;) pids.push_back(pid);
  }
  ::closedir(tasks);
  if (!readable) return ListPids();  // CONFIG_PROC_CHILDREN off
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

namespace {

std::string PidNamespace(const std::string& pid) {
  char target[128];
  ssize_t n = ::readlink(("/proc/" + pid + "/ns/pid").c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

bool HasArg(std::string_view cmdline, std::string_view arg) {
  for (std::size_t start = 0; start < cmdline.size();) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string_view::npos) end = cmdline.size();
    if (cmdline.substr(start, end - start) == arg) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::vector<HostProcess> FindProcessesWithArg(const std::string& arg) {
  std::vector<HostProcess> found;
  const int self = ::getpid();
  const std::string own_namespace = PidNamespace("self");
  for (int pid : ListPids()) {
    if (pid == self) continue;
    std::string cmdline = ReadProcFile(pid, "cmdline");
    if (!HasArg(cmdline, arg)) continue;
    std::string ns = PidNamespace(std::to_string(pid));
    found.push_back({pid, CmdlineForDisplay(cmdline, 64 * 1024),
                     !ns.empty() && ns == own_namespace});
  }
  return found;
}

}  // namespace sandprobe
