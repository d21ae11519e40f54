// res.disk: how much may the sandbox write to a directory (normally /tmp)? Writes zeros to a
// nonce file in 1 MiB steps until a write fails (ENOSPC: the filesystem is full; EDQUOT: a
// quota; EFBIG: RLIMIT_FSIZE) or the ceiling, then deletes it. Progress every 8 MiB.
#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "contract/errno_name.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {

constexpr std::size_t kMib = 1 << 20;
const std::map<std::string, long> kArgs = {{"ceiling-mib", kMaxDiskCeilingMib}};

// Writes all of `size` bytes; returns 0 or the errno (ENOSPC for a short write that stalls).
int WriteFully(int fd, const char* data, std::size_t size, std::size_t* written) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      *written += done;
      return errno;
    }
    if (n == 0) {
      *written += done;
      return ENOSPC;
    }
    done += static_cast<std::size_t>(n);
  }
  *written += done;
  return 0;
}

}  // namespace

std::string CheckResDiskArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.disk", args, kArgs, true);
}

void RunResDisk(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.disk", args, kArgs, true);
  const long ceiling = parsed.Number("ceiling-mib");
  nlohmann::json result = {{"family", "res.disk"}, {"kind", "result"}, {"dir", parsed.dir()},
                           {"ceiling_mib", ceiling}};
  struct statvfs vfs {};
  if (::statvfs(parsed.dir().c_str(), &vfs) == 0) {
    result["fs_size_mib"] = static_cast<long>(vfs.f_blocks * vfs.f_frsize / kMib);
    result["fs_free_mib"] = static_cast<long>(vfs.f_bavail * vfs.f_frsize / kMib);
  }
  // RLIMIT_FSIZE would kill with SIGXFSZ; ignored, the write fails with EFBIG instead.
  ::signal(SIGXFSZ, SIG_IGN);
  const std::string file = parsed.dir() + "/.sandprobe-" + ctx.nonce + "-disk";
  std::vector<char> zeros(kMib, 0);
  std::size_t written = 0;
  int stop_errno = 0;
  {
    DeadlineHold hold;  // create .. unlink: never leave the file behind
    int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      result["ok"] = false;
      result["step"] = "open";
      result["errno"] = ErrnoName(errno);
      ctx.out.Emit(result);
      return;
    }
    for (long mib = 1; mib <= ceiling; ++mib) {
      stop_errno = WriteFully(fd, zeros.data(), zeros.size(), &written);
      if (stop_errno != 0) break;
      if (mib % 8 == 0) {
        ctx.out.Emit({{"family", "res.disk"}, {"kind", "progress"}, {"mib", mib}});
      }
    }
    ::close(fd);
    result["removed"] = ::unlink(file.c_str()) == 0;
  }
  result["ok"] = true;
  result["written_mib"] = static_cast<double>(written) / kMib;
  result["stopped_by"] = stop_errno != 0 ? ErrnoName(stop_errno) : "ceiling";
  ctx.out.Emit(result);
}

}  // namespace sandprobe
