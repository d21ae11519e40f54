// priv.kernel_knobs, priv.cgroups, priv.devices, priv.masked: the host kernel interfaces a
// container must not be able to change or read. Writability is tried, not asked: an open for
// write (O_WRONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC, never O_TRUNC or O_CREAT) that is closed
// without a byte written. access(W_OK) only checks the mode bits and capabilities, which Landlock
// (and other LSMs that mediate opens) never see: it called core_pattern writable in a sandbox
// whose open for write gets EACCES. Its answer is kept beside the open's, for the report.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "contract/mountinfo.h"
#include "probes/priv_families.h"

namespace sandprobe {
namespace {

constexpr std::size_t kMaxDevices = 1024;
constexpr std::size_t kMaxDirEntriesCounted = 1024;

std::vector<MountEntry> Mounts(nlohmann::json& summary) {
  std::optional<std::string> text = ReadSmallFile("/proc/self/mountinfo", 1 << 20);
  if (!text) {
    summary["mountinfo_errno"] = ErrnoName(errno);
    return {};
  }
  return ParseMountinfo(*text);
}

// `exists` is `path`'s; the open for write is tried on `target` (the file itself, or a control
// file inside a cgroup directory, which cannot be opened for write itself). Nothing is written.
void TryWrite(nlohmann::json& fact, const std::string& path, const std::string& target) {
  const bool exists = ::access(path.c_str(), F_OK) == 0;
  fact["exists"] = exists;
  if (!exists) {
    fact["errno"] = ErrnoName(errno);
    return;
  }
  fact["tried"] = "open";
  if (target != path) SetBytesField(fact, "tried_path", target);
  fact["access_writable"] = ::access(target.c_str(), W_OK) == 0;
  const int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  fact["writable"] = fd >= 0;
  if (fd >= 0) {
    ::close(fd);
  } else {
    fact["errno"] = ErrnoName(errno);
  }
}

void EmitMountFact(const ProbeContext& ctx, const char* family, const std::vector<MountEntry>& mounts,
                   const std::string& path, const nlohmann::json& userns) {
  nlohmann::json fact = {{"family", family}, {"path", path}, {"variant", "mount"}, {"userns", userns}};
  const MountEntry* m = MountHolding(mounts, path);
  fact["ok"] = m != nullptr;
  if (m) {
    SetBytesField(fact, "mount_point", m->mount_point);
    SetBytesField(fact, "fstype", m->fstype);
    fact["read_only"] = HasMountOption(m->mount_options, "ro");
  }
  ctx.out.Emit(fact);
}

// Non-dot entries in a directory, counted up to a cap.
long CountEntries(int fd) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) return -1;
  long n = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
    if (static_cast<std::size_t>(n) >= kMaxDirEntriesCounted) break;
  }
  ::closedir(dir);
  return n;
}

void ScanDevices(const ProbeContext& ctx, const std::string& dir_path, int depth, std::size_t& nodes,
                 bool& truncated) {
  DIR* dir = ::opendir(dir_path.c_str());
  if (dir == nullptr) return;
  while (const dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    const std::string path = dir_path + "/" + e->d_name;
    // Terminals and shared memory are the usual set; a pty per shell is not a device finding.
    if (path == "/dev/pts" || path == "/dev/shm" || path == "/dev/mqueue" || path == "/dev/fd") continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && depth < 2) {
      ScanDevices(ctx, path, depth + 1, nodes, truncated);
      continue;
    }
    if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) continue;
    if (nodes >= kMaxDevices) {
      truncated = true;
      break;
    }
    ++nodes;
    nlohmann::json fact = {{"family", "priv.devices"}, {"kind", S_ISBLK(st.st_mode) ? "block" : "char"},
                           {"major", major(st.st_rdev)}, {"minor", minor(st.st_rdev)}};
    SetBytesField(fact, "path", path);
    ctx.out.Emit(fact);
  }
  ::closedir(dir);
}

}  // namespace

// Each fact carries the user namespace it was seen from: the open answers for the probe's own
// namespace, and only the host can tell whether that is writability as the host's root.
void RunPrivKernelKnobs(const ProbeContext& ctx, const FamilyArgs& args) {
  const nlohmann::json userns = UsernsContext();
  for (const std::string& path : args) {
    nlohmann::json fact = {{"family", "priv.kernel_knobs"}, {"path", path}, {"userns", userns}};
    TryWrite(fact, path, path);
    ctx.out.Emit(fact);
  }
  nlohmann::json summary = {{"family", "priv.kernel_knobs"}, {"summary", true}, {"kernel", KernelContext()}};
  std::vector<MountEntry> mounts = Mounts(summary);
  if (!mounts.empty()) EmitMountFact(ctx, "priv.kernel_knobs", mounts, "/proc/sys", userns);
  ctx.out.Emit(summary);
}

void RunPrivCgroups(const ProbeContext& ctx, const FamilyArgs&) {
  const nlohmann::json userns = UsernsContext();
  nlohmann::json summary = {{"family", "priv.cgroups"}, {"summary", true}, {"userns", userns},
                            {"kernel", KernelContext()}};
  std::vector<MountEntry> mounts = Mounts(summary);
  int count = 0;
  // A mount point listed twice (a cgroupfs mounted over another, as `-v /sys:/sys` next to
  // docker's own does) is one path: one fact, for the mount on top, the one a path reaches.
  std::set<std::string> reported;
  for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
    const MountEntry& m = *it;
    if (m.fstype != "cgroup" && m.fstype != "cgroup2") continue;
    if (!reported.insert(m.mount_point).second) continue;
    ++count;
    nlohmann::json fact = {{"family", "priv.cgroups"}, {"fstype", m.fstype},
                           {"read_only_mount", HasMountOption(m.mount_options, "ro")}, {"userns", userns}};
    SetBytesField(fact, "path", m.mount_point);
    // A cgroup directory takes its writes through its control files: cgroup.procs is in every
    // cgroup of both versions, and moving a task there is what a writable cgroupfs allows.
    TryWrite(fact, m.mount_point, m.mount_point + "/cgroup.procs");
    ctx.out.Emit(fact);
    if (m.fstype == "cgroup") {
      // cgroup v1: the hierarchy root's release_agent runs as root on the host.
      const std::string agent = m.mount_point + "/release_agent";
      if (::access(agent.c_str(), F_OK) != 0) continue;
      nlohmann::json ra = {{"family", "priv.cgroups"}, {"variant", "release_agent"}, {"userns", userns}};
      SetBytesField(ra, "path", agent);
      TryWrite(ra, agent, agent);
      ctx.out.Emit(ra);
    }
  }
  summary["ok"] = !summary.contains("mountinfo_errno");
  summary["cgroup_mounts"] = count;
  ctx.out.Emit(summary);
}

void RunPrivDevices(const ProbeContext& ctx, const FamilyArgs&) {
  std::size_t nodes = 0;
  bool truncated = false;
  struct stat st {};
  const bool have_dev = ::stat("/dev", &st) == 0;
  nlohmann::json summary = {{"family", "priv.devices"}, {"summary", true}, {"ok", have_dev},
                            {"kernel", KernelContext()}};
  if (!have_dev) summary["errno"] = ErrnoName(errno);
  if (have_dev) ScanDevices(ctx, "/dev", 0, nodes, truncated);
  summary["nodes"] = nodes;
  summary["truncated"] = truncated;
  ctx.out.Emit(summary);
}

// One byte of each file, or the entry count of each directory: enough to tell a masked path
// (bind-mounted /dev/null, an empty tmpfs, EACCES) from an exposed one.
void RunPrivMasked(const ProbeContext& ctx, const FamilyArgs& args) {
  for (const std::string& path : args) {
    nlohmann::json fact = {{"family", "priv.masked"}, {"path", path}};
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      fact["ok"] = false;
      fact["step"] = "open";
      fact["errno"] = ErrnoName(errno);
      ctx.out.Emit(fact);
      continue;
    }
    struct stat st {};
    ::fstat(fd, &st);
    if (S_ISDIR(st.st_mode)) {
      fact["kind"] = "dir";
      const long n = CountEntries(fd);  // takes over fd
      fact["ok"] = n >= 0;
      fact["entries"] = n;
    } else {
      fact["kind"] = S_ISREG(st.st_mode) ? "file" : "other";
      char byte;
      const ssize_t n = ::read(fd, &byte, 1);
      fact["ok"] = n >= 0;
      if (n < 0) {
        fact["step"] = "read";
        fact["errno"] = ErrnoName(errno);
      } else {
        fact["bytes"] = n;
      }
      ::close(fd);
    }
    ctx.out.Emit(fact);
  }
}

}  // namespace sandprobe
