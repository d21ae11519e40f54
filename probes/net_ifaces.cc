// net.ifaces: which network interfaces the sandbox sees. A sandbox without network has only
// "lo"; one that shares the host's network namespace shows the host's interfaces (docker0,
// eth0 with the host's MAC address), which the host side compares with its own list.
//
// Two sources, because either may be missing: /proc/net/dev (the reader's own namespace) and
// /sys/class/net (the namespace of whoever mounted /sys, absent in a bwrap root).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "probes/errno_name.h"
#include "probes/net_probes.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxInterfaces = 256;

bool ReadSmallFile(const std::string& path, std::string& out, std::size_t cap) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  out.assign(cap, '\0');
  ssize_t n = ::read(fd, out.data(), cap);
  ::close(fd);
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return n >= 0;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// "  eth0: 123 ..." lines after the two header lines.
void FromProcNetDev(json& summary) {
  std::string text;
  if (!ReadSmallFile("/proc/net/dev", text, 64 * 1024)) {
    summary["proc_errno"] = ErrnoName(errno);
    return;
  }
  json names = json::array();
  std::size_t start = 0;
  for (int line = 0; start < text.size() && names.size() < kMaxInterfaces; ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string row = text.substr(start, end - start);
    start = end + 1;
    const std::size_t colon = row.find(':');
    if (line < 2 || colon == std::string::npos) continue;
    const std::size_t first = row.find_first_not_of(' ');
    if (first < colon) names.push_back(row.substr(first, colon - first));
  }
  summary["proc_names"] = names;
}

void FromSysClassNet(json& summary) {
  DIR* dir = ::opendir("/sys/class/net");
  if (dir == nullptr) {
    summary["sys_errno"] = ErrnoName(errno);
    return;
  }
  json names = json::array();
  json macs = json::object();
  while (names.size() < kMaxInterfaces) {
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) break;
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.push_back(name);
    std::string mac;
    if (ReadSmallFile("/sys/class/net/" + name + "/address", mac, 64)) macs[name] = Trim(mac);
  }
  ::closedir(dir);
  summary["sys_names"] = names;
  summary["macs"] = macs;
}

}  // namespace

std::string CheckNetIfacesArgs(const FamilyArgs& args) {
  return args.empty() ? "" : "net.ifaces: takes no arguments";
}

void RunNetIfaces(const ProbeContext& ctx, const FamilyArgs&) {
  json summary = {{"family", "net.ifaces"}, {"summary", true}};
  FromProcNetDev(summary);
  FromSysClassNet(summary);
  ctx.out.Emit(summary);
}

}  // namespace sandprobe
