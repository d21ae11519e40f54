// The context a privilege fact is only meaningful in: which user namespace the probe runs in
// (access(W_OK) answers for that namespace, not for the host's root) and which kernel answers
// its syscalls (a user-space kernel such as gVisor's sentry is not Linux). Facts only: the host
// decides what they mean (families/family_priv_context.cc).
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/priv_families.h"

namespace sandprobe {

nlohmann::json UsernsContext() {
  nlohmann::json ns = {{"euid", ::geteuid()}, {"egid", ::getegid()}};
  char link[256];
  const ssize_t n = ::readlink("/proc/self/ns/user", link, sizeof link - 1);
  if (n > 0) {
    ns["link"] = std::string(link, static_cast<std::size_t>(n));
  } else {
    ns["link_errno"] = ErrnoName(errno);
  }
  if (std::optional<std::string> map = ReadSmallFile("/proc/self/uid_map", 4096)) {
    SetBytesField(ns, "uid_map", *map);
  } else {
    ns["uid_map_errno"] = ErrnoName(errno);
  }
  if (std::optional<std::string> status = ReadSmallFile("/proc/self/status")) {
    std::optional<std::string> hex = StatusField(*status, "CapEff");
    if (std::optional<std::uint64_t> mask = hex ? ParseCapMask(*hex) : std::nullopt) {
      ns["cap_sys_admin"] = (*mask & (std::uint64_t{1} << 21)) != 0;
    }
  }
  return ns;
}

nlohmann::json KernelContext() {
  nlohmann::json kernel = nlohmann::json::object();
  struct utsname uts {};
  if (::uname(&uts) == 0) {
    kernel["sysname"] = uts.sysname;
    kernel["release"] = uts.release;
    kernel["version"] = uts.version;
    kernel["machine"] = uts.machine;
  } else {
    kernel["uname_errno"] = ErrnoName(errno);
  }
  if (std::optional<std::string> text = ReadSmallFile("/proc/version", 1024)) {
    SetBytesField(kernel, "proc_version", text->substr(0, text->find('\n')));
  } else {
    kernel["proc_version_errno"] = ErrnoName(errno);
  }
  return kernel;
}

}  // namespace sandprobe
