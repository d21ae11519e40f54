// fs.write: can the sandboxed process create files in these directories? One fact per dir.
//
// The probe creates `DIR/.sandprobe-NONCE-<i>` exclusively (never touching an existing file),
// writes the nonce, and removes it again: the host can then look for leftovers on its side of a
// bind mount, and a nonce file it finds proves a write went through. Whether the mount itself is
// read-only (EROFS-by-mount vs EACCES-by-permission) comes from two sources, each reported as it
// is: statvfs's ST_RDONLY ("ro_mount") and the holding mount's options in /proc/self/mountinfo
// ("mountinfo_ro": per-mount or superblock "ro"; "mount_point"). They can disagree (gVisor,
// some FUSE and overlay setups), and the host must not claim read-write when either says ro.
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#if !defined(__wasi__)
#include <sys/statvfs.h>
#endif
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/families.h"
#include "contract/mountinfo.h"

namespace sandprobe {

void TryCreateAndRemove(const std::string& file, const std::string& nonce, nlohmann::json& fact) {
  fact["created"] = false;
  fact["removed"] = false;
  auto fail = [&fact](const char* step, int err) {
    fact["ok"] = false;
    fact["step"] = step;
    fact["errno"] = ErrnoName(err);
  };
  DeadlineHold hold;  // from here until the unlink, the deadline may not exit the probe
  const int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC |
                                          O_NOCTTY | O_NONBLOCK, 0600);
  if (fd < 0) {
    fail("open", errno);
    return;
  }
  fact["created"] = true;
  const char* failed_step = nullptr;
  int failed_errno = 0;
  ssize_t n;
  do {
    n = ::write(fd, nonce.data(), nonce.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(nonce.size())) {
    failed_step = "write";
    failed_errno = n < 0 ? errno : ENOSPC;  // a short write of a few bytes means a full disk
  }
  if (::close(fd) != 0 && failed_step == nullptr) {
    failed_step = "close";
    failed_errno = errno;
  }
  // Always unlink what was created, even when the write failed.
  if (::unlink(file.c_str()) == 0) {
    fact["removed"] = true;
  } else if (failed_step == nullptr) {
    failed_step = "unlink";
    failed_errno = errno;
  }
  if (failed_step != nullptr) {
    fail(failed_step, failed_errno);
  } else {
    fact["ok"] = true;
  }
}

namespace {

void AddMountFlags(const std::string& dir, const std::vector<MountEntry>& mounts,
                   nlohmann::json& fact) {
#if defined(__wasi__)
  // WASI has neither statvfs nor a mount table: whether the holding mount is read-only is not
  // expressible there (the write attempt above still is), as when statvfs fails.
  (void)dir, (void)mounts;
  fact["ro_mount"] = nullptr;
  fact["statvfs_errno"] = ErrnoName(ENOSYS);
#else
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) == 0) {
    fact["ro_mount"] = (vfs.f_flag & ST_RDONLY) != 0;
  } else {
    fact["ro_mount"] = nullptr;
    fact["statvfs_errno"] = ErrnoName(errno);
  }
  char real[PATH_MAX];
  if (::realpath(dir.c_str(), real) == nullptr) return;  // no dir, no mount to name
  if (const MountEntry* m = MountHolding(mounts, real)) {
    SetBytesField(fact, "mount_point", m->mount_point);
    fact["mountinfo_ro"] = HasMountOption(m->mount_options, "ro") || HasMountOption(m->super_options, "ro");
  }
#endif
}

}  // namespace

std::string CheckFsWriteArgs(const FamilyArgs& args) { return CheckPathList("fs.write", args); }

void RunFsWrite(const ProbeContext& ctx, const FamilyArgs& args) {
  int error = 0;
  const std::vector<MountEntry> mounts = ParseMountinfo(ReadMountinfoText(&error));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& dir = args[i];
    nlohmann::json fact = {{"family", "fs.write"}};
    SetBytesField(fact, "path", dir);
    const std::string file = dir + "/.sandprobe-" + ctx.nonce + "-" + std::to_string(i);
    TryCreateAndRemove(file, ctx.nonce, fact);
    AddMountFlags(dir, mounts, fact);
    ctx.out.Emit(fact);
  }
}

}  // namespace sandprobe
