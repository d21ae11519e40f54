// net.ifaces: which network interfaces the sandbox sees, from three sources reported apart,
// because they answer different questions:
//   netlink        an RTM_GETLINK dump on a NETLINK_ROUTE socket: the probe's own network
//                  namespace, with MAC addresses (raw netlink; a seccomp filter may deny
//                  AF_NETLINK, then its errno is the fact and the host falls back);
//   proc_net_dev   /proc/net/dev: also the reader's own namespace (names only);
//   sys_class_net  /sys/class/net: the namespace of whoever mounted that sysfs. A sandbox that
//                  binds the host's / (bwrap --ro-bind / /) shows the host's interfaces here
//                  even in a namespace of its own; absent in a bwrap root without /sys.
// The host side judges the namespace by the first two and the sysfs listing on its own.
#include <dirent.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/net_probes.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxInterfaces = 256;
constexpr int kMaxNetlinkReads = 64;
constexpr std::size_t kNetlinkBuffer = 32 * 1024;

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

json Failed(const char* step, int err) {
  return {{"ok", false}, {"step", step}, {"errno", ErrnoName(err)}};
}

// Sends one RTM_GETLINK dump request and reads the reply until NLMSG_DONE, an error, or the
// read ceiling; every wait is capped at kNetWaitMs.
json FromNetlink() {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return Failed("socket", errno);
  struct {
    nlmsghdr header;
    ifinfomsg info;
  } request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = RTM_GETLINK;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = 1;
  request.info.ifi_family = AF_UNSPEC;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, &request, sizeof request, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    const int err = errno;
    ::close(fd);
    return Failed("send", err);
  }
  LinkDump dump;
  std::string buffer(kNetlinkBuffer, '\0');
  json result = {{"ok", false}};
  for (int reads = 0; reads < kMaxNetlinkReads && !dump.done && dump.error == 0; ++reads) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, kNetWaitMs);
    if (ready <= 0) {
      result = Failed("recv", ready == 0 ? ETIMEDOUT : errno);
      break;
    }
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n < 0) {
      result = Failed("recv", errno);
      break;
    }
    ParseLinkDump(std::string_view(buffer.data(), static_cast<std::size_t>(n)), request.header.nlmsg_seq, dump);
  }
  ::close(fd);
  if (dump.error != 0) return Failed("dump", dump.error);
  if (!dump.done) return result.contains("errno") ? result : Failed("dump", EOVERFLOW);
  json names = json::array();
  json macs = json::object();
  for (const LinkInfo& link : dump.links) {
    names.push_back(link.name);
    if (!link.mac.empty()) macs[link.name] = link.mac;
  }
  return {{"ok", true}, {"names", names}, {"macs", macs}};
}

// "  eth0: 123 ..." lines after the two header lines.
json FromProcNetDev() {
  std::string text;
  if (!ReadSmallFile("/proc/net/dev", text, 64 * 1024)) return Failed("open", errno);
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
  return {{"ok", true}, {"names", names}};
}

json FromSysClassNet() {
  DIR* dir = ::opendir("/sys/class/net");
  if (dir == nullptr) return Failed("opendir", errno);
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
  return {{"ok", true}, {"names", names}, {"macs", macs}};
}

template <typename T>
bool ReadAt(std::string_view bytes, std::size_t at, T& out) {
  if (at > bytes.size() || bytes.size() - at < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + at, sizeof(T));
  return true;
}

std::string FormatMac(std::string_view raw) {
  static const char kHex[] = "0123456789abcdef";
  std::string mac;
  for (unsigned char c : raw) {
    if (!mac.empty()) mac += ':';
    mac += kHex[c >> 4];
    mac += kHex[c & 0xf];
  }
  return mac;
}

// The IFLA_IFNAME and IFLA_ADDRESS attributes of one RTM_NEWLINK payload.
void ParseLink(std::string_view payload, LinkDump& dump) {
  LinkInfo link;
  for (std::size_t at = NLMSG_ALIGN(sizeof(ifinfomsg)); at < payload.size();) {
    rtattr attr{};
    if (!ReadAt(payload, at, attr) || attr.rta_len < sizeof attr || attr.rta_len > payload.size() - at) break;
    std::string_view data = payload.substr(at + RTA_LENGTH(0), attr.rta_len - RTA_LENGTH(0));
    if (attr.rta_type == IFLA_IFNAME) link.name = std::string(data.substr(0, data.find('\0')));
    if (attr.rta_type == IFLA_ADDRESS) link.mac = FormatMac(data);
    at += RTA_ALIGN(attr.rta_len);
  }
  if (!link.name.empty() && dump.links.size() < kMaxInterfaces) dump.links.push_back(std::move(link));
}

}  // namespace

void ParseLinkDump(std::string_view chunk, std::uint32_t seq, LinkDump& dump) {
  for (std::size_t at = 0; at < chunk.size() && !dump.done && dump.error == 0;) {
    nlmsghdr header{};
    if (!ReadAt(chunk, at, header) || header.nlmsg_len < sizeof header ||
        header.nlmsg_len > chunk.size() - at) {
      dump.error = EBADMSG;
      return;
    }
    const std::string_view payload = chunk.substr(at + NLMSG_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN);
    if (header.nlmsg_seq == seq) {
      if (header.nlmsg_type == NLMSG_DONE) {
        dump.done = true;
      } else if (header.nlmsg_type == NLMSG_ERROR) {
        int err = 0;  // nlmsgerr.error: 0 is an acknowledgement, not expected in a dump
        if (!ReadAt(payload, 0, err)) err = -EBADMSG;
        if (err != 0) dump.error = -err;
      } else if (header.nlmsg_type == RTM_NEWLINK) {
        ParseLink(payload, dump);
      }
    }
    at += NLMSG_ALIGN(header.nlmsg_len);
  }
}

std::string CheckNetIfacesArgs(const FamilyArgs& args) {
  return args.empty() ? "" : "net.ifaces: takes no arguments";
}

void RunNetIfaces(const ProbeContext& ctx, const FamilyArgs&) {
  json summary = {{"family", "net.ifaces"}, {"summary", true}};
  summary["netlink"] = FromNetlink();
  summary["proc_net_dev"] = FromProcNetDev();
  summary["sys_class_net"] = FromSysClassNet();
  ctx.out.Emit(summary);
}

}  // namespace sandprobe
