// The context a privilege fact is only meaningful in: which user namespace the probe runs in
// (access(W_OK) answers for that namespace, not for the host's root) and which kernel answers
// its syscalls (a user-space kernel such as gVisor's sentry is not Linux). Facts only: the host
// decides what they mean (families/family_priv_context.cc).
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <nlohmann/json.hpp>

#include "contract/mountinfo.h"
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
  // Identity signals, each of which the host compares with its own (families/kernel_identity.h):
  // no single one decides, since a runtime may mount its own boot_id or give the sandbox a time
  // namespace, and a VM may run the host's kernel build.
  if (std::optional<std::string> id = ReadSmallFile("/proc/sys/kernel/random/boot_id", 64)) {
    SetBytesField(kernel, "boot_id", id->substr(0, id->find('\n')));
  } else {
    kernel["boot_id_errno"] = ErrnoName(errno);
  }
  timespec real {}, boot {};
  if (::clock_gettime(CLOCK_REALTIME, &real) == 0 && ::clock_gettime(CLOCK_BOOTTIME, &boot) == 0) {
    kernel["boot_time_ms"] = (static_cast<long long>(real.tv_sec) - boot.tv_sec) * 1000 +
                             (static_cast<long long>(real.tv_nsec) - boot.tv_nsec) / 1000000;
  }
  struct stat ns {};
  if (::stat("/proc/self/ns/user", &ns) == 0) {
    kernel["nsfs_dev"] = DeviceText(major(ns.st_dev), minor(ns.st_dev));
  } else {
    kernel["nsfs_errno"] = ErrnoName(errno);
  }
  return kernel;
}

}  // namespace sandprobe
