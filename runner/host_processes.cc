#include "runner/host_processes.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace sandprobe {
namespace {

constexpr std::size_t kMaxCmdlineBytes = 64 * 1024;

std::string ReadCmdline(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/cmdline", std::ios::binary);
  std::string text;
  std::istreambuf_iterator<char> it(in), end;
  for (; it != end && text.size() < kMaxCmdlineBytes; ++it) text.push_back(*it);
  return text;
}

std::string PidNamespace(const std::string& pid) {
  char target[128];
  ssize_t n = ::readlink(("/proc/" + pid + "/ns/pid").c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

bool HasArg(const std::string& cmdline, const std::string& arg) {
  for (std::size_t start = 0; start < cmdline.size();) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    if (cmdline.compare(start, end - start, arg) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::vector<HostProcess> FindProcessesWithArg(const std::string& arg) {
  std::vector<HostProcess> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  const std::string self = std::to_string(::getpid());
  const std::string own_namespace = PidNamespace("self");
  while (const dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || e->d_name == self) continue;
    std::string cmdline = ReadCmdline(e->d_name);
    if (!HasArg(cmdline, arg)) continue;
    HostProcess p;
    p.pid = std::atol(e->d_name);
    while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    p.argv = std::move(cmdline);
    std::string ns = PidNamespace(e->d_name);
    p.host_pid_namespace = !ns.empty() && ns == own_namespace;
    found.push_back(std::move(p));
  }
  ::closedir(proc);
  return found;
}

}  // namespace sandprobe
